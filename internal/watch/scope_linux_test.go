package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
)

// TestInodeReusedBeforeRead: rm -rf d && mkdir d, then a new watcher on
// d, while another watcher keeps d's old watch and the reader has yet to
// see the old d's last events. The new d may get the old one's inode
// number, so only the kernel's watch tells them apart. The old d is
// staged deterministically: the watch the registry holds for d is moved
// to a watch descriptor the kernel does not know (the old directory's),
// keeping d's device and inode, and that descriptor's last events are fed
// after the new watcher starts, with the parent's events of the removal
// and the mkdir. The new watcher must report only what happens after it
// started, and keep running; the other one must watch the new d.
func TestInodeReusedBeforeRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  func(d string) Config
		want []short
	}{
		{"directory", func(d string) Config { return Config{Path: d} }, []short{{Write, "f", ""}}},
		{"recursive", func(d string) Config { return Config{Path: d, Recursive: true} }, []short{{Write, "f", ""}}},
		{"file", func(d string) Config { return Config{Path: filepath.Join(d, "f")} }, []short{{Write, "f", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d := filepath.Join(dir, "d")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(d, "f")
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := newReg(t, Options{})
			outer := mustCreate(t, r, Config{Path: dir, Recursive: true})
			r.mu.Lock()
			parent, old := r.byPath[dir].wd, r.byPath[d]
			delete(r.dirs, old.wd)
			old.wd += 1 << 20 // the old directory's watch: no longer the kernel's
			r.dirs[old.wd] = old
			r.mu.Unlock()

			w := mustCreate(t, r, tt.cfg(d))
			r.mu.Lock()
			now := time.Now()
			for _, ev := range []kernelEvent{ // as rm -rf d && mkdir d queues them
				{wd: old.wd, mask: inDelete | inIsDir, name: "in"},
				{wd: parent, mask: inDelete | inIsDir, name: "d"},
				{wd: old.wd, mask: inDeleteSelf},
				{wd: old.wd, mask: inIgnored},
				{wd: parent, mask: inCreate | inIsDir, name: "d"},
			} {
				r.handleLocked(ev, now)
			}
			r.mu.Unlock()
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []Event
			var cursor int64
			deadline := time.Now().Add(bound)
			for !w.Stopped() && time.Now().Before(deadline) && len(got) == 0 {
				res := w.Poll(context.Background(), cursor, 1000, time.Until(deadline))
				got, cursor = append(got, res.Events...), res.Cursor
			}
			if diff := cmp.Diff(tt.want, shorten(got, d)); diff != "" {
				t.Errorf("new watcher's events (-want +got):\n%s", diff)
			}
			if w.Stopped() {
				t.Errorf("new watcher stopped: %s", w.StopReason())
			}
			// The outer watcher still sees the new d.
			oc := outer.LatestSeq()
			if err := os.WriteFile(filepath.Join(d, "later"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			await(t, outer, &oc, "create of d/later for the outer watcher", is(Create, filepath.Join(d, "later")))
		})
	}
}

// TestChangedBeforeListed: a directory that appears (here moved in) is
// watched, then listed. What changes in between is in the listing or
// never was seen: the events queued meanwhile must not report entries
// the listing did not (a remove or a rename of them). The change is made
// deterministically from the registry's hook between the two steps, and
// ends by creating a marker.
func TestChangedBeforeListed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		at   string // the directory whose listing the change precedes
		sh   string // the change, run in the watched directory
		want []short
	}{
		{"removed", "in", "rm -r in/deep", []short{{Create, "in", ""}, {Create, "done", ""}}},
		{"moved away", "in/deep", "mv in/deep/q in/m",
			[]short{{Create, "in", ""}, {Create, "in/deep", ""}, {Create, "in/m", ""}, {Create, "done", ""}}},
		{"made and removed", "in", "echo x > in/t && rm in/t",
			[]short{{Create, "in", ""}, {Create, "in/deep", ""}, {Create, "in/deep/q", ""}, {Create, "done", ""}}},
		{"made", "in/deep", ": > in/deep/n",
			[]short{{Create, "in", ""}, {Create, "in/deep", ""}, {Create, "in/deep/n", ""}, {Create, "in/deep/q", ""}, {Create, "done", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, out := t.TempDir(), t.TempDir()
			sh(t, out, "mkdir -p in/deep && echo q > in/deep/q")
			r := newReg(t, Options{})
			w := mustCreate(t, r, Config{Path: dir, Recursive: true})
			r.mu.Lock()
			r.listHook = func(d string) {
				if d == filepath.Join(dir, tt.at) {
					sh(t, dir, tt.sh+" && : > done")
				}
			}
			r.mu.Unlock()
			if err := os.Rename(filepath.Join(out, "in"), filepath.Join(dir, "in")); err != nil {
				t.Fatal(err)
			}
			var cursor int64
			await(t, w, &cursor, "the marker", is(Create, filepath.Join(dir, "done")))
			got := w.Poll(context.Background(), 0, 1000, 0).Events
			if diff := cmp.Diff(tt.want, shorten(got, dir)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			testenv.WaitFor(t, bound, "scan windows closed", func() bool {
				r.mu.Lock()
				defer r.mu.Unlock()
				return len(r.windows) == 0
			})
		})
	}
}

// TestStagingLeftOut: entries with a staging name (Options.Staging) are
// neither reported nor watched, whatever the filters, and renaming one
// into place is a create of the destination, with what it holds.
func TestStagingLeftOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sh   string
		want []short
	}{
		{"file put into place", "echo x > .s.f && mv .s.f f", []short{{Create, "f", ""}}},
		{"file put over another", "echo x > .s.g && mv .s.g old", []short{{Create, "old", ""}}},
		{"tree put into place", "mkdir -p .s.t/a && echo x > .s.t/a/f && mv .s.t t",
			[]short{{Create, "t", ""}, {Create, "t/a", ""}, {Create, "t/a/f", ""}}},
		{"tree merged", "mkdir -p d/.s.m && echo x > d/.s.m/f && mv d/.s.m/f d/f && rmdir d/.s.m",
			[]short{{Create, "d/f", ""}}},
		{"other renames stay renames", "mv old new", []short{{Rename, "new", "old"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sh(t, dir, "echo o > old && mkdir d")
			r := newReg(t, Options{Staging: func(name string) bool { return strings.HasPrefix(name, ".s.") }})
			w := mustCreate(t, r, Config{Path: dir, Recursive: true, Exclude: []string{}})
			r.mu.Lock()
			r.listHook = func(d string) {
				if r.staged(d[len(dir):]) {
					t.Errorf("%s listed", d)
				}
			}
			r.mu.Unlock()
			sh(t, dir, tt.sh+" && : > done")
			var cursor int64
			await(t, w, &cursor, "the marker", is(Create, filepath.Join(dir, "done")))
			got := w.Poll(context.Background(), 0, 1000, 0).Events
			want := append(tt.want, short{Create, "done", ""})
			if diff := cmp.Diff(want, shorten(got, dir)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			r.mu.Lock()
			for p := range r.byPath {
				if r.staged(p[len(dir):]) {
					t.Errorf("%s watched", p)
				}
			}
			r.mu.Unlock()
		})
	}
}

// TestScanWindow: which events queued around a new directory's listing
// are reported. The listing showed a and b; events before position 10
// preceded it, events from 10 to 20 were queued while it ran.
func TestScanWindow(t *testing.T) {
	t.Parallel()
	steps := []struct {
		pos  uint64
		mask uint32
		name string
		want bool
	}{
		{5, inCreate, "c", false},  // made and gone before the listing
		{5, inDelete, "c", false},  // never reported
		{5, inDelete, "a", false},  // a was made again: listed
		{5, inModify, "a", true},   // may hold a merged later write
		{5, inModify, "c", false},  // never reported
		{12, inDelete, "x", false}, // gone before the listing saw it
		{12, inCreate, "d", true},  // may be missed by the listing
		{13, inModify, "d", true},
		{14, inMovedFrom, "d", true},
		{15, inModify, "d", false}, // reported gone
		{15, inDelete, "b", true},
		{16, inAttrib, "b", false},
		{20, inDelete, "x", true}, // after the listing: as it comes
	}
	s := &scanWindow{from: 10, until: 20, names: []string{"a", "b"}}
	for _, st := range steps {
		if got := s.keeps(kernelEvent{pos: st.pos, mask: st.mask, name: st.name}); got != st.want {
			t.Errorf("event %#x on %s at %d: kept %v, want %v", st.mask, st.name, st.pos, got, st.want)
		}
	}
}
