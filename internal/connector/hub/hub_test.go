package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
)

const token = "hub-test-token"

func newHub(t *testing.T, opts Options) (*Hub, *httptest.Server) {
	t.Helper()
	if opts.Token == "" {
		opts.Token = token
	}
	h := New(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	return h, srv
}

// fakeHost is a scripted host: it answers each op with answer(op).
type fakeHost struct {
	conn   *connector.Conn
	hostID string
	mu     sync.Mutex
	ops    []*proto.Op
	cancel []string
	aborts []*proto.TransferAbort
}

func dial(t *testing.T, srv *httptest.Server, name string, mode proto.Mode, answer func(*proto.Op) *proto.Result) *fakeHost {
	t.Helper()
	return dialVia(t, srv, name, mode, answer, nil)
}

// dialVia is dial over what wrap makes of the TCP connection (nil: the
// connection as is).
func dialVia(t *testing.T, srv *httptest.Server, name string, mode proto.Mode, answer func(*proto.Op) *proto.Result, wrap func(net.Conn) net.Conn) *fakeHost {
	t.Helper()
	ctx := context.Background()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{proto.Protocol}}
	if wrap != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return wrap(c), nil
			},
		}}
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeHost{conn: connector.New(ws, proto.DefaultLimits)}
	welcomed := make(chan string, 1)
	go f.conn.Run(ctx, func(msg any) {
		switch m := msg.(type) {
		case *proto.Welcome:
			welcomed <- m.HostID
		case *proto.Op:
			f.mu.Lock()
			f.ops = append(f.ops, m)
			f.mu.Unlock()
			go func() {
				if res := answer(m); res != nil {
					res.OpID = m.OpID
					_ = f.conn.Send(ctx, res)
				}
			}()
		case *proto.Cancel:
			f.mu.Lock()
			f.cancel = append(f.cancel, m.OpID)
			f.mu.Unlock()
		case *proto.TransferAbort:
			f.mu.Lock()
			f.aborts = append(f.aborts, m)
			f.mu.Unlock()
		}
	})
	f.hello(t, name, mode)
	select {
	case f.hostID = <-welcomed:
	case <-time.After(5 * time.Second):
		t.Fatal("no welcome")
	}
	t.Cleanup(f.conn.Close)
	return f
}

