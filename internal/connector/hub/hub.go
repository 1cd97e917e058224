// Package hub is the server side of the connector (fsplane serve): it
// accepts hosts on /v2/connector, keeps the registry of connected hosts and
// their hello, routes operations to a named host, and waits for results
// with a deadline. See docs/connector-protocol.md.
//
// Routing never guesses: a call names its host (id or name), or exactly one
// host is connected. A host that disconnects fails its pending operations
// at once; an operation that times out is cancelled at the host and the
// caller is told it may still have completed.
package hub

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	json "github.com/segmentio/encoding/json"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/bearer"
	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/refuse"
)

// DefaultTimeout is how long the hub waits for an operation's result.
const DefaultTimeout = 30 * time.Second

// helloTimeout bounds the wait for a new connection's hello.
const helloTimeout = 10 * time.Second

// Options configure a Hub.
type Options struct {
	// Token authenticates hosts (Authorization: Bearer). Empty refuses
	// every host: a hub without a token would let any local process pose
	// as a person's computer.
	Token string
	// AllowedOrigins lists browser origins allowed to connect; requests
	// with any other Origin header are refused.
	AllowedOrigins []string
	// Timeout is the default operation deadline; 0 means DefaultTimeout.
	Timeout time.Duration
	// HelloTimeout bounds the wait for a new connection's hello; 0
	// means helloTimeout (10 s).
	HelloTimeout time.Duration
	// SpinWait is how long the hub's reader polls a host's connection
	// for a result before it blocks (see connector.SpinConn); 0 never.
	SpinWait time.Duration
	Version  string
	Logger   *slog.Logger
}

// Hub is the registry of connected hosts. It is safe for concurrent use.
type Hub struct {
	opts  Options
	log   *slog.Logger
	mu    sync.Mutex
	hosts map[string]*Host // by id
	subs  map[int]func()
	next  int
	// conns holds every connection being served, hello or not, and
	// closed is set by Close: a host that says hello after it is
	// refused, so none is left connected to a hub that closed.
	conns  map[*Host]struct{}
	closed bool
}

// New returns a hub.
func New(opts Options) *Hub {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = helloTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{opts: opts, log: log.With("component", "hub"), hosts: map[string]*Host{}, subs: map[int]func(){},
		conns: map[*Host]struct{}{}}
}

// Info describes a connected host.
type Info struct {
	ID           string
	Name         string
	Mode         proto.Mode
	Roots        []string
	ConnectedAt  time.Time
	Capabilities proto.Capabilities
	Version      string
}

// Hosts returns the connected hosts, ordered by name then id.
func (h *Hub) Hosts() []Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Info, 0, len(h.hosts))
	for _, x := range h.hosts {
		out = append(out, x.Info())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Subscribe calls f (on its own goroutine) whenever a host connects,
// disconnects or changes mode. The returned function unsubscribes.
func (h *Hub) Subscribe(f func()) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.subs[id] = f
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, id)
	}
}

func (h *Hub) changed() {
	h.mu.Lock()
	subs := make([]func(), 0, len(h.subs))
	for _, f := range h.subs {
		subs = append(subs, f)
	}
	h.mu.Unlock()
	for _, f := range subs {
		go f()
	}
}

// Find routes a call: name is a host id or name; "" picks the only
// connected host. Errors list the connected hosts.
func (h *Hub) Find(name string) (*Host, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.hosts) == 0 {
		return nil, fserr.New(fserr.Unavailable, "route", name, "no host is connected to this hub").
			WithHint("run `fsplane connect URL` on the computer whose files you want, then retry")
	}
	if name == "" {
		if len(h.hosts) == 1 {
			for _, x := range h.hosts {
				return x, nil
			}
		}
		return nil, fserr.New(fserr.BadRequest, "route", "", "%d hosts are connected (%s); name the host to use", len(h.hosts), h.listLocked()).
			WithHint("pass the host's name or id")
	}
	if x, ok := h.hosts[name]; ok {
		return x, nil
	}
	var byName []*Host
	for _, x := range h.hosts {
		if x.Info().Name == name {
			byName = append(byName, x)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return nil, fserr.New(fserr.NotFound, "route", name, "no connected host is named %q; connected: %s", name, h.listLocked()).
			WithHint("pass one of the connected hosts' names or ids, or omit host when only one is connected")
	}
	return nil, fserr.New(fserr.BadRequest, "route", name, "%d connected hosts are named %q (%s); use the host id", len(byName), name, list(byName)).
		WithHint("pass the id of the one you mean")
}

