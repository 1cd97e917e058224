package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestUndoRefusesAChmodSinceAMoveOrCopy: the record of a move's or copy's
// destination keeps the mode it was given, so a chmod made since is a
// conflict, as it is after a write, rather than silently reverted.
func TestUndoRefusesAChmodSinceAMoveOrCopy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		do   func(w *Workspace) error
	}{
		{"move", func(w *Workspace) error { _, err := w.Move("a.txt", "b.txt", false, ""); return err }},
		{"move over a file", func(w *Workspace) error { _, err := w.Move("a.txt", "old.txt", true, ""); return err }},
		{"copy", func(w *Workspace) error { _, err := w.Copy("a.txt", "b.txt", false, nil); return err }},
		{"copy over a file", func(w *Workspace) error { _, err := w.Copy("a.txt", "old.txt", true, nil); return err }},
		{"tree merge", func(w *Workspace) error { return mergeFile(w, "b.txt", 0o640) }},
		{"tree merge over a file", func(w *Workspace) error { return mergeFile(w, "old.txt", 0o640) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "a.txt"), "a", 0o644)
			writeFile(t, filepath.Join(root, "old.txt"), "old", 0o644)
			if err := tc.do(w); err != nil {
				t.Fatal(err)
			}
			dst := "b.txt"
			if strings.Contains(tc.name, "over") {
				dst = "old.txt"
			}
			if err := os.Chmod(filepath.Join(root, dst), 0o600); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			_, err := w.Undo(dst)
			e := wantCode(t, err, fserr.Conflict)
			if !strings.Contains(e.Message, "permissions changed") && !strings.Contains(e.Message, "changed since") {
				t.Errorf("message %q does not say what changed", e.Message)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
		})
	}
}

// mergeFile merges a tree of one file, name with content "t" and
// permission perm, into the root, as a tree upload does.
func mergeFile(w *Workspace, name string, perm os.FileMode) error {
	tw, err := w.CreateTree(".", nil)
	if err != nil {
		return err
	}
	defer tw.Abort()
	if _, err := tw.File(name, perm, strings.NewReader("t")); err != nil {
		return err
	}
	res, err := tw.Commit()
	if err == nil && res.UndoRecorded != 1 {
		err = fmt.Errorf("the merge recorded %d files in undo, want 1", res.UndoRecorded)
	}
	return err
}

// TestUndoTreeMergeModes: undo of a tree merge's file restores the mode the
// replaced file had, and refuses when the mode the merge gave the file
// (a hard-link member's too) changed since.
func TestUndoTreeMergeModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		chmod string // chmod 0600 after the merge
		undo  string
		code  fserr.Code // "": the undo succeeds
		want  map[string]string
	}{
		{name: "replaced file's mode restored", undo: "old.txt",
			want: map[string]string{".": "dir", "old.txt": "-rwx------ old", "f.txt": "-rw-r----- f", "g.txt": "-rw-r----- f"}},
		{name: "added file removed", undo: "f.txt",
			// f.txt goes; g.txt, its hard link, is a file of its own record.
			want: map[string]string{".": "dir", "old.txt": "-rw-r----- t", "g.txt": "-rw-r----- f"}},
		{name: "chmod since on a hard-link member", chmod: "g.txt", undo: "g.txt", code: fserr.Conflict},
		{name: "chmod since on a replaced file", chmod: "old.txt", undo: "old.txt", code: fserr.Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "old.txt"), "old", 0o700)
			tw, err := w.CreateTree(".", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Abort()
			for _, f := range []struct{ name, content string }{{"old.txt", "t"}, {"f.txt", "f"}} {
				if _, err := tw.File(f.name, 0o640, strings.NewReader(f.content)); err != nil {
					t.Fatal(err)
				}
			}
			if err := tw.Link("g.txt", "f.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Commit(); err != nil {
				t.Fatal(err)
			}
			if tt.chmod != "" {
				if err := os.Chmod(filepath.Join(root, tt.chmod), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := shape(t, root)
			_, err = w.Undo(tt.undo)
			if tt.code != "" {
				e := wantCode(t, err, tt.code)
				if !strings.Contains(e.Message, "permissions changed") {
					t.Errorf("message %q does not say what changed", e.Message)
				}
				if diff := cmp.Diff(before, shape(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Undo: %v", err)
			}
			if diff := cmp.Diff(tt.want, shape(t, root)); diff != "" {
				t.Errorf("tree after the undo (-want +got):\n%s", diff)
			}
		})
	}
}
