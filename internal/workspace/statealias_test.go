package workspace

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// stateAlias is a workspace whose root holds the state directory, reached
// through a spelling other than the one it was opened with: what another
// case is on a case-insensitive file system (macOS).
type stateAlias struct {
	w     *Workspace
	root  string // the first root
	other string // a second, unrelated root
	state string // where the state directory is now, for inspection
	alias string // the other spelling, relative to root
}

// openRenamedState opens a workspace with the state directory at
// root/a/st and then renames root/a to root/b: the journals keep going to
// the same directory (the workspace holds it open), now spelled b/st,
// which no path string of the workspace names. It needs no privilege, so
// it reproduces the string-comparison hole on every system.
func openRenamedState(t *testing.T) stateAlias {
	t.Helper()
	root, other := t.TempDir(), t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: filepath.Join(root, "a", "st")})
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	return stateAlias{w: w, root: root, other: other, state: filepath.Join(root, "b", "st"), alias: "b/st"}
}

// TestStateDirRefusedThroughAnotherSpelling: the state directory is
// recognised by identity, not by its path string, so no operation reads
// or writes the journals through another spelling of it.
func TestStateDirRefusedThroughAnotherSpelling(t *testing.T) {
	t.Parallel()
	runStateAliasTests(t, openRenamedState)
}

// TestStateDirHiddenThroughAnotherSpelling: listings and copies of a
// directory that holds the state directory leave it out, by identity.
func TestStateDirHiddenThroughAnotherSpelling(t *testing.T) {
	t.Parallel()
	runStateAliasHidden(t, openRenamedState)
}

// runStateAliasTests runs every refused operation on a fresh workspace from
// open.
func runStateAliasTests(t *testing.T, open func(t *testing.T) stateAlias) {
	t.Helper()
	tree := func(w *Workspace, dest string, names ...string) error {
		tw, err := w.CreateTree(dest, nil)
		if err != nil {
			return err
		}
		defer tw.Abort()
		for _, name := range append([]string{".a.txt"}, names...) {
			if _, err := tw.File(name, 0o644, strings.NewReader("{}")); err != nil {
				return err
			}
		}
		_, err = tw.Commit()
		return err
	}
	tests := []struct {
		name string
		run  func(s stateAlias) error
		code fserr.Code
	}{
		{name: "write", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Commit([]Change{
				{Path: ".a.txt", Content: []byte("new")},
				{Path: s.alias + "/tx/evil.json", Content: []byte("{}")},
			}, CommitOptions{})
			return err
		}},
		{name: "write by absolute path", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Commit([]Change{{Path: filepath.Join(s.root, s.alias, "tx", "evil.json"), Content: []byte("{}")}}, CommitOptions{})
			return err
		}},
		{name: "upload", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.WriteStream(context.Background(), s.alias+"/evil", strings.NewReader("{}"), StreamOptions{})
			return err
		}},
		{name: "mkdir", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Mkdir(s.alias+"/tx/new", true, nil)
			return err
		}},
		{name: "tree merge: a file in the journal", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			return tree(s.w, ".", s.alias+"/tx/evil.json")
		}},
		{name: "tree into it", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			return tree(s.w, s.alias+"/new")
		}},
		{name: "copy merge within the root", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Copy("src", ".", true, nil)
			return err
		}},
		{name: "copy a file in", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Copy("keep.txt", s.alias+"/tx/evil.json", true, nil)
			return err
		}},
		{name: "move in", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Move("keep.txt", s.alias+"/tx/evil.json", true, "")
			return err
		}},
		{name: "move out", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Move(s.alias+"/lock", "lock", false, "")
			return err
		}},
		{name: "read", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, _, err := s.w.ReadBytes(s.alias+"/lock", 1<<10)
			return err
		}},
		{name: "delete", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Remove(s.alias+"/lock", false, "")
			return err
		}},
		{name: "delete the state directory", code: fserr.OutsideRoot, run: func(s stateAlias) error {
			_, err := s.w.Remove(s.alias, true, "")
			return err
		}},
		// Renamed, the directory holding the state directory is no
		// ancestor of its configured path: removing it is refused because
		// the tree is searched for it, before anything is removed.
		{name: "delete a directory holding it", code: fserr.InvalidTarget, run: func(s stateAlias) error {
			_, err := s.w.Remove(path.Dir(s.alias), true, "")
			return err
		}},
		{name: "move a directory holding it to another root", code: fserr.InvalidTarget, run: func(s stateAlias) error {
			_, err := s.w.Move(path.Dir(s.alias), filepath.Join(s.other, "moved"), false, "")
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			// src mirrors the state directory's other spelling, for a
			// merge into the root.
			makeTree(t, s.root, map[string]string{
				"keep.txt": "keep", ".a.txt": "old", "src/.a.txt": "new", "src/" + s.alias + "/tx/evil.json": "{}",
			})
			before, stateBefore := snapshotWithout(t, s.root, s.state, filepath.Join(s.root, s.alias)), stateNames(t, s.state)
			otherBefore := snapshot(t, s.other)

			e := wantCode(t, tc.run(s), tc.code)
			if !strings.Contains(e.Message, "state directory") {
				t.Errorf("message %q does not name the state directory", e.Message)
			}
			if diff := cmp.Diff(before, snapshotWithout(t, s.root, s.state, filepath.Join(s.root, s.alias))); diff != "" {
				t.Errorf("root changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(stateBefore, stateNames(t, s.state)); diff != "" {
				t.Errorf("state directory changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(otherBefore, snapshot(t, s.other)); diff != "" {
				t.Errorf("the other root changed (-before +after):\n%s", diff)
			}
			assertNoStrays(t, s.root, s.other)
		})
	}
}

