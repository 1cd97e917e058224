package watch

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fillKernelQueue overflows the kernel's inotify queue of r while the
// caller holds r.mu (the reader is stopped): three times its length of
// attribute changes on two files of dir, alternating so that the kernel
// does not merge them. It skips t when the queue is too long to fill.
func fillKernelQueue(t *testing.T, r *Registry, dir string) {
	t.Helper()
	queue := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			queue = n
		}
	}
	if queue > 1<<20 {
		r.mu.Unlock()
		t.Skipf("the inotify queue holds %d events; filling it takes too long", queue)
	}
	files := []string{filepath.Join(dir, "fa"), filepath.Join(dir, "fb")}
	for _, f := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.mu.Unlock()
			t.Fatal(err)
		}
	}
	now := time.Now()
	for i := range 3 * queue {
		if err := os.Chtimes(files[i%2], now, now); err != nil {
			r.mu.Unlock()
			t.Fatal(err)
		}
	}
}

// TestOverflowForgetsRemovedDirs: directories removed while the kernel
// queue was full lose their IN_IGNORED with the rest of the dropped
// events; the resync after the overflow must still forget their
// watches, or they count against the watch budget (and are held) for as
// long as their watchers live.
func TestOverflowForgetsRemovedDirs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	sh(t, dir, "mkdir -p tree/d1/x tree/d2/y tree/d3 tree/keep")
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: tree, Recursive: true, Exclude: []string{}})
	checkWatches(t, r, 7)
	r.mu.Lock()
	fillKernelQueue(t, r, tree)
	err := os.RemoveAll(filepath.Join(tree, "d1"))
	if err == nil {
		err = os.RemoveAll(filepath.Join(tree, "d2"))
	}
	if err == nil {
		err = os.Remove(filepath.Join(tree, "d3"))
	}
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var cursor int64
	awaitOverflow(t, w, &cursor)
	checkWatches(t, r, 2) // tree and keep
	// And what is left is still watched.
	f := filepath.Join(tree, "keep", "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, w, &cursor, "create after the overflow", is(Create, f))
}

// awaitOverflow polls w until it reports overflow.
func awaitOverflow(t *testing.T, w *Watcher, cursor *int64) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatal("no overflow after overfilling the kernel queue")
		}
		res := w.Poll(t.Context(), *cursor, 1000, left)
		*cursor = res.Cursor
		if res.Overflow {
			return
		}
	}
}

