package workspace

import (
	"bytes"
	"context"
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

// TestCommitNoSpace fills a 64 KiB file system: every commit fails with
// no_space_left, the originals are untouched and nothing is left over.
func TestCommitNoSpace(t *testing.T) {
	t.Parallel()
	big := []byte(strings.Repeat("0123456789abcdef", 80<<10/16)) // 80 KiB
	small := []byte("small new content")
	cases := []struct {
		name    string
		changes []Change
		applied int // the last change whose apply step was reached; -1 none
	}{
		{"replace", []Change{{Path: "a.txt", Content: big}}, -1},
		{"create", []Change{{Path: "new/dir/n.txt", Content: big}}, -1},
		{"in place", []Change{{Path: "h.txt", Content: big}}, 0},
		{"transaction, temp of second file", []Change{{Path: "a.txt", Content: small}, {Path: "b.txt", Content: big}}, -1},
		{"transaction, in-place apply of last file", []Change{{Path: "a.txt", Content: small}, {Path: "c.txt", Delete: true}, {Path: "h.txt", Content: big}}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := testenv.TinyFS(t)
			for _, n := range []string{"a.txt", "b.txt", "c.txt", "h.txt"} {
				writeFile(t, filepath.Join(root, n), strings.Repeat(n, 1000), 0o644) // 5 KB each
			}
			if err := os.Link(filepath.Join(root, "h.txt"), filepath.Join(root, "h-link.txt")); err != nil {
				t.Fatal(err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
			before := snapshot(t, root)
			applied := -1
			w.hooks.beforeApply = func(i int) error { applied = i; return nil }
			// A process other tests of this package fork meanwhile would
			// hold the failed commit's temp files, and their blocks, until
			// it execs: the small commit below would then find no room.
			var err error
			testenv.WithoutForks(func() { _, err = w.Commit(tc.changes, CommitOptions{}) })
			if applied != tc.applied {
				t.Errorf("failed after applying up to change %d, want %d", applied, tc.applied)
			}
			e := wantCode(t, err, fserr.NoSpaceLeft)
			if e.Errno != unix.ENOSPC || !strings.Contains(e.Hint, "nothing was changed") {
				t.Errorf("errno %v hint %q", e.Errno, e.Hint)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
			if inode(t, filepath.Join(root, "h.txt")) != inode(t, filepath.Join(root, "h-link.txt")) {
				t.Error("hard link broken")
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
			// After the failure there is room for a small change.
			if _, err := w.Commit([]Change{{Path: "a.txt", Content: small}}, CommitOptions{}); err != nil {
				t.Errorf("small commit after ENOSPC: %v", err)
			}
		})
	}
}

// TestReserveReportsNoSpace: growth of an in-place file fails before any
// existing byte changes.
func TestReserveReportsNoSpace(t *testing.T) {
	t.Parallel()
	root := testenv.TinyFS(t)
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writeFile(t, filepath.Join(root, "f"), "original", 0o644)
	big := strings.Repeat("x", 128<<10)
	err = rewriteInPlace(r, "f", strings.NewReader(big), int64(len(big)))
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("rewriteInPlace = %v, want ENOSPC", err)
	}
	if got := readFile(t, filepath.Join(root, "f")); got != "original" {
		t.Errorf("content after failed growth = %q", got)
	}
}

// TestCopyMoveNoSpace copies and moves into a full file system from
// another root: each fails with no_space_left, changes nothing (a merge
// keeps what it copied) and leaves no temp files.
func TestCopyMoveNoSpace(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 80<<10/16) // 80 KiB
	cases := []struct {
		name string
		run  func(w *Workspace, src, dst string) error
	}{
		{"copy file", func(w *Workspace, src, dst string) error {
			_, err := w.Copy(filepath.Join(src, "big"), filepath.Join(dst, "new/big"), false, nil)
			return err
		}},
		{"copy file over a file", func(w *Workspace, src, dst string) error {
			_, err := w.Copy(filepath.Join(src, "big"), filepath.Join(dst, "small"), true, nil)
			return err
		}},
		{"copy tree", func(w *Workspace, src, dst string) error {
			_, err := w.Copy(filepath.Join(src, "tree"), filepath.Join(dst, "tree"), false, nil)
			return err
		}},
		{"move file", func(w *Workspace, src, dst string) error {
			_, err := w.Move(filepath.Join(src, "big"), filepath.Join(dst, "big"), false, "")
			return err
		}},
		{"move file over a file", func(w *Workspace, src, dst string) error {
			_, err := w.Move(filepath.Join(src, "big"), filepath.Join(dst, "small"), true, "")
			return err
		}},
		{"move tree", func(w *Workspace, src, dst string) error {
			_, err := w.Move(filepath.Join(src, "tree"), filepath.Join(dst, "x/tree"), false, "")
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dst := testenv.TinyFS(t)
			src := t.TempDir()
			writeFile(t, filepath.Join(src, "big"), big, 0o644)
			writeFile(t, filepath.Join(src, "tree/a"), "a", 0o644)
			writeFile(t, filepath.Join(src, "tree/sub/big"), big, 0o644)
			writeFile(t, filepath.Join(dst, "small"), "small", 0o644)
			w := openTestWorkspace(t, Options{Roots: []string{src, dst}, StateDir: t.TempDir()})
			beforeSrc, beforeDst := snapshot(t, src), snapshot(t, dst)
			err := tc.run(w, src, dst)
			wantCode(t, err, fserr.NoSpaceLeft)
			if diff := cmp.Diff(beforeSrc, snapshot(t, src)); diff != "" {
				t.Errorf("source changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeDst, snapshot(t, dst)); diff != "" {
				t.Errorf("destination changed (-before +after):\n%s", diff)
			}
			assertNoStrays(t, src, dst)
		})
	}
}

func TestWriteStreamNoSpace(t *testing.T) {
	t.Parallel()
	root := testenv.TinyFS(t)
	writeFile(t, filepath.Join(root, "a.txt"), "keep", 0o644)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	_, err := w.WriteStream(context.Background(), "a.txt", bytes.NewReader(make([]byte, 1<<20)), StreamOptions{})
	wantCode(t, err, fserr.NoSpaceLeft)
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "keep" {
		t.Fatalf("target changed: %q", got)
	}
	assertNoParts(t, root)
}
