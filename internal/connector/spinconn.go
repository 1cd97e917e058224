package connector

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// SpinConn is the network connection under the hub's WebSocket to a host.
// While operations sent to the host await their results, its reader polls
// the socket for a short while (the spin budget) before it blocks in the
// runtime's poller.
//
// Why: a host on the same machine or network answers a small operation in
// tens to a few hundred microseconds, about what it costs to put the
// reading thread to sleep in epoll and wake it again when the answer lands
// (a futex or IPI wake-up, and on a virtual machine an exit from the
// halted vCPU besides). On a 2-vCPU virtual machine, with the host on a
// CPU of its own (bench/connector.sh's split layout), spinning took a 4 KiB
// read through the hub from a p50 of 245–255 µs to 214–268 µs, median 253
// to 223 µs (local route: 131–144 µs; 5 interleaved rounds each). It costs the hub's CPU, up to the budget per
// operation, and where the host shares the hub's CPUs that CPU can be the
// host's: with three busy processes on two vCPUs (wrk, hub, host),
// spinning made no difference or made things worse. So whether it pays is
// measured, not assumed: each busy period (from an operation awaited on
// an idle connection to the first answer) either spins or sleeps, the
// answer times of each kind are averaged, the faster kind is used, and
// every probeEvery-th period tries the other kind so the averages follow
// a change. Spinning is bounded besides:
//
//   - only while an operation awaits its result (Expect/Settle), so an
//     idle connection blocks as any other;
//   - only when the host's last answer came within the budget, so a host
//     across a slow link (whose answers take milliseconds) is never spun
//     for;
//   - for at most maxSpinRun in all between two waits in the poller: with
//     one P (GOMAXPROCS=1), a spinning goroutine, always runnable, keeps
//     the scheduler from polling the network for other connections, so it
//     waits in the poller again after that long;
//   - by at most max(1, GOMAXPROCS/2) spinning readers in the process.
//
// The connection must expose its descriptor (syscall.Conn: a TCP or Unix
// connection, or a wrapper that passes it through unchanged); others, and
// a zero budget, never spin. SpinConn owns the read deadline: Expect sets
// one in the past to pop a reader blocked in the poller out into its
// spin, and nothing else may set one. A deadline error never reaches the
// reader. Only one goroutine may Read at a time (the WebSocket library's
// reader); Expect and Settle are safe for concurrent use.
type SpinConn struct {
	net.Conn
	raw    syscall.RawConn // nil: never spin
	budget time.Duration

	waiting atomic.Int32 // operations awaiting a result
	since   atomic.Int64 // when waiting last went from 0 to 1 (monotonic ns)
	// last is how long the host took to answer, as seen last: from
	// since to the first bytes read after it; -1 until seen.
	last    atomic.Int64
	periods atomic.Uint64   // busy periods begun
	spinNow atomic.Bool     // the current busy period spins
	est     [2]atomic.Int64 // mean answer time (ns) of periods that [0] slept, [1] spun; 0 until seen

	// The reader's own.
	spun  time.Duration // spent spinning since the last wait in the poller
	stats spinStats
}

// spinStats counts what the reader did, for tests.
type spinStats struct {
	spins, hits, kicks atomic.Int64
}

// probeEvery is how often a busy period tries the kind (spin or sleep)
// that measured slower.
const probeEvery = 8

// maxSpinRun bounds the spinning between two waits in the poller.
const maxSpinRun = time.Millisecond

// parkedAfter is how long a blocking read must take to count as a wait in
// the poller (shorter reads found their data at once).
const parkedAfter = 20 * time.Microsecond

// spinners counts the readers spinning in this process.
var spinners atomic.Int32

// epoch makes monotonic nanoseconds (time.Since is monotonic).
var epoch = time.Now()

func monoNow() int64 { return int64(time.Since(epoch)) + 1 } // never 0

