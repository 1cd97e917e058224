package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/testenv"
)

// parker holds the reader back (Registry.readHook) before its next read
// once armed, so that what the kernel queues meanwhile stays unread until
// the test resumes it.
type parker struct {
	armed  atomic.Bool
	parked chan struct{}
	resume chan struct{}
}

func newParker() *parker {
	return &parker{parked: make(chan struct{}), resume: make(chan struct{})}
}

func (p *parker) hook() {
	if p.armed.CompareAndSwap(true, false) {
		p.parked <- struct{}{}
		<-p.resume
	}
}

// park stops the reader: it wakes it with an event in wake (a directory a
// watcher of r watches, apart from the test's) and returns once the
// reader waits before its next read.
func (p *parker) park(t *testing.T, wake string) {
	t.Helper()
	p.armed.Store(true)
	if err := os.WriteFile(filepath.Join(wake, "wake"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.parked:
	case <-time.After(bound):
		t.Fatal("the reader did not stop")
	}
}

// TestSharedWatchStartsAtCreation: a watcher that shares the inotify
// watch of a directory another watcher holds reports only what happens
// from its creation on, not the events that watch queued before it (read
// or not). The reader is held back while the tree changes and the second
// watcher is created, so every change waits in the kernel's queue. A
// write queued last before the creation stays reported: the kernel merges
// a later write of the same file into it (here, the one after).
func TestSharedWatchStartsAtCreation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  string // before the first watcher
		before string // queued before the second watcher
		cfg    func(dir string) Config
		after  string // after the second watcher
		want   []short
	}{
		{"made and removed", "", ": > x && rm x",
			func(dir string) Config { return Config{Path: dir} }, ": > done", []short{{Create, "done", ""}}},
		{"removed", ": > x", "rm x",
			func(dir string) Config { return Config{Path: dir} }, ": > done", []short{{Create, "done", ""}}},
		{"renamed", ": > x", "mv x y",
			func(dir string) Config { return Config{Path: dir} }, ": > done", []short{{Create, "done", ""}}},
		{"directory made", "", "mkdir -p n/m && : > n/f",
			func(dir string) Config { return Config{Path: dir, Recursive: true, Exclude: []string{}} }, ": > done",
			[]short{{Create, "done", ""}}},
		{"directory moved in", "mkdir -p o/n && : > o/n/f", "mv o/n n",
			func(dir string) Config { return Config{Path: dir, Recursive: true, Exclude: []string{}} }, ": > done",
			[]short{{Create, "done", ""}}},
		{"written across the creation", "", "echo a > x",
			func(dir string) Config { return Config{Path: dir} }, "echo b >> x && : > done",
			[]short{{Write, "x", ""}, {Create, "done", ""}}},
		{"file replaced", ": > x", "rm x && : > x",
			func(dir string) Config { return Config{Path: filepath.Join(dir, "x")} }, "chmod 600 x",
			[]short{{Chmod, "x", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, other := t.TempDir(), t.TempDir()
			if tt.setup != "" {
				sh(t, dir, tt.setup)
			}
			r := newReg(t, Options{})
			p := newParker()
			r.readHook = p.hook // before the reader starts
			mustCreate(t, r, Config{Path: other})
			first := mustCreate(t, r, Config{Path: dir, Recursive: true})
			p.park(t, other)
			sh(t, dir, tt.before)
			w := mustCreate(t, r, tt.cfg(dir))
			sh(t, dir, tt.after)
			close(p.resume)
			last := tt.want[len(tt.want)-1]
			var cursor int64
			await(t, w, &cursor, "the last event", func(e Event) bool { return e.Type == last.Type && e.RelativePath == last.Rel })
			got := w.Poll(context.Background(), 0, 1000, 0).Events
			if diff := cmp.Diff(tt.want, shorten(got, w.root)); diff != "" {
				t.Errorf("the second watcher's events (-want +got):\n%s", diff)
			}
			// The first watcher still gets everything.
			cursor = 0
			await(t, first, &cursor, "the first watcher's last event", func(e Event) bool { return e.Type == last.Type && path.Base(e.Path) == last.Rel })
		})
	}
}

