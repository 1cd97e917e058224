package connector

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// slowWrites delays each write once armed, as a busy machine or network
// may: a write then finishes well after the call that started it.
type slowWrites struct {
	net.Conn
	armed *atomic.Bool
}

func (c *slowWrites) Write(p []byte) (int, error) {
	if c.armed.Load() {
		time.Sleep(20 * time.Millisecond)
	}
	return c.Conn.Write(p)
}

// TestCloseSaysGoodbye: the peer of a Conn that Close ends learns so
// from a close frame with StatusNormalClosure, never from the connection
// just breaking: a host tells its person "hub shut down" by it. Close
// used to let Run's read be cancelled at once, and the library closes the
// socket when a read's context ends: a close frame not yet written by
// then never went out (about 1 close in 100 under load; every time when
// writes are slow, as here).
func TestCloseSaysGoodbye(t *testing.T) {
	t.Parallel()
	for range 3 {
		var armed atomic.Bool
		closer, peer := pair(t, pairOpts{wrap: func(c net.Conn) net.Conn { return &slowWrites{Conn: c, armed: &armed} }})
		ended := make(chan error, 1)
		go func() { ended <- peer.Run(context.Background(), func(any) {}) }()
		closed := make(chan error, 1)
		go func() { closed <- closer.Run(context.Background(), func(any) {}) }()
		time.Sleep(20 * time.Millisecond) // both are reading
		armed.Store(true)
		closer.Close()
		select {
		case err := <-ended:
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Errorf("the peer's Run = %v, want a close frame with StatusNormalClosure", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the peer's Run did not return")
		}
		if err := <-closed; err != ErrClosed {
			t.Errorf("the closer's Run = %v, want ErrClosed", err)
		}
	}
}

// TestCloseDoesNotWaitForASilentPeer: a peer that never answers the close
// frame (it stopped reading) holds Close and Run up no longer than
// closeGrace.
func TestCloseDoesNotWaitForASilentPeer(t *testing.T) {
	t.Parallel()
	_, server := pair(t, pairOpts{}) // the client never reads
	ended := make(chan error, 1)
	go func() { ended <- server.Run(context.Background(), func(any) {}) }()
	time.Sleep(20 * time.Millisecond) // Run is reading
	start := time.Now()
	server.Close()
	select {
	case err := <-ended:
		if err != ErrClosed {
			t.Errorf("Run = %v, want ErrClosed", err)
		}
	case <-time.After(5 * closeGrace):
		t.Fatal("Run did not return after Close")
	}
	// Without the grace, the library would wait its own 5 s for the
	// peer's frame. The bound sits between the two with room for a
	// loaded race run, which has stalled a second here.
	if d := time.Since(start); d > closeGrace+3*time.Second {
		t.Errorf("Close and Run took %s with a silent peer; the bound is %s (the library's own wait is 5 s)", d, closeGrace)
	}
}
