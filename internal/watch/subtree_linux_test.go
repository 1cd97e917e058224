package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
)

// untilSentinel makes the file zz-sentinel in dir and returns w's
// events up to and including its create: everything done before it has
// been reported by then, since events leave in the order they came.
func untilSentinel(t *testing.T, w *Watcher, dir string, cursor *int64) []Event {
	t.Helper()
	sentinel := filepath.Join(dir, "zz-sentinel")
	if err := os.Remove(sentinel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []Event
	await(t, w, cursor, "the sentinel's create", func(e Event) bool {
		got = append(got, e)
		return e.Type == Create && e.Path == sentinel
	})
	return got
}

// TestNoFoldAcrossRemovedDir: a directory moved away (or out of the
// tree) ends the names below it. A create below a directory of the same
// name made afterwards is another file's: folding it into the create
// still queued from before would report it before the move, and a
// client replaying the events would lose the new file. The same goes
// for a directory moved out and back in (reported as a remove and a
// create, its entries listed anew).
func TestNoFoldAcrossRemovedDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps func(dir, out string) error // after d and d/f are made and seen
		want  []short
	}{
		{name: "renamed away and made again",
			steps: func(dir, _ string) error {
				return chain(
					func() error { return os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "e")) },
					func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o755) },
					func() error { return os.WriteFile(filepath.Join(dir, "d", "f"), nil, 0o644) },
				)
			},
			want: []short{{Create, "d", ""}, {Create, "d/f", ""}, {Rename, "e", "d"}, {Create, "d", ""}, {Create, "d/f", ""}, {Create, "zz-sentinel", ""}}},
		{name: "moved out and back in",
			steps: func(dir, out string) error {
				return chain(
					func() error { return os.Rename(filepath.Join(dir, "d"), filepath.Join(out, "d")) },
					func() error { return os.Rename(filepath.Join(out, "d"), filepath.Join(dir, "d")) },
				)
			},
			want: []short{{Create, "d", ""}, {Create, "d/f", ""}, {Remove, "d", ""}, {Create, "d", ""}, {Create, "d/f", ""}, {Create, "zz-sentinel", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir, out := filepath.Join(parent, "w"), filepath.Join(parent, "out")
			for _, d := range []string{dir, out} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			r := newReg(t, Options{})
			// A long debounce: every event is still queued when the
			// next one comes.
			w := mustCreate(t, r, Config{Path: dir, Recursive: true, Debounce: 2 * time.Second})
			d := filepath.Join(dir, "d")
			if err := chain(
				func() error { return os.Mkdir(d, 0o755) },
				func() error { return os.WriteFile(filepath.Join(d, "f"), nil, 0o644) },
			); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, bound, "d watched and d/f queued", func() bool {
				r.mu.Lock()
				watched := r.byPath[d] != nil
				r.mu.Unlock()
				return watched && offered(w, "f")
			})
			if err := tc.steps(dir, out); err != nil {
				t.Fatal(err)
			}
			var cursor int64
			if diff := cmp.Diff(tc.want, shorten(untilSentinel(t, w, dir, &cursor), dir)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func chain(steps ...func() error) error {
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// TestDirMadeInMovedDir: a directory made in a watched directory that
// is then moved, all before the reader handles the create, cannot be
// opened at the path the watch still has. Once the rename moves the
// watch, the new directory is watched and what it holds reported, and
// what happens in it later is reported too.
func TestDirMadeInMovedDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{})
	w := mustCreate(t, r, Config{Path: dir, Recursive: true})
	b := filepath.Join(dir, "a", "z", "b")
	if err := os.Mkdir(b, 0o755); err != nil {
		t.Fatal(err)
	}
	var cursor int64
	await(t, w, &cursor, "create of a/z/b", is(Create, b))
	r.mu.Lock() // hold the reader back
	err := chain(
		func() error { return os.MkdirAll(filepath.Join(b, "p", "q"), 0o755) },
		func() error { return os.WriteFile(filepath.Join(b, "p", "q", "f"), nil, 0o644) },
		func() error { return os.Rename(b, filepath.Join(dir, "b")) },
	)
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	got := untilSentinel(t, w, dir, &cursor)
	if err := os.WriteFile(filepath.Join(dir, "b", "p", "q", "g"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = append(got, untilSentinel(t, w, dir, &cursor)...)
	want := []short{{Create, "a/z/b/p", ""}, {Rename, "b", "a/z/b"}, {Create, "b/p/q", ""}, {Create, "b/p/q/f", ""},
		{Create, "zz-sentinel", ""}, {Create, "b/p/q/g", ""}, {Remove, "zz-sentinel", ""}, {Create, "zz-sentinel", ""}}
	if diff := cmp.Diff(want, shorten(got, dir)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestRenameAcrossLateJoin: a watcher that joins a directory's watch
// (shared with another watcher) only after a rename into or out of it
// was queued sees one half of the rename. Moved into the directory: it
// knew the old name and finds the new one listed when it joins, so the
// old name is removed for it. Moved out: it never knew the old name, so
// the new one is created. Skipping the rename altogether left a removed
// name listed forever, or a new one never reported.
func TestRenameAcrossLateJoin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before func(dir string) error // before the second watcher, made on s
		after  func(dir string) error // then, before the reader goes on
		want   []short
	}{
		{name: "moved into the directory joined late",
			before: func(dir string) error { return os.WriteFile(filepath.Join(dir, "c"), nil, 0o644) },
			after:  func(dir string) error { return os.Rename(filepath.Join(dir, "c"), filepath.Join(dir, "s", "c")) },
			want:   []short{{Create, "c", ""}, {Create, "s", ""}, {Create, "s/c", ""}, {Remove, "c", ""}, {Create, "zz-sentinel", ""}}},
		{name: "moved out of the directory joined late",
			after: func(dir string) error {
				return chain(
					func() error { return os.WriteFile(filepath.Join(dir, "s", "c"), nil, 0o644) },
					func() error { return os.Rename(filepath.Join(dir, "s", "c"), filepath.Join(dir, "c")) },
				)
			},
			want: []short{{Create, "s", ""}, {Create, "c", ""}, {Create, "zz-sentinel", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, other := t.TempDir(), t.TempDir()
			r := newReg(t, Options{})
			p := newParker()
			r.readHook = p.hook // before the reader starts
			mustCreate(t, r, Config{Path: other})
			w := mustCreate(t, r, Config{Path: dir, Recursive: true})
			var cursor int64
			if tc.before != nil {
				if err := tc.before(dir); err != nil {
					t.Fatal(err)
				}
				await(t, w, &cursor, "the create of c", is(Create, filepath.Join(dir, "c")))
			}
			p.park(t, other)
			// s is made and watched by a second watcher while the
			// reader waits: w joins its watch only when the reader
			// handles the create of s, after the rename.
			if err := os.Mkdir(filepath.Join(dir, "s"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, r, Config{Path: filepath.Join(dir, "s")})
			err := tc.after(dir)
			close(p.resume)
			if err != nil {
				t.Fatal(err)
			}
			cursor = 0
			if diff := cmp.Diff(tc.want, shorten(untilSentinel(t, w, dir, &cursor), dir)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
