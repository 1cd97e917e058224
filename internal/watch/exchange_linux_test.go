package watch

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// treeView is what a client that mirrors root should hold: every path
// below it that w reports (the default excludes left out when w has
// them).
func treeView(t *testing.T, w *Watcher, root string) map[string]bool {
	t.Helper()
	view := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := within(p, root)
		if w.cfg.excluded(rel) {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		view[p] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return view
}

// checkTracked: w's watches are exactly on the directories of its tree
// that it wants, each under the path where that very directory is now.
func checkTracked(t *testing.T, r *Registry, w *Watcher, root string) {
	t.Helper()
	want := map[string]fileID{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		if !w.wantsDir(p) {
			return fs.SkipDir
		}
		id, _ := identify(p)
		want[p] = id
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]fileID{}
	r.mu.Lock()
	for dw := range w.dirs {
		got[dw.path] = dw.id
		if r.byPath[dw.path] != dw {
			t.Errorf("the watch of %s is not the one the registry has at that path", dw.path)
		}
	}
	r.mu.Unlock()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(fileID{})); diff != "" {
		t.Errorf("watched directories of %s (-disk +watches):\n%s", root, diff)
	}
}

// sentinelEvents makes the file name in dir and returns w's events up
// to its create, read from *cursor on.
func sentinelEvents(t *testing.T, w *Watcher, dir, name string, cursor *int64) []Event {
	t.Helper()
	sentinel := filepath.Join(dir, name)
	if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []Event
	deadline := time.Now().Add(bound)
	for !slices.ContainsFunc(got, is(Create, sentinel)) {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no create of %s; events: %v", sentinel, shorten(got, dir))
		}
		res := w.Poll(t.Context(), *cursor, 1000, left)
		if res.Overflow {
			t.Fatalf("overflow; events so far: %v", shorten(got, dir))
		}
		got, *cursor = append(got, res.Events...), res.Cursor
	}
	return got
}

// TestExchangeViews: renameat2(RENAME_EXCHANGE) swaps two entries
// atomically; the kernel reports it as two moves (a to b, then b to a)
// that read like a rename there and back. A client that applies the
// events to its view of the tree (replay: a rename carries what was below
// the old name, and does not clear the new one) must end up with the
// tree: files and directories, either way round, in one directory or two,
// one side excluded, or one side outside the watched tree. The watches
// must follow the directories (each under the path its directory now
// has), so that what happens in the swapped directories afterwards is
// reported under their new paths. Every watcher is checked: one on the
// whole tree, and one on each directory given in roots.
func TestExchangeViews(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   string // run in the tree
		a, b    string // exchanged, relative to the tree ("../x" is outside)
		roots   []string
		exclude []string // nil: the defaults
		stops   []string // roots (of roots) whose watchers stop: their directory moved away
		// then runs after the exchange; "" runs nothing. With there, the
		// exchange is replaced by mv a b && mv b a, which the kernel
		// reports alike.
		then  string
		there bool
	}{
		{name: "two files", setup: "echo 1 > a && echo 22 > b", a: "a", b: "b"},
		{name: "two directories", setup: "mkdir -p a/x b/y && touch a/x/f a/g b/y/h", a: "a", b: "b"},
		{name: "directory and file", setup: "mkdir -p a/x && touch a/x/f && echo 1 > b", a: "a", b: "b"},
		{name: "file and directory", setup: "echo 1 > a && mkdir -p b/y && touch b/y/h", a: "a", b: "b"},
		{name: "directories in two directories", setup: "mkdir -p p/a/x q/b/y && touch p/a/x/f q/b/y/h",
			a: "p/a", b: "q/b", roots: []string{"p", "q"}},
		{name: "directory and file in two directories", setup: "mkdir -p p/a/x q && touch p/a/x/f q/b",
			a: "p/a", b: "q/b", roots: []string{"p", "q"}},
		{name: "a directory watched from inside", setup: "mkdir -p a/x/y b/z && touch a/x/f",
			a: "a", b: "b", roots: []string{"a/x", "b"}, stops: []string{"a/x", "b"}},
		{name: "files there and back", setup: "echo 1 > a", a: "a", b: "b", there: true},
		{name: "directories there and back", setup: "mkdir -p a/x && touch a/x/f", a: "a", b: "b", there: true},
		{name: "two files, then b removed", setup: "echo 1 > a && echo 22 > b", a: "a", b: "b", then: "rm b"},
		{name: "two directories, then b removed", setup: "mkdir -p a/x b/y && touch a/x/f b/y/h", a: "a", b: "b", then: "rm -r b"},
		{name: "two directories, then a removed", setup: "mkdir -p a/x b/y && touch a/x/f b/y/h", a: "a", b: "b", then: "rm -r a"},
		{name: "one side excluded", setup: "mkdir -p src/x node_modules/y && touch src/x/f node_modules/y/g",
			a: "src", b: "node_modules"},
		{name: "one side outside the tree", setup: "mkdir -p a/x ../out/y && touch a/x/f ../out/y/g",
			a: "a", b: "../out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := filepath.Join(t.TempDir(), "tree")
			if err := os.Mkdir(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			sh(t, tree, tc.setup)
			r := newReg(t, Options{})
			type watched struct {
				w      *Watcher
				root   string
				view   map[string]bool
				cursor int64
			}
			var ws []*watched
			for _, rel := range append([]string{"."}, tc.roots...) {
				root := filepath.Join(tree, rel)
				w := mustCreate(t, r, Config{Path: root, Recursive: true, Exclude: tc.exclude})
				ws = append(ws, &watched{w: w, root: root, view: treeView(t, w, root)})
			}
			a, b := filepath.Join(tree, tc.a), filepath.Join(tree, tc.b)
			var err error
			var out []byte
			if tc.then != "" {
				// The reader gets to the exchange only after then ran
				// (held back, as by a busy daemon): what is on disk then
				// no longer shows the exchange whole.
				r.mu.Lock()
			}
			if tc.there {
				err = exec.Command("sh", "-c", "cd "+tree+" && mv "+tc.a+" "+tc.b+" && mv "+tc.b+" "+tc.a).Run()
			} else {
				err = exchange(a, b)
			}
			if err == nil && tc.then != "" {
				cmd := exec.Command("sh", "-c", tc.then)
				cmd.Dir = tree
				out, err = cmd.CombinedOutput()
			}
			if tc.then != "" {
				r.mu.Unlock()
			}
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
				t.Skipf("RENAME_EXCHANGE unsupported here: %v", err)
			} else if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			check := func(step string) {
				t.Helper()
				for i, x := range ws {
					stops := i > 0 && slices.Contains(tc.stops, tc.roots[i-1])
					if stops {
						var cursor int64
						await(t, x.w, &cursor, "the root's remove", is(Remove, x.root))
						awaitStopped(t, x.w)
						continue
					}
					got := sentinelEvents(t, x.w, x.root, "zz-"+strings.ReplaceAll(step, " ", "-"), &x.cursor)
					t.Logf("%s, %s: %v", step, x.root, shorten(got, x.root))
					replay(x.view, got)
					if diff := cmp.Diff(treeView(t, x.w, x.root), x.view); diff != "" {
						t.Errorf("%s: view of %s from its events (-tree +view):\n%s\nevents: %v", step, x.root, diff, shorten(got, x.root))
					}
					checkTracked(t, r, x.w, x.root)
				}
			}
			check("after the exchange")
			// What happens in the swapped directories is reported where
			// it happens.
			for _, p := range []string{a, b} {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					sh(t, p, "mkdir -p later/deeper && touch later/deeper/f new")
				}
			}
			check("after changes in them")
		})
	}
}

