package hub

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// mutedConn stops writing (its writes wait) once muted, so its end never
// answers a close frame.
type mutedConn struct {
	net.Conn
	muted  *atomic.Bool
	unmute chan struct{}
}

func (c *mutedConn) Write(p []byte) (int, error) {
	if c.muted.Load() {
		<-c.unmute
	}
	return c.Conn.Write(p)
}

// TestCloseDoesNotQueueSilentHosts: Close tells every host goodbye at
// once, so hosts that never answer hold it up for one close's grace, not
// one each.
func TestCloseDoesNotQueueSilentHosts(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	var muted atomic.Bool
	unmute := make(chan struct{})
	const hosts = 4
	for i := range hosts {
		dialVia(t, srv, string(rune('a'+i)), proto.ReadOnly, nil, func(c net.Conn) net.Conn {
			return &mutedConn{Conn: c, muted: &muted, unmute: unmute}
		})
	}
	t.Cleanup(func() { close(unmute) }) // before the hosts' own cleanups
	muted.Store(true)
	start := time.Now()
	h.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s for %d silent hosts: it waited for them one after the other", d, hosts)
	}
}
