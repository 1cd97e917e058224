package mcpserver

import (
	"os"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"old.txt": "old\n", "dir/x": "x"}, envOptions{})

	r := e.ok("write", args("path", "new/deep/a.txt", "content", "hello\n"))
	wantContains(t, r.text, "Created new/deep/a.txt (6 bytes), version ")
	if e.file("new/deep/a.txt") != "hello\n" || r.out["created"] != true || r.out["bytes"] != 6.0 {
		t.Fatalf("%v %q", r.out, e.file("new/deep/a.txt"))
	}

	if err := os.Chmod(e.path("old.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	v := e.ok("read", args("path", "old.txt")).out["version"]
	r = e.ok("write", args("path", "old.txt", "content", "new\r\n", "expected_version", v))
	wantContains(t, r.text, "Wrote old.txt (5 bytes)", "undo restores")
	if e.file("old.txt") != "new\r\n" || r.out["prev_version"] != v {
		t.Fatal(r.out)
	}
	if fi, _ := os.Stat(e.path("old.txt")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v not kept", fi.Mode())
	}

	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.fail("write", args("path", "old.txt", "content", "x", "expected_version", v), "stale_version").text,
			"Hint: re-read the file")
		if e.file("old.txt") != "new\r\n" {
			t.Fatal("stale write changed the file")
		}
		e.fail("write", args("path", "dir", "content", "x"), "invalid_target")
		e.fail("write", args("path", "../x", "content", "x"), "outside_root")
		r := e.call("write", args("path", "a"))
		if !r.err || !strings.Contains(r.text, "content") {
			t.Fatalf("missing content: %+v", r)
		}
	})
}

