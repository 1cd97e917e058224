//go:build linux || darwin

package sendq

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// lowWater reads the option back from c's socket.
func lowWater(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
	}); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// TestBoundBothEnds: connections a bounded listener accepts, and dialled
// connections given to Bound, hold at most LowWater unsent; others keep
// the system's default.
func TestBoundBothEnds(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listener(inner)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := <-accepted
	if a == nil {
		return
	}
	defer a.Close()
	if got := lowWater(t, a); got != LowWater {
		t.Errorf("accepted connection: low water %d, want %d", got, LowWater)
	}
	if got := lowWater(t, d); got == LowWater {
		t.Fatalf("a dialled connection starts at %d already: the test proves nothing", got)
	}
	if err := Bound(d); err != nil {
		t.Fatal(err)
	}
	if got := lowWater(t, d); got != LowWater {
		t.Errorf("dialled connection after Bound: low water %d, want %d", got, LowWater)
	}
}

// TestBoundIgnoresOtherConns: a connection that is not TCP is left alone.
func TestBoundIgnoresOtherConns(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := Bound(a); err != nil {
		t.Errorf("Bound(net.Pipe): %v, want nil", err)
	}
}