func (f *fakeHost) hello(t *testing.T, name string, mode proto.Mode) {
	t.Helper()
	err := f.conn.Send(context.Background(), &proto.Hello{Name: name, Roots: []string{"/home/" + name}, Mode: mode,
		Capabilities: proto.Capabilities{Ops: []string{proto.OpRead}, Transfer: 1}, Limits: proto.DefaultLimits, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
}

func ok(v any) *proto.Result {
	b, _ := json.Marshal(v)
	return &proto.Result{OK: true, Result: b}
}

func TestConnectAuth(t *testing.T) {
	t.Parallel()
	_, srv := newHub(t, Options{})
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	for _, tt := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"no token", http.Header{}, 401},
		{"wrong token", http.Header{"Authorization": {"Bearer nope"}}, 401},
		{"another scheme", http.Header{"Authorization": {"Basic " + token}}, 401},
		{"lowercase scheme", http.Header{"Authorization": {"bearer " + token}}, 101},
		{"browser origin", http.Header{"Authorization": {"Bearer " + token}, "Origin": {"https://evil.example"}}, 403},
	} {
		ws, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: tt.header, Subprotocols: []string{proto.Protocol}})
		if resp == nil || resp.StatusCode != tt.status || (err == nil) != (tt.status == 101) {
			t.Errorf("%s: err %v, response %v", tt.name, err, resp)
		}
		if ws != nil {
			ws.CloseNow()
		}
	}
	h := New(Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v2/connector", nil))
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "--connector-token") {
		t.Errorf("hub without a token: %d %q", rec.Code, rec.Body.String())
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	if _, err := h.Find(""); !fserr.Is(err, fserr.Unavailable) {
		t.Fatalf("no hosts: %v", err)
	}
	answer := func(name string) func(*proto.Op) *proto.Result {
		return func(*proto.Op) *proto.Result { return ok(ops.ReadResult{Content: name}) }
	}
	a := dial(t, srv, "alpha", proto.ReadOnly, answer("alpha"))
	x, err := h.Find("")
	if err != nil || x.Info().Name != "alpha" {
		t.Fatalf("the only host: %v", err)
	}
	b := dial(t, srv, "beta", proto.ReadWrite, answer("beta"))
	_, err = h.Find("")
	if !fserr.Is(err, fserr.BadRequest) || !strings.Contains(err.Error(), "alpha (id "+a.hostID) || !strings.Contains(err.Error(), "beta (id "+b.hostID) {
		t.Fatalf("two hosts, none named: %v", err)
	}
	if _, err := h.Find("gamma"); !fserr.Is(err, fserr.NotFound) || !strings.Contains(err.Error(), "alpha") {
		t.Fatalf("unknown name: %v", err)
	}
	for _, name := range []string{"alpha", "beta", a.hostID, b.hostID} {
		r, err := h.Remote(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Read(context.Background(), ops.ReadRequest{Path: "f.txt", Caller: "ctx1"})
		want := r.Host().Info().Name
		if err != nil || res.Content != want {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	// Each call reached its own host only, with path and caller.
	for _, f := range []*fakeHost{a, b} {
		f.mu.Lock()
		if len(f.ops) != 2 || f.ops[0].Path != "f.txt" || f.ops[0].Caller != "ctx1" || f.ops[0].Op != proto.OpRead {
			t.Errorf("host ops: %+v", f.ops)
		}
		f.mu.Unlock()
	}
	if got := h.Hosts(); len(got) != 2 || got[0].Name != "alpha" || got[1].Mode != proto.ReadWrite {
		t.Errorf("Hosts() = %+v", got)
	}
}

func TestModeChangeNotifies(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	changes := make(chan struct{}, 10)
	defer h.Subscribe(func() { changes <- struct{}{} })()
	f := dial(t, srv, "laptop", proto.ReadOnly, func(*proto.Op) *proto.Result { return nil })
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s of the host connecting")
	}
	f.hello(t, "laptop", proto.ReadWrite)
	select {
	case <-changes:
	case <-time.After(time.Second):
		t.Fatal("no notification within a second of the mode change")
	}
	if got := h.Hosts()[0]; got.Mode != proto.ReadWrite || got.ID != f.hostID {
		t.Fatalf("after re-hello: %+v", got)
	}
	f.conn.Close()
	testenv.WaitFor(t, 5*time.Second, "disconnect", func() bool { return len(h.Hosts()) == 0 })
}

func TestHostErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	dial(t, srv, "h", proto.ReadOnly, func(*proto.Op) *proto.Result {
		return &proto.Result{Error: &proto.Error{Code: "read_only", Message: "Writes are disabled on this host. Press F3 to switch to Read&Write.",
			Details: map[string]any{"errno": 13.0, "lines": []any{3.0, 9.0}}}}
	})
	r, _ := h.Remote("")
	_, err := r.Write(context.Background(), ops.WriteRequest{Path: "x", Content: []byte("y")})
	e, isF := fserr.As(err)
	if !isF || e.Code != fserr.ReadOnly || !strings.Contains(e.Message, "Press F3") || e.Errno != 13 || len(e.Lines) != 2 {
		t.Fatalf("err %#v", err)
	}
}

func TestTimeoutSendsCancel(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{Timeout: 100 * time.Millisecond})
	f := dial(t, srv, "slow", proto.ReadWrite, func(*proto.Op) *proto.Result { return nil }) // never answers
	r, _ := h.Remote("slow")
	_, err := r.Read(context.Background(), ops.ReadRequest{Path: "big.log"})
	if !fserr.Is(err, fserr.Timeout) || !strings.Contains(err.Error(), "may still have completed") {
		t.Fatalf("err %v", err)
	}
	testenv.WaitFor(t, 5*time.Second, "cancel", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.cancel) == 1 && f.cancel[0] == f.ops[0].OpID
	})
	// A per-call deadline overrides the hub's.
	start := time.Now()
	_, err = r.Read(WithTimeout(context.Background(), 300*time.Millisecond), ops.ReadRequest{Path: "big.log"})
	if !fserr.Is(err, fserr.Timeout) || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("per-call timeout: %v after %v", err, time.Since(start))
	}
}

