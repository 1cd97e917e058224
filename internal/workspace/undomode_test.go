package workspace

import (
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
