package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestCommitStateDirNoSpace: a transaction whose journal cannot be written
// because the state directory's file system is full is refused with
// no_space_left and a hint that says which device to free (the state
// directory's, not the file's, which may have plenty of room) and that
// nothing changed; the files are untouched.
func TestCommitStateDirNoSpace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		changes []Change
	}{
		{"patch of two files", []Change{{Path: "a.txt", Content: []byte("new a")}, {Path: "b.txt", Content: []byte("new b")}}},
		{"file with two links", []Change{{Path: "h.txt", Content: []byte("new h")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), testenv.TinyFS(t)
			for _, n := range []string{"a.txt", "b.txt", "h.txt"} {
				writeFile(t, filepath.Join(root, n), "old "+n, 0o644)
			}
			if err := os.Link(filepath.Join(root, "h.txt"), filepath.Join(root, "h-link.txt")); err != nil {
				t.Fatal(err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			fillFS(t, filepath.Join(state, "fill"))
			before := snapshot(t, root)

			_, err := w.Commit(tc.changes, CommitOptions{Op: "patch"})
			e := wantCode(t, err, fserr.NoSpaceLeft)
			if !strings.Contains(e.Hint, "state directory") || !strings.Contains(e.Hint, "nothing was changed") {
				t.Errorf("hint %q: want it to name the state directory and say nothing was changed", e.Hint)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
			assertNoStrays(t, root)
		})
	}
}

// fillFS writes name until its file system is full.
func fillFS(t *testing.T, name string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
