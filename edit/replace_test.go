package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReplaceLadder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		old, new string
		mode     Mode
		strict   bool
		want     string
		tier     Tier
		count    int
		lines    [2]int // start, end line of the change
	}{
		{name: "exact single line", content: "a\nb\nc\n", old: "b", new: "B", want: "a\nB\nc\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "exact multi line", content: "a\nb\nc\nd\n", old: "b\nc\n", new: "X\n", want: "a\nX\nd\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "exact delete", content: "a\nb\nc\n", old: "b\n", new: "", want: "a\nc\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "mid line", content: "foo(bar, baz)\n", old: "bar", new: "qux", want: "foo(qux, baz)\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "CRLF file LF old", content: "a\r\nb\r\nc\r\n", old: "a\nb\n", new: "x\ny\nz\n", want: "x\r\ny\r\nz\r\nc\r\n", tier: TierLineEnding, count: 1, lines: [2]int{1, 3}},
		{name: "CRLF file exact within line keeps CRLF for new lines", content: "one\r\ntwo\r\n", old: "two", new: "2a\n2b", want: "one\r\n2a\r\n2b\r\n", tier: TierExact, count: 1, lines: [2]int{2, 3}},
		{name: "LF old starting inside a CRLF means the line break", content: "a\r\nb", old: "\nb", new: "0\n", want: "a0\r\n", tier: TierLineEnding, count: 1, lines: [2]int{1, 1}},
		{name: "old ending inside a CRLF means the line break", content: "a\r\nb\r\n", old: "a\r", new: "x", want: "xb\r\n", tier: TierLineEnding, count: 1, lines: [2]int{1, 1}},
		{name: "CRLF old in LF file", content: "a\nb\nc\n", old: "a\r\nb", new: "x\r\ny", want: "x\ny\nc\n", tier: TierLineEnding, count: 1, lines: [2]int{1, 2}},
		{name: "lone CR file", content: "a\rb\rc\r", old: "b\nc", new: "B\nC", want: "a\rB\rC\r", tier: TierLineEnding, count: 1, lines: [2]int{2, 3}},
		{name: "mixed endings keep each span's", content: "a\r\nb\nc\r\n", old: "c", new: "c1\nc2", want: "a\r\nb\nc1\r\nc2\r\n", tier: TierExact, count: 1, lines: [2]int{3, 4}},
		{name: "BOM survives", content: BOM + "first\nsecond\n", old: "first", new: "1st", want: BOM + "1st\nsecond\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "BOM line-window tier", content: BOM + "first  \nsecond\n", old: "first\nsecond", new: "x\ny", want: BOM + "x\ny\n", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 2}},
		{name: "BOM in old means the file's start", content: BOM + "hi\nhi\n", old: BOM + "hi", new: BOM + "ho", want: BOM + "ho\nhi\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "BOM in old, not in new, removes it", content: BOM + "hi\n", old: BOM + "hi", new: "hi", want: "hi\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "BOM alone", content: BOM + "hi\n", old: BOM, new: "", want: "hi\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "BOM in old at a fuzzy tier", content: BOM + "first  \nsecond\n", old: BOM + "first\nsecond", new: BOM + "x\ny", want: BOM + "x\ny\n", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 2}},
		{name: "BOM in old, a stricter match further on does not decide", content: BOM + "hi  \nhi\n", old: BOM + "hi\n", new: BOM + "ho\n", want: BOM + "ho\nhi\n", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 1}},
		{name: "BOM in old, lone CR file, a stricter match further on does not decide", content: BOM + "hi  \rhi\r", old: BOM + "hi\r", new: BOM + "ho\r", want: BOM + "ho\rhi\r", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 1}},
		{name: "BOM in old, mode all, only the start", content: BOM + "k k\n", old: BOM + "k", new: BOM + "K", mode: ModeAll, want: BOM + "K k\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "trailing whitespace in file", content: "a  \nb\t\nc\n", old: "a\nb\n", new: "A\nB\n", want: "A\nB\nc\n", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 2}},
		{name: "trailing whitespace in old", content: "a\nb\nc\n", old: "a \nb  ", new: "A\nB", want: "A\nB\nc\n", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 2}},
		{name: "trimmed surrounding blank", content: "x = 1\ny = 2\n", old: "\n\n  y = 2  \n\n", new: "\n\n  y = 3  \n\n", want: "x = 1\ny = 3\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 2}},
		{name: "indentation spaces re-indented", content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", old: "if x {\n\treturn 1\n}", new: "if y {\n\treturn 2\n}", want: "func f() {\n\tif y {\n\t\treturn 2\n\t}\n}\n", tier: TierIndentation, count: 1, lines: [2]int{2, 4}},
		{name: "indentation deeper old", content: "class A:\n    def f(self):\n        return 1\n", old: "        def f(self):\n            return 1", new: "        def g(self):\n            return 2", want: "class A:\n    def g(self):\n        return 2\n", tier: TierIndentation, count: 1, lines: [2]int{2, 3}},
		{name: "indentation keeps blank lines", content: "\tif a {\n\n\t\tb()\n\t}\n", old: "if a {\n\n\tb()\n}", new: "if a {\n\n\tc()\n}", want: "\tif a {\n\n\t\tc()\n\t}\n", tier: TierIndentation, count: 1, lines: [2]int{1, 4}},
		{name: "trimmed deletion removes the line with its indentation", content: "x\n\tfoo()\ny\n", old: "  foo()\n", new: "", want: "x\ny\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 2}},
		{name: "trimmed deletion removes trailing blanks too", content: "x\r\n\tfoo()  \r\ny\r\n", old: "foo()\n", new: "", want: "x\r\ny\r\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 2}},
		{name: "trimmed deletion of the unterminated last line keeps it unterminated", content: "x\n  foo()", old: "foo()\n", new: "", want: "x", tier: TierTrimmed, count: 1, lines: [2]int{1, 1}},
		{name: "trimmed deletion of the unterminated last line, CRLF", content: "x\r\n\tfoo()  ", old: "foo()\n", new: "", want: "x", tier: TierTrimmed, count: 1, lines: [2]int{1, 1}},
		{name: "indentation deletion through the unterminated last line", content: "x\n  a\n  b", old: "a\nb\n", new: "", want: "x", tier: TierIndentation, count: 1, lines: [2]int{1, 1}},
		{name: "trailing whitespace deletion of the unterminated last line", content: "a\nb  ", old: "b\n", new: "", want: "a", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 1}},
		{name: "mode all deleting lines through the unterminated last line", content: "x\n  foo() \n  foo() ", old: "foo()\n", new: "", mode: ModeAll, want: "x", tier: TierTrimmed, count: 2, lines: [2]int{1, 1}},
		{name: "exact deletion at the unterminated end deletes only old", content: "a\nb", old: "b", new: "", want: "a\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "trimmed deletion of an old starting with a line break removes the line", content: "x\n  foo()\ny\n", old: "\nfoo()", new: "", want: "x\ny\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 2}},
		{name: "trimmed deletion of an old starting with a line break, last line", content: "x\n  foo()", old: "\nfoo()", new: "", want: "x", tier: TierTrimmed, count: 1, lines: [2]int{1, 1}},
		{name: "indentation deletion of an old starting with blank lines removes the lines", content: "x\n\tfoo()\n\tbar()\ny\n", old: "\n\nfoo()\nbar()", new: "", want: "x\ny\n", tier: TierIndentation, count: 1, lines: [2]int{2, 2}},
		{name: "trimmed re-indents further lines to the match", content: "x\n  foo()\ny\n", old: "    foo()\n", new: "    bar()\n    baz()\n", want: "x\n  bar()\n  baz()\ny\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 3}},
		{name: "trimmed matches after punctuation", content: "f(x = 1)\n", old: " x = 1", new: " y = 2", want: "f(y = 2)\n", tier: TierTrimmed, count: 1, lines: [2]int{1, 1}},
		{name: "trimmed matches before punctuation", content: "f(x = 1)\n", old: "x = 1 ", new: "y = 2 ", want: "f(y = 2)\n", tier: TierTrimmed, count: 1, lines: [2]int{1, 1}},
		{name: "trimmed skips an occurrence inside a word", content: "max = 1\nx = 1\n", old: "  x = 1", new: "  y = 2", want: "max = 1\ny = 2\n", tier: TierTrimmed, count: 1, lines: [2]int{2, 2}},
		{name: "indentation keeps relative indent of a flush-left replacement", content: "  if x:\n    y\n", old: "    if x:\n      y", new: "if z:\n  w", want: "  if z:\n    w\n", tier: TierIndentation, count: 1, lines: [2]int{1, 2}},
		{name: "delete via indentation tier removes whole lines", content: "x\n\tfoo()\n\tbar()\ny\n", old: "foo()\nbar()\n", new: "", want: "x\ny\n", tier: TierIndentation, count: 1, lines: [2]int{2, 2}},
		{name: "curly quotes in file", content: "say(\u201chello\u201d)\n", old: `say("hello")`, new: `say("bye")`, want: "say(\"bye\")\n", tier: TierPunctuation, count: 1, lines: [2]int{1, 1}},
		{name: "dash and nbsp in file", content: "a \u2014 b\u00a0c\n", old: "a - b c", new: "a - z", want: "a - z\n", tier: TierPunctuation, count: 1, lines: [2]int{1, 1}},
		{name: "curly quotes in old, ASCII in file", content: "it's here\n", old: "it\u2019s here", new: "it is here", want: "it is here\n", tier: TierPunctuation, count: 1, lines: [2]int{1, 1}},
		{name: "curly quotes indented multi line", content: "\tfmt.Println(\u201ca\u201d)\n\tfmt.Println(\u2018b\u2019)\n", old: "fmt.Println(\"a\")\nfmt.Println('b')", new: "x()\ny()", want: "\tx()\n\ty()\n", tier: TierPunctuation, count: 1, lines: [2]int{1, 2}},
		{name: "mode all non-overlapping", content: "aaa\n", old: "aa", new: "b", mode: ModeAll, want: "ba\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "unique counts as mode all does", content: "aaa\n", old: "aa", new: "b", want: "ba\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "mode last among non-overlapping", content: "aaaa\n", old: "aa", new: "b", mode: ModeLast, want: "aab\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "mode all several", content: "x y x y x\n", old: "x", new: "z", mode: ModeAll, want: "z y z y z\n", tier: TierExact, count: 3, lines: [2]int{1, 1}},
		{name: "mode first", content: "k\nk\nk\n", old: "k", new: "K", mode: ModeFirst, want: "K\nk\nk\n", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "mode last", content: "k\nk\nk\n", old: "k", new: "K", mode: ModeLast, want: "k\nk\nK\n", tier: TierExact, count: 1, lines: [2]int{3, 3}},
		{name: "one line file without newline", content: "only", old: "only", new: "one", want: "one", tier: TierExact, count: 1, lines: [2]int{1, 1}},
		{name: "no trailing newline multi line", content: "a\nb", old: "a\nb", new: "a\nB", want: "a\nB", tier: TierExact, count: 1, lines: [2]int{1, 2}},
		{name: "no trailing newline fuzzy", content: "a\n  b  ", old: "a\n  b\n", new: "a\n  c\n", want: "a\n  c", tier: TierTrailingSpace, count: 1, lines: [2]int{1, 2}},
		{name: "exact beats fuzzy", content: "  x() \nx()\n", old: "x()\n", new: "y()\n", want: "  x() \ny()\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "strict exact", content: "a\nb\n", old: "b", new: "c", strict: true, want: "a\nc\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
		{name: "unicode text", content: "héllo wörld\n日本語\n", old: "日本", new: "中国", want: "héllo wörld\n中国語\n", tier: TierExact, count: 1, lines: [2]int{2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			content := []byte(tt.content)
			r, err := Replace(content, tt.old, tt.new, ReplaceOptions{Mode: tt.mode, Strict: tt.strict})
			if err != nil {
				t.Fatalf("Replace: %v (hint %q)", err, hintOf(err))
			}
			if diff := cmp.Diff(tt.want, string(r.Content)); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			if r.Tier != tt.tier {
				t.Errorf("tier = %v, want %v", r.Tier, tt.tier)
			}
			if r.Count != tt.count {
				t.Errorf("count = %d, want %d", r.Count, tt.count)
			}
			if got := [2]int{r.StartLine, r.EndLine}; got != tt.lines {
				t.Errorf("lines = %v, want %v", got, tt.lines)
			}
			if string(content) != tt.content {
				t.Errorf("input modified")
			}
			if r.Snippet == "" {
				t.Errorf("empty snippet")
			}
		})
	}
}

func hintOf(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Hint
	}
	return ""
}

func TestReplaceErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		old, new string
		strict   bool
		code     string
		msg      string // substring of the message
		hint     string // substring of the hint
		lines    []int
	}{
		{name: "empty old", content: "a\n", old: "", new: "x", code: CodeBadRequest, msg: "must not be empty"},
		{name: "old equals new", content: "a\n", old: "a", new: "a", code: CodeBadRequest, msg: "identical"},
		{name: "a CRLF-splitting occurrence still counts for uniqueness", content: "a\r\nb\r\nc\nb", old: "\nb", new: "X", code: CodeAmbiguousMatch},
		{name: "whitespace only old", content: "a  b\n", old: "  ", new: "x", code: CodeBadRequest, msg: "only whitespace"},
		{name: "newline only old", content: "a\n\nb\n", old: "\n", new: "x", code: CodeBadRequest, msg: "only whitespace"},
		{name: "non-overlapping occurrences counted", content: "aaaa\n", old: "aa", new: "b", code: CodeAmbiguousMatch,
			msg: "old_text matches 2 places, all on line 1 (2 times)", hint: "more than once within line 1: include more of that line's text", lines: []int{1}},
		{name: "ambiguous lines listed", content: "x\ny\nx\n", old: "x", new: "z", code: CodeAmbiguousMatch, msg: "2 places, on lines 1, 3", hint: "include more surrounding lines", lines: []int{1, 3}},
		{name: "ambiguous lines counted", content: "x x\ny\nx\nx x x\n", old: "x", new: "z", code: CodeAmbiguousMatch, msg: "6 places, on lines 1 (2 times), 3, 4 (3 times)", lines: []int{1, 3, 4}},
		{name: "ambiguous lines capped", content: strings.Repeat("}\n", 300), old: "}", new: "z", code: CodeAmbiguousMatch,
			msg: "300 places, on lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 280 more lines", lines: seq(1, 100)},
		{name: "ambiguous count capped", content: strings.Repeat("ab", 5000) + "\n", old: "ab", new: "z", code: CodeAmbiguousMatch,
			msg: "old_text matches more than 1000 places, the first 1001 on line 1 (1001 times)", lines: []int{1}},
		{name: "repeated lines do not overlap", content: "x\nx\nx\nx\n", old: "x  \nx", new: "z", code: CodeAmbiguousMatch, msg: "2 places (ignoring trailing whitespace), on lines 1, 3"},
		{name: "ambiguous in fuzzy tier names it", content: "\tx()\n\ty()\n  x()\n  y()\n", old: "x()\ny()", new: "z()", code: CodeAmbiguousMatch, msg: "ignoring indentation", lines: []int{1, 3}},
		{name: "no match hint nearest", content: "func main() {\n\tfmt.Println(\"hi\")\n}\n", old: "fmt.Println(\"hello\")", new: "x", code: CodeNoMatch, msg: "not found", hint: "closest match at line 2"},
		{name: "no match char diff", content: "value := computeTotal(items)\n", old: "value := computeSum(items)", new: "x", code: CodeNoMatch, hint: "{-Sum-}{+Total+}"},
		{name: "numbered prefixes tab", content: "alpha\nbeta\n", old: "     1\talpha\n     2\tbeta", new: "x", code: CodeNoMatch, hint: "line-number prefixes"},
		{name: "numbered prefixes colon", content: "alpha\nbeta\n", old: "1: alpha\n2: beta", new: "x", code: CodeNoMatch, hint: "line-number prefixes"},
		{name: "numbered prefixes pipe", content: "alpha\nbeta\n", old: "   1 | alpha\n   2 | beta", new: "x", code: CodeNoMatch, hint: "line-number prefixes"},
		{name: "BOM in old, none in the file", content: "hi\n", old: BOM + "hi", new: "ho", code: CodeNoMatch},
		{name: "BOM in old matches only the start", content: BOM + "a\nhi\n", old: BOM + "hi", new: "ho", code: CodeNoMatch},
		{name: "empty file", content: "", old: "a", new: "b", code: CodeNoMatch, hint: "no similar text"},
		{name: "tabs never taken for spaces", content: "if a {\n\tb()\n}\n", old: "if a {\n    b()\n}", new: "z", code: CodeNoMatch},
		{name: "mixed indentation relative differs", content: "\tif a {\n\t    b()\n\t}\n", old: "if a {\n\tb()\n}", new: "z", code: CodeNoMatch},
		{name: "strict refuses fuzzy", content: "a  \nb\n", old: "a\nb", new: "c", strict: true, code: CodeNoMatch, msg: "verbatim"},
		{name: "trimmed old starting a line does not match inside one", content: "max = 1\n", old: "\nx = 1", new: "\ny = 2", code: CodeNoMatch},
		{name: "trimmed old ending a line does not match inside one", content: "x = 10\n", old: "x = 1\n", new: "x = 2\n", code: CodeNoMatch},
		{name: "hint when old is a prefix of the nearest line", content: "x = 10\n", old: "x = 1\n", new: "x = 2\n", strict: true, code: CodeNoMatch, hint: "x = 1{--}{+0+}"},
		{name: "partial line fuzzy refused", content: "prefix draft suffix\n", old: "draft  \nx", new: "y", code: CodeNoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Replace([]byte(tt.content), tt.old, tt.new, ReplaceOptions{Strict: tt.strict})
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Code != tt.code {
				t.Errorf("code = %q, want %q (%s)", e.Code, tt.code, e.Message)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
			if !strings.Contains(e.Hint, tt.hint) {
				t.Errorf("hint %q does not contain %q", e.Hint, tt.hint)
			}
			if tt.lines != nil {
				if diff := cmp.Diff(tt.lines, e.Lines); diff != "" {
					t.Errorf("lines (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestNoMatchHintNamesTheDifference: when old differs from the nearest
// text only in line endings, blank space or tabs and spaces, the no_match
// hint says so, in the caller's names, with the option that would accept
// it (under strict, when a tolerant tier matches); it never shows a diff
// with nothing in it.
func TestNoMatchHintNamesTheDifference(t *testing.T) {
	t.Parallel()
	http := Names{Old: "old_str", Tolerant: `send "match": "tolerant"`}
	tests := []struct {
		name    string
		content string
		old     string
		strict  bool
		names   Names
		hint    []string // substrings of the hint
	}{
		{name: "LF old in a CRLF file", content: "x\r\ny\r\n", old: "x\ny", strict: true,
			hint: []string{"old_text matches the file at line 1 (ignoring line endings)", "old_text uses LF line endings, the file uses CRLF",
				"use tolerant matching to accept it (match tier line_ending)"}},
		{name: "in the front's names", content: "x\r\ny\r\n", old: "x\ny", strict: true, names: http,
			hint: []string{"old_str uses LF line endings, the file uses CRLF", `send "match": "tolerant" to accept it`}},
		{name: "CRLF old in an LF file", content: "a\nx\ny\n", old: "x\r\ny", strict: true,
			hint: []string{"at line 2", "old_text uses CRLF line endings, the file uses LF"}},
		{name: "line endings at several places", content: "x\r\ny\r\nx\r\ny\r\n", old: "x\ny", strict: true,
			hint: []string{"at lines 1, 3 (ignoring line endings)"}},
		{name: "trailing whitespace", content: "foo  \nbar\n", old: "foo\nbar", strict: true,
			hint: []string{"differ only in spaces or tabs at the ends of lines: foo{--}{+··+}⏎bar", "match tier trailing_whitespace"}},
		{name: "line endings and trailing whitespace", content: "foo  \r\nbar\r\n", old: "foo\nbar", strict: true,
			hint: []string{"old_text uses LF line endings, the file uses CRLF, and they differ only in spaces or tabs at the ends of lines"}},
		{name: "blank lines around", content: "\n\nfoo\nbar\n", old: "\nfoo\nbar\n\n", strict: true,
			hint: []string{"blank lines or spaces around it", "match tier trimmed"}},
		{name: "indentation", content: "\tfoo()\n\tbar()\n", old: "foo()\nbar()", strict: true,
			hint: []string{"differ only in indentation", "match tier indentation"}},
		{name: "typographic quotes", content: "a = \"x\"\n", old: "a = \u201cx\u201d", strict: true,
			hint: []string{"typographic punctuation", `a = {-“x”-}{+"x"+}`, "match tier punctuation"}},
		{name: "spaces where the file has tabs", content: "if a {\n\tb()\n}\n", old: "if a {\n    b()\n}",
			hint: []string{"{-····-}{+→+}", "old_text indents with spaces where the file has tabs", "copy the file's indentation"}},
		{name: "tabs where the file has spaces", content: "if a {\n    b()\n}\n", old: "if a {\n\tb()\n}", strict: true, names: http,
			hint: []string{"old_str indents with tabs where the file has spaces"}},
		{name: "spaces within a line", content: "foo\tbar\n", old: "foo bar",
			hint: []string{"foo{-·-}{+→+}bar", "differ only in spaces and tabs"}},
		{name: "an invisible character is shown", content: "a\u200bb = 1\n", old: "ab = 1",
			hint: []string{"a{--}{+<U+200B>+}b = 1"}},
		{name: "a combining mark is shown (NFD file, NFC old)", content: "cafe\u0301 = 1\n", old: "caf\u00e9 = 1",
			hint: []string{"caf{-é-}{+e<U+0301>+} = 1"}},
		{name: "strict names line endings besides other differences", content: "x\r\ny\r\n", old: "x\nz", strict: true,
			hint: []string{"x⏎{-z-}{+y+}", "old_text uses LF line endings, the file uses CRLF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Replace([]byte(tt.content), tt.old, "Z", ReplaceOptions{Strict: tt.strict, Names: tt.names})
			e, ok := err.(*Error)
			if !ok || e.Code != CodeNoMatch {
				t.Fatalf("err = %v, want no_match", err)
			}
			for _, h := range tt.hint {
				if !strings.Contains(e.Hint, h) {
					t.Errorf("hint %q does not contain %q", e.Hint, h)
				}
			}
			if strings.Contains(e.Hint, "{--}{++}") || strings.Contains(e.Hint, "100% similar") {
				t.Errorf("hint shows a diff with nothing in it: %q", e.Hint)
			}
		})
	}
}

// TestNearestNeverShowsAnEmptyDiff: the nearest-region hint, when the
// region equals old but for what matching set aside (line endings, blank
// lines around it), names that instead of showing an empty diff. (The
// ladder matches such texts, so Replace reaches this only past the
// hint's scan limit; noMatchHint is called directly.)
func TestNearestNeverShowsAnEmptyDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		content, old, want string
	}{
		{"x\r\ny\r\n", "x\ny", "the text at line 1 equals old_text except that old_text uses LF line endings, the file uses CRLF"},
		{"a\nx\ny\n", "x\r\ny", "the text at line 2 equals old_text except that old_text uses CRLF line endings, the file uses LF"},
		{"x\ny\n", "\n\nx\ny", "the text at line 1 equals old_text except that old_text has blank lines or spaces around it"},
	}
	for _, tt := range tests {
		if got := noMatchHint([]byte(tt.content), tt.old, false, Names{}); !strings.Contains(got, tt.want) || strings.Contains(got, "{--}{++}") {
			t.Errorf("noMatchHint(%q, %q) = %q, want it to contain %q", tt.content, tt.old, got, tt.want)
		}
	}
}

func TestReplaceSnippetAndDiff(t *testing.T) {
	t.Parallel()
	content := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	r, err := Replace(content, "5\n", "five\n", ReplaceOptions{Diff: true, Path: "n.txt"})
	if err != nil {
		t.Fatal(err)
	}
	wantSnippet := "     2\t2\n     3\t3\n     4\t4\n     5\tfive\n     6\t6\n     7\t7\n     8\t8\n"
	if diff := cmp.Diff(wantSnippet, r.Snippet); diff != "" {
		t.Errorf("snippet (-want +got):\n%s", diff)
	}
	wantDiff := "--- a/n.txt\n+++ b/n.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if diff := cmp.Diff(wantDiff, r.Diff); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}

func TestReplaceDiffIsMinimal(t *testing.T) {
	t.Parallel()
	content := []byte("\ta()\n\tb()\n\tc()\n")
	r, err := Replace(content, "a()\nb()\nc()", "a()\nB()\nc()", ReplaceOptions{Diff: true, Path: "f.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/f.go\n+++ b/f.go\n@@ -1,3 +1,3 @@\n \ta()\n-\tb()\n+\tB()\n \tc()\n"
	if diff := cmp.Diff(want, r.Diff); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}

// TestReplaceDiffSeveralOnOneLine: matches that share a line are one
// change of that line in the diff, not a diff that drops them.
func TestReplaceDiffSeveralOnOneLine(t *testing.T) {
	t.Parallel()
	r, err := Replace([]byte("a\nx y x\nb\n"), "x", "z", ReplaceOptions{Mode: ModeAll, Diff: true, Path: "f"})
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-x y x\n+z y z\n b\n"
	if diff := cmp.Diff(want, r.Diff); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}

func TestLocateOffsetsMapBack(t *testing.T) {
	t.Parallel()
	// Every tier's span must map to the original bytes it stands for.
	content := []byte("x\r\n\t\u201cquoted\u201d  \r\ny\r\n")
	tier, ms := Locate(content, "\"quoted\"", false)
	if tier != TierPunctuation || len(ms) != 1 {
		t.Fatalf("tier %v, %d matches", tier, len(ms))
	}
	got := string(content[ms[0].Start:ms[0].End])
	if want := "\u201cquoted\u201d"; got != want {
		t.Errorf("span = %q, want %q", got, want)
	}
}

// seq returns from, from+1, …, to.
func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestRefusalsUseTheCallersNames: Replace's argument refusals name the
// caller's own parameters and its own way to add lines.
func TestRefusalsUseTheCallersNames(t *testing.T) {
	t.Parallel()
	http := Names{Old: "old_str", New: "new_str", AddLines: "use the insert command"}
	tests := []struct {
		old, new      string
		names         Names
		message, hint string
	}{
		{"", "x", Names{}, "old_text must not be empty", "to add lines, give edits with from and no to"},
		{"", "x", http, "old_str must not be empty", "to add lines, use the insert command"},
		{"a", "a", http, "old_str and new_str are identical", ""},
		{"  ", "x", http, "old_str is only whitespace", ""},
	}
	for _, tt := range tests {
		_, err := Replace([]byte("a\n"), tt.old, tt.new, ReplaceOptions{Names: tt.names})
		e, ok := err.(*Error)
		if !ok || !strings.HasPrefix(e.Message, tt.message) || !strings.Contains(e.Hint, tt.hint) {
			t.Errorf("Replace(%q, %q) with %+v: %v; want %q, hint with %q", tt.old, tt.new, tt.names, err, tt.message, tt.hint)
		}
	}
}