// TestPollPageEndsBeforeMarker: a page of a poll never holds events from
// both sides of an overflow marker. Its events all come after the loss
// when it reports overflow, and all before it when it does not (the
// marker opens the next page). A client that rescans on overflow and then
// applies the page's events (the event stream sends overflow first)
// would otherwise replay, over its fresh scan, events from before the
// loss: a create of a file the lost events removed.
func TestPollPageEndsBeforeMarker(t *testing.T) {
	t.Parallel()
	type page struct {
		Rels     []string
		Cursor   int64
		Overflow bool
	}
	tests := []struct {
		name    string
		entries []string // relative paths; "!" is an overflow marker
		want    []page   // successive polls from cursor 0, limit 10
	}{
		{name: "events, marker, events", entries: []string{"a", "b", "!", "c"},
			want: []page{{[]string{"a", "b"}, 2, false}, {[]string{"c"}, 4, true}, {nil, 4, false}}},
		{name: "marker first", entries: []string{"!", "a", "!", "b"},
			want: []page{{[]string{"a"}, 2, true}, {[]string{"b"}, 4, true}, {nil, 4, false}}},
		{name: "markers in a row", entries: []string{"a", "!", "!", "b"},
			want: []page{{[]string{"a"}, 1, false}, {[]string{"b"}, 4, true}, {nil, 4, false}}},
		{name: "marker last", entries: []string{"a", "!"},
			want: []page{{[]string{"a"}, 1, false}, {nil, 2, true}, {nil, 2, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := ringWatcher(100)
			for _, e := range tc.entries {
				if e == "!" {
					appendEvent(w, Event{Type: overflow})
				} else {
					appendEvent(w, Event{Type: Create, Path: "/w/" + e, RelativePath: e})
				}
			}
			var got []page
			var cursor int64
			for range tc.want {
				res := w.Poll(t.Context(), cursor, 10, 0)
				p := page{Cursor: res.Cursor, Overflow: res.Overflow}
				for _, ev := range res.Events {
					p.Rels = append(p.Rels, ev.RelativePath)
				}
				got, cursor = append(got, p), res.Cursor
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
		})
	}
}

// replay applies events to a client's view of a tree: the relative
// paths it believes exist.
func replay(view map[string]bool, evs []Event) {
	under := func(p, dir string) bool { _, ok := within(p, dir); return ok }
	for _, e := range evs {
		switch e.Type {
		case Create:
			view[e.Path] = true
		case Remove:
			for p := range view {
				if under(p, e.Path) {
					delete(view, p)
				}
			}
		case Rename:
			for p := range view {
				if rel, ok := within(p, e.OldPath); ok {
					delete(view, p)
					view[path.Join(e.Path, rel)] = true
				}
			}
			view[e.Path] = true
		}
	}
}

// TestReplacedBeforeReadViews: a directory made, renamed away and made
// again under its old name before the reader gets to the first creation.
// The client's view built from the events must be the tree.
func TestReplacedBeforeReadViews(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, script string }{
		{"new one filled", "mkdir d && mv d m && mkdir -p d/x/y"},
		{"new one filled, then moved", "mkdir d && mv d m && mkdir -p d/x/y && mv d n"},
		{"old one filled", "mkdir -p d/x/y && mv d m && mkdir d"},
		{"both filled", "mkdir -p d/a && mv d m && mkdir -p d/b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := newReg(t, Options{})
			w := mustCreate(t, r, Config{Path: dir, Recursive: true, Exclude: []string{}})
			r.mu.Lock()
			cmd := exec.Command("sh", "-c", tc.script)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			r.mu.Unlock()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.script, err, out)
			}
			sentinel := filepath.Join(dir, "sentinel")
			if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var cursor int64
			var got []Event
			deadline := time.Now().Add(bound)
			for !slices.ContainsFunc(got, is(Create, sentinel)) && time.Now().Before(deadline) {
				res := w.Poll(t.Context(), cursor, 1000, time.Until(deadline))
				got, cursor = append(got, res.Events...), res.Cursor
			}
			view := map[string]bool{}
			replay(view, got)
			real := map[string]bool{}
			err = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
				if p != dir {
					real[p] = true
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(real, view); diff != "" {
				t.Errorf("view from the events (-tree +view):\n%s\nevents: %v", diff, shorten(got, dir))
			}
		})
	}
}

// TestIncludeSeesDirectoryMoves: a watcher with include globs is told of
// a file below a directory; the directory's name does not match them.
// When the directory moves, the client must learn where the file went
// (a rename) or that it left (a remove), or its view keeps a file that
// is not there and misses one that is.
func TestIncludeSeesDirectoryMoves(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, script string }{
		{"renamed", "mv a b"},
		{"moved deeper", "mkdir c && mv a c/"},
		{"moved out", "mv a ../away"},
		{"moved into an excluded directory", "mkdir node_modules && mv a node_modules/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "tree")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			sh(t, dir, "mkdir -p a/sub && echo 1 > a/x.py && echo 2 > a/sub/y.py && echo 3 > a/z.txt")
			r := newReg(t, Options{})
			w := mustCreate(t, r, Config{Path: dir, Recursive: true, Include: []string{"*.py"}})
			sh(t, dir, tc.script)
			sentinel := filepath.Join(dir, "sentinel.py")
			if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var cursor int64
			var got []Event
			deadline := time.Now().Add(bound)
			for !slices.ContainsFunc(got, is(Create, sentinel)) && time.Now().Before(deadline) {
				res := w.Poll(t.Context(), cursor, 1000, time.Until(deadline))
				got, cursor = append(got, res.Events...), res.Cursor
			}
			// The client knew of the files before the move.
			view := map[string]bool{filepath.Join(dir, "a/x.py"): true, filepath.Join(dir, "a/sub/y.py"): true}
			replay(view, got)
			py := func(m map[string]bool) []string {
				var out []string
				for p := range m {
					if strings.HasSuffix(p, ".py") && !strings.Contains(p, "node_modules") {
						out = append(out, p)
					}
				}
				slices.Sort(out)
				return out
			}
			real := map[string]bool{}
			err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
				real[p] = true
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(py(real), py(view)); diff != "" {
				t.Errorf(".py files (-tree +view from the events):\n%s\nevents: %v", diff, shorten(got, dir))
			}
		})
	}
}
