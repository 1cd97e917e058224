// Package sendq bounds the bytes a TCP connection keeps queued but unsent
// in the kernel (TCP_NOTSENT_LOWAT).
//
// Why: a socket's send buffer autotunes up to megabytes (tcp_wmem, 4 MiB
// by default on Linux), and the kernel wakes a blocked writer only once
// a third of it has drained. Towards a slow reader, one write then waits
// for over a megabyte to drain: over a minute at 20 KB/s, so a write
// deadline meant as "no progress for 30 s" cut downloads that were
// progressing. And on a slow uplink, a small answer written behind a
// download waits for the megabytes queued before it. With the unsent
// queue bounded, a write returns once about LowWater/2 has left, and what
// waits to be sent waits in the program, where a later message can still
// go first. Bytes already sent but not yet acknowledged are not bounded:
// throughput on a long fat link is unaffected.
//
// Linux and Darwin have the option; elsewhere Bound does nothing.
package sendq

import "net"

// LowWater is the unsent bytes a bounded connection may queue: a write
// blocks at it and resumes below half of it. Two of the connector's
// 64 KiB chunks, so a fast link never runs dry between two wake-ups.
const LowWater = 128 << 10

// Bound applies LowWater to c when c is a TCP connection, and is a no-op
// otherwise (a Unix socket, a TLS connection's wrapper: bound the TCP
// connection under it). The error is the system's, for a caller that
// wants to log it; the connection works either way.
func Bound(c net.Conn) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = setLowWater(fd, LowWater) }); err != nil {
		return err
	}
	return serr
}

// Listener returns ln with Bound applied to every connection it accepts.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		_ = Bound(c)
	}
	return c, err
}
