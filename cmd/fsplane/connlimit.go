package main

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultMaxConns is serve's --max-connections: far more than agents and
// hosts use at once, and few enough to leave descriptors for files under
// common open-file limits.
const defaultMaxConns = 1024

// fdReserve is how many descriptors beyond the connections serve wants
// for its files, watchers and state (see checkFDLimit).
const fdReserve = 256

// limitListener accepts at most cap(slots) connections at once (hijacked
// WebSockets included, until they are closed). Past that, Accept waits for
// one to close, and new clients wait in the kernel's backlog: without a
// cap, enough idle or slow connections take every descriptor, and then
// accept fails for everyone and files cannot be opened.
//
// It is not x/net's netutil.LimitListener because that one hides the
// *net.TCPConn's ReadFrom (downloads use sendfile through it), CloseWrite
// (net/http's close without resetting the answer it sent) and
// SyscallConn (the hub's spin wait polls a host's socket through it).
type limitListener struct {
	net.Listener
	slots    chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	full     func() // called, at most once a minute, when Accept waits for a slot
	warned   atomic.Int64
}

// limitConns wraps ln so that at most n connections are open at once; full
// is told when the cap is reached.
func limitConns(ln net.Listener, n int, full func()) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), full: full}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if now := time.Now().Unix(); now-l.warned.Load() >= 60 {
			l.warned.Store(now)
			l.full()
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	l.stopOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, at its first Close.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.l.slots })
	return err
}

// ReadFrom keeps the connection's own ReadFrom (sendfile, splice).
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite half-closes the connection when it can.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// openFileLimit is the process's limit on open descriptors (Go raises the
// soft limit to the hard one at start).
func openFileLimit() (uint64, bool) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}

// SyscallConn exposes the connection's descriptor, for the hub's spin
// wait (connector.SpinConn); a connection without one says so.
func (c *limitConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}