// NewSpinConn wraps c; budget is the longest one spin lasts (0: never).
func NewSpinConn(c net.Conn, budget time.Duration) *SpinConn {
	s := &SpinConn{Conn: c, budget: budget}
	s.last.Store(-1)
	if sc, ok := c.(syscall.Conn); ok && budget > 0 && canSpin {
		if raw, err := sc.SyscallConn(); err == nil {
			s.raw = raw
		}
	}
	return s
}

// choose says whether busy period n spins: never when the host's last
// answer took longer than the budget; else the kind whose answers came
// faster (spinning until it has been measured, then sleeping until that
// has), except every probeEvery-th period, which tries the other.
func (c *SpinConn) choose(n uint64) bool {
	if c.raw == nil || c.last.Load() > int64(c.budget) {
		return false
	}
	slept, spun := c.est[0].Load(), c.est[1].Load()
	prefer := spun == 0 || (slept != 0 && spun <= slept)
	return prefer != (n%probeEvery == 0)
}

// Expect tells the reader an operation now awaits its result. Call it
// before the operation is sent; call Settle once when it ends, however it
// ends.
func (c *SpinConn) Expect() {
	if c.waiting.Add(1) == 1 {
		c.spinNow.Store(c.choose(c.periods.Add(1)))
		c.since.Store(monoNow())
	}
	if c.spinNow.Load() {
		// Pops a reader blocked in the poller out into its spin.
		_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// Settle ends one Expect.
func (c *SpinConn) Settle() { c.waiting.Add(-1) }

// Awaiting returns the number of operations awaiting a result (Expect
// calls not yet settled).
func (c *SpinConn) Awaiting() int { return int(c.waiting.Load()) }

func (c *SpinConn) Read(p []byte) (int, error) {
	if c.raw == nil {
		return c.Conn.Read(p) // never spins, never kicked (see choose)
	}
	for {
		if c.waiting.Load() > 0 && c.spinNow.Load() && c.spun < maxSpinRun {
			if n, ok := c.spin(p); ok {
				c.seen()
				return n, nil
			}
		}
		start := time.Now()
		n, err := c.Conn.Read(p)
		if time.Since(start) >= parkedAfter {
			// Waited in the poller, so the scheduler polled the network
			// (or, on a loaded machine, a read that did not wait was
			// slow: then the reset only lets a little more spinning in).
			c.spun = 0
		}
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			// Expect's kick, not a real deadline (none is ever set).
			c.stats.kicks.Add(1)
			_ = c.Conn.SetReadDeadline(time.Time{})
			continue
		}
		if n > 0 {
			c.seen()
		}
		return n, err
	}
}

// seen records how long the host took to answer, once per busy period,
// in the mean of the period's kind: an exponential moving average, 1/32
// per answer, as single answers vary by 2x on a busy machine while the
// difference to measure (a wake-up) can be a tenth of one.
func (c *SpinConn) seen() {
	if c.waiting.Load() == 0 {
		return
	}
	since := c.since.Swap(0)
	if since == 0 {
		return
	}
	d := monoNow() - since
	c.last.Store(d)
	kind := 0
	if c.spinNow.Load() {
		kind = 1
	}
	if e := c.est[kind].Load(); e != 0 {
		d = e + (d-e)/32
	}
	c.est[kind].Store(max(d, 1))
}

// spin polls the socket until data arrives (ok), the operations are all
// settled, the budget runs out, or the descriptor fails; !ok sends the
// reader to the poller, whose read reports any error properly.
func (c *SpinConn) spin(p []byte) (n int, ok bool) {
	limit := int64(runtime.GOMAXPROCS(0) / 2)
	if int64(spinners.Add(1)) > max(1, limit) {
		spinners.Add(-1)
		return 0, false
	}
	defer spinners.Add(-1)
	c.stats.spins.Add(1)
	start := time.Now()
	defer func() { c.spun += time.Since(start) }()
	budget := min(c.budget, maxSpinRun-c.spun)
	for {
		n, again := readNow(c.raw, p)
		if n > 0 {
			c.stats.hits.Add(1)
			return n, true
		}
		if !again || c.waiting.Load() == 0 || time.Since(start) >= budget {
			return 0, false
		}
		runtime.Gosched()
	}
}