// TestSharedWatchStress: a watcher is created, again and again, on a
// directory another watcher holds while files there are made and removed
// nonstop, so that events wait in the queue whenever it starts. A file
// made and removed before a watcher was created is never reported to it;
// every file made after is, unless the kernel's queue overflowed.
func TestSharedWatchStress(t *testing.T) {
	t.Parallel()
	iterations := 100
	if testenv.Race {
		iterations = 20 // the reader is slow: each iteration drains a long queue
	}
	dir := t.TempDir()
	r := newReg(t, Options{})
	mustCreate(t, r, Config{Path: dir, Recursive: true})
	var done atomic.Int64 // files made and removed: f0 to f(done-1)
	stop := make(chan struct{})
	churned := make(chan error, 1)
	go func() {
		for i := int64(0); ; i++ {
			select {
			case <-stop:
				churned <- nil
				return
			default:
			}
			f := filepath.Join(dir, "f"+strconv.FormatInt(i, 10))
			fd, err := unix.Open(f, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
				err = unix.Unlink(f)
			}
			if err != nil {
				churned <- err
				return
			}
			done.Store(i + 1)
		}
	}()
	number := func(e Event) int64 {
		n, err := strconv.ParseInt(strings.TrimPrefix(e.RelativePath, "f"), 10, 64)
		if err != nil {
			t.Fatalf("unexpected %+v", e)
		}
		return n
	}
	early, missed, overflowed := 0, 0, 0
	for i := range iterations {
		gone := done.Load()
		w := mustCreate(t, r, Config{Path: dir, Exclude: []string{fmt.Sprintf("nothing%d", i)}})
		after := done.Load() + 1 // made once Create returned
		// Events come in order: once a later file is reported, all
		// queued at the creation are in.
		var got []Event
		var cursor int64
		overflow := false
		deadline := time.Now().Add(bound)
		for len(got) == 0 || number(got[len(got)-1]) <= after {
			if time.Now().After(deadline) {
				t.Fatalf("iteration %d: no file made after the creation reported", i)
			}
			res := w.Poll(context.Background(), cursor, 1000, time.Until(deadline))
			got, cursor, overflow = append(got, res.Events...), res.Cursor, overflow || res.Overflow
		}
		made := map[int64]bool{}
		last, bad := int64(0), false
		for _, e := range got {
			n := number(e)
			if n < gone && !bad {
				t.Logf("iteration %d: %s of f%d, made and removed before the watcher started", i, e.Type, n)
				bad = true
			}
			if e.Type == Create {
				made[n], last = true, max(last, n)
			}
		}
		if bad {
			early++
		}
		if overflow {
			overflowed++ // events were dropped: the client would rescan
			last = 0
		}
		for n := after; n <= last; n++ {
			if !made[n] {
				t.Logf("iteration %d: f%d, made after the watcher started, not reported", i, n)
				missed++
				break
			}
		}
		if _, err := r.Release(w.ID()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-churned; err != nil {
		t.Fatal(err)
	}
	t.Logf("of %d watchers, %d reported files from before their start, %d missed one made after (%d saw the kernel queue overflow)", iterations, early, missed, overflowed)
	if early > 0 || missed > 0 {
		t.Fail()
	}
}

// TestRetiredWatchLeavesBudget: a watch retired because its directory is
// gone (another directory with its inode number is at its path) no
// longer counts against the watch budget, though it stays known until
// its IGNORED is read: at the budget, the new directory is still
// watched. The old directory is staged as in TestInodeReusedBeforeRead.
func TestRetiredWatchLeavesBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReg(t, Options{MaxUserWatches: 2}) // a budget of two watches
	outer := mustCreate(t, r, Config{Path: dir, Recursive: true})
	checkWatches(t, r, 2)
	r.mu.Lock()
	parent, old := r.byPath[dir].wd, r.byPath[d]
	delete(r.dirs, old.wd)
	old.wd += 1 << 20 // the old directory's watch: no longer the kernel's
	r.dirs[old.wd] = old
	r.mu.Unlock()

	w, _, err := r.Create(Config{Path: d, Debounce: MinDebounce})
	if err != nil {
		t.Fatalf("watching the new d while the old one's watch is retired: %v", err)
	}
	inUse := func() (int, int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.dirs), r.retired
	}
	if held, retired := inUse(); held != 3 || retired != 1 {
		t.Fatalf("%d watches known, %d retired; want 3, 1", held, retired)
	}
	feed := func(evs ...kernelEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, ev := range evs {
			r.handleLocked(ev, time.Now())
		}
	}
	// rm -rf d && mkdir d, as the old watch and the parent's queue them;
	// the IGNORED twice, as if it were read again.
	feed(kernelEvent{wd: parent, mask: inDelete | inIsDir, name: "d"}, kernelEvent{wd: old.wd, mask: inDeleteSelf},
		kernelEvent{wd: old.wd, mask: inIgnored}, kernelEvent{wd: old.wd, mask: inIgnored},
		kernelEvent{wd: parent, mask: inCreate | inIsDir, name: "d"})
	if held, retired := inUse(); held != 2 || retired != 0 {
		t.Fatalf("after the old watch's IGNORED: %d watches known, %d retired; want 2, 0", held, retired)
	}
	// The budget is still whole: a third directory does not fit.
	_, _, err = r.Create(Config{Path: t.TempDir()})
	if we, ok := errors.AsType[*Error](err); !ok || we.Kind != Unavailable {
		t.Fatalf("a third watch with a budget of two: %v", err)
	}
	f := filepath.Join(d, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Watcher{w, outer} {
		var cursor int64
		await(t, x, &cursor, "create of d/f", is(Create, f))
	}
	for _, x := range []*Watcher{w, outer} {
		if _, err := r.Release(x.ID()); err != nil {
			t.Fatal(err)
		}
	}
	checkWatches(t, r, 0)
	if _, retired := inUse(); retired != 0 {
		t.Fatalf("%d retired watches counted after every release", retired)
	}
}
