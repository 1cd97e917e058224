package ops

import (
	"context"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
)

// TestUndoOfAChangeTheCallerNeverSaw: undo reverts a file's newest
// change, whoever made it. A caller whose view of the file is outdated
// because another caller changed it since would revert that change,
// which it never saw, believing it undoes its own: stale_version, and
// nothing changes, until it reads the file. Its own last change it may
// always undo, even one made on a view already outdated (a replace).
func TestUndoOfAChangeTheCallerNeverSaw(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "a\nb\nc\n"
	line := func(caller string, n int, content string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: "f.txt", Edits: []edit.LineEdit{{From: n, To: ptr(n), Content: ptr(content)}}, Caller: caller})
			return err
		}
	}
	replace := func(caller, old, new string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Edit(ctx, EditRequest{Path: "f.txt", Old: old, New: new, Caller: caller})
			return err
		}
	}
	patchText := func(caller, text string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: text, Path: "f.txt", Caller: caller})
			return err
		}
	}
	read := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Read(ctx, ReadRequest{Path: "f.txt", Caller: caller})
			return err
		}
	}
	undo := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Undo(ctx, UndoRequest{Path: "f.txt", Caller: caller})
			return err
		}
	}
	tests := []struct {
		name  string
		steps []func(*Engine) error
		undo  string     // the caller whose undo follows the steps
		code  fserr.Code // "" for success
		want  string     // the file afterwards
	}{
		{"another caller's later change", []func(*Engine) error{read("s1"), line("s1", 1, "A"), read("s2"), line("s2", 3, "C")},
			"s1", fserr.StaleVersion, "A\nb\nC\n"},
		{"another caller's later change, read since", []func(*Engine) error{read("s1"), line("s1", 1, "A"), read("s2"), line("s2", 3, "C"), read("s1")},
			"s1", "", "A\nb\nc\n"},
		{"its own change", []func(*Engine) error{read("s1"), line("s1", 1, "A"), read("s2")},
			"s1", "", orig},
		{"its own replace on an outdated view", []func(*Engine) error{read("s1"), read("s2"), line("s2", 3, "C"), replace("s1", "a", "A")},
			"s1", "", "a\nb\nC\n"},
		{"its own patch on an outdated view", []func(*Engine) error{read("s1"), read("s2"), line("s2", 3, "C"), patchText("s1", "-a\n+A")},
			"s1", "", "a\nb\nC\n"},
		{"its own replace undone, another's change next", []func(*Engine) error{read("s1"), read("s2"), line("s2", 3, "C"), replace("s1", "a", "A"), undo("s1")},
			"s1", fserr.StaleVersion, "a\nb\nC\n"},
		{"its own changes, undone one by one", []func(*Engine) error{read("s1"), line("s1", 1, "A"), line("s1", 2, "B"), undo("s1")},
			"s1", "", orig},
		{"a caller that never read (a stateless front)", []func(*Engine) error{read("s1"), line("s1", 1, "A")},
			"", "", orig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"f.txt": orig}, Options{})
			for i, step := range tt.steps {
				if err := step(e); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			err := undo(tt.undo)(e)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("undo: %v", err)
				}
			} else {
				wantCode(t, err, tt.code)
			}
			if got := readFile(t, root, "f.txt"); got != tt.want {
				t.Errorf("f.txt = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUndoBringsBackTheView: undoing a delete or a move brings the file
// back (under its old name) with the content the caller saw, whether the
// change was a delete, a move, or a patch's "Delete File" or "Move to"
// (which also changed it): a caller that knew the file knows it again,
// and its line edits need no new read. A view that was outdated stays so,
// and a file the caller never read stays unread.
func TestUndoBringsBackTheView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const orig = "a\nb\nc\n"
	read := func(caller, p string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Read(ctx, ReadRequest{Path: p, Caller: caller})
			return err
		}
	}
	move := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Move(ctx, MoveRequest{Source: "f.txt", Destination: "g.txt", Caller: caller})
			return err
		}
	}
	patchMove := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n*** Move to: g.txt\n@@\n-b\n+B\n*** End Patch", Caller: caller})
			return err
		}
	}
	line := func(caller, p string, n int, content string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.EditLines(ctx, EditLinesRequest{Path: p, Edits: []edit.LineEdit{{From: n, To: ptr(n), Content: ptr(content)}}, Caller: caller})
			return err
		}
	}
	patchDelete := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Delete File: f.txt\n*** End Patch", Caller: caller})
			return err
		}
	}
	del := func(caller string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Delete(ctx, DeleteRequest{Path: "f.txt", Caller: caller})
			return err
		}
	}
	write := func(caller, content string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte(content), Caller: caller})
			return err
		}
	}
	undoAt := func(caller, p string) func(*Engine) error {
		return func(e *Engine) error {
			_, err := e.Undo(ctx, UndoRequest{Path: p, Caller: caller})
			return err
		}
	}
	undo := func(caller string) func(*Engine) error { return undoAt(caller, "g.txt") }
	type steps = []func(*Engine) error
	tests := []struct {
		name  string
		steps steps
		code  fserr.Code // of s1's line edit of f.txt that follows; "" for success
	}{
		{"a move", steps{read("s1", "f.txt"), move("s1"), undo("s1")}, ""},
		{"a move, a line edit, both undone", steps{read("s1", "f.txt"), move("s1"), line("s1", "g.txt", 1, "A"), undo("s1"), undo("s1")}, ""},
		{"a patch's move", steps{read("s1", "f.txt"), patchMove("s1"), undo("s1")}, ""},
		{"a move of a file the caller never read", steps{move("s1"), undo("s1")}, fserr.MustRead},
		{"a move on an outdated view", steps{read("s1", "f.txt"), read("s2", "f.txt"), line("s2", "f.txt", 1, "A"), move("s1"), undo("s1")}, fserr.MustRead},
		{"another caller's move", steps{read("s1", "f.txt"), read("s2", "f.txt"), move("s2"), undo("s2")}, ""},
		{"a delete", steps{read("s1", "f.txt"), del("s1"), undoAt("s1", "f.txt")}, ""},
		{"a patch's delete", steps{read("s1", "f.txt"), patchDelete("s1"), undoAt("s1", "f.txt")}, ""},
		{"a delete on an outdated view", steps{read("s1", "f.txt"), read("s2", "f.txt"), line("s2", "f.txt", 1, "A"), del("s1"), undoAt("s1", "f.txt")}, fserr.MustRead},
		{"a delete, then another's file", steps{read("s1", "f.txt"), del("s1"), write("s2", orig)}, fserr.MustRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, _ := newEngine(t, map[string]string{"f.txt": orig}, Options{})
			for i, step := range tt.steps {
				if err := step(e); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			err := line("s1", "f.txt", 3, "C")(e)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("line edit after the undo: %v", err)
				}
				return
			}
			wantCode(t, err, tt.code)
		})
	}
}

