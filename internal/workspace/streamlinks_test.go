package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// twoNames makes a.txt and sub/b.txt, two hard links to one file holding
// content, and returns their paths and inode.
func twoNames(t *testing.T, root, content string) (a, b string, ino uint64) {
	t.Helper()
	a, b = filepath.Join(root, "a.txt"), filepath.Join(root, "sub/b.txt")
	writeFile(t, a, content, 0o640)
	if err := os.MkdirAll(filepath.Dir(b), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	return a, b, inode(t, a)
}

// TestWriteStreamKeepsHardLinks: an upload over a file with several hard
// links rewrites it in place, as Commit does, so every name shows the new
// content and they stay one file; undo brings the old content back to
// all of them. Nothing is left beside the file (no part, backup or
// manifest).
func TestWriteStreamKeepsHardLinks(t *testing.T) {
	t.Parallel()
	for _, content := range []string{strings.Repeat("grown ", 200000), "s", "new"} {
		t.Run(content[:1], func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			a, b, ino := twoNames(t, root, "old")
			res, err := w.WriteStream(context.Background(), "a.txt", strings.NewReader(content), StreamOptions{ExpectedVersion: Version([]byte("old"))})
			if err != nil {
				t.Fatal(err)
			}
			if inode(t, a) != ino || inode(t, b) != ino {
				t.Errorf("inodes %d %d, want both %d: the links were split", inode(t, a), inode(t, b), ino)
			}
			if readFile(t, a) != content || readFile(t, b) != content {
				t.Errorf("contents %.20q %.20q, want %.20q on both names", readFile(t, a), readFile(t, b), content)
			}
			if fi, _ := os.Stat(a); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode())
			}
			if res.Created || res.Size != int64(len(content)) || res.Version != Version([]byte(content)) || !res.UndoRecorded {
				t.Errorf("result %+v", res)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
			if _, err := w.Undo("a.txt"); err != nil {
				t.Fatal(err)
			}
			if readFile(t, b) != "old" || inode(t, b) != ino {
				t.Errorf("after undo b.txt = %q (inode %d), want the old content in inode %d", readFile(t, b), inode(t, b), ino)
			}
		})
	}
}

// TestWriteStreamKeepsHardLinksOnFailure: an upload over a hard-linked
// file that fails while it is applied, or finds the file changed, leaves
// every name as it was, and no part, backup or manifest.
func TestWriteStreamKeepsHardLinksOnFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		expected string
		fail     bool
		code     fserr.Code
	}{
		{"apply fails", "", true, fserr.PermissionDenied},
		{"stale version", Version([]byte("other")), false, fserr.StaleVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			a, b, ino := twoNames(t, root, "old")
			before := snapshot(t, root)
			if tc.fail {
				w.hooks.beforeApply = func(int) error { return &os.PathError{Op: "write", Path: "x", Err: syscall.EACCES} }
			}
			_, err := w.WriteStream(context.Background(), "a.txt", strings.NewReader("new content"), StreamOptions{ExpectedVersion: tc.expected})
			wantCode(t, err, tc.code)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("not left as it was (-before +after):\n%s", diff)
			}
			if inode(t, a) != ino || inode(t, b) != ino {
				t.Error("the links were split")
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}

// TestWriteStreamKeepsHardLinksAcrossACrash: an in-place upload cut by a
// crash at any step is rolled back by the next Open (or, once committed,
// kept), on both names at once.
func TestWriteStreamKeepsHardLinksAcrossACrash(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		step string
		kept bool
	}{{"manifest", false}, {"prepare/0", false}, {"apply/0", false}, {"synced", false}, {"committed", true}} {
		t.Run(s.step, func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), t.TempDir()
			a, b, ino := twoNames(t, root, "old")
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			w.hooks.crashAt = func(step string) bool { return step == s.step }
			if _, err := w.WriteStream(context.Background(), "a.txt", strings.NewReader("new, and longer"), StreamOptions{}); !errors.Is(err, errCrashed) {
				t.Fatalf("WriteStream = %v, want the simulated crash", err)
			}
			w2 := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
			want := "old"
			if s.kept {
				want = "new, and longer"
			}
			if readFile(t, a) != want || readFile(t, b) != want {
				t.Errorf("after recovery %q %q, want %q on both names", readFile(t, a), readFile(t, b), want)
			}
			if inode(t, a) != ino || inode(t, b) != ino {
				t.Error("the links were split")
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w2)
		})
	}
}