func (h *Hub) listLocked() string {
	all := make([]*Host, 0, len(h.hosts))
	for _, x := range h.hosts {
		all = append(all, x)
	}
	return list(all)
}

// list names hosts with their ids and modes, sorted.
func list(hosts []*Host) string {
	var parts []string
	for _, x := range hosts {
		i := x.Info()
		parts = append(parts, fmt.Sprintf("%s (id %s, %s)", i.Name, i.ID, i.Mode))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// ServeHTTP accepts a host on the connector endpoint. Authentication and
// the origin check happen before the upgrade; a refusal closes the
// connection without waiting for a request body (see package refuse).
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" {
		refuse.CloseAfter(w)
		http.Error(w, proto.NoHostsRefusal, http.StatusForbidden)
		return
	}
	got, ok := bearer.Token(r)
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
		refuse.CloseAfter(w)
		http.Error(w, "Unauthorized: the connector token is missing or wrong", http.StatusUnauthorized)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !slices.Contains(h.opts.AllowedOrigins, o) {
		refuse.CloseAfter(w)
		http.Error(w, "browser origin "+o+" is not allowed to connect hosts", http.StatusForbidden)
		return
	}
	var spin *connector.SpinConn
	if h.opts.SpinWait > 0 {
		w = spinWriter{w, h.opts.SpinWait, &spin}
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{proto.Protocol}, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	if ws.Subprotocol() != proto.Protocol {
		ws.Close(websocket.StatusPolicyViolation, "use subprotocol "+proto.Protocol)
		return
	}
	h.serve(r.Context(), connector.New(ws, proto.DefaultLimits), spin)
}

// spinWriter hands the WebSocket library the hijacked connection wrapped
// in a connector.SpinConn, and keeps it for the host's calls.
type spinWriter struct {
	http.ResponseWriter
	budget time.Duration
	conn   **connector.SpinConn
}

func (s spinWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return c, brw, err
	}
	*s.conn = connector.NewSpinConn(c, s.budget)
	return *s.conn, brw, nil
}

func newID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *Hub) serve(ctx context.Context, c *connector.Conn, spin *connector.SpinConn) {
	x := &Host{hub: h, conn: c, spin: spin, pending: map[string]chan *proto.Result{}, opPrefix: newID() + "-"}
	h.mu.Lock()
	closed := h.closed
	h.conns[x] = struct{}{}
	h.mu.Unlock()
	if closed {
		c.Close()
	}
	deadline := time.AfterFunc(h.opts.HelloTimeout, func() {
		h.mu.Lock()
		ok := x.registered
		h.mu.Unlock()
		if !ok {
			// Not a shutdown (1000): the host is told why.
			c.CloseWith(websocket.StatusPolicyViolation, fmt.Sprintf("no hello within %s", h.opts.HelloTimeout))
		}
	})
	defer deadline.Stop()
	// What the hub aborts coming in is a host's answer (a result or a
	// download's data): the host ran the op, which may have changed files.
	c.OnAbort(func(a proto.TransferAbort) {
		x.fail(a.OpID, "the host's answer was lost: transfer aborted: "+a.Reason+mayHaveApplied)
	})
	err := c.Run(ctx, func(msg any) {
		switch m := msg.(type) {
		case *proto.Hello:
			first, why := h.admit(x, m)
			if why != "" {
				// The host shows the reason and, as after any close,
				// tries again later. On a goroutine: the close waits for
				// the host's close frame, which this handler would hold
				// up.
				h.log.Warn("Host refused", "host", m.Name, "reason", why)
				go c.CloseWith(websocket.StatusPolicyViolation, why)
				return
			}
			if first {
				_ = c.Send(ctx, &proto.Welcome{HostID: x.info.ID, Limits: c.Limits(), Version: h.opts.Version})
				h.log.Info("Host connected", "host", m.Name, "id", x.info.ID, "mode", m.Mode, "roots", strings.Join(m.Roots, ","))
			} else {
				h.log.Info("Host changed mode", "host", m.Name, "id", x.info.ID, "mode", m.Mode)
			}
			h.changed()
		case *proto.Result:
			x.deliver(m)
		case *proto.TransferAbort:
			// The host's own answer, or the hub's op it could not take
			// whole: the hub cannot tell which it gave up on.
			x.fail(m.OpID, "transfer aborted by the host: "+m.Reason+"; if the host had taken the operation whole"+mayHaveApplied)
		case *proto.ErrorMsg:
			h.log.Warn("Host reported a protocol error", "id", x.info.ID, "code", m.Code, "message", m.Message)
		}
	})
	c.Close()
	h.mu.Lock()
	delete(h.conns, x)
	registered := x.registered
	if registered {
		delete(h.hosts, x.info.ID)
	}
	h.mu.Unlock()
	x.disconnected()
	if registered {
		h.log.Info("Host disconnected", "id", x.info.ID, "reason", err)
		h.changed()
	}
}

