package connector

import (
	"net"
	"sync"
)

// FrameConn is the network connection under a WebSocket that turns the
// writes of one message into one write to the network. coder/websocket
// writes through a 4 KiB buffer, so a message over 4 KiB (a read result,
// a chunk) costs two or more write syscalls, and the peer often wakes up
// for each. Between hold and release the writes are gathered; release
// sends them at once.
//
// Writes made while nothing is held (the library's pongs and close
// frames) pass straight through. A FrameConn is safe for concurrent use;
// the library serialises frames, and the hold count keeps the bytes of
// frames written during a hold in order behind it.
type FrameConn struct {
	net.Conn
	mu    sync.Mutex
	holds int
	buf   []byte
	err   error // the first failed write: later writes fail with it
}

// NewFrameConn wraps c.
func NewFrameConn(c net.Conn) *FrameConn { return &FrameConn{Conn: c} }

// maxGather bounds what a hold gathers before it writes anyway, and so
// how long one write to the network keeps a pong waiting (the library
// gives a pong 5 s): a chunk frame (see frameChunkBytes) fits, but the
// frames of overlapping holds (concurrent transfers) leave in pieces.
const maxGather = 128 << 10

func (c *FrameConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.holds == 0 {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= maxGather {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (c *FrameConn) hold() {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
}

// release ends a hold; the last one writes what was gathered. Its error
// is the write's (the message may not have been sent).
func (c *FrameConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds--
	if c.holds > 0 || c.err != nil || len(c.buf) == 0 {
		return c.err
	}
	// The gathered bytes leave after the WebSocket library's write has
	// returned: this write is bounded by the Conn's own write timeout,
	// which closes the connection when it passes (see Conn.write).
	return c.flushLocked()
}

func (c *FrameConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if err != nil {
		c.err = err
	}
	c.buf = c.buf[:0] // kept: at most maxGather plus one write
	return err
}
