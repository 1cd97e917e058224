package procs

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHold is how long the Governor stays wide after the last sign of
// parallel work: long enough that a burst of concurrent requests with
// short gaps does not flap between widths (each change stops the world
// for ~20–50 µs), short enough that the next lone request soon runs
// narrow again.
const DefaultHold = 250 * time.Millisecond

// Governor sizes GOMAXPROCS to the work in flight: one P while at most one
// request runs and no parallel work does, the runtime's default otherwise.
//
// Why: with more than one P, every goroutine handoff on a request's path
// (the HTTP server's background read, the hub's reader delivering a host's
// answer to the waiting handler, a timer) finds an idle P and wakes a
// second thread to look for work (the runtime's wakep): a futex wake and a
// context switch, on another CPU, for work that the running thread picks
// up itself a moment later. With one P there is no idle P to wake. A lone
// request gains nothing from more Ps; two at once, or a search walking a
// tree with a worker per CPU, do, and the Governor widens for them.
//
// Widening and narrowing happen on the Governor's own goroutine, never on
// a request's: changing GOMAXPROCS stops the world, and waits for a
// garbage collection under way. A request that makes the process wide runs
// on one P until the change lands (microseconds). The process narrows again
// once DefaultHold passes with no more than one request in flight and no
// parallel work.
//
// A nil *Governor does nothing: its methods may be called on it.
// Concurrency: every method is safe for concurrent use.
type Governor struct {
	max      int
	hold     time.Duration
	set      func(wide bool)
	inflight atomic.Int32
	parallel atomic.Int32
	wide     atomic.Bool
	demand   atomic.Bool // set by each want (two requests at once, parallel work); cleared by each check while wide
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	// The functions Request and Parallel return, made once: a request
	// allocates nothing.
	endRequest, endParallel func()
}

func noop() {}

// New returns a Governor that has made the process narrow, or nil when it
// has nothing to govern: the runtime's default is one P already, or the
// GOMAXPROCS environment variable fixes the number (the user's choice,
// which the Governor leaves alone). Close it to restore the default.
func New(getenv func(string) string) *Governor {
	if getenv("GOMAXPROCS") != "" {
		return nil
	}
	n := runtime.GOMAXPROCS(0)
	if n <= 1 {
		return nil
	}
	return newGovernor(n, DefaultHold, setProcs)
}

// setProcs makes the process wide or narrow.
func setProcs(wide bool) {
	if wide {
		// The default follows the CPUs and the cgroup's quota as they
		// change, as if GOMAXPROCS had never been set.
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(1)
	}
}

// newGovernor starts a Governor over set, which makes the process wide or
// narrow; workers is how many parallel work may run.
func newGovernor(workers int, hold time.Duration, set func(wide bool)) *Governor {
	g := &Governor{max: workers, hold: hold, set: set, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	g.endRequest = func() { g.inflight.Add(-1) }
	g.endParallel = func() { g.parallel.Add(-1) }
	set(false)
	go g.loop()
	return g
}

// Request records a request in flight until the returned function is
// called. Streams and other long-lived connections are not requests: one
// open for hours would keep the process wide.
func (g *Governor) Request() (done func()) {
	if g == nil {
		return noop
	}
	if g.inflight.Add(1) >= 2 {
		g.want()
	}
	return g.endRequest
}

// Parallel records work that runs on several goroutines at once (a search
// walk) until the returned function is called, and returns how many it
// may run: the CPUs the process has once wide, not the one P it may have
// at the moment. 0 means the caller's default (a nil Governor).
func (g *Governor) Parallel() (workers int, done func()) {
	if g == nil {
		return 0, noop
	}
	g.parallel.Add(1)
	g.want()
	return g.max, g.endParallel
}

// Close stops the Governor and makes the process wide.
func (g *Governor) Close() {
	if g == nil {
		return
	}
	g.once.Do(func() { close(g.stop) })
	<-g.done
}

func (g *Governor) want() {
	g.demand.Store(true)
	if !g.wide.Load() {
		g.poke()
	}
}

func (g *Governor) poke() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// busy reports whether anything needs more than one P now.
func (g *Governor) busy() bool { return g.inflight.Load() >= 2 || g.parallel.Load() > 0 }

func (g *Governor) loop() {
	defer close(g.done)
	defer g.set(true)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		// Narrow: sleep until something wants more (no timer runs).
		select {
		case <-g.kick:
		case <-g.stop:
			return
		}
		g.wide.Store(true)
		g.set(true)
		for {
			t.Reset(g.hold)
			select {
			case <-t.C:
			case <-g.stop:
				return
			}
			if !g.demand.Swap(false) && !g.busy() {
				break
			}
		}
		g.wide.Store(false)
		g.set(false)
		// A want that saw the process still wide sent no kick; one that
		// kicked while it was wide left a stale kick. Either way, the
		// state now decides.
		select {
		case <-g.kick:
		default:
		}
		if g.busy() {
			g.poke()
		}
	}
}
