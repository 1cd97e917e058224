package workspace

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// TestStateDirRefusedAsDestination: with the state directory inside a
// root, no operation writes into it, and an operation refused for one of
// its entries writes nothing at all, not even its harmless entries.
func TestStateDirRefusedAsDestination(t *testing.T) {
	t.Parallel()
	// Every row runs on a fresh workspace: root holds the state directory
	// (.st), other is a second root to copy from. ".a*" entries sort
	// before ".st", so a merge that applied as it went would have
	// written them already.
	tree := func(w *Workspace, dest string, add func(tw *TreeWriter) error) error {
		tw, err := w.CreateTree(dest, nil)
		if err != nil {
			return err
		}
		defer tw.Abort()
		if _, err := tw.File(".a.txt", 0o644, strings.NewReader("new")); err != nil {
			return err
		}
		if err := add(tw); err != nil {
			return err
		}
		_, err = tw.Commit()
		return err
	}
	file := func(name string) func(*TreeWriter) error {
		return func(tw *TreeWriter) error {
			_, err := tw.File(name, 0o644, strings.NewReader("{}"))
			return err
		}
	}
	tests := []struct {
		name  string
		other map[string]string // made under the second root
		run   func(w *Workspace, root, other string) error
		code  fserr.Code
	}{
		{name: "tree merge: a file in the journal", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error { return tree(w, ".", file(".st/tx/evil.json")) }},
		{name: "tree merge by absolute path", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error { return tree(w, root, file(".st/evil")) }},
		{name: "tree merge: over the state directory", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error { return tree(w, ".", file(".st")) }},
		{name: "tree merge: a new directory", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				return tree(w, ".", func(tw *TreeWriter) error { return tw.Dir(".st/tx/new", 0o755) })
			}},
		{name: "tree merge: a link", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				return tree(w, ".", func(tw *TreeWriter) error { return tw.Symlink(".st/undo/l", "../../x") })
			}},
		{name: "tree merge: a hard link", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				return tree(w, ".", func(tw *TreeWriter) error { return tw.Link(".st/h", ".a.txt") })
			}},
		{name: "copy merge from another root", code: fserr.OutsideRoot,
			other: map[string]string{"src/.a.txt": "new", "src/.a/new": "n", "src/.st/tx/evil.json": "{}"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Copy(filepath.Join(other, "src"), root, true, nil)
				return err
			}},
		{name: "copy merge: a link", code: fserr.OutsideRoot,
			other: map[string]string{"src/.a.txt": "new", "src/.st/l": "-> ../.a.txt"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Copy(filepath.Join(other, "src"), root, true, nil)
				return err
			}},
		{name: "copy merge: over the state directory", code: fserr.OutsideRoot,
			other: map[string]string{"src/.a.txt": "new", "src/.st": "not a directory"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Copy(filepath.Join(other, "src"), root, true, nil)
				return err
			}},
		{name: "copy merge within the root", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Copy("src", ".", true, nil)
				return err
			}},
		{name: "copy a file in", code: fserr.OutsideRoot, other: map[string]string{"f": "f"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Copy(filepath.Join(other, "f"), ".st/tx/evil.json", true, nil)
				return err
			}},
		{name: "copy a tree in", code: fserr.OutsideRoot, other: map[string]string{"src/x": "x"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Copy(filepath.Join(other, "src"), ".st/new", false, nil)
				return err
			}},
		{name: "move in", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Move("keep.txt", ".st/tx/evil.json", true, "")
				return err
			}},
		{name: "move in from another root", code: fserr.OutsideRoot, other: map[string]string{"f": "f"},
			run: func(w *Workspace, root, other string) error {
				_, err := w.Move(filepath.Join(other, "f"), ".st/evil", false, "")
				return err
			}},
		{name: "move out", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Move(".st/lock", "lock", false, "")
				return err
			}},
		{name: "move the state directory", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Move(".st", "moved", false, "")
				return err
			}},
		{name: "write", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Commit([]Change{{Path: ".a.txt", Content: []byte("new")}, {Path: ".st/tx/evil.json", Content: []byte("{}")}}, CommitOptions{})
				return err
			}},
		{name: "upload", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.WriteStream(context.Background(), ".st/evil", strings.NewReader("{}"), StreamOptions{})
				return err
			}},
		{name: "mkdir", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Mkdir(".st/tx/new", true, nil)
				return err
			}},
		{name: "delete", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Remove(".st/lock", false, "")
				return err
			}},
		{name: "delete the state directory", code: fserr.OutsideRoot,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Remove(".st", true, "")
				return err
			}},
		{name: "delete a directory holding it", code: fserr.InvalidTarget,
			run: func(w *Workspace, root, _ string) error {
				_, err := w.Remove(root, true, "")
				return err
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, other := t.TempDir(), t.TempDir()
			state := filepath.Join(root, ".st")
			w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: state})
			makeTree(t, root, map[string]string{
				"keep.txt": "keep", ".a.txt": "old", "src/.a.txt": "new", "src/.st/tx/evil.json": "{}",
			})
			makeTree(t, other, tc.other)
			before, stateBefore := snapshotOutside(t, root, state), stateNames(t, state)

			err := tc.run(w, root, other)
			e := wantCode(t, err, tc.code)
			if tc.code == fserr.OutsideRoot && !strings.Contains(e.Message, "state directory") {
				t.Errorf("message %q does not name the state directory", e.Message)
			}
			if diff := cmp.Diff(before, snapshotOutside(t, root, state)); diff != "" {
				t.Errorf("root changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(stateBefore, stateNames(t, state)); diff != "" {
				t.Errorf("state directory changed (-before +after):\n%s", diff)
			}
			assertNoStrays(t, root, other)
		})
	}
}

// snapshotOutside is snapshot of root without the state directory.
func snapshotOutside(t *testing.T, root, state string) map[string]string {
	t.Helper()
	out := snapshot(t, root)
	for name := range out {
		if p := filepath.Join(root, name); p == state || strings.HasPrefix(p, state+"/") {
			delete(out, name)
		}
	}
	return out
}

// stateNames lists the state directory's entries, except the temp logs
// (temps/), which record every staged file and so change by design.
func stateNames(t *testing.T, state string) []string {
	t.Helper()
	var out []string
	for name := range snapshot(t, state) {
		if name != "temps" && !strings.HasPrefix(name, "temps/") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