func TestEdit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"a.go":     "package a\n\nfunc A() {\n\treturn\n}\n",
		"crlf.txt": "alpha\r\nbeta\r\ngamma\r\n",
		"dup.txt":  "x = 1\ny = 2\nx = 1\n",
		"ws.txt":   "keep   \nthis\n",
		"run.sh":   "#!/bin/sh\necho hi\n",
	}, envOptions{})

	r := e.ok("edit", args("path", "a.go", "old_text", "\treturn\n", "new_text", "\treturn // done\n"))
	wantContains(t, r.text, "Edited a.go: 1 replacement at line 4 (match: exact), version ", "     4\t\treturn // done\n", "     1\tpackage a\n")
	if e.file("a.go") != "package a\n\nfunc A() {\n\treturn // done\n}\n" {
		t.Fatal(e.file("a.go"))
	}
	if r.out["tier"] != "exact" || r.out["replacements"] != 1.0 || r.out["start_line"] != 4.0 || r.out["changed"] != true {
		t.Fatal(r.out)
	}

	t.Run("CRLF kept", func(t *testing.T) {
		e := e.on(t)
		// The model sends LF; the file keeps CRLF.
		r := e.ok("edit", args("path", "crlf.txt", "old_text", "alpha\nbeta\n", "new_text", "alpha\nBETA\nbeta2\n"))
		wantContains(t, r.text, "match: line_ending", "line endings were kept")
		if e.file("crlf.txt") != "alpha\r\nBETA\r\nbeta2\r\ngamma\r\n" {
			t.Fatalf("%q", e.file("crlf.txt"))
		}
	})
	t.Run("mode kept", func(t *testing.T) {
		e := e.on(t)
		if err := os.Chmod(e.path("run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.ok("edit", args("path", "run.sh", "old_text", "hi", "new_text", "hello"))
		if fi, _ := os.Stat(e.path("run.sh")); fi.Mode().Perm() != 0o755 {
			t.Fatalf("mode %v", fi.Mode())
		}
	})
	t.Run("tolerant tier", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("edit", args("path", "ws.txt", "old_text", "keep\nthis", "new_text", "kept\nthat"))
		wantContains(t, r.text, "match: trailing_whitespace", "Note: matched ignoring trailing whitespace.")
		if e.file("ws.txt") != "kept\nthat\n" {
			t.Fatalf("%q", e.file("ws.txt"))
		}
	})
	t.Run("ambiguous refused, replace_all", func(t *testing.T) {
		e := e.on(t)
		r := e.fail("edit", args("path", "dup.txt", "old_text", "x = 1", "new_text", "x = 3"), "ambiguous_match")
		wantContains(t, r.text, "on lines 1, 3", "Hint: include more surrounding lines so old_text matches once, or set replace_all", "set replace_all")
		if strings.Contains(r.text, "first or last") {
			t.Fatalf("hint names modes the tool lacks: %s", r.text)
		}
		if lines, _ := r.meta["lines"].([]any); len(lines) != 2 || lines[0] != 1.0 || lines[1] != 3.0 {
			t.Fatalf("meta %v", r.meta)
		}
		if e.file("dup.txt") != "x = 1\ny = 2\nx = 1\n" {
			t.Fatal("ambiguous edit wrote")
		}
		r = e.ok("edit", args("path", "dup.txt", "old_text", "x = 1", "new_text", "x = 3", "replace_all", true))
		wantContains(t, r.text, "2 replacements at lines 1-3")
		if e.file("dup.txt") != "x = 3\ny = 2\nx = 3\n" {
			t.Fatal(e.file("dup.txt"))
		}
	})
	t.Run("no match", func(t *testing.T) {
		e := e.on(t)
		r := e.fail("edit", args("path", "a.go", "old_text", "func B() {", "new_text", "func C() {"), "no_match")
		wantContains(t, r.text, "a.go: ", "Hint: ")
		if r.meta["hint"] == nil {
			t.Fatal(r.meta)
		}
	})
	t.Run("no match names tabs for spaces", func(t *testing.T) {
		e := e.on(t)
		r := e.fail("edit", args("path", "a.go", "old_text", "func A() {\n    return // done\n}", "new_text", "func A() {}"), "no_match")
		wantContains(t, r.text, "old_text indents with spaces where the file has tabs")
	})
	t.Run("delete text", func(t *testing.T) {
		e := e.on(t)
		e.ok("edit", args("path", "a.go", "old_text", " // done", "new_text", ""))
		if e.file("a.go") != "package a\n\nfunc A() {\n\treturn\n}\n" {
			t.Fatal(e.file("a.go"))
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.fail("edit", args("path", "a.go", "old_text", "package"), "bad_request").text, "new_text is missing", `use "" to delete`)
		e.fail("edit", args("path", "a.go", "new_text", "x"), "bad_request")
		e.fail("edit", args("path", "a.go"), "bad_request")
		e.fail("edit", args("path", "a.go", "old_text", "a", "new_text", "a"), "bad_request")
		e.fail("edit", args("path", "a.go", "old_text", "a", "new_text", "b", "edits", []any{map[string]any{"from": 1, "content": "x"}}), "bad_request")
		e.fail("edit", args("path", "nope.go", "old_text", "a", "new_text", "b"), "not_found")
		wantContains(t, e.fail("edit", args("path", "a.go", "old_text", "package", "new_text", "pkg", "expected_version", "0123"), "bad_request").text, "is not a version")
		e.fail("edit", args("path", "a.go", "old_text", "package", "new_text", "pkg", "expected_version", strings.Repeat("0", 32)), "stale_version")
	})
}

