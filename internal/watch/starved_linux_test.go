package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestStarvedDirWatchedWhenRoomFrees: a directory that appears when the
// watch budget is spent cannot be watched; its watcher reports overflow
// (rescan), and what happens in it is not reported. Once watches are
// released (directories removed, another watcher released), the
// registry watches it after all, and reports overflow again: what
// changed there meanwhile went unreported, so the client rescans, and
// from then on what happens there is reported.
func TestStarvedDirWatchedWhenRoomFrees(t *testing.T) {
	t.Parallel()
	const fill = "mkdir -p fill/1 fill/2 fill/3"
	tests := []struct {
		name   string
		setup  string // run in the tree before it is watched
		starve string // run in the tree once the budget is spent
		// free releases watches; other is a tree outside, watched by a
		// second watcher (released by free when it is nil).
		free  func(t *testing.T, r *Registry, tree string, other *Watcher)
		other bool
		probe string // a directory below the tree that must end up watched
		// lost: starve runs while the kernel queue overflows, so that
		// the directory is found by the resync after it, not by its
		// event.
		lost bool
	}{
		{name: "directories removed", setup: fill, starve: "mkdir new", probe: "new",
			free: func(t *testing.T, _ *Registry, tree string, _ *Watcher) { sh(t, tree, "rm -r fill") }},
		{name: "another watcher released", setup: "true", starve: "mkdir new", probe: "new", other: true,
			free: func(t *testing.T, r *Registry, _ string, other *Watcher) {
				if _, err := r.Release(other.ID()); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "nested directories", setup: fill, starve: "mkdir -p new/a/b", probe: "new/a/b",
			free: func(t *testing.T, _ *Registry, tree string, _ *Watcher) { sh(t, tree, "rm -r fill") }},
		{name: "renamed while unwatched", setup: fill, starve: "mkdir -p new/a && mv new moved", probe: "moved/a",
			free: func(t *testing.T, _ *Registry, tree string, _ *Watcher) { sh(t, tree, "rm -r fill") }},
		{name: "made while the kernel queue overflowed", setup: fill, starve: "mkdir -p new/a", probe: "new/a", lost: true,
			free: func(t *testing.T, _ *Registry, tree string, _ *Watcher) { sh(t, tree, "rm -r fill") }},
		{name: "parent renamed while unwatched", setup: "mkdir -p fill/1 fill/2 p", starve: "mkdir p/new && mv p q", probe: "q/new",
			free: func(t *testing.T, _ *Registry, tree string, _ *Watcher) { sh(t, tree, "rm -r fill") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := filepath.Join(t.TempDir(), "tree")
			if err := os.Mkdir(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			// A budget of 5 watches: the tree with fill holds them all;
			// with the other watcher, the tree alone holds one.
			r := newReg(t, Options{MaxUserWatches: 5})
			var other *Watcher
			if tc.other {
				o := t.TempDir()
				sh(t, o, "mkdir -p a/x b")
				other = mustCreate(t, r, Config{Path: o, Recursive: true, Exclude: []string{}})
			}
			sh(t, tree, tc.setup)
			w := mustCreate(t, r, Config{Path: tree, Recursive: true, Exclude: []string{}})
			checkWatches(t, r, 5)
			var cursor int64
			if tc.lost {
				r.mu.Lock()
				fillKernelQueue(t, r, tree)
				out, err := exec.Command("sh", "-c", "cd "+tree+" && "+tc.starve).CombinedOutput()
				r.mu.Unlock()
				if err != nil {
					t.Fatalf("%s: %v\n%s", tc.starve, err, out)
				}
				// The kernel's own marker: a sentinel made before the
				// reader drained the full queue would be dropped with
				// the rest. The resync before it found the directory.
				awaitOverflow(t, w, &cursor)
			} else {
				sh(t, tree, tc.starve)
				if !sawOverflow(t, w, tree, &cursor) {
					t.Fatal("a directory over the watch budget was not reported as overflow")
				}
			}
			if n := w.Poll(t.Context(), cursor, 1, 0).Unwatched; n != 1 {
				t.Errorf("%d directories reported unwatched, want 1", n)
			}

			tc.free(t, r, tree, other)
			// Watched again: a marker says what happened there meanwhile
			// went unreported.
			if !sawOverflow(t, w, tree, &cursor) {
				t.Fatal("no overflow when the directory was watched again")
			}
			f := filepath.Join(tree, tc.probe, "f")
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			await(t, w, &cursor, "a create in the directory watched again", is(Create, f))
			if n := w.Poll(t.Context(), cursor, 1, 0).Unwatched; n != 0 {
				t.Errorf("%d directories reported unwatched once all are watched, want 0", n)
			}
			checkTracked(t, r, w, tree)
		})
	}
}

// sawOverflow makes a sentinel file in dir and reports whether w
// reported overflow before its create.
func sawOverflow(t *testing.T, w *Watcher, dir string, cursor *int64) bool {
	t.Helper()
	sentinel := filepath.Join(dir, "zz-sentinel")
	if err := os.RemoveAll(sentinel); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(bound)
	overflow := false
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no create of %s", sentinel)
		}
		res := w.Poll(t.Context(), *cursor, 1000, left)
		*cursor = res.Cursor
		overflow = overflow || res.Overflow
		if slices.ContainsFunc(res.Events, is(Create, sentinel)) {
			return overflow
		}
	}
}

