package hub

import (
	"context"
	"net"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// goodbyes counts the close frames the hub has written, one per
// connection, and holds back the hub's closing of any connection's
// socket until every connection has had its close frame (or 30 s have
// passed, which it records). A hub that said goodbye to one host at
// a time would write the second close frame only after the first
// socket closed, so it would stall here instead of finishing.
type goodbyes struct {
	want    int
	mu      sync.Mutex
	written int
	all     chan struct{}
	early   atomic.Bool
}

func (g *goodbyes) wrote() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.written++; g.written == g.want {
		close(g.all)
	}
}

type goodbyeListener struct {
	net.Listener
	g *goodbyes
}

func (l goodbyeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &goodbyeConn{Conn: c, g: l.g}, nil
}

type goodbyeConn struct {
	net.Conn
	g     *goodbyes
	wrote sync.Once
}

// closeFrame is the first byte of an unmasked WebSocket close frame
// (FIN and opcode 8), the only frame the hub starts with it: the hub's
// frames are each written in one flush, header first.
const closeFrame = 0x88

func (c *goodbyeConn) Write(p []byte) (int, error) {
	if len(p) > 0 && p[0] == closeFrame {
		c.wrote.Do(c.g.wrote)
	}
	return c.Conn.Write(p)
}

func (c *goodbyeConn) Close() error {
	if !c.g.early.Load() {
		select {
		case <-c.g.all:
		case <-time.After(30 * time.Second):
			c.g.early.Store(true)
		}
	}
	return c.Conn.Close()
}

// TestCloseDoesNotQueueSilentHosts: Close tells every host goodbye at
// once, so hosts that never answer hold it up for one close's grace, not
// one each. It asserts the order, not a duration: every host has the
// hub's close frame before any host's socket is closed.
func TestCloseDoesNotQueueSilentHosts(t *testing.T) {
	t.Parallel()
	const hosts = 4
	g := &goodbyes{want: hosts, all: make(chan struct{})}
	h := New(Options{Token: token})
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = goodbyeListener{Listener: srv.Listener, g: g}
	srv.Start()
	t.Cleanup(srv.Close)
	var muted atomic.Bool
	unmute := make(chan struct{})
	for i := range hosts {
		dialVia(t, srv, string(rune('a'+i)), proto.ReadOnly, nil, func(c net.Conn) net.Conn {
			return &mutedConn{Conn: c, muted: &muted, unmute: unmute}
		})
	}
	t.Cleanup(func() { close(unmute) }) // before the hosts' own cleanups
	muted.Store(true)
	h.Close()
	if g.early.Load() {
		g.mu.Lock()
		defer g.mu.Unlock()
		t.Errorf("Close dropped a host's connection when only %d of %d hosts had been told goodbye: it closes them one after the other", g.written, hosts)
	}
}

// TestCloseEndsConnectionsBeforeHello: Close also ends a connection that
// has not said hello yet (it used to close registered hosts only, so one
// saying hello a moment later registered with a closed hub), and a hello
// after Close is refused. The hello timeout is long here, so only Close
// can end the connection.
func TestCloseEndsConnectionsBeforeHello(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{HelloTimeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard for a hang
	defer cancel()
	silent := dialHub(ctx, t, srv)
	defer silent.CloseNow()
	late := dialHub(ctx, t, srv)
	defer late.CloseNow()
	// Each connection is being served once the hub answers on it: a
	// garbage frame gets a bad_message back.
	for _, ws := range []*websocket.Conn{silent, late} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"nonsense"}`)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ws.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	if _, _, err := silent.Read(ctx); websocket.CloseStatus(err) == -1 {
		t.Errorf("the silent connection read %v after Close, want a close frame", err)
	}
	hello := `{"type":"hello","protocol":"` + proto.Protocol + `","name":"late","roots":["/r"],"mode":"read_only"}`
	_ = late.Write(ctx, websocket.MessageText, []byte(hello))
	if _, _, err := late.Read(ctx); websocket.CloseStatus(err) == -1 {
		t.Errorf("a hello after Close read %v, want a close frame", err)
	}
	if hosts := h.Hosts(); len(hosts) != 0 {
		t.Errorf("hosts after Close: %+v", hosts)
	}
}