// TestEditLinesFreshness: line edits need this session's read of the
// current version (DESIGN.md §5), per session.
func TestEditLinesFreshness(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"f.txt": "one\ntwo\nthree\n"}, envOptions{})
	edits := func(from, to int, content any) map[string]any {
		return args("path", "f.txt", "edits", []any{map[string]any{"from": from, "to": to, "content": content}})
	}

	wantContains(t, e.fail("edit", edits(2, 2, "TWO"), "must_read").text,
		"error patching ", "read file before patching - line numbers unknown")

	e.ok("read", args("path", "f.txt"))
	r := e.ok("edit", edits(2, 2, "TWO"))
	wantContains(t, r.text, "Edited f.txt by line numbers: now line 2 changed, the file has 3 lines", "     2\tTWO\n")
	if e.file("f.txt") != "one\nTWO\nthree\n" {
		t.Fatal(e.file("f.txt"))
	}
	if strings.Contains(r.text, "moved by") {
		t.Fatalf("one line for one line moves nothing: %s", r.text)
	}
	// Our own edit keeps us fresh: no re-read needed for the next one.
	// Deleting the last line moves no line that follows it.
	r = e.ok("edit", edits(3, 3, nil))
	wantContains(t, r.text, "deleted line 3; the file now has 2 lines")
	if strings.Contains(r.text, "moved by") {
		t.Fatalf("no line follows the deleted one: %s", r.text)
	}
	if e.file("f.txt") != "one\nTWO\n" {
		t.Fatalf("%q", e.file("f.txt"))
	}
	// Insert (no "to") before line 1.
	e.ok("edit", args("path", "f.txt", "edits", []any{map[string]any{"from": 1, "content": "zero"}}))
	if e.file("f.txt") != "zero\none\nTWO\n" {
		t.Fatalf("%q", e.file("f.txt"))
	}

	// Someone else changes the file: the stale wording, nothing written.
	e.write("f.txt", "changed\nelsewhere\n")
	r = e.fail("edit", edits(1, 1, "mine"), "stale_version")
	wantContains(t, r.text, "file changed since last read - re-read to get current line numbers")
	if e.file("f.txt") != "changed\nelsewhere\n" {
		t.Fatal("stale line edit wrote")
	}
	// A text replace still works and says the file changed since the read.
	r = e.ok("edit", args("path", "f.txt", "old_text", "elsewhere", "new_text", "here"))
	wantContains(t, r.text, "Note: f.txt changed since you last read it")

	// Freshness is per session: another client has not read the file.
	other := e.connect(nil)
	wantFail(t, callOn(t, other, "edit", edits(1, 1, "x")), "edit", "must_read")
	callOn(t, other, "read", args("path", "f.txt"))
	if r := callOn(t, other, "edit", edits(1, 1, "theirs")); r.err {
		t.Fatal(r.text)
	}
	// ... and their edit makes ours stale.
	e.fail("edit", edits(1, 1, "mine"), "stale_version")

	// expected_version replaces the read-state.
	v := callOn(t, other, "stat", args("path", "f.txt")).out["version"]
	e.ok("edit", args("path", "f.txt", "expected_version", v, "edits", []any{map[string]any{"from": 2, "to": 2, "content": "line2"}}))
	if e.file("f.txt") != "theirs\nline2\n" {
		t.Fatalf("%q", e.file("f.txt"))
	}
	e.fail("edit", args("path", "f.txt", "edits", []any{map[string]any{"from": 9, "to": 9, "content": "x"}}), "bad_request")
}

// TestEditReportsLineShifts: an edit keeps the session's view fresh
// (DESIGN §5), so its result must say how it moved line numbers, or the
// next line edit silently hits the wrong line.
func TestEditReportsLineShifts(t *testing.T) {
	t.Parallel()
	var ten strings.Builder
	for i := 1; i <= 10; i++ {
		ten.WriteString("line")
		ten.WriteString(string(rune('0' + i%10)))
		ten.WriteString("\n")
	}
	tests := []struct {
		name  string
		edit  map[string]any
		want  string // in the result
		moved bool
	}{
		{name: "replace adds lines", edit: args("old_text", "line1\n", "new_text", "import a\nimport b\nline1\n"),
			want: "Note: lines from line 2 on moved by +2 (line 2 is now line 4); use the new numbers", moved: true},
		{name: "replace within a line", edit: args("old_text", "line3", "new_text", "LINE3")},
		{name: "replace all, several places", edit: args("old_text", "line", "new_text", "x\nline", "replace_all", true),
			want: "Note: line numbers moved (numbered as before this change): line 1 by +1, line 2 by +2, line 3 by +3, 6 more ranges, from line 10 on by +10;", moved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"f.txt": ten.String()}, envOptions{})
			e.ok("read", args("path", "f.txt"))
			tt.edit["path"] = "f.txt"
			r := e.ok("edit", tt.edit)
			if got := strings.Contains(r.text, "moved"); got != tt.moved {
				t.Fatalf("moved note = %v, want %v:\n%s", got, tt.moved, r.text)
			}
			wantContains(t, r.text, tt.want)
		})
	}
}