// admit applies hello m to x, registering x (with a new id) on its first
// hello, and reports whether this was the first; or it refuses m with
// the reason for the host, changing nothing. Under h.mu, so that names
// and ids stay apart: a name may not be "-" (proto.CheckName) nor the id
// of another connected host, which Find would pick instead (ids route
// first, so they always reach exactly one host), and a new id is never a
// connected host's name.
func (h *Hub) admit(x *Host, m *proto.Hello) (first bool, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false, "the hub is shutting down"
	}
	if err := proto.CheckName(m.Name); err != nil {
		return false, err.Error() + ": choose another --name"
	}
	if other, ok := h.hosts[m.Name]; ok && other != x {
		return false, fmt.Sprintf("host name %q is the id of another connected host: choose another --name", m.Name)
	}
	x.setHello(m)
	if x.registered {
		return false, ""
	}
	x.conn.Negotiate(m.Limits)
	id := newID()
	for h.namedLocked(id) || h.hosts[id] != nil {
		id = newID()
	}
	x.mu.Lock()
	x.info.ID, x.info.ConnectedAt = id, time.Now()
	x.mu.Unlock()
	h.hosts[id], x.registered = x, true
	return true, ""
}

// namedLocked reports whether a connected host is named name (h.mu held).
func (h *Hub) namedLocked(name string) bool {
	for _, x := range h.hosts {
		if x.Info().Name == name {
			return true
		}
	}
	return false
}

// Close disconnects every host, those yet to say hello too, and refuses
// any that connects or says hello after it; it tells each it is a
// shutdown (a close frame), all at once: a host that does not answer holds its Close up
// for a moment (connector.Conn.Close), and one after the other they
// would hold up the hub's exit that much each.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	hosts := make([]*Host, 0, len(h.conns))
	for x := range h.conns {
		hosts = append(hosts, x)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, x := range hosts {
		wg.Go(x.conn.Close)
	}
	wg.Wait()
}

// Host is one connected host.
type Host struct {
	hub     *Hub
	conn    *connector.Conn
	spin    *connector.SpinConn // nil: no spin wait (Options.SpinWait)
	mu      sync.Mutex
	info    Info
	pending map[string]chan *proto.Result
	gone    bool
	// registered is set, under the hub's mu, once the host is in the
	// registry (its first accepted hello).
	registered bool
	// Op ids are this connection's random prefix and a counter: unique
	// on the connection without a system call per operation.
	opPrefix string
	opSeq    atomic.Uint64
}

// Info returns the host's current hello.
func (x *Host) Info() Info {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := x.info
	i.Roots = slices.Clone(i.Roots)
	return i
}

func (x *Host) setHello(m *proto.Hello) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.info.Name, x.info.Mode, x.info.Roots = m.Name, m.Mode, m.Roots
	x.info.Capabilities, x.info.Version = m.Capabilities, m.Version
}

func (x *Host) deliver(m *proto.Result) {
	x.mu.Lock()
	ch, ok := x.pending[m.OpID]
	delete(x.pending, m.OpID)
	x.mu.Unlock()
	if ok {
		x.settle()
		ch <- m // buffered; a late result for a cancelled op is dropped
	}
}