func TestDisconnectFailsPendingAtOnce(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{Timeout: time.Minute})
	var f *fakeHost
	f = dial(t, srv, "flaky", proto.ReadWrite, func(*proto.Op) *proto.Result {
		f.conn.Close() // the host goes away mid-operation
		return nil
	})
	r, _ := h.Remote("")
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(context.Background(), ops.ReadRequest{Path: "x"})
		done <- err
	}()
	select {
	case err := <-done:
		if !fserr.Is(err, fserr.Unavailable) || !strings.Contains(err.Error(), "disconnected") {
			t.Fatalf("err %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending op did not fail when its host disconnected")
	}
}

func TestLargeResultMovesAsTransfer(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB
	dial(t, srv, "big", proto.ReadWrite, func(op *proto.Op) *proto.Result {
		var req ops.WriteRequest
		if op.Op == proto.OpWrite {
			if err := json.Unmarshal(op.Args, &req); err != nil || string(req.Content) != big {
				return &proto.Result{Error: &proto.Error{Code: "io_error", Message: "write args arrived damaged"}}
			}
			return ok(ops.WriteResult{Bytes: len(req.Content)})
		}
		return ok(ops.ReadResult{Content: big})
	})
	r, _ := h.Remote("big")
	res, err := r.Read(context.Background(), ops.ReadRequest{Path: "big.txt"})
	if err != nil || res.Content != big {
		t.Fatalf("read: %v (%d bytes)", err, len(res.Content))
	}
	wr, err := r.Write(context.Background(), ops.WriteRequest{Path: "big.txt", Content: []byte(big)})
	if err != nil || wr.Bytes != len(big) {
		t.Fatalf("write: %+v %v", wr, err)
	}
}

// gate stops a connection's reading once limit bytes were read, until
// open is closed. With a small receive buffer, the peer's writes then block
// mid-message on TCP backpressure.
type gate struct {
	limit   int64
	reached chan struct{} // closed when reading stops
	open    chan struct{} // close to resume reading
	once    sync.Once
}

func newGate(limit int64) *gate {
	return &gate{limit: limit, reached: make(chan struct{}), open: make(chan struct{})}
}

func (g *gate) wrap(c net.Conn) net.Conn {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10)
	}
	return &gatedConn{Conn: c, g: g}
}

