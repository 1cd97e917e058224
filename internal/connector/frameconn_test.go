package connector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writesConn records each Write it is given; fail makes writes fail.
type writesConn struct {
	net.Conn
	writes []string
	fail   error
}

func (w *writesConn) SetWriteDeadline(time.Time) error { return nil }

func (w *writesConn) Write(p []byte) (int, error) {
	if w.fail != nil {
		return 0, w.fail
	}
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestFrameConnGathersHeldWrites(t *testing.T) {
	t.Parallel()
	under := &writesConn{}
	fc := NewFrameConn(under)
	write := func(s string) {
		if n, err := fc.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	write("pong")   // nothing held: straight through
	fc.hold()       // a message
	write("head")   //
	write("body")   //
	fc.hold()       // another sender's message, while the first is held
	write("second") //
	if err := fc.release(); err != nil || len(under.writes) != 1 {
		t.Fatalf("inner release wrote (%v): %q", err, under.writes)
	}
	if err := fc.release(); err != nil {
		t.Fatal(err)
	}
	write("after")
	want := []string{"pong", "headbodysecond", "after"}
	if d := cmp.Diff(want, under.writes); d != "" {
		t.Errorf("writes reaching the network (-want +got):\n%s", d)
	}
}

func TestFrameConnBoundsWhatItGathers(t *testing.T) {
	t.Parallel()
	under := &writesConn{}
	fc := NewFrameConn(under)
	fc.hold()
	chunk := bytes.Repeat([]byte("x"), 4096)
	for range maxGather/len(chunk) + 1 {
		if _, err := fc.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if len(under.writes) != 1 || len(under.writes[0]) != maxGather {
		t.Fatalf("after %d bytes held: %d writes", maxGather+len(chunk), len(under.writes))
	}
	if err := fc.release(); err != nil || len(under.writes) != 2 || len(under.writes[1]) != len(chunk) {
		t.Fatalf("release: %v, %d writes", err, len(under.writes))
	}
}

func TestFrameConnReportsAFailedWrite(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	under := &writesConn{fail: boom}
	fc := NewFrameConn(under)
	fc.hold()
	if _, err := fc.Write([]byte("message")); err != nil {
		t.Fatalf("a held write failed early: %v", err)
	}
	if err := fc.release(); !errors.Is(err, boom) {
		t.Fatalf("release = %v, want the network's error", err)
	}
	under.fail = nil
	if _, err := fc.Write([]byte("later")); !errors.Is(err, boom) {
		t.Errorf("a write after a failed one = %v, want the first error (the stream is broken)", err)
	}
}

// breakingConn writes the first room bytes it is given (to Conn when
// set) and fails the write that takes the last of them, and every write
// after: a connection that breaks partway through a write. On breaking
// it closes Conn, as a reset would. room < 0 is no limit.
type breakingConn struct {
	net.Conn
	mu    sync.Mutex
	room  int
	wrote []byte
}

var errReset = errors.New("connection reset by peer")

func (b *breakingConn) SetWriteDeadline(t time.Time) error {
	if b.Conn == nil {
		return nil
	}
	return b.Conn.SetWriteDeadline(t)
}

func (b *breakingConn) arm(room int) {
	b.mu.Lock()
	b.room = room
	b.mu.Unlock()
}

func (b *breakingConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if b.room >= 0 {
		n = min(n, b.room)
		b.room -= n
	}
	b.wrote = append(b.wrote, p[:n]...)
	if b.Conn != nil && n > 0 {
		if _, err := b.Conn.Write(p[:n]); err != nil {
			return 0, err
		}
	}
	if b.room == 0 {
		if b.Conn != nil {
			b.Conn.Close()
		}
		return n, errReset
	}
	return n, nil
}

// wsFrame is one WebSocket frame as the library writes it.
func wsFrame(fin bool, opcode byte, masked bool, payload []byte) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	var mask byte
	if masked {
		mask = 0x80
	}
	f := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		f = append(f, mask|byte(n))
	case n <= 0xffff:
		f = append(f, mask|126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, mask|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	if masked {
		f = append(f, 1, 2, 3, 4) // the payload's masking does not matter here
	}
	return append(f, payload...)
}

// TestFrameConnSaysWhetherTheMessageLeftWhole: when the gathered write
// fails, release says whether the message's bytes had all been written
// (a sentWhole: the peer may handle it), wherever the pongs the library
// wrote meanwhile sit in the gathered bytes; a write that stops short of
// the message's last byte is a plain failure (the peer never handles
// it). The bytes before the first hold (a host's HTTP handshake) are not
// frames, and do not mislead it.
func TestFrameConnSaysWhetherTheMessageLeftWhole(t *testing.T) {
	t.Parallel()
	handshake := []byte("GET /v2/connector HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\n\r\n")
	for _, kind := range []struct {
		name   string
		masked bool // the host's frames are masked
		size   int  // the message's payload: 126 and 127 take longer length fields
	}{
		{"hub frame", false, 300},
		{"host frame", true, 70000},
	} {
		pong := wsFrame(true, 0xA, kind.masked, []byte("keepalive"))
		msg := wsFrame(true, 0x1, kind.masked, bytes.Repeat([]byte("m"), kind.size))
		frag := wsFrame(false, 0x2, kind.masked, bytes.Repeat([]byte("f"), maxGather))
		// Where the message starts and ends: after the handshake, the pong
		// before the hold and the one at its start.
		before := len(handshake) + 2*len(pong)
		after := before + len(msg)
		for _, tt := range []struct {
			name   string
			writes [][]byte // made during the hold
			room   int      // bytes written before the network fails
			whole  bool
		}{
			{"stops in the pong before the message", [][]byte{pong, msg, pong}, before - 1, false},
			{"stops at the message's first byte", [][]byte{pong, msg, pong}, before, false},
			{"stops inside the message", [][]byte{pong, msg, pong}, before + len(msg)/2, false},
			{"stops one byte short of the message's end", [][]byte{pong, msg, pong}, after - 1, false},
			{"stops at the message's end", [][]byte{pong, msg, pong}, after, true},
			{"stops in the pong after the message", [][]byte{pong, msg, pong}, after + 1, true},
			{"a fragment is not a message", [][]byte{pong, frag, pong}, before + len(frag) + 1, false},
			// The fragment brings the gathered bytes over maxGather: the
			// message leaves in that write, which succeeds, and the
			// pong's in release's, which fails.
			{"the message left in an earlier write of the hold", [][]byte{pong, msg, frag, pong}, after + len(frag) + 1, true},
		} {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				under := &breakingConn{room: tt.room}
				fc := NewFrameConn(under)
				if _, err := fc.Write(handshake); err != nil {
					t.Fatal(err)
				}
				if _, err := fc.Write(pong); err != nil { // a pong before the first message
					t.Fatal(err)
				}
				fc.hold()
				var err error
				for _, w := range tt.writes {
					for p := w; len(p) > 0 && err == nil; { // in pieces, as through the library's buffer
						n := min(len(p), 4096)
						_, err = fc.Write(p[:n])
						p = p[n:]
					}
				}
				if rerr := fc.release(); rerr != nil {
					err = rerr
				}
				if !errors.Is(err, errReset) {
					t.Fatalf("release = %v, want the network's error", err)
				}
				if whole := errors.As(err, new(sentWhole)); whole != tt.whole {
					t.Errorf("after %d of %d bytes: message written whole = %v, want %v", len(under.wrote), tt.room, whole, tt.whole)
				}
			})
		}
	}
}
