package edit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLineShifts(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	ten := "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\n"
	tests := []struct {
		name    string
		content string
		old     string // a replace (all) when set
		new     string
		edits   []LineEdit // else line edits
		want    []Shift
		note    string
	}{
		{name: "two lines added before line 1", content: ten, old: "line1\n", new: "import a\nimport b\nline1\n",
			want: []Shift{{From: 2, By: 2}}, note: "lines from line 2 on moved by +2 (line 2 is now line 4)"},
		{name: "change within a line moves nothing", content: ten, old: "line3", new: "LINE3"},
		{name: "line joined", content: ten, old: "line3\nline4", new: "line3 line4",
			want: []Shift{{From: 4, By: -1}}, note: "lines from line 4 on moved by -1 (line 4 is now line 3)"},
		{name: "several replacements", content: "x\na\nb\nx\nc\nx\nd\n", old: "x\n", new: "x\ny\n",
			want: []Shift{{From: 2, To: 3, By: 1}, {From: 5, To: 5, By: 2}, {From: 7, By: 3}},
			note: "line numbers moved (numbered as before this change): lines 2-3 by +1, line 5 by +2, from line 7 on by +3; lines not named kept their numbers or were changed"},
		{name: "each line changed at its start", content: "a1\na2\na3\n", old: "a", new: "x\na",
			want: []Shift{{From: 1, To: 1, By: 1}, {From: 2, To: 2, By: 2}, {From: 3, By: 3}},
			note: "line numbers moved (numbered as before this change): line 1 by +1, line 2 by +2, from line 3 on by +3; lines not named kept their numbers or were changed"},
		{name: "last line deleted: nothing follows", content: "a\nb", edits: []LineEdit{{From: 2, To: n(2)}}},
		{name: "every line deleted", content: "1\n2\n3\n4\n", edits: []LineEdit{{From: 1, To: n(4)}}},
		{name: "middle line deleted", content: "1\n2\n3\n4\n", edits: []LineEdit{{From: 2, To: n(2)}},
			want: []Shift{{From: 3, By: -1}}, note: "lines from line 3 on moved by -1 (line 3 is now line 2)"},
		{name: "insert at top", content: "1\n2\n", edits: []LineEdit{{From: 1, Content: s("0")}},
			want: []Shift{{From: 1, By: 1}}, note: "lines from line 1 on moved by +1 (line 1 is now line 2)"},
		{name: "moves that cancel out", content: "1\n2\n3\n4\n5\n", edits: []LineEdit{{From: 1, To: n(1), Content: s("a\nb")}, {From: 3, To: n(3)}},
			want: []Shift{{From: 2, To: 2, By: 1}, {From: 4, By: 0}},
			note: "line numbers moved (numbered as before this change): line 2 by +1; lines not named kept their numbers or were changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []Shift
			if tt.old != "" {
				r, err := Replace([]byte(tt.content), tt.old, tt.new, ReplaceOptions{Mode: ModeAll})
				if err != nil {
					t.Fatal(err)
				}
				got = r.Shifts
			} else {
				r, err := EditLines([]byte(tt.content), tt.edits, false, "")
				if err != nil {
					t.Fatal(err)
				}
				got = r.Shifts
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("shifts (-want +got):\n%s", diff)
			}
			if note := ShiftNote(got); note != tt.note {
				t.Errorf("note = %q, want %q", note, tt.note)
			}
		})
	}
}

func TestTextShifts(t *testing.T) {
	t.Parallel()
	got := TextShifts([]byte("1\n2\n3\n4\n"), []byte("1\ntwo\n2\n3\n"))
	want := []Shift{{From: 2, To: 3, By: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