// fail ends a pending operation with a transport error.
func (x *Host) fail(opID, reason string) {
	x.deliver(&proto.Result{OpID: opID, Error: &proto.Error{Code: string(fserr.Unavailable), Message: reason}})
}

func (x *Host) disconnected() {
	x.mu.Lock()
	x.gone = true
	pending := x.pending
	x.pending = map[string]chan *proto.Result{}
	x.mu.Unlock()
	for id, ch := range pending {
		x.settle()
		ch <- &proto.Result{OpID: id, Error: &proto.Error{Code: string(fserr.Unavailable), Message: mayHaveRun}}
	}
}

type timeoutKey struct{}

// WithTimeout overrides the operation deadline for calls made with ctx.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}

// Call runs op on the host and decodes its result into out. Failures are
// *fserr.Error: the host's own (codes as local operations), unavailable
// when the host goes away, timeout when the deadline passes (the host is
// sent cancel).
func (x *Host) Call(ctx context.Context, op, path, caller string, args, out any) error {
	return x.call(ctx, op, path, caller, args, out, nil)
}

// CallData is Call for an operation whose result is followed by a data
// transfer (a download): sink receives the bytes after CallData returns
// the result. When CallData fails, sink is sent no bytes (it may be
// finished with an error: the connection ended while the op ran).
func (x *Host) CallData(ctx context.Context, op, path, caller string, args, out any, sink connector.DataSink) error {
	return x.call(ctx, op, path, caller, args, out, sink)
}

func (x *Host) call(ctx context.Context, op, path, caller string, args, out any, sink connector.DataSink) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fserr.New(fserr.BadRequest, op, path, "cannot encode the request: %v", err)
	}
	timeout := x.hub.opts.Timeout
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && d > 0 {
		timeout = d
	}
	id := x.opPrefix + strconv.FormatUint(x.opSeq.Add(1), 16)
	ch := make(chan *proto.Result, 1)
	x.mu.Lock()
	if x.gone {
		x.mu.Unlock()
		return x.notSent(op, path)
	}
	x.pending[id] = ch
	x.mu.Unlock()
	x.expect()
	msg := &proto.Op{OpID: id, Op: op, Path: path, Caller: caller, TimeoutMS: timeout.Milliseconds(), Args: raw}
	// The deadline is an alarm on the connection's timer, not a context
	// timer per call (see connector.Alarms).
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	due := x.conn.After(timeout, cancel)
	defer due.Stop()
	if sink != nil {
		x.conn.ExpectData(id, sink)
	}
	// Send stops between the frames of a large op when tctx ends, and
	// then tells the host to drop the part it has (transfer_abort): the op
	// never runs. The connection, shared with every other op on the host,
	// is left alone.
	if err := x.conn.Send(tctx, msg); err != nil {
		x.drop(id)
		if sink != nil {
			x.conn.ForgetData(id)
		}
		return x.sendFailed(op, path, err, tctx.Err() != nil)
	}
	select {
	case res := <-ch:
		err := decodeResult(op, path, res, out)
		switch {
		case err != nil && sink != nil:
			x.conn.ForgetData(id)
		case sink != nil:
			x.conn.AwaitData(id, connector.DataStartTimeout)
		}
		return err
	case <-tctx.Done():
		x.drop(id)
		if sink != nil {
			x.conn.ForgetData(id)
		}
		_ = x.conn.Send(context.Background(), &proto.Cancel{OpID: id})
		if ctx.Err() != nil {
			return fserr.New(fserr.Timeout, op, path, "the request was cancelled while host %s ran %s; it may still have completed: re-read before retrying", x.Info().Name, op)
		}
		return fserr.New(fserr.Timeout, op, path, "host %s did not answer %s on %s within %s; the operation may still have completed: re-read before retrying", x.Info().Name, op, path, timeout)
	}
}

