package workspace

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestCommitEntryLink: a change with Entry acts on a symbolic link itself.
// Deleting a link used to delete the file it points to (the path was
// followed), leaving the link dangling; a dangling link was "missing" and
// one leading out of the root was refused. Now the link goes, what it
// pointed to stays, and Undo puts the link back. Each case runs as a
// single atomic change and inside a transaction.
func TestCommitEntryLink(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"real.txt": "keep me\n",
		"alias":    "-> real.txt",
		"dangling": "-> nowhere.txt",
		"escape":   "-> /etc/passwd",
		"dirlink":  "-> d",
		"d/f":      "f",
		"plain":    "plain\n",
	}
	cases := []struct {
		name   string
		change Change
		want   map[string]string // entries changed from tree ("" = gone)
		code   fserr.Code
	}{
		{name: "delete link", change: Change{Path: "alias", Delete: true, Entry: true},
			want: map[string]string{"alias": ""}},
		{name: "delete dangling link", change: Change{Path: "dangling", Delete: true, Entry: true},
			want: map[string]string{"dangling": ""}},
		{name: "delete link out of the root", change: Change{Path: "escape", Delete: true, Entry: true},
			want: map[string]string{"escape": ""}},
		{name: "delete link to a directory", change: Change{Path: "dirlink", Delete: true, Entry: true},
			want: map[string]string{"dirlink": ""}},
		{name: "delete expected link", change: Change{Path: "alias", Delete: true, Entry: true, ExpectLink: "real.txt"},
			want: map[string]string{"alias": ""}},
		{name: "file replaces link", change: Change{Path: "alias", Content: []byte("new\n"), Entry: true},
			want: map[string]string{"alias": "-rw-r--r-- new\n"}},
		{name: "file replaces dangling link", change: Change{Path: "dangling", Content: []byte("new\n"), Entry: true},
			want: map[string]string{"dangling": "-rw-r--r-- new\n"}},
		{name: "entry on a plain file", change: Change{Path: "plain", Delete: true, Entry: true},
			want: map[string]string{"plain": ""}},
		{name: "link changed since", change: Change{Path: "alias", Delete: true, Entry: true, ExpectLink: "other.txt"},
			code: fserr.StaleVersion},
		{name: "not a link any more", change: Change{Path: "plain", Delete: true, Entry: true, ExpectLink: "real.txt"},
			code: fserr.StaleVersion},
		{name: "link gone, file expected to replace it", change: Change{Path: "gone", Content: []byte("new\n"), Entry: true, ExpectLink: "real.txt"},
			code: fserr.StaleVersion},
		{name: "link where a file was expected", change: Change{Path: "alias", Delete: true, Entry: true, ExpectedVersion: Version([]byte("keep me\n"))},
			code: fserr.StaleVersion},
		{name: "link where nothing was expected", change: Change{Path: "alias", Content: []byte("x"), Entry: true, ExpectAbsent: true},
			code: fserr.StaleVersion},
		{name: "expect a link without entry", change: Change{Path: "alias", Delete: true, ExpectLink: "real.txt"},
			code: fserr.BadRequest},
	}
	for _, tc := range cases {
		for _, tx := range []bool{false, true} {
			name := tc.name
			if tx {
				name += "/tx"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w, root := newTestWorkspace(t)
				makeTree(t, root, tree)
				before := snapshot(t, root)
				changes := []Change{tc.change}
				if tx {
					changes = append(changes, Change{Path: "other.txt", Content: []byte("other\n")})
				}
				res, err := w.Commit(changes, CommitOptions{Op: "patch"})
				if tc.code != "" {
					wantCode(t, err, tc.code)
					if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
						t.Errorf("tree changed (-before +after):\n%s", diff)
					}
					assertNoStrays(t, root)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := maps.Clone(before)
				for k, v := range tc.want {
					if v == "" {
						delete(want, k)
					} else {
						want[k] = v
					}
				}
				if tx {
					want["other.txt"] = "-rw-r--r-- other\n"
				}
				if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
					t.Errorf("after commit (-want +got):\n%s", diff)
				}
				if !res[0].UndoRecorded {
					t.Fatal("the change of the link was not recorded for undo")
				}
				if _, err := w.Undo(tc.change.Path); err != nil {
					t.Fatalf("Undo: %v", err)
				}
				if tx {
					delete(want, "other.txt")
					if _, err := w.Undo("other.txt"); err != nil {
						t.Fatalf("Undo(other.txt): %v", err)
					}
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("after undo (-want +got):\n%s", diff)
				}
				assertNoStrays(t, root)
				assertNoManifests(t, w)
			})
		}
	}
}

