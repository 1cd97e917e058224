package connector

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// The SpinConn tests do not run in parallel: spinning readers share the
// process's slots (spinners), and one test's spinner would make another's
// fall back to the poller.

// tcpPair returns the two ends of a loopback TCP connection, the first
// wrapped in a SpinConn with budget.
func tcpPair(t *testing.T, budget time.Duration) (*SpinConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	s := NewSpinConn(c, budget)
	t.Cleanup(func() { s.Close(); peer.Close() })
	return s, peer
}

type readResult struct {
	b   []byte
	err error
}

func readAsync(c net.Conn) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		ch <- readResult{buf[:n], err}
	}()
	return ch
}

// send writes msg for the SpinConn to read: on loopback the bytes are in
// its socket when Write returns.
func send(t *testing.T, peer net.Conn, msg string) {
	t.Helper()
	if _, err := peer.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// receive checks that the read got (readAsync) returns msg.
func receive(t *testing.T, got <-chan readResult, msg string) {
	t.Helper()
	if r := <-got; r.err != nil || string(r.b) != msg {
		t.Fatalf("Read = %q, %v; want %q", r.b, r.err, msg)
	}
}

// answerAfter has a reader wait on s for d before the peer sends msg,
// which the reader must get.
func answerAfter(t *testing.T, s, peer net.Conn, d time.Duration, msg string) {
	t.Helper()
	got := readAsync(s)
	time.Sleep(d)
	send(t, peer, msg)
	receive(t, got, msg)
}

// mustRead reads msg from c on this goroutine.
func mustRead(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	buf := make([]byte, 64)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != msg {
		t.Fatalf("Read = %q, %v; want %q", buf[:n], err, msg)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestSpinConnFindsTheAnswerWhileSpinning(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	s.Expect()
	// On loopback the bytes are in the socket when Write returns: the
	// spin's first read finds them.
	send(t, peer, "answer")
	mustRead(t, s, "answer")
	if spins, hits := s.stats.spins.Load(), s.stats.hits.Load(); spins != 1 || hits != 1 {
		t.Errorf("spins, hits = %d, %d; want 1, 1", spins, hits)
	}
	if s.last.Load() < 0 {
		t.Error("the answer's time was not recorded")
	}
}

func TestSpinConnKicksABlockedReaderIntoItsSpin(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	got := readAsync(s)
	time.Sleep(10 * time.Millisecond) // let the reader block in the poller
	s.Expect()
	waitFor(t, "the kick", func() bool { return s.stats.kicks.Load() >= 1 && s.stats.spins.Load() >= 1 })
	send(t, peer, "late")
	receive(t, got, "late") // the kick's deadline error must not reach the reader
}

func TestSpinConnDoesNotSpinWithNothingAwaited(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	answerAfter(t, s, peer, 5*time.Millisecond, "ping")
	s.Expect()
	s.Settle()
	answerAfter(t, s, peer, 5*time.Millisecond, "pong")
	if n := s.stats.spins.Load(); n != 0 {
		t.Errorf("spun %d times with no operation awaiting a result", n)
	}
}

func TestSpinConnStopsSpinningForASlowHost(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	// First answer after 20 ms: over the budget.
	s.Expect()
	answerAfter(t, s, peer, 20*time.Millisecond, "slow")
	s.Settle()
	if last := time.Duration(s.last.Load()); last < 20*time.Millisecond {
		t.Fatalf("recorded answer time %s; want >= 20ms", last)
	}
	spins, kicks := s.stats.spins.Load(), s.stats.kicks.Load()
	// The next operation is not spun for, nor is the reader kicked.
	got := readAsync(s)
	time.Sleep(5 * time.Millisecond)
	s.Expect()
	time.Sleep(5 * time.Millisecond)
	send(t, peer, "next")
	receive(t, got, "next")
	if s.stats.spins.Load() != spins || s.stats.kicks.Load() != kicks {
		t.Errorf("spins %d → %d, kicks %d → %d; want no change for a host slower than the budget",
			spins, s.stats.spins.Load(), kicks, s.stats.kicks.Load())
	}
}

func TestSpinConnBoundsSpinningBetweenWaits(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	s.spun = maxSpinRun // as after a millisecond of spins without a wait
	// An awaited answer in a spinning period, without Expect's kick: a
	// read the kick pops out is taken for a wait when the machine is
	// loaded, which resets s.spun.
	s.waiting.Store(1)
	s.spinNow.Store(true)
	send(t, peer, "x")
	mustRead(t, s, "x")
	if n := s.stats.spins.Load(); n != 0 {
		t.Errorf("spun %d times past maxSpinRun", n)
	}
}

func TestSpinConnCloseEndsASpinningRead(t *testing.T) {
	s, _ := tcpPair(t, time.Millisecond)
	s.Expect()
	got := readAsync(s)
	waitFor(t, "a spin", func() bool { return s.stats.spins.Load() >= 1 })
	s.Close()
	select {
	case r := <-got:
		if !errors.Is(r.err, net.ErrClosed) {
			t.Errorf("Read after Close: %v; want net.ErrClosed", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not return after Close")
	}
}

func TestSpinConnEOF(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	s.Expect()
	peer.Close()
	buf := make([]byte, 8)
	if n, err := s.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("Read = %d, %v; want 0, EOF", n, err)
	}
}

// A stream read while operations come and go (each kicking the reader)
// arrives whole and in order, with no deadline error.
func TestSpinConnStreamUnderKicks(t *testing.T) {
	s, peer := tcpPair(t, time.Millisecond)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.Expect()
			time.Sleep(50 * time.Microsecond)
			s.Settle()
		}
	}()
	go func() {
		defer wg.Done()
		for b := want; len(b) > 0; {
			n := min(len(b), 1000)
			if _, err := peer.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
			if len(b)%(50*1000) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		peer.Close()
	}()
	got, err := io.ReadAll(s)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if s.stats.kicks.Load() == 0 {
		t.Error("no kick reached the reader; the test did not exercise the deadline")
	}
}

// A connection without a descriptor (here a pipe) never spins and never
// gets a deadline.
func TestSpinConnWithoutDescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	s := NewSpinConn(a, time.Millisecond)
	defer s.Close()
	s.Expect()
	go b.Write([]byte("pipe"))
	buf := make([]byte, 8)
	n, err := s.Read(buf)
	if err != nil || string(buf[:n]) != "pipe" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	if s.stats.spins.Load() != 0 || s.stats.kicks.Load() != 0 {
		t.Error("a connection without a descriptor spun or was kicked")
	}
}

// choose: the kind that measured faster, every probeEvery-th period the
// other; spinning first while it has not been measured, then sleeping
// until that has; never spinning for a host slower than the budget.
func TestSpinConnChoose(t *testing.T) {
	const us = int64(time.Microsecond)
	for _, tt := range []struct {
		name        string
		slept, spun int64 // est; 0: not measured
		last        int64
		want        string // period n spins: want[n-1] == 's'
	}{
		{"nothing measured", 0, 0, -1, "sssssss-sssssss-"},
		{"spinning measured, sleeping not", 0, 100 * us, 100 * us, "-------s-------s"},
		{"spinning pays", 200 * us, 100 * us, 100 * us, "sssssss-sssssss-"},
		{"a tie spins", 100 * us, 100 * us, 100 * us, "sssssss-sssssss-"},
		{"sleeping pays", 100 * us, 200 * us, 100 * us, "-------s-------s"},
		{"host slower than the budget", 0, 0, 2 * int64(time.Millisecond), "----------------"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := tcpPair(t, time.Millisecond)
			c.est[0].Store(tt.slept)
			c.est[1].Store(tt.spun)
			c.last.Store(tt.last)
			var got []byte
			for n := uint64(1); n <= 16; n++ {
				got = append(got, map[bool]byte{true: 's', false: '-'}[c.choose(n)])
			}
			if string(got) != tt.want {
				t.Errorf("periods 1-16 = %s; want %s", got, tt.want)
			}
		})
	}
}

// Once sleeping measured faster, an awaited answer is not spun for, except
// in a probe period; and each period's answer time joins its own kind's
// mean.
func TestSpinConnSleepsWhenSpinningDoesNotPay(t *testing.T) {
	// A budget no answer time here exceeds, however loaded the machine:
	// the probe must not be skipped for a slow answer.
	s, peer := tcpPair(t, time.Second)
	s.est[0].Store(int64(50 * time.Microsecond))
	s.est[1].Store(int64(time.Second)) // spinning measured far slower
	s.last.Store(int64(50 * time.Microsecond))
	for n := 1; n <= probeEvery; n++ {
		s.Expect()
		send(t, peer, "x")
		mustRead(t, s, "x")
		s.Settle()
		if spins := s.stats.spins.Load(); n < probeEvery && spins != 0 {
			t.Fatalf("period %d spun though sleeping pays", n)
		}
	}
	if spins := s.stats.spins.Load(); spins != 1 {
		t.Errorf("spins after %d periods = %d; want 1 (the probe)", probeEvery, spins)
	}
	if spun := time.Duration(s.est[1].Load()); spun >= time.Second {
		t.Errorf("the probe's answer time did not join the spinning mean (%s)", spun)
	}
	if slept := time.Duration(s.est[0].Load()); slept == 50*time.Microsecond {
		t.Errorf("the sleeping periods' answer times did not join their mean")
	}
}
