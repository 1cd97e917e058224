package procs

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// recorder is a Governor's set that reports each change on a channel.
type recorder chan bool

func (r recorder) set(wide bool) { r <- wide }

// next waits for the next change and fails unless it is want.
func (r recorder) next(t *testing.T, want bool) {
	t.Helper()
	select {
	case got := <-r:
		if got != want {
			t.Fatalf("set(%v), want set(%v)", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no set(%v) within 10 s", want)
	}
}

// none fails if a change comes within d.
func (r recorder) none(t *testing.T, d time.Duration, why string) {
	t.Helper()
	select {
	case got := <-r:
		t.Fatalf("set(%v) %s", got, why)
	case <-time.After(d):
	}
}

const testHold = 20 * time.Millisecond

func newTestGovernor(t *testing.T) (*Governor, recorder) {
	t.Helper()
	r := make(recorder, 16)
	g := newGovernor(4, testHold, r.set)
	r.next(t, false) // it starts narrow
	return g, r
}

func TestGovernorWidensOnlyForConcurrentRequests(t *testing.T) {
	t.Parallel()
	g, r := newTestGovernor(t)
	first := g.Request()
	r.none(t, 5*testHold, "with one request in flight")
	second := g.Request()
	r.next(t, true)
	r.none(t, 5*testHold, "while two requests are in flight")
	second()
	first()
	r.next(t, false)
	// Narrow again, it widens again for the next pair.
	a, b := g.Request(), g.Request()
	r.next(t, true)
	a()
	b()
	r.next(t, false)
	g.Close()
	r.next(t, true) // Close restores the default
}

func TestGovernorParallelWork(t *testing.T) {
	t.Parallel()
	g, r := newTestGovernor(t)
	workers, done := g.Parallel()
	if workers != 4 {
		t.Errorf("Parallel gave %d workers, want the 4 CPUs", workers)
	}
	r.next(t, true)
	// A lone request beside the walk keeps it wide too.
	req := g.Request()
	r.none(t, 5*testHold, "while parallel work runs")
	done()
	req()
	r.next(t, false)
	g.Close()
	r.next(t, true)
}

// TestGovernorHoldsThroughShortGaps: a burst of overlapping requests with
// gaps shorter than the hold makes one change each way, not one per pair.
func TestGovernorHoldsThroughShortGaps(t *testing.T) {
	t.Parallel()
	r := make(recorder, 16)
	const hold = time.Second
	g := newGovernor(4, hold, r.set)
	defer g.Close()
	r.next(t, false)
	for range 5 {
		a, b := g.Request(), g.Request()
		a()
		b()
		time.Sleep(10 * time.Millisecond)
	}
	r.next(t, true)
	r.next(t, false)
	if len(r) != 0 {
		t.Errorf("%d more changes after the burst, want none", len(r))
	}
}

func TestGovernorUnderConcurrentUse(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	wide, changes := false, 0
	g := newGovernor(4, time.Millisecond, func(w bool) {
		mu.Lock()
		defer mu.Unlock()
		wide = w
		changes++
	})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 200 {
				if (i+j)%7 == 0 {
					_, done := g.Parallel()
					done()
				} else {
					g.Request()()
				}
			}
		})
	}
	wg.Wait()
	// Nothing in flight: it ends narrow.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		w := wide
		mu.Unlock()
		if !w {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still wide 10 s after the last request")
		}
		time.Sleep(time.Millisecond)
	}
	g.Close()
	mu.Lock()
	defer mu.Unlock()
	if !wide || changes < 2 {
		t.Errorf("after Close: wide %v after %d changes, want wide after at least 2", wide, changes)
	}
}

func TestNilGovernor(t *testing.T) {
	t.Parallel()
	var g *Governor
	g.Request()()
	workers, done := g.Parallel()
	done()
	if workers != 0 {
		t.Errorf("a nil Governor gave %d workers, want 0 (the caller's default)", workers)
	}
	g.Close()
}

func TestNewLeavesAFixedGOMAXPROCSAlone(t *testing.T) {
	t.Parallel()
	if g := New(func(k string) string {
		if k == "GOMAXPROCS" {
			return "3"
		}
		return ""
	}); g != nil {
		g.Close()
		t.Fatal("New governs a process whose GOMAXPROCS the environment fixes")
	}
}

// TestGovernorSetsTheRuntime drives the real GOMAXPROCS. Not parallel: it
// changes the whole test process's.
func TestGovernorSetsTheRuntime(t *testing.T) {
	runtime.SetDefaultGOMAXPROCS()
	all := runtime.GOMAXPROCS(0)
	if all < 2 {
		t.Skipf("GOMAXPROCS defaults to %d here: nothing to govern", all)
	}
	procs := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for runtime.GOMAXPROCS(0) != want {
			if time.Now().After(deadline) {
				t.Fatalf("GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	g := newGovernor(all, testHold, setProcs)
	procs(1)
	workers, done := g.Parallel()
	if workers != all {
		t.Errorf("Parallel gave %d workers, want %d", workers, all)
	}
	procs(all)
	done()
	procs(1)
	g.Close()
	procs(all)
}

func TestGovernorRequestAllocatesNothing(t *testing.T) {
	g := newGovernor(4, time.Hour, func(bool) {})
	defer g.Close()
	if n := testing.AllocsPerRun(100, func() { g.Request()() }); n != 0 {
		t.Errorf("a request allocates %v times, want 0", n)
	}
}