// TestExchangeWithWriteBetween: a write by another process to a file in
// a directory the exchange does not touch can be queued between its two
// moves (only the two directories are locked). It must not split the
// exchange into two renames. Events are fed through a pipe standing in
// for the inotify descriptor (as in TestRenameHalvesInTwoReads), the
// files staying as they are on disk: a and b both exist, as after an
// exchange.
func TestExchangeWithWriteBetween(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh(t, dir, "mkdir other && touch a b other/c")
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	r.mu.Lock()
	top, other := r.byPath[dir].wd, r.byPath[filepath.Join(dir, "other")].wd
	r.mu.Unlock()
	pw := pipeReader(t, r)
	evs := []kernelEvent{
		{wd: top, mask: inMovedFrom, cookie: 7, name: "a"},
		{wd: top, mask: inMovedTo, cookie: 7, name: "b"},
		{wd: other, mask: inModify, name: "c"},
		{wd: top, mask: inMovedFrom, cookie: 8, name: "b"},
		{wd: top, mask: inMovedTo, cookie: 8, name: "a"},
		{wd: top, mask: inCreate, name: "zz-sentinel"},
	}
	if _, err := pw.Write(encodeEvents(evs)); err != nil {
		t.Fatal(err)
	}
	var got []Event
	var cursor int64
	sentinel := filepath.Join(dir, "zz-sentinel")
	await(t, w, &cursor, "the sentinel's create", func(e Event) bool {
		got = append(got, e)
		return is(Create, sentinel)(e)
	})
	view := map[string]bool{filepath.Join(dir, "a"): true, filepath.Join(dir, "b"): true,
		filepath.Join(dir, "other"): true, filepath.Join(dir, "other", "c"): true}
	replay(view, got)
	want := map[string]bool{filepath.Join(dir, "a"): true, filepath.Join(dir, "b"): true,
		filepath.Join(dir, "other"): true, filepath.Join(dir, "other", "c"): true, sentinel: true}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("view from the events (-want +view):\n%s\nevents: %v", diff, shorten(got, dir))
	}
}
