package connector

import (
	"encoding/binary"
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
//
// A gathered write that fails may have carried a whole message before it
// failed (a partial write that stops in a pong gathered behind it), and
// then the peer handles that message. So FrameConn follows the frames it
// is given (frameScan) to know where each message ends, and the release
// that ends a hold period during which a write failed says which it was
// (see sentWhole). It follows them from the first hold on: a host dials
// through its FrameConn, so the HTTP handshake comes first, and only
// whole control frames pass before the first message, whose frames start
// from the library's empty buffer.
type FrameConn struct {
	net.Conn
	mu    sync.Mutex
	holds int
	buf   []byte
	err   error // the first failed write: later writes fail with it

	scan     frameScan
	scanning bool // a hold was made: the bytes are frames
	// end is the offset in buf just past the first message that ends in
	// it; 0 when none does.
	end int
	// wrote is set when a message ended in bytes a write of the current
	// hold period already sent (the maxGather path).
	wrote bool
	// lost is the failure of a write in the current hold period, as the
	// release that ends the period reports it.
	lost error
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
		if c.scanning {
			c.scan.next(p)
		}
		return c.Conn.Write(p)
	}
	if end := c.scan.next(p); end >= 0 && c.end == 0 {
		c.end = len(c.buf) + end
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
	c.scanning = true
	c.mu.Unlock()
}

// release ends a hold; the last one writes what was gathered. Its error
// is the write's: a sentWhole when a message gathered in this hold period
// had all its bytes written before the write failed (the peer may handle
// it), any other error when none had (the peer handles none of them).
func (c *FrameConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds--
	if c.holds == 0 && c.err == nil && len(c.buf) > 0 {
		// The gathered bytes leave after the WebSocket library's write
		// has returned: this write is bounded by the Conn's own write
		// timeout, which closes the connection when it passes (see
		// Conn.write).
		_ = c.flushLocked()
	}
	err := c.err
	if c.lost != nil {
		err = c.lost
	}
	if c.holds == 0 {
		c.lost, c.wrote = nil, false
	}
	return err
}

// flushLocked writes what is gathered (mu held, inside a hold period).
func (c *FrameConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	n, err := c.Conn.Write(c.buf)
	if err != nil {
		c.err, c.lost = err, err
		if c.wrote || (c.end > 0 && n >= c.end) {
			c.lost = sentWhole{err}
		}
	} else if c.end > 0 {
		c.wrote = true
	}
	c.buf, c.end = c.buf[:0], 0 // kept: at most maxGather plus one write
	return err
}

// sentWhole is the error of a gathered write that failed after every
// byte of a message in it was written: the peer may handle the message.
type sentWhole struct{ error }

func (s sentWhole) Unwrap() error { return s.error }

// frameScan follows the WebSocket frames (RFC 6455 §5.2) in the bytes a
// FrameConn writes, to tell where a message ends: after the last byte of
// a data frame with FIN set. Control frames (pongs, pings, close) end no
// message, and their bytes may come before or after a message's in one
// gathered write.
type frameScan struct {
	hdr  [14]byte // the header being read
	n    int      // header bytes read
	left uint64   // payload bytes still to come
	body bool     // within a payload
	ends bool     // the current frame ends a message
}

// next consumes p and returns the offset in p just past the first
// message end in it, or -1.
func (s *frameScan) next(p []byte) int {
	end := -1
	for i := 0; i < len(p); {
		if !s.body {
			s.hdr[s.n] = p[i]
			s.n++
			i++
			if s.n < 2 || s.n < headerSize(s.hdr[1]) {
				continue
			}
			s.ends = s.hdr[0]&0x80 != 0 && s.hdr[0]&0x0f < 0x8
			switch l := s.hdr[1] & 0x7f; l {
			case 126:
				s.left = uint64(binary.BigEndian.Uint16(s.hdr[2:4]))
			case 127:
				s.left = binary.BigEndian.Uint64(s.hdr[2:10])
			default:
				s.left = uint64(l)
			}
			s.n, s.body = 0, true
		} else {
			k := min(uint64(len(p)-i), s.left)
			i += int(k)
			s.left -= k
		}
		if s.body && s.left == 0 {
			s.body = false
			if s.ends && end < 0 {
				end = i
			}
		}
	}
	return end
}

// headerSize is the size of a frame header whose second byte is b1.
func headerSize(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4 // the masking key
	}
	return n
}