// TestUndoExpectedVersion: with expected_version, an undo (of a caller
// that keeps no view, as over HTTP) runs only while the file has that
// version, the one its newest change left: another's later change is not
// reverted unseen. A mistyped version is bad_request; a deleted file has
// no version to expect.
func TestUndoExpectedVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, root := newEngine(t, map[string]string{"f.txt": "one\n"}, Options{})
	mine, err := eng.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("two\n")})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := eng.Write(ctx, WriteRequest{Path: "f.txt", Content: []byte("three\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expected string
		code     fserr.Code
	}{
		{mine.Version, fserr.StaleVersion},
		{"not-a-version", fserr.BadRequest},
	} {
		_, err := eng.Undo(ctx, UndoRequest{Path: "f.txt", ExpectedVersion: tc.expected})
		if fserr.CodeOf(err) != tc.code {
			t.Errorf("undo expecting %q: %v, want %s", tc.expected, err, tc.code)
		}
		if got := readFile(t, root, "f.txt"); got != "three\n" {
			t.Fatalf("a refused undo changed the file to %q", got)
		}
	}
	if _, err := eng.Undo(ctx, UndoRequest{Path: "f.txt", ExpectedVersion: theirs.Version}); err != nil {
		t.Fatalf("undo expecting the current version: %v", err)
	}
	if got := readFile(t, root, "f.txt"); got != "two\n" {
		t.Errorf("after the undo: %q, want two", got)
	}
	if _, err := eng.Delete(ctx, DeleteRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Undo(ctx, UndoRequest{Path: "f.txt", ExpectedVersion: mine.Version}); fserr.CodeOf(err) != fserr.StaleVersion {
		t.Errorf("undo of a delete expecting a version: %v, want stale_version", err)
	}
}