// TestStarvedDirBehindUnreadRename: the registry reaches a directory
// left unwatched by path, and may try to watch it from any goroutine
// (Release, a sweep, the janitor), before the reader has handled a
// rename of a directory above it. That directory is not gone: its
// entry must follow the rename and the directory be watched (with an
// overflow marker) once the reader gets there, where it was forgotten,
// left unwatched for good with Unwatched at 0. An entry whose directory
// is gone without a word (its removal lost with a kernel queue
// overflow) is still forgotten, once the reader has read what was
// queued when it was tried.
func TestStarvedDirBehindUnreadRename(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// meanwhile runs holding r.mu, the reader kept from the queue,
		// before the registry tries again with room for one more watch.
		meanwhile func(t *testing.T, r *Registry, w *Watcher, tree string)
	}{
		{name: "parent renamed",
			meanwhile: func(t *testing.T, _ *Registry, _ *Watcher, tree string) {
				if err := os.Rename(filepath.Join(tree, "p"), filepath.Join(tree, "q")); err != nil {
					t.Error(err)
				}
			}},
		{name: "gone unreported",
			meanwhile: func(t *testing.T, r *Registry, w *Watcher, tree string) {
				// p/new is found again (the rename below is read), but
				// not this one: nothing will ever say it went.
				r.starveLocked(filepath.Join(tree, "ghost"), w)
				if err := os.Rename(filepath.Join(tree, "p"), filepath.Join(tree, "q")); err != nil {
					t.Error(err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := filepath.Join(t.TempDir(), "tree")
			if err := os.Mkdir(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			sh(t, tree, "mkdir -p fill/1 fill/2 p")
			// A budget of 5 watches, all held by the tree: p/new cannot
			// be watched.
			r := newReg(t, Options{MaxUserWatches: 5})
			w := mustCreate(t, r, Config{Path: tree, Recursive: true, Exclude: []string{}})
			checkWatches(t, r, 5)
			var cursor int64
			sh(t, tree, "mkdir p/new")
			if !sawOverflow(t, w, tree, &cursor) {
				t.Fatal("a directory over the watch budget was not reported as overflow")
			}

			r.mu.Lock()
			tc.meanwhile(t, r, w, tree)
			r.budget++
			r.rewatchLocked()
			r.mu.Unlock()

			// The first sentinel's events may be read with the rename,
			// before the batch ends and the directory is tried again
			// (and its marker set); the second's come after that.
			overflow := sawOverflow(t, w, tree, &cursor)
			if !overflow {
				overflow = sawOverflow(t, w, tree, &cursor)
			}
			if !overflow {
				t.Error("no overflow when the directory was watched again")
			}
			f := filepath.Join(tree, "q", "new", "f")
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			await(t, w, &cursor, "a create in the directory watched again", is(Create, f))
			if n := w.Poll(t.Context(), cursor, 1, 0).Unwatched; n != 0 {
				t.Errorf("%d directories reported unwatched once all are watched, want 0", n)
			}
			r.mu.Lock()
			starved := len(r.starved)
			r.mu.Unlock()
			if starved != 0 {
				t.Errorf("%d directories remembered as unwatched, want 0", starved)
			}
			checkTracked(t, r, w, tree)
		})
	}
}
