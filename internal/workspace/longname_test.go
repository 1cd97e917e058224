package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestCommitLongNamesShareNoBackup: two files of one transaction whose
// names agree in the part a staged name keeps (maxBaseInName bytes) get
// backups of their own, so a failed transaction restores each from its
// own and loses neither.
func TestCommitLongNamesShareNoBackup(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", maxBaseInName+10)
	a, b := long+"-a", long+"-b"
	cases := []struct {
		name    string
		changes []Change
		failAt  int
	}{
		{"replace both, fail first", []Change{{Path: a, Content: []byte("a2")}, {Path: b, Content: []byte("b2")}}, 0},
		{"replace both, fail second", []Change{{Path: a, Content: []byte("a2")}, {Path: b, Content: []byte("b2")}}, 1},
		{"delete and replace", []Change{{Path: a, Delete: true}, {Path: b, Content: []byte("b2")}}, 1},
		{"replace and delete", []Change{{Path: a, Content: []byte("a2")}, {Path: b, Delete: true}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, a), "a1", 0o644)
			writeFile(t, filepath.Join(root, b), "b1", 0o644)
			before := snapshot(t, root)
			w.hooks.beforeApply = func(i int) error {
				if i == tc.failAt {
					return &os.PathError{Op: "rename", Path: "x", Err: syscall.EIO}
				}
				return nil
			}
			if _, err := w.Commit(tc.changes, CommitOptions{}); err == nil {
				t.Fatal("commit succeeded despite the failure")
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("not rolled back (-before +after):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

// TestCommitNameTooLongRollsBack: a transaction that fails because one
// of its names is longer than the file system takes rolls back like any
// other failure: nothing is left (no temp, no directory, no manifest),
// and the paths are not blocked for the next commit. Nothing can exist at
// such a name, so the rollback has nothing to remove there.
func TestCommitNameTooLongRollsBack(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 256) // NAME_MAX is 255
	cases := []struct {
		name string
		path string
	}{
		{"file", long},
		{"file in a new directory", "new/" + long},
		{"directory", long + "/f"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			writeFile(t, filepath.Join(root, "old.txt"), "old", 0o644)
			before := snapshot(t, root)
			_, err := w.Commit([]Change{
				{Path: "old.txt", Content: []byte("new")},
				{Path: "created.txt", Content: []byte("c")},
				{Path: tc.path, Content: []byte("x")},
			}, CommitOptions{})
			wantCode(t, err, fserr.InvalidPath)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("not rolled back (-before +after):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
			if _, err := w.Commit([]Change{{Path: "old.txt", Content: []byte("new")}, {Path: "created.txt", Content: []byte("c")}}, CommitOptions{}); err != nil {
				t.Errorf("a later commit of the same files: %v", err)
			}
		})
	}
}