// TestCommitEntryLinkCrashPoints: a transaction that removes a link and
// replaces another with a file, stopped at each step: recovery brings the
// links back as links (the backup of a link is the link itself), or
// finishes the transaction.
func TestCommitEntryLinkCrashPoints(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		step   string
		newSet bool
	}{
		{"manifest", false}, {"prepare/0", false}, {"prepare/1", false}, {"prepare/2", false},
		{"apply/0", false}, {"apply/1", false}, {"apply/2", false}, {"synced", false}, {"committed", true},
	} {
		t.Run(s.step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			makeTree(t, root, map[string]string{"real.txt": "keep me\n", "alias": "-> real.txt", "other": "-> /etc/passwd"})
			old := snapshot(t, root)
			changes := []Change{
				{Path: "alias", Delete: true, Entry: true},
				{Path: "other", Content: []byte("now a file\n"), Entry: true},
				{Path: "new.txt", Content: []byte("new\n")},
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			w.hooks.crashAt = func(step string) bool { return step == s.step }
			if _, err := w.Commit(changes, CommitOptions{}); !errors.Is(err, errCrashed) {
				t.Fatalf("Commit = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			want := old
			if s.newSet {
				want = map[string]string{".": old["."], "real.txt": old["real.txt"], "other": "-rw-r--r-- now a file\n", "new.txt": "-rw-r--r-- new\n"}
			}
			if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w2)
		})
	}
}

// TestUndoLinkCrashPoints: an undo that makes a removed link again, as
// part of a group (the two sides of a patch's move of a link), stopped at
// each step: recovery leaves the state before the undo (the link it made
// is removed: it points where the undo made it point) or after it.
func TestUndoLinkCrashPoints(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		step   string
		undone bool
	}{
		{"manifest", false}, {"prepare/0", false}, {"prepare/1", false},
		{"apply/0", false}, {"apply/1", false}, {"synced", false}, {"committed", true},
	} {
		t.Run(s.step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			makeTree(t, root, map[string]string{"real.txt": "keep me\n", "alias": "-> real.txt"})
			original := snapshot(t, root)
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			if _, err := w.Commit([]Change{
				{Path: "alias", Delete: true, Entry: true, Group: "m"},
				{Path: "moved.txt", Content: []byte("keep me, moved\n"), Group: "m"},
			}, CommitOptions{Op: "patch"}); err != nil {
				t.Fatal(err)
			}
			moved := snapshot(t, root)
			w.hooks.crashAt = func(step string) bool { return step == s.step }
			if _, err := w.Undo("moved.txt"); !errors.Is(err, errCrashed) {
				t.Fatalf("Undo = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			want := moved
			if s.undone {
				want = original
			}
			if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
				t.Errorf("after recovery (-want +got):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w2)
		})
	}
}

// TestLinkBackupWithoutHardLinks: where a link cannot be hard-linked, the
// backup of a removed link is a new link to the same target, and a crash
// after applying brings the link back.
func TestLinkBackupWithoutHardLinks(t *testing.T) {
	// Not parallel: it replaces linkBackup for the package.
	saved := linkBackup
	t.Cleanup(func() { linkBackup = saved })
	linkBackup = func(*os.Root, string, string) error { return syscall.EPERM }
	root, state := t.TempDir(), t.TempDir()
	makeTree(t, root, map[string]string{"real.txt": "keep me\n", "alias": "-> real.txt"})
	old := snapshot(t, root)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	w.hooks.crashAt = func(step string) bool { return step == "apply/1" }
	_, err := w.Commit([]Change{{Path: "alias", Delete: true, Entry: true}, {Path: "new.txt", Content: []byte("n")}}, CommitOptions{})
	if !errors.Is(err, errCrashed) {
		t.Fatalf("Commit = %v, want the simulated crash", err)
	}
	openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	if diff := cmp.Diff(old, snapshot(t, root)); diff != "" {
		t.Errorf("after recovery (-want +got):\n%s", diff)
	}
	if target, err := os.Readlink(filepath.Join(root, "alias")); err != nil || target != "real.txt" {
		t.Errorf("alias -> %q (%v), want real.txt", target, err)
	}
	assertNoStrays(t, root)
}

// TestRemoveLinkUndo: Remove of a link goes through Commit like a patch's
// Delete of one, so Undo brings the link back, pointing where it pointed.
func TestRemoveLinkUndo(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{"real.txt": "keep me\n", "alias": "-> real.txt", "escape": "-> /etc/passwd"})
	before := snapshot(t, root)
	for _, name := range []string{"alias", "escape"} {
		info, err := w.Lstat(name)
		if err != nil || !info.IsSymlink || info.LinkTarget == "" {
			t.Fatalf("Lstat(%s) = %+v, %v; want the link and its target", name, info, err)
		}
		res, err := w.Remove(name, false, "")
		if err != nil || !res.UndoRecorded {
			t.Fatalf("Remove(%s) = %+v, %v; want it removed and recorded", name, res, err)
		}
		if _, err := os.Lstat(filepath.Join(root, name)); !isNotExist(err) {
			t.Fatalf("%s still exists (%v)", name, err)
		}
		if _, err := w.Undo(name); err != nil {
			t.Fatalf("Undo(%s): %v", name, err)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("after undo (-want +got):\n%s", diff)
	}
	assertNoStrays(t, root)
}