// runStateAliasHidden checks that listing or copying the directory that
// holds the state directory, spelled as s.alias's parent, leaves it out.
func runStateAliasHidden(t *testing.T, open func(t *testing.T) stateAlias) {
	t.Helper()
	s := open(t)
	parent, stName := path.Split(s.alias)
	parent = path.Clean(parent)
	makeTree(t, s.root, map[string]string{parent + "/keep.txt": "keep"})

	l, err := s.w.List(parent, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.Rel)
	}
	if diff := cmp.Diff([]string{"keep.txt"}, got); diff != "" {
		t.Errorf("listing of %s (-want +got):\n%s", parent, diff)
	}

	out := filepath.Join(s.other, "out")
	if _, err := s.w.Copy(parent, out, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(out, stName)); !isNotExist(err) {
		t.Errorf("the copy of %s holds the state directory (%v)", parent, err)
	}
	if diff := cmp.Diff(map[string]string{"keep.txt": "-rw-r--r-- keep"}, snapshotWithout(t, out)); diff != "" {
		t.Errorf("copy of %s (-want +got):\n%s", parent, diff)
	}
}

// snapshotWithout is snapshot of root without the entries at or under the
// absolute paths in skip.
func snapshotWithout(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	out := snapshot(t, root)
	for name := range out {
		p := filepath.Join(root, name)
		if slices.ContainsFunc(skip, func(s string) bool { return p == s || strings.HasPrefix(p, s+"/") }) {
			delete(out, name)
		}
	}
	delete(out, ".")
	return out
}

// openConfiguredState is openRenamedState without the rename: the state
// directory at root/a/st, spelled as configured.
func openConfiguredState(t *testing.T) stateAlias {
	t.Helper()
	root, other := t.TempDir(), t.TempDir()
	state := filepath.Join(root, "a", "st")
	w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: state})
	return stateAlias{w: w, root: root, other: other, state: state, alias: "a/st"}
}

