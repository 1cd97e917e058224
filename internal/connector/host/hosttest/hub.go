// Package hosttest is an in-process connector hub for tests of the host
// side (package host, fsplane connect): an httptest server that accepts
// hosts at /v2/connector, records their hellos and authorisation, welcomes
// them, and lets a test send operations and cancels and drop the
// connection. It speaks fsplane-connector/1 through connector.Conn, like
// the real hub, but has no registry, routing or HTTP API: it talks to the
// most recent connection.
//
// A *Hub is safe for concurrent use.
package hosttest

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// Options configure a Hub.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <token>";
	// anything else is 401 before the upgrade.
	Token string
	// TLS serves https with httptest's self-signed certificate (see CAPEM).
	TLS bool
	// Limits are the hub's, sent in welcome; zero fields take the defaults.
	Limits proto.Limits
}

// Hub is an in-process hub. Start it with Start; it closes at the end of
// the test.
type Hub struct {
	// URL is the server's base URL (http:// or https://).
	URL string

	t      testing.TB
	srv    *httptest.Server
	opts   Options
	hellos chan *proto.Hello

	mu      sync.Mutex
	cur     *hubConn
	conns   int
	auth    []string
	last    *proto.Hello
	changed chan struct{} // closed and replaced when a hello or connection arrives
	stray   []*proto.Result
	nextOp  int
	refuse  int
	tries   []time.Time
}

// hubConn is one accepted host connection.
type hubConn struct {
	id      string
	conn    *connector.Conn
	mu      sync.Mutex
	pending map[string]chan *proto.Result
	done    chan struct{}
}

// Start starts a hub and registers its shutdown with t.Cleanup.
func Start(t testing.TB, opts Options) *Hub {
	h := &Hub{t: t, opts: opts, hellos: make(chan *proto.Hello, 1000), changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/connector", h.accept)
	h.srv = httptest.NewUnstartedServer(mux)
	// Hosts that refuse the test certificate make the server log
	// handshake errors; they are expected.
	h.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		h.srv.StartTLS()
	} else {
		h.srv.Start()
	}
	h.URL = h.srv.URL
	t.Cleanup(h.Close)
	return h
}

// Close drops every connection and stops the server.
func (h *Hub) Close() {
	h.Drop()
	h.srv.CloseClientConnections()
	h.srv.Close()
}

// CAPEM returns the TLS server's certificate as PEM, for --ca-file.
func (h *Hub) CAPEM() []byte {
	c := h.srv.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func (h *Hub) accept(w http.ResponseWriter, r *http.Request) {
	a := r.Header.Get("Authorization")
	h.mu.Lock()
	h.auth = append(h.auth, a)
	h.tries = append(h.tries, time.Now())
	refuse := h.refuse > 0
	if refuse {
		h.refuse--
	}
	h.mu.Unlock()
	if refuse {
		http.Error(w, "hub restarting", http.StatusServiceUnavailable)
		return
	}
	if h.opts.Token != "" && a != "Bearer "+h.opts.Token {
		http.Error(w, "connector token required", http.StatusUnauthorized)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{proto.Protocol}})
	if err != nil {
		return
	}
	if ws.Subprotocol() != proto.Protocol {
		ws.Close(websocket.StatusPolicyViolation, "subprotocol "+proto.Protocol+" required")
		return
	}
	h.mu.Lock()
	h.conns++
	hc := &hubConn{id: fmt.Sprintf("h-%d", h.conns), conn: connector.New(ws, h.opts.Limits),
		pending: map[string]chan *proto.Result{}, done: make(chan struct{})}
	if h.cur != nil {
		h.cur.conn.Close()
	}
	h.cur = hc
	h.notifyLocked()
	h.mu.Unlock()

	welcomed := false
	_ = hc.conn.Run(context.Background(), func(msg any) {
		switch m := msg.(type) {
		case *proto.Hello:
			h.mu.Lock()
			h.last = m
			h.notifyLocked()
			h.mu.Unlock()
			select {
			case h.hellos <- m:
			default:
			}
			if !welcomed {
				welcomed = true
				go hc.conn.Send(context.Background(), &proto.Welcome{HostID: hc.id, Limits: proto.DefaultLimits.Merge(h.opts.Limits), Version: "test"})
			}
		case *proto.Result:
			hc.mu.Lock()
			ch := hc.pending[m.OpID]
			delete(hc.pending, m.OpID)
			hc.mu.Unlock()
			if ch != nil {
				ch <- m
				return
			}
			h.mu.Lock()
			h.stray = append(h.stray, m)
			h.mu.Unlock()
		}
	})
	hc.conn.Close()
	close(hc.done)
	h.mu.Lock()
	if h.cur == hc {
		h.cur = nil
	}
	h.notifyLocked()
	h.mu.Unlock()
}

