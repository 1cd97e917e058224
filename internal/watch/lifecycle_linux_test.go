package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/testenv"
)

// fakeClock is a registry clock (Options.Now) that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mkdirs makes the directories names below parent and returns their paths.
func mkdirs(t *testing.T, parent string, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		p := filepath.Join(parent, n)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func awaitStopped(t *testing.T, ws ...*Watcher) {
	t.Helper()
	testenv.WaitFor(t, bound, "the watchers to stop", func() bool {
		for _, w := range ws {
			if !w.Stopped() {
				return false
			}
		}
		return true
	})
}

// wantGone checks that id answers NotFound with a message holding each
// of words.
func wantGone(t *testing.T, r *Registry, id string, words ...string) {
	t.Helper()
	_, err := r.Get(id)
	we, ok := errors.AsType[*Error](err)
	if !ok || we.Kind != NotFound {
		t.Fatalf("watcher %s: err = %v, want NotFound", id, err)
	}
	for _, w := range words {
		if !strings.Contains(we.Message, w) {
			t.Errorf("watcher %s: message %q does not say %q", id, we.Message, w)
		}
	}
}

func listed(r *Registry) map[string]Info {
	out := map[string]Info{}
	for _, i := range r.List() {
		out[i.ID] = i
	}
	return out
}

// TestLimitCountsActiveOnly: the soak reproduction. MaxWatchers watchers
// whose directories are all removed stop; they must not hold the limit
// against new watchers.
func TestLimitCountsActiveOnly(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	tree := filepath.Join(parent, "tree")
	r := newReg(t, Options{Now: newClock().Now})
	var ws []*Watcher
	for i := range DefaultMaxWatchers {
		d := mkdirs(t, tree, fmt.Sprintf("d%03d", i))[0]
		ws = append(ws, mustCreate(t, r, Config{Path: d}))
	}
	spare := mkdirs(t, parent, "spare")[0]
	if _, _, err := r.Create(Config{Path: spare}); err == nil {
		t.Fatal("a watcher past the limit was created")
	}
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	awaitStopped(t, ws...)
	list := r.List()
	if len(list) != DefaultMaxWatchers {
		t.Fatalf("%d watchers listed after their directories went, want %d (stopped, still readable)", len(list), DefaultMaxWatchers)
	}
	for _, i := range list {
		if i.Status != "stopped" || !strings.Contains(i.StopReason, "was removed or moved away") {
			t.Fatalf("after rm -rf: %+v", i)
		}
	}
	w, _, err := r.Create(Config{Path: spare, Debounce: MinDebounce})
	if err != nil {
		t.Fatalf("with every watcher stopped: %v", err)
	}
	active := 0
	for _, i := range r.List() {
		if i.Status == "active" {
			active++
		}
	}
	if n := len(r.List()); n != DefaultMaxWatchers || active != 1 || listed(r)[w.ID()].Status != "active" {
		t.Fatalf("%d listed, %d active; want %d, 1 (a stopped one made room)", n, active, DefaultMaxWatchers)
	}
}

// TestStoppedEvictedOldestFirst: stopped watchers make room for new ones
// in the order they stopped; active ones never do.
func TestStoppedEvictedOldestFirst(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	clock := newClock()
	r := newReg(t, Options{MaxWatchers: 2, Now: clock.Now})
	d := mkdirs(t, parent, "a", "b", "c", "d", "e")
	a, b := mustCreate(t, r, Config{Path: d[0]}), mustCreate(t, r, Config{Path: d[1]})
	for _, w := range []*Watcher{a, b} {
		if err := os.Remove(w.Config().Path); err != nil {
			t.Fatal(err)
		}
		awaitStopped(t, w)
		clock.Add(time.Second)
	}
	mustCreate(t, r, Config{Path: d[2]})
	wantGone(t, r, a.ID(), "stopped", "removed", "slot")
	if i, ok := listed(r)[b.ID()]; !ok || i.Status != "stopped" {
		t.Fatalf("the later stop went first: %+v", r.List())
	}
	mustCreate(t, r, Config{Path: d[3]})
	wantGone(t, r, b.ID(), "slot")
	_, _, err := r.Create(Config{Path: d[4]})
	if we, ok := errors.AsType[*Error](err); !ok || we.Kind != Limit {
		t.Fatalf("with two active watchers of two: %v", err)
	}
}

// TestStoppedReadableUntilReaped: a watcher whose directory went keeps
// its last events and says why it stopped until they are read, or the
// grace period passes.
func TestStoppedReadableUntilReaped(t *testing.T) {
	t.Parallel()
	const grace = 5 * time.Minute
	tests := []struct {
		name   string
		shared bool // two subscribers
		read   bool // a poll reads it to its end
		wait   time.Duration
		gone   bool
		words  []string
	}{
		{name: "read to its end", read: true, gone: true, words: []string{"last events were read"}},
		{name: "unread within the grace", wait: grace - time.Nanosecond},
		{name: "unread past the grace", wait: grace, gone: true, words: []string{"kept 5m0s"}},
		{name: "shared, read, within the grace", shared: true, read: true, wait: grace - time.Nanosecond},
		{name: "shared, read, past the grace", shared: true, read: true, wait: grace, gone: true, words: []string{"kept 5m0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := mkdirs(t, t.TempDir(), "w")[0]
			if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			clock := newClock()
			r := newReg(t, Options{StoppedGrace: grace, Now: clock.Now})
			w := mustCreate(t, r, Config{Path: dir})
			if tc.shared {
				mustCreate(t, r, Config{Path: dir})
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			awaitStopped(t, w)
			i := listed(r)[w.ID()]
			if i.Status != "stopped" || !strings.Contains(i.StopReason, "its directory "+dir+" was removed or moved away") {
				t.Fatalf("listed as %+v", i)
			}
			// A page short of the end leaves it in place.
			first := w.Poll(context.Background(), 0, 1, 0)
			if len(first.Events) != 1 || first.Events[0].Type != Remove || first.Events[0].RelativePath != "f" {
				t.Fatalf("first page: %+v", first)
			}
			if _, err := r.Get(w.ID()); err != nil {
				t.Fatalf("after a partial read: %v", err)
			}
			if tc.read {
				rest := w.Poll(context.Background(), first.Cursor, 100, 0)
				if len(rest.Events) != 1 || rest.Events[0].Type != Remove || rest.Events[0].RelativePath != "." {
					t.Fatalf("its last events: %+v", rest)
				}
			}
			clock.Add(tc.wait)
			if !tc.gone {
				if _, err := r.Get(w.ID()); err != nil {
					t.Fatalf("reaped too early: %v", err)
				}
				return
			}
			wantGone(t, r, w.ID(), append([]string{"stopped", "removed"}, tc.words...)...)
			if _, err := r.Release(w.ID()); err == nil {
				t.Error("a reaped watcher was released")
			}
			if len(r.List()) != 0 {
				t.Errorf("still listed: %+v", r.List())
			}
		})
	}
}

// TestIdleExpiry: a watcher nobody polls expires after IdleTimeout; a
// poll in progress or a recent one keeps it.
func TestIdleExpiry(t *testing.T) {
	t.Parallel()
	const idle = time.Minute
	clock := newClock()
	r := newReg(t, Options{IdleTimeout: idle, Now: clock.Now})
	d := mkdirs(t, t.TempDir(), "a", "b", "c")
	a, b, c := mustCreate(t, r, Config{Path: d[0]}), mustCreate(t, r, Config{Path: d[1]}), mustCreate(t, r, Config{Path: d[2]})
	checkWatches(t, r, 3)

	clock.Add(30 * time.Second)
	b.Poll(context.Background(), 0, 10, 0)
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		c.Poll(ctx, 0, 10, time.Hour) // a long poll (or an event stream) that outlives the timeout
	}()
	testenv.WaitFor(t, bound, "the long poll to start", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.readers == 1
	})

	clock.Add(idle + 10*time.Second - 30*time.Second) // a: idle+10s; b: 40s since its poll
	wantGone(t, r, a.ID(), "expired", "nobody polled it for 1m0s")
	if _, err := r.Release(a.ID()); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("release of an expired watcher: %v", err)
	}
	if !a.Stopped() {
		t.Error("an expired watcher still runs")
	}
	checkWatches(t, r, 2) // its inotify watch is released
	if got := listed(r); len(got) != 2 || got[b.ID()].Status != "active" || got[c.ID()].Status != "active" {
		t.Fatalf("listed: %+v", got)
	}

	clock.Add(2 * idle) // b expires; c is being polled
	wantGone(t, r, b.ID(), "expired")
	if _, ok := listed(r)[c.ID()]; !ok {
		t.Fatal("a watcher with a long poll in progress expired")
	}
	cancel()
	<-polled
	clock.Add(idle - time.Nanosecond)
	if _, err := r.Get(c.ID()); err != nil { // counts as a read
		t.Fatalf("expired before IdleTimeout passed since its poll ended: %v", err)
	}
	clock.Add(idle)
	wantGone(t, r, c.ID(), "expired")
	checkWatches(t, r, 0)

	// Sharing a watcher counts as a read: its new subscriber has yet to
	// poll.
	w := mustCreate(t, r, Config{Path: d[0]})
	clock.Add(idle - time.Second)
	if again := mustCreate(t, r, Config{Path: d[0]}); again != w {
		t.Fatal("identical config not shared")
	}
	clock.Add(idle - time.Second)
	if _, ok := listed(r)[w.ID()]; !ok {
		t.Fatal("a watcher just shared expired")
	}
}