// TestLineDeletionMessages: what a line deletion's result says is true
// of the file it leaves.
func TestLineDeletionMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		from, to      int
		want, not     []string
		after         string
	}{
		{name: "last line, no final newline", content: "a\nb", from: 2, to: 2, after: "a",
			want: []string{"deleted line 2; the file now has 1 line"}, not: []string{"before line", "moved by"}},
		{name: "last of four", content: "1\n2\n3\n4\n", from: 4, to: 4, after: "1\n2\n3\n",
			want: []string{"deleted line 4; the file now has 3 lines"}, not: []string{"before line", "moved by"}},
		{name: "every line", content: "1\n2\n3\n4\n", from: 1, to: 4, after: "",
			want: []string{"deleted lines 1-4; the file is now empty"}, not: []string{"moved by"}},
		{name: "middle", content: "1\n2\n3\n4\n", from: 2, to: 3, after: "1\n4\n",
			want: []string{"deleted lines 2-3; the file now has 2 lines", "lines from line 4 on moved by -2 (line 4 is now line 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"a.txt": tt.content}, envOptions{})
			e.ok("read", args("path", "a.txt"))
			r := e.ok("edit", args("path", "a.txt", "edits", []any{map[string]any{"from": tt.from, "to": tt.to, "content": nil}}))
			wantContains(t, r.text, tt.want...)
			for _, n := range tt.not {
				if strings.Contains(r.text, n) {
					t.Errorf("result says %q:\n%s", n, r.text)
				}
			}
			if got := e.file("a.txt"); got != tt.after {
				t.Fatalf("file = %q, want %q", got, tt.after)
			}
		})
	}
}

// TestAmbiguousWithinOneLine: matches are counted without overlap, as
// replace_all replaces them, and several on one line get a hint that
// fits (more of the line, not more lines).
func TestAmbiguousWithinOneLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"aa.txt": "aaa\n", "a4.txt": "aaaa\n"}, envOptions{})
	e.ok("edit", args("path", "aa.txt", "old_text", "aa", "new_text", "b"))
	if e.file("aa.txt") != "ba\n" {
		t.Fatalf("%q", e.file("aa.txt"))
	}
	r := e.fail("edit", args("path", "a4.txt", "old_text", "aa", "new_text", "b"), "ambiguous_match")
	wantContains(t, r.text, "old_text matches 2 places, all on line 1 (2 times)",
		"Hint: old_text occurs more than once within line 1: include more of that line's text", "set replace_all")
	if lines, _ := r.meta["lines"].([]any); len(lines) != 1 || lines[0] != 1.0 {
		t.Fatalf("meta %v", r.meta)
	}
}

// TestWriteNotesUnseenChange: write replaces a file changed since the
// session read it, and says so as edit and patch do.
func TestWriteNotesUnseenChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "mine\n"}, envOptions{})
	e.ok("read", args("path", "a.txt"))
	r := e.ok("write", args("path", "a.txt", "content", "new\n"))
	if strings.Contains(r.text, "Note:") || r.out["notice"] != nil {
		t.Fatalf("a write over what the session read notes nothing: %s", r.text)
	}
	e.write("a.txt", "theirs\n")
	r = e.ok("write", args("path", "a.txt", "content", "again\n"))
	const want = "a.txt changed since you last read it; the write replaced its current content, which undo brings back"
	wantContains(t, r.text, "Note: "+want+".")
	if r.out["notice"] != want {
		t.Fatalf("notice = %v", r.out["notice"])
	}
	e.ok("undo", args("path", "a.txt"))
	if e.file("a.txt") != "theirs\n" {
		t.Fatalf("undo restored %q", e.file("a.txt"))
	}
}
