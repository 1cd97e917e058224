package mcpserver

import (
	"testing"
)

// TestUndoNamesChangesInWords checks that undo names the change it
// reverted as a person would ("line edit", "deletion"), not by the
// operation's internal name ("edit_lines", "delete").
func TestUndoNamesChangesInWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(e *env)
		undo   string // the path to undo
		want   string
	}{
		{name: "line edit", change: func(e *env) {
			e.ok("read", args("path", "f.txt"))
			e.ok("edit", args("path", "f.txt", "edits", []map[string]any{{"from": 1, "to": 1, "content": "ONE"}}))
		}, undo: "f.txt", want: "Undid the line edit of f.txt: restored version "},
		{name: "edit", change: func(e *env) {
			e.ok("edit", args("path", "f.txt", "old_text", "one", "new_text", "uno"))
		}, undo: "f.txt", want: "Undid the edit of f.txt: restored version "},
		{name: "write", change: func(e *env) {
			e.ok("write", args("path", "f.txt", "content", "new\n"))
		}, undo: "f.txt", want: "Undid the write of f.txt: restored version "},
		{name: "patch", change: func(e *env) {
			e.ok("patch", args("path", "f.txt", "patch", "@@\n-one\n+eins\n two\n"))
		}, undo: "f.txt", want: "Undid the patch of f.txt: restored version "},
		{name: "deletion", change: func(e *env) {
			e.ok("delete", args("path", "f.txt"))
		}, undo: "f.txt", want: "Undid the deletion of f.txt: restored version "},
		{name: "move", change: func(e *env) {
			e.ok("move", args("source", "f.txt", "destination", "g.txt"))
		}, undo: "g.txt", want: "Undid the move of g.txt: it had created the file, so the file was removed.\nUndid the move of f.txt: restored version "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"f.txt": "one\ntwo\n"}, envOptions{})
			tc.change(e)
			wantContains(t, e.ok("undo", args("path", tc.undo)).text, tc.want)
			if got := e.file("f.txt"); got != "one\ntwo\n" {
				t.Errorf("after undo f.txt is %q", got)
			}
		})
	}
}

// TestUndoNoun checks the words for every operation undo can revert, and
// that an unknown one still reads as words.
func TestUndoNoun(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"write": "write", "edit": "edit", "edit_lines": "line edit", "insert": "insertion", "patch": "patch",
		"delete": "deletion", "move": "move", "copy": "copy", "upload": "upload", "tree": "archive extraction",
		"mkdir": "directory creation", "some_new_op": "some new op",
	}
	for op, want := range cases {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			if got := undoNoun(op); got != want {
				t.Errorf("undoNoun(%q) = %q, want %q", op, got, want)
			}
		})
	}
}