type gatedConn struct {
	net.Conn
	g    *gate
	read atomic.Int64
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if c.read.Load() >= c.g.limit {
		c.g.once.Do(func() { close(c.g.reached) })
		<-c.g.open
	}
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestCancelMidSendKeepsTheConnection: a caller that goes away while its
// large op is being written to the host (an HTTP client disconnecting)
// fails its own call only. The write in progress is not cut (that would
// close the WebSocket, failing every op on the host); the host is told to
// drop the partial op, stays connected and serves the next op.
func TestCancelMidSendKeepsTheConnection(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	g := newGate(2 << 20)
	f := dialVia(t, srv, "laptop", proto.ReadWrite, func(*proto.Op) *proto.Result {
		return ok(ops.ReadResult{Content: "still here"})
	}, g.wrap)
	r, err := h.Remote("laptop")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// About 21 MiB of JSON: a transfer of some 90 chunks, far more than
	// the socket buffers hold once the host stops reading.
	big := bytes.Repeat([]byte("x"), 16<<20)
	done := make(chan error, 1)
	go func() {
		_, err := r.Write(ctx, ops.WriteRequest{Path: "big.bin", Content: big})
		done <- err
	}()
	// Encoding 16 MiB under the race detector on a loaded machine takes
	// a while: the guard is for a hang, not a measure of speed.
	select {
	case <-g.reached:
	case err := <-done:
		t.Fatalf("the write ended (%v) before its transfer filled the host's buffers", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the op's transfer never got under way")
	}
	cancel() // while the hub is blocked writing the op
	close(g.open)
	select {
	case err := <-done:
		if !fserr.Is(err, fserr.Timeout) || !strings.Contains(err.Error(), "not run") {
			t.Errorf("the cancelled call failed with %v, want timeout saying the op was not run", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	res, err := r.Read(context.Background(), ops.ReadRequest{Path: "a.txt"})
	if err != nil || res.Content != "still here" {
		t.Fatalf("an op after the cancelled one: %+v, %v", res, err)
	}
	select {
	case <-f.conn.Done():
		t.Fatal("the host's connection closed")
	default:
	}
	if hosts := h.Hosts(); len(hosts) != 1 || hosts[0].ID != f.hostID {
		t.Errorf("connected hosts %+v, want the same host still connected", hosts)
	}
	testenv.WaitFor(t, 5*time.Second, "transfer_abort for the abandoned op", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.aborts) > 0
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ops) != 1 || f.ops[0].Op != proto.OpRead {
		t.Errorf("the host handled %d ops, want only the read: the abandoned write must never run", len(f.ops))
	}
	if a := f.aborts[0]; a.OpID == "" || !strings.Contains(a.Reason, "context canceled") {
		t.Errorf("transfer_abort %+v, want the write's op id and why", a)
	}
}

// TestNoHelloIsToldWhy: a connection that sends no hello in time is closed
// with a policy-violation status and the reason, not as a shutdown (which
// a host would report as "hub shut down").
func TestNoHelloIsToldWhy(t *testing.T) {
	t.Parallel()
	_, srv := newHub(t, Options{HelloTimeout: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := dialHub(ctx, t, srv)
	defer ws.CloseNow()
	_, _, err := ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || !strings.Contains(ce.Reason, "no hello within 100ms") {
		t.Errorf("read = %v; want a policy-violation close saying no hello came", err)
	}
}

// dialHub opens a connector WebSocket to the hub at srv with the token.
func dialHub(ctx context.Context, t *testing.T, srv *httptest.Server) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"),
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{proto.Protocol}})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// refusedHello dials the hub, says hello as name, and returns how the hub
// ended the connection (the test fails if it welcomes the host instead).
func refusedHello(t *testing.T, srv *httptest.Server, name string) websocket.CloseError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := dialHub(ctx, t, srv)
	c := connector.New(ws, proto.DefaultLimits)
	defer c.Close()
	welcomed := make(chan struct{}, 1)
	ended := make(chan error, 1)
	go func() {
		ended <- c.Run(ctx, func(msg any) {
			if _, ok := msg.(*proto.Welcome); ok {
				welcomed <- struct{}{}
			}
		})
	}()
	if err := c.Send(ctx, &proto.Hello{Name: name, Roots: []string{"/r"}, Mode: proto.ReadOnly, Limits: proto.DefaultLimits}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-welcomed:
		t.Fatalf("the hub welcomed a host named %q", name)
	case err := <-ended:
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("hello as %q: the connection ended with %v, want a close frame with the reason", name, err)
		}
		return ce
	}
	return websocket.CloseError{}
}

// TestHostNamesStayAddressable: a host's name must not collide with how
// calls address hosts. "-" (the only host) and the id of another connected
// host (ids route first) are refused at hello with a close reason the host
// shows; a refused host is not registered. A name shared by several hosts
// is an error that lists those hosts only.
func TestHostNamesStayAddressable(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	answer := func(name string) func(*proto.Op) *proto.Result {
		return func(*proto.Op) *proto.Result { return ok(ops.ReadResult{Content: name}) }
	}
	a := dial(t, srv, "alpha", proto.ReadOnly, answer("alpha"))
	for _, tt := range []struct {
		name, reason string
	}{
		{"-", `host name "-" is reserved: it addresses the only connected host: choose another --name`},
		{"..", `host name ".." is a step of a URL path: /v2/hosts/../… leads to another route: choose another --name`},
		{".", `host name "." is a step of a URL path: /v2/hosts/./… leads to another route: choose another --name`},
		{a.hostID, `host name "` + a.hostID + `" is the id of another connected host: choose another --name`},
	} {
		ce := refusedHello(t, srv, tt.name)
		if ce.Code != websocket.StatusPolicyViolation || ce.Reason != tt.reason {
			t.Errorf("hello as %q: closed with %d %q, want %d %q", tt.name, ce.Code, ce.Reason, websocket.StatusPolicyViolation, tt.reason)
		}
	}
	if hosts := h.Hosts(); len(hosts) != 1 || hosts[0].ID != a.hostID {
		t.Fatalf("connected hosts %+v, want alpha only", hosts)
	}
	// Its id still reaches alpha.
	r, err := h.Remote(a.hostID)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := r.Read(context.Background(), ops.ReadRequest{Path: "f"}); err != nil || res.Content != "alpha" {
		t.Fatalf("by id: %+v %v", res, err)
	}
	b1 := dial(t, srv, "twin", proto.ReadOnly, answer("twin"))
	b2 := dial(t, srv, "twin", proto.ReadWrite, answer("twin"))
	_, err = h.Find("twin")
	want := `2 connected hosts are named "twin" (` + strings.Join(sorted(
		"twin (id "+b1.hostID+", read_only)", "twin (id "+b2.hostID+", read_write)"), ", ") + "); use the host id"
	if e, isF := fserr.As(err); !isF || e.Code != fserr.BadRequest || e.Message != want {
		t.Errorf("two hosts named twin: %v\nwant message %q", err, want)
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// rawConns records the TCP connections a dialVia wrap is given, so a test
// can drop one as a killed process would.
type rawConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (r *rawConns) wrap(inner func(net.Conn) net.Conn) func(net.Conn) net.Conn {
	return func(c net.Conn) net.Conn {
		r.mu.Lock()
		r.conns = append(r.conns, c)
		r.mu.Unlock()
		return inner(c)
	}
}

func (r *rawConns) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as the kernel sends for a killed process with unread data
		}
		c.Close()
	}
}

// TestHostGoneSaysWhetherTheOpWasApplied: when a host's connection ends,
// a call says whether its op can have been applied. An op that never
// reached the host whole (the host was gone before it was sent, or the
// connection ended while a large op was being written to it) was not
// applied: unavailable, retryable, "nothing was applied". One the host had
// whole and did not answer may have been: not retryable, "re-read before
// retrying". The raw transport errors (connection reset, use of closed
// network connection, connection closed) never reach the caller.
func TestHostGoneSaysWhetherTheOpWasApplied(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), 16<<20) // a transfer of some 90 chunks
	for _, tt := range []struct {
		name string
		// run makes the call, and makes the host go away at its moment.
		run       func(t *testing.T, h *Hub, f *fakeHost, raw *rawConns, g *gate) error
		retryable bool
		want      string
	}{
		{"gone before the op was sent", func(t *testing.T, h *Hub, f *fakeHost, raw *rawConns, g *gate) error {
			r, err := h.Remote("victim")
			if err != nil {
				t.Fatal(err)
			}
			raw.kill()
			testenv.WaitFor(t, 10*time.Second, "the hub to drop the host", func() bool { return len(h.Hosts()) == 0 })
			_, err = r.Write(context.Background(), ops.WriteRequest{Path: "a.txt", Content: []byte("a")})
			return err
		}, true, "host victim disconnected before the write reached it; nothing was applied"},
		{"gone while a large op was sent", func(t *testing.T, h *Hub, f *fakeHost, raw *rawConns, g *gate) error {
			r, err := h.Remote("victim")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := r.Write(context.Background(), ops.WriteRequest{Path: "big.bin", Content: big})
				done <- err
			}()
			select {
			case <-g.reached: // the hub is blocked writing the op
			case <-time.After(time.Minute):
				t.Fatal("the op's transfer never got under way")
			}
			raw.kill()
			closeOnce(g.open)
			select {
			case err := <-done:
				return err
			case <-time.After(time.Minute):
				t.Fatal("the call did not return after its host went away")
			}
			return nil
		}, true, "host victim disconnected before the write reached it; nothing was applied"},
		{"gone after the op was sent", func(t *testing.T, h *Hub, f *fakeHost, raw *rawConns, g *gate) error {
			r, err := h.Remote("victim")
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Write(context.Background(), ops.WriteRequest{Path: "kill-me", Content: []byte("a")})
			return err
		}, false, "host disconnected before completing the operation; it may or may not have been applied: re-read before retrying"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, srv := newHub(t, Options{Timeout: time.Minute})
			g := newGate(2 << 20)
			raw := &rawConns{}
			f := dialVia(t, srv, "victim", proto.ReadWrite, func(op *proto.Op) *proto.Result {
				if op.Path == "kill-me" {
					raw.kill() // the op arrived whole; the host dies running it
					return nil
				}
				return ok(ops.WriteResult{})
			}, raw.wrap(g.wrap))
			// Before the host's Close (cleanups run last first): its
			// reader must not stay held at the gate.
			t.Cleanup(func() { closeOnce(g.open) })
			err := tt.run(t, h, f, raw, g)
			e, isF := fserr.As(err)
			if !isF || e.Code != fserr.Unavailable || e.Retryable != tt.retryable || e.Message != tt.want {
				t.Fatalf("err %#v\nwant unavailable, retryable %v, %q", err, tt.retryable, tt.want)
			}
			if tt.retryable {
				f.mu.Lock()
				defer f.mu.Unlock()
				if len(f.ops) != 0 {
					t.Errorf("the host handled %d ops, want none", len(f.ops))
				}
			}
		})
	}
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}
