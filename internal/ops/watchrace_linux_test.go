package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/workspace"
)

// inotifyWatchesOn reports whether an inotify instance of this process
// holds a watch on the directory fi describes, reading the watches from
// /proc/self/fdinfo as the kernel lists them ("inotify wd:1 ino:1a2b
// sdev:800001 …", inode and device in hex, the device in the kernel's
// encoding).
func inotifyWatchesOn(t *testing.T, st *unix.Stat_t) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	dev := uint64(unix.Major(st.Dev))<<20 | uint64(unix.Minor(st.Dev))
	want := fmt.Sprintf("ino:%x sdev:%x ", st.Ino, dev)
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || l != "anon_inode:inotify" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if strings.Contains(string(b), want) {
			return true
		}
	}
	return false
}

// exchange swaps two names with renameat2(RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// skipWithoutExchange skips t where the kernel or the file system
// refuses RENAME_EXCHANGE.
func skipWithoutExchange(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("RENAME_EXCHANGE unsupported here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestWatchRootSwapRace: while w (a directory in the root) keeps being
// exchanged with wl, a link to a directory outside the root, recursive
// watchers are created on w over and over. Resolving w and adding its
// watches are separate steps, but the watch must land on the directory
// the confined resolution found, never on the outside directory.
func TestWatchRootSwapRace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	w, wl := filepath.Join(root, "w"), filepath.Join(root, "wl")
	for _, d := range []string{w, filepath.Join(w, "sub"), filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", wl); err != nil {
		t.Fatal(err)
	}
	skipWithoutExchange(t, exchange(w, wl))
	if err := exchange(w, wl); err != nil {
		t.Fatal(err)
	}
	var outs []*unix.Stat_t
	for _, d := range []string{outside, filepath.Join(outside, "sub")} {
		var st unix.Stat_t
		if err := unix.Stat(d, &st); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, &st)
	}
	ws := openWorkspace(t, root)
	e := New(ws, Options{})
	t.Cleanup(func() { e.Close() })

	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if exchange(w, wl) == nil {
				swaps.Add(1)
			}
		}
	})
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	ctx := context.Background()
	watched := 0
	for i := range 300 {
		// Let the swapper move on between tries: a refused try is much
		// faster than an exchange.
		for n := swaps.Load(); swaps.Load() == n; {
		}
		wc, err := e.Watch(ctx, WatchRequest{Path: "w", Recursive: true})
		if err != nil {
			continue // w was the link when it was resolved or opened
		}
		watched++
		for _, st := range outs {
			if inotifyWatchesOn(t, st) {
				t.Fatalf("try %d: a watch landed on a directory outside the root (inode %d)", i, st.Ino)
			}
		}
		if _, err := e.StopWatch(wc.Watcher.ID()); err != nil {
			t.Fatal(err)
		}
	}
	// The check above finds nothing unless tries succeed and it can see a
	// watch at all: prove both.
	if watched == 0 {
		t.Fatal("no try made a watcher: the race was never run")
	}
	probe := filepath.Join(root, "probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(probe, &st); err != nil {
		t.Fatal(err)
	}
	wc, err := e.Watch(ctx, WatchRequest{Path: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.StopWatch(wc.Watcher.ID())
	if !inotifyWatchesOn(t, &st) {
		t.Error("inotifyWatchesOn does not see a watch that exists")
	}
	t.Logf("%d of 300 tries made a watcher", watched)
}

func openWorkspace(t *testing.T, root string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}