// sendFailed is the error of a call whose op Send did not deliver (err;
// ended: the call's context ended meanwhile). It says what is known of
// the op: the host never handles a message it did not get whole, so
// every failure but one left the op unrun; an op written whole before
// the connection broke (connector.ErrMaybeSent) may have run, and is
// answered as one the host got and never answered (see disconnected).
// Retryable is set only for failures the same call may get past later:
// not for an op that may have run, nor for one that cannot be encoded or
// is too large, which fail the same way every time.
func (x *Host) sendFailed(op, path string, err error, ended bool) *fserr.Error {
	switch {
	case errors.Is(err, connector.ErrMaybeSent):
		e := fserr.New(fserr.Unavailable, op, path, "%s", mayHaveRun)
		e.Err = err
		return e
	case ended:
		return fserr.New(fserr.Timeout, op, path, "the request ended before %s reached host %s; it was not run", op, x.Info().Name)
	case errors.Is(err, connector.ErrClosed), errors.Is(err, connector.ErrBroken):
		return x.notSent(op, path)
	case errors.Is(err, connector.ErrTooLarge):
		return fserr.New(fserr.TooLarge, op, path, "the %s request is too large to send to host %s (%v); it was not run", op, x.Info().Name, err).
			WithHint("send less at once")
	case errors.Is(err, connector.ErrEncode):
		// A fault of the hub, not of the host or the connection: the
		// same call fails the same way.
		e := fserr.New(fserr.IOError, op, path, "the hub could not encode the %s for host %s (%v); it was not run", op, x.Info().Name, err)
		e.Err = err
		return e
	}
	e := fserr.New(fserr.Unavailable, op, path, "host %s did not take the %s (%v); it was not run", x.Info().Name, op, err).
		WithHint("retry in a moment")
	e.Retryable, e.Err = true, err
	return e
}

// mayHaveRun is the message of an op the host may have got whole and
// never answered because its connection ended: nothing says whether it
// was applied.
const mayHaveRun = "host disconnected before completing the operation" + mayHaveApplied

// mayHaveApplied ends the message of an op whose answer never came whole.
const mayHaveApplied = "; it may or may not have been applied: re-read before retrying"

// notSent is the error of an op that never reached the host whole
// because its connection ended first: nothing was applied, and the same
// call may be made again once the host is back. (An op the host got whole
// and did not answer before the end is another matter: see disconnected.)
func (x *Host) notSent(op, path string) *fserr.Error {
	e := fserr.New(fserr.Unavailable, op, path, "host %s disconnected before the %s reached it; nothing was applied", x.Info().Name, op).
		WithHint("retry once the host is connected again (GET /v2/hosts lists the connected hosts)")
	e.Retryable = true
	return e
}

func (x *Host) drop(id string) {
	x.mu.Lock()
	_, ok := x.pending[id]
	delete(x.pending, id)
	x.mu.Unlock()
	if ok {
		x.settle()
	}
}

// expect and settle bracket the wait for one result (see SpinConn).
func (x *Host) expect() {
	if x.spin != nil {
		x.spin.Expect()
	}
}

func (x *Host) settle() {
	if x.spin != nil {
		x.spin.Settle()
	}
}

func decodeResult(op, path string, res *proto.Result, out any) error {
	if res.Error != nil {
		e := &fserr.Error{Code: fserr.Code(res.Error.Code), Op: op, Path: path, Message: res.Error.Message, Hint: res.Error.Hint}
		// Another version of the host, or a hostile one, may send any
		// code; the fronts switch on it (an "unauthorized" made the HTTP
		// front answer 401, as though the caller's key were wrong).
		if !e.Code.Stable() {
			e.Code = fserr.IOError
			e.Message = fmt.Sprintf("the host answered with error code %q, which is not one of fsplane's: %s", res.Error.Code, res.Error.Message)
		}
		d := res.Error.Details
		if v, ok := d["retryable"].(bool); ok {
			e.Retryable = v
		}
		if v, ok := d["errno"].(float64); ok {
			e.Errno = syscall.Errno(int(v))
		}
		if v, ok := d["lines"].([]any); ok {
			for _, l := range v {
				if n, ok := l.(float64); ok {
					e.Lines = append(e.Lines, int(n))
				}
			}
		}
		return e
	}
	if out == nil || len(res.Result) == 0 {
		return nil
	}
	if f, ok := out.(fastDecoder); ok && f.decodeFast(res.Result) {
		return nil
	}
	if err := json.Unmarshal(res.Result, out); err != nil {
		return fserr.New(fserr.IOError, op, path, "the host's result could not be decoded: %v", err)
	}
	return nil
}
