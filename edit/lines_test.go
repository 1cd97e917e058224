package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEditLines(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	tests := []struct {
		name    string
		content string
		edits   []LineEdit
		want    string
		err     string // substring; empty means success
	}{
		{name: "replace one", content: "a\nb\nc\n", edits: []LineEdit{{From: 2, To: n(2), Content: s("B")}}, want: "a\nB\nc\n"},
		{name: "replace range with more", content: "a\nb\nc\n", edits: []LineEdit{{From: 1, To: n(2), Content: s("x\ny\nz\n")}}, want: "x\ny\nz\nc\n"},
		{name: "insert before (to absent)", content: "a\nb\n", edits: []LineEdit{{From: 2, Content: s("new")}}, want: "a\nnew\nb\n"},
		{name: "insert before (to = from-1)", content: "a\nb\n", edits: []LineEdit{{From: 1, To: n(0), Content: s("top")}}, want: "top\na\nb\n"},
		{name: "append at n+1", content: "a\nb\n", edits: []LineEdit{{From: 3, Content: s("c")}}, want: "a\nb\nc\n"},
		{name: "delete with nil", content: "a\nb\nc\n", edits: []LineEdit{{From: 2, To: n(2)}}, want: "a\nc\n"},
		{name: "delete with empty content", content: "a\nb\nc\n", edits: []LineEdit{{From: 1, To: n(2), Content: s("")}}, want: "c\n"},
		{name: "several edits use original numbers", content: "1\n2\n3\n4\n5\n", edits: []LineEdit{{From: 4, To: n(4), Content: s("four")}, {From: 1, To: n(1), Content: s("one\nuno")}, {From: 5, To: n(5)}}, want: "one\nuno\n2\n3\nfour\n"},
		{name: "insert and replace same line", content: "a\nb\n", edits: []LineEdit{{From: 2, To: n(2), Content: s("B")}, {From: 2, Content: s("ins")}}, want: "a\nins\nB\n"},
		{name: "CRLF file content gets CRLF", content: "a\r\nb\r\n", edits: []LineEdit{{From: 2, To: n(2), Content: s("x\ny")}}, want: "a\r\nx\r\ny\r\n"},
		{name: "CR file", content: "a\rb\r", edits: []LineEdit{{From: 1, Content: s("z")}}, want: "z\ra\rb\r"},
		{name: "BOM kept", content: BOM + "a\nb\n", edits: []LineEdit{{From: 1, To: n(1), Content: s("A")}}, want: BOM + "A\nb\n"},
		{name: "unterminated last line replaced", content: "a\nb", edits: []LineEdit{{From: 2, To: n(2), Content: s("B\n")}}, want: "a\nB"},
		{name: "append after unterminated", content: "a\nb", edits: []LineEdit{{From: 3, Content: s("c")}}, want: "a\nb\nc"},
		{name: "delete unterminated last line", content: "a\nb", edits: []LineEdit{{From: 2, To: n(2)}}, want: "a"},
		{name: "empty file insert", content: "", edits: []LineEdit{{From: 1, Content: s("x")}}, want: "x\n"},
		{name: "delete all unterminated then append", content: "a\nb", edits: []LineEdit{{From: 1, To: n(2)}, {From: 3, Content: s("c")}}, want: "c"},
		{name: "insert before unterminated last line and delete it", content: "a\nb", edits: []LineEdit{{From: 2, Content: s("x")}, {From: 2, To: n(2)}}, want: "a\nx"},
		{name: "replace line before unterminated last and delete it", content: "a\nb\nc", edits: []LineEdit{{From: 2, To: n(2), Content: s("B")}, {From: 3, To: n(3)}}, want: "a\nB"},
		{name: "delete two lines through unterminated last separately", content: "a\nb\nc", edits: []LineEdit{{From: 3, To: n(3)}, {From: 2, To: n(2)}}, want: "a"},
		{name: "replace unterminated last and append", content: "a\r\nb", edits: []LineEdit{{From: 2, To: n(2), Content: s("B")}, {From: 3, Content: s("c")}}, want: "a\r\nB\r\nc"},
		{name: "overlap", content: "1\n2\n3\n4\n", edits: []LineEdit{{From: 1, To: n(3), Content: s("x")}, {From: 3, To: n(4), Content: s("y")}}, err: "overlap"},
		{name: "insert inside replaced range", content: "1\n2\n3\n", edits: []LineEdit{{From: 1, To: n(3), Content: s("x")}, {From: 2, Content: s("y")}}, err: "overlap"},
		{name: "from zero", content: "a\n", edits: []LineEdit{{From: 0, To: n(1), Content: s("x")}}, err: "from must be >= 1"},
		{name: "to before from", content: "a\nb\nc\n", edits: []LineEdit{{From: 3, To: n(1), Content: s("x")}}, err: "must be >= from"},
		{name: "past end", content: "a\n", edits: []LineEdit{{From: 1, To: n(3), Content: s("x")}}, err: "past the end"},
		{name: "insert past end", content: "a\n", edits: []LineEdit{{From: 5, Content: s("x")}}, err: "cannot insert before line 5"},
		{name: "insert without content", content: "a\n", edits: []LineEdit{{From: 1}}, err: "needs content"},
		{name: "empty list", content: "a\n", edits: nil, err: "non-empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := EditLines([]byte(tt.content), tt.edits, false, "")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(r.Content)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if r.TotalLines != LineCount(r.Content) {
				t.Errorf("TotalLines %d != LineCount %d", r.TotalLines, LineCount(r.Content))
			}
		})
	}
}

func TestInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		content string
		after   int
		text    string
		want    string
		err     string
	}{
		{"a\nb\n", 0, "top", "top\na\nb\n", ""},
		{"a\nb\n", 1, "mid\n", "a\nmid\nb\n", ""},
		{"a\nb\n", 2, "end", "a\nb\nend\n", ""},
		{"a\nb", 2, "end", "a\nb\nend", ""},
		{"", 0, "x", "x\n", ""},
		{"a\r\nb\r\n", 1, "m1\nm2", "a\r\nm1\r\nm2\r\nb\r\n", ""},
		{"a\n", 2, "x", "", "Invalid `insert_line` parameter: 2. It should be within the range of lines of the file: [0, 1]"},
		{"a\n", -1, "x", "", "Invalid `insert_line` parameter: -1"},
	}
	for _, tt := range tests {
		r, err := Insert([]byte(tt.content), tt.after, tt.text, false, "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Insert(%q, %d): err = %v, want %q", tt.content, tt.after, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Insert(%q, %d): %v", tt.content, tt.after, err)
			continue
		}
		if got := string(r.Content); got != tt.want {
			t.Errorf("Insert(%q, %d, %q) = %q, want %q", tt.content, tt.after, tt.text, got, tt.want)
		}
	}
}

func TestView(t *testing.T) {
	t.Parallel()
	content := []byte("one\r\ntwo\nthree")
	tests := []struct {
		start, end int
		want, err  string
	}{
		{1, -1, "     1\tone\n     2\ttwo\n     3\tthree\n", ""},
		{0, -1, "     1\tone\n     2\ttwo\n     3\tthree\n", ""},
		{2, 2, "     2\ttwo\n", ""},
		{3, -1, "     3\tthree\n", ""},
		{4, -1, "", "Its first element `4` should be within the range of lines of the file: [1, 3]"},
		{2, 1, "", "Its second element `1` should be larger or equal than its first `2`"},
		{1, 9, "", "Its second element `9` should be smaller than the number of lines in the file: `3`"},
	}
	for _, tt := range tests {
		got, err := View(content, tt.start, tt.end)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("View(%d,%d) err = %v, want %q", tt.start, tt.end, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("View(%d,%d) = %q, %v; want %q", tt.start, tt.end, got, err, tt.want)
		}
	}
	if got, err := View(nil, 1, -1); got != "" || err != nil {
		t.Errorf("View(empty) = %q, %v", got, err)
	}
}

func TestLineCountAndEOL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in  string
		n   int
		eol EOL
	}{
		{"", 0, LF}, {"a", 1, LF}, {"a\n", 1, LF}, {"a\nb", 2, LF}, {"a\r\nb\r\n", 2, CRLF},
		{"a\rb\r", 2, CR}, {BOM + "x\n", 1, LF}, {"\n\n", 2, LF}, {"a\r\nb\nc\r\n", 2 + 1, CRLF},
	} {
		if got := LineCount([]byte(tt.in)); got != tt.n {
			t.Errorf("LineCount(%q) = %d, want %d", tt.in, got, tt.n)
		}
		if got := DetectEOL([]byte(tt.in)); got != tt.eol {
			t.Errorf("DetectEOL(%q) = %q, want %q", tt.in, got, tt.eol)
		}
	}
}
