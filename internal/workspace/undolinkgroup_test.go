package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// TestUndoGroupWithLinkAlreadyUndone: an undo of a patch's move of a
// link (the link removed, its content written under a new name) that was
// killed after it had put the link back and removed the new file, but
// before it dropped the records, is recognised by the next Undo as
// already done. The link's record is judged on the link itself, not on
// the file it leads to (which made it look changed since: a 409 that
// blocked the new name's older history), nor refused when the link
// leads out of the root.
func TestUndoGroupWithLinkAlreadyUndone(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"real.txt", "/etc/passwd"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			makeTree(t, root, map[string]string{"real.txt": "keep me\n", "alias": "-> " + target})
			original := snapshot(t, root)
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			commit(t, w, "patch",
				Change{Path: "alias", Delete: true, Entry: true, Group: "m"},
				Change{Path: "moved.txt", Content: []byte("keep me, moved\n"), Group: "m"})
			w.hooks.crashAt = func(step string) bool { return step == "undone" }
			if _, err := w.Undo("moved.txt"); !errors.Is(err, errCrashed) {
				t.Fatalf("Undo = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			res, err := w2.Undo("moved.txt")
			if err != nil {
				t.Fatalf("Undo after the crash: %v", err)
			}
			if !res.AlreadyUndone || len(res.Also) != 1 || !res.Also[0].AlreadyUndone {
				t.Errorf("Undo = %+v, want both files already undone", res)
			}
			if diff := cmp.Diff(original, snapshot(t, root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			if n := w2.journal.len(); n != 0 {
				t.Errorf("%d records left", n)
			}
		})
	}
}

// TestUndoMoveRefusesALinkPutOnItsPath: the other side of a move is
// recorded under its own path, links resolved. A symbolic link put since
// on that path, or on a directory above it, is a change since the move:
// the undo refuses instead of writing the moved content through the link
// (to wherever it now leads) and removing the destination.
func TestUndoMoveRefusesALinkPutOnItsPath(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		src  string
		link func(t *testing.T, root string)
	}{
		"on the file": {"a", func(t *testing.T, root string) {
			if err := os.Symlink("elsewhere", filepath.Join(root, "a")); err != nil {
				t.Fatal(err)
			}
		}},
		"on its directory": {"d/a", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, "e"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("e", filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, tc.src), "moved\n", 0o644)
			if _, err := w.Move(tc.src, "b", false, ""); err != nil {
				t.Fatal(err)
			}
			tc.link(t, root)
			before := snapshot(t, root)
			_, err := w.Undo("b")
			wantCode(t, err, fserr.Conflict)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed by a refused undo (-before +after):\n%s", diff)
			}
		})
	}
}