func (h *Hub) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Hello returns the next hello the hub receives (from any connection, in
// arrival order).
func (h *Hub) Hello(ctx context.Context) (*proto.Hello, error) {
	select {
	case m := <-h.hellos:
		return m, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for hello: %w", ctx.Err())
	}
}

// WaitMode waits until the latest hello announces mode.
func (h *Hub) WaitMode(ctx context.Context, mode proto.Mode) error {
	for {
		h.mu.Lock()
		ok, ch := h.last != nil && h.last.Mode == mode, h.changed
		h.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for mode %s: %w", mode, ctx.Err())
		}
	}
}

// WaitConnected waits for a live connection whose host has said hello.
func (h *Hub) WaitConnected(ctx context.Context) error {
	for {
		h.mu.Lock()
		ok, ch := h.cur != nil && h.last != nil, h.changed
		h.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a host: %w", ctx.Err())
		}
	}
}

// LastHello returns the latest hello, or nil.
func (h *Hub) LastHello() *proto.Hello {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Connections returns how many WebSocket connections the hub accepted.
func (h *Hub) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns
}

// Authorizations returns the Authorization header of every upgrade
// request, accepted or not.
func (h *Hub) Authorizations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

// Refuse makes the next n upgrade requests fail with 503, as a hub that
// is restarting.
func (h *Hub) Refuse(n int) {
	h.mu.Lock()
	h.refuse = n
	h.mu.Unlock()
}

// AttemptTimes returns when each upgrade request arrived.
func (h *Hub) AttemptTimes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.tries...)
}

// Stray returns the results that arrived for no pending op (late results
// of cancelled or abandoned ops).
func (h *Hub) Stray() []*proto.Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*proto.Result(nil), h.stray...)
}

// ErrDisconnected is returned by Do when the connection ends first.
var ErrDisconnected = errors.New("host disconnected before completing the operation")

// Do sends op on the current connection (assigning an op_id when empty)
// and waits for its result.
func (h *Hub) Do(ctx context.Context, op *proto.Op) (*proto.Result, error) {
	ch, done, err := h.Start(ctx, op)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-done:
		return nil, ErrDisconnected
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the result of %s %s: %w", op.Op, op.OpID, ctx.Err())
	}
}

// Start sends op and returns the channel its result will arrive on and
// one closed when the connection ends.
func (h *Hub) Start(ctx context.Context, op *proto.Op) (<-chan *proto.Result, <-chan struct{}, error) {
	h.mu.Lock()
	hc := h.cur
	if op.OpID == "" {
		h.nextOp++
		op.OpID = fmt.Sprintf("op-%d", h.nextOp)
	}
	h.mu.Unlock()
	if hc == nil {
		return nil, nil, errors.New("no host connected")
	}
	ch := make(chan *proto.Result, 1)
	hc.mu.Lock()
	hc.pending[op.OpID] = ch
	hc.mu.Unlock()
	if err := hc.conn.Send(ctx, op); err != nil {
		return nil, nil, fmt.Errorf("sending %s: %w", op.Op, err)
	}
	return ch, hc.done, nil
}

// Cancel withdraws an op: its pending result is forgotten (a late one
// lands in Stray) and the host is sent cancel.
func (h *Hub) Cancel(ctx context.Context, opID string) error {
	h.mu.Lock()
	hc := h.cur
	h.mu.Unlock()
	if hc == nil {
		return errors.New("no host connected")
	}
	hc.mu.Lock()
	delete(hc.pending, opID)
	hc.mu.Unlock()
	return hc.conn.Send(ctx, &proto.Cancel{OpID: opID})
}

// Send sends any protocol message on the current connection.
func (h *Hub) Send(ctx context.Context, msg any) error {
	h.mu.Lock()
	hc := h.cur
	h.mu.Unlock()
	if hc == nil {
		return errors.New("no host connected")
	}
	return hc.conn.Send(ctx, msg)
}

// Drop closes the current connection, as a hub restart would.
func (h *Hub) Drop() {
	h.mu.Lock()
	hc := h.cur
	h.mu.Unlock()
	if hc != nil {
		hc.conn.Close()
		<-hc.done
	}
}

// String describes the hub for test logs.
func (h *Hub) String() string {
	return "hub " + strings.TrimPrefix(h.URL, "http://")
}
