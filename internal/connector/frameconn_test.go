package connector

import (
	"bytes"
	"errors"
	"net"
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