// TestLinkToStateDirIsAnEntry: a symbolic link to the state directory is
// no part of it. Describing, moving and deleting the link itself work, as
// does deleting a tree that holds such a link (the link goes, not what it
// points to); going through the link is refused as the state directory is.
// The state directory changes only by the undo record of the removed link.
func TestLinkToStateDirIsAnEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(t *testing.T) stateAlias
	}{{"as configured", openConfiguredState}, {"renamed", openRenamedState}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.open(t)
			makeTree(t, s.root, map[string]string{"ln": "-> " + s.alias, "tree/ln": "-> ../" + s.alias, "tree/f": "f"})
			withoutUndo := func() []string {
				return slices.DeleteFunc(stateNames(t, s.state), func(n string) bool { return strings.HasPrefix(n, "undo/") })
			}
			stateBefore := withoutUndo()

			info, err := s.w.Lstat("ln")
			if err != nil {
				t.Fatalf("Lstat(ln): %v", err)
			}
			if !info.IsSymlink || info.IsDir {
				t.Errorf("Lstat(ln) = %+v, want the link itself", info)
			}
			_, _, err = s.w.ReadBytes("ln/lock", 1<<10)
			wantCode(t, err, fserr.OutsideRoot)
			_, err = s.w.Commit([]Change{{Path: "ln/tx/evil.json", Content: []byte("{}")}}, CommitOptions{})
			wantCode(t, err, fserr.OutsideRoot)
			_, err = s.w.Remove("ln/lock", false, "")
			wantCode(t, err, fserr.OutsideRoot)

			if _, err := s.w.Move("ln", "ln2", false, ""); err != nil {
				t.Fatalf("Move(ln, ln2): %v", err)
			}
			if _, err := s.w.Move("ln2", filepath.Join(s.other, "ln"), false, ""); err != nil {
				t.Fatalf("Move(ln2) to another root: %v", err)
			}
			if _, err := s.w.Remove(filepath.Join(s.other, "ln"), false, ""); err != nil {
				t.Fatalf("Remove(ln): %v", err)
			}
			if _, err := s.w.Remove("tree", true, ""); err != nil {
				t.Fatalf("Remove(tree) holding a link to the state directory: %v", err)
			}
			for _, p := range []string{filepath.Join(s.root, "ln"), filepath.Join(s.root, "ln2"), filepath.Join(s.other, "ln"), filepath.Join(s.root, "tree")} {
				if _, err := os.Lstat(p); !isNotExist(err) {
					t.Errorf("%s is still there (%v)", p, err)
				}
			}
			if diff := cmp.Diff(stateBefore, withoutUndo()); diff != "" {
				t.Errorf("state directory changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRemoveRefusesStateDirDeepInTree: a directory holding the state
// directory several levels down, under a renamed parent (no path names
// it), cannot be deleted or moved to another root, and nothing of the tree
// is deleted, not even what sorts or lies before it.
func TestRemoveRefusesStateDirDeepInTree(t *testing.T) {
	t.Parallel()
	root, other := t.TempDir(), t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: filepath.Join(root, "a", "b", "c", "st")})
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "x")); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "x", "b", "c", "st")
	makeTree(t, root, map[string]string{"x/a.txt": "a", "x/b/0/f": "f", "x/b/c/0.txt": "0", "x/z/f": "f"})
	before, stateBefore, otherBefore := snapshotWithout(t, root, state), stateNames(t, state), snapshot(t, other)

	for _, p := range []string{"x", "x/b", "x/b/c"} {
		_, err := w.Remove(p, true, "")
		wantMessage(t, err, fserr.InvalidTarget, "state directory")
		_, err = w.Move(p, filepath.Join(other, "moved"), false, "")
		wantMessage(t, err, fserr.InvalidTarget, "state directory")
	}
	if diff := cmp.Diff(before, snapshotWithout(t, root, state)); diff != "" {
		t.Errorf("root changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(stateBefore, stateNames(t, state)); diff != "" {
		t.Errorf("state directory changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(otherBefore, snapshot(t, other)); diff != "" {
		t.Errorf("the other root changed (-before +after):\n%s", diff)
	}
	// The journals still work.
	if _, err := w.Commit([]Change{{Path: "x/new.txt", Content: []byte("new")}}, CommitOptions{}); err != nil {
		t.Fatalf("Commit after the refused removals: %v", err)
	}
}
