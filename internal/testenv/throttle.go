package testenv

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Throttle forwards each TCP connection made to the returned address to
// target, passing the dialer's bytes on at rate bytes per second per
// connection (the other direction at full speed), with a small socket
// buffer so the dialer's writes block as on a slow uplink rather than
// filling megabytes of loopback buffer. sent, when not nil, counts the
// bytes passed on. Everything ends with the test.
func Throttle(t testing.TB, target string, rate int, sent *atomic.Int64) (addr string) {
	t.Helper()
	// The small buffer is set on the listener, so accepted connections
	// start with it and their handshake advertises a window that fits
	// it. Shrunk after accept, the peer had been promised more, and the
	// link stalled in zero-window probes at a tenth of rate.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			t.Cleanup(func() { in.Close(); out.Close() })
			go io.Copy(in, out)
			go throttleCopy(out, in, rate, sent)
		}
	}()
	return ln.Addr().String()
}

// throttleCopy copies in to out at rate bytes per second, 2 KiB at a time,
// and half-closes out when in ends.
func throttleCopy(out, in net.Conn, rate int, sent *atomic.Int64) {
	buf := make([]byte, 2<<10)
	start, n := time.Now(), 0
	for {
		m, err := in.Read(buf)
		if m > 0 {
			if _, err := out.Write(buf[:m]); err != nil {
				return
			}
			n += m
			if sent != nil {
				sent.Add(int64(m))
			}
			if ahead := time.Duration(n)*time.Second/time.Duration(rate) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		if err != nil {
			out.(*net.TCPConn).CloseWrite()
			return
		}
	}
}
