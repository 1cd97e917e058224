package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
)

// Path is the hub's connector endpoint.
const Path = "/v2/connector"

// Defaults.
const (
	// MaxBackoff caps the wait between reconnection attempts.
	MaxBackoff = 5 * time.Second
	// BaseBackoff is the cap of the first wait; it doubles per failure.
	BaseBackoff = 250 * time.Millisecond
	// MaxConcurrentOps bounds the operations running at once; more wait.
	MaxConcurrentOps = 32
	// MaxQueuedOps and MaxQueuedBytes (of their args) bound the operations
	// waiting for one of those slots; the hub's further ops are answered
	// busy at once. Each waiting op holds its args in memory: a hub
	// sending ops faster than they finish would otherwise grow the host
	// without bound. An op that finds none waiting queues whatever its
	// size (up to max_transfer_bytes), so a large write is not refused for
	// being large.
	MaxQueuedOps   = 256
	MaxQueuedBytes = 64 << 20
	// WelcomeTimeout is how long the hub has to answer hello.
	WelcomeTimeout = 10 * time.Second
	// DialTimeout bounds one connection attempt (TCP, TLS, upgrade).
	DialTimeout = 15 * time.Second
	// helloTimeout bounds sending a connection's first hello (see
	// SetMode for the others).
	helloTimeout = 5 * time.Second
	// inlineBudget is how long an operation runs on the reading goroutine
	// before reading moves on without it: a small read or stat finishes
	// well within it and is answered without a goroutine switch and the
	// thread wake-up that costs (host CPU per 4 KiB read op 176 -> 150 µs
	// on a 2-vCPU VM), while a slow one delays a cancel or the next op by
	// this much at most.
	inlineBudget = time.Millisecond
)

// Errors Run returns (wrapped) when retrying cannot help. They end Run
// only before the first successful connection; later they are retried
// like any failure, since a hub being redeployed may answer oddly for a
// while.
var (
	// ErrUnauthorized: the hub refused the token (401 or 403). Check the
	// token (--token, FSPLANE_CONNECTOR_TOKEN) and the hub's
	// --connector-token.
	ErrUnauthorized = errors.New("the hub refused the connection")
	// ErrUntrusted: the hub's TLS certificate could not be verified. Add
	// the CA that signed it (--ca-file); verification is never skipped.
	ErrUntrusted = errors.New("the hub's TLS certificate is not trusted")
	// ErrProtocol: the server is not an fsplane hub of this protocol
	// version (no WebSocket at /v2/connector, or another subprotocol).
	ErrProtocol = errors.New("the server does not speak " + proto.Protocol)
)

// Particular cases of those errors, each with its own remedy; errors.Is
// matches them to the general one too (ErrTokenMissing is an
// ErrUnauthorized), so code that knows only the general one still works.
var (
	// ErrTokenMissing: the hub asked for a token (401) and the host has
	// none (Options.Token is ""). Hosts may dial without one, since a
	// proxy in front of the hub may add it, so this is only known once
	// the hub refuses.
	ErrTokenMissing error = &subError{"the hub requires a token and none was given", ErrUnauthorized}
	// ErrHubHasNoToken: the hub has no connector token configured, so it
	// accepts no host whatever the token: whoever runs the hub must start
	// it with one.
	ErrHubHasNoToken error = &subError{ErrUnauthorized.Error(), ErrUnauthorized}
	// ErrNeedsTLS: an http:// (ws://) URL reached a hub serving TLS.
	ErrNeedsTLS error = &subError{"the hub speaks TLS", ErrProtocol}
)

// subError is a particular case of a general error: its own text, and
// errors.Is matches it to the general one.
type subError struct {
	msg    string
	parent error
}

func (e *subError) Error() string { return e.msg }
func (e *subError) Unwrap() error { return e.parent }

// Options configure a Host.
type Options struct {
	// URL is the hub: http, https, ws or wss. The path /v2/connector is
	// appended unless the URL already ends with it, so a hub behind a
	// reverse proxy under a prefix works too.
	URL string
	// Token is sent as "Authorization: Bearer <token>"; "" sends none.
	// Surrounding white space is trimmed; New refuses a token with a
	// control character (see CheckToken).
	Token string
	// Name is the host's name for the hub (required).
	Name string
	// Mode is the initial mode; "" means read_only.
	Mode proto.Mode
	// Engine executes the operations on the host's workspace (required).
	// The host enforces its own mode, so this is a read-write engine.
	Engine *ops.Engine
	// TLS configures wss connections; nil means the system's roots. The
	// host never skips verification: a config with InsecureSkipVerify is
	// refused.
	TLS *tls.Config
	// Limits are the host's own; zero fields take proto.DefaultLimits.
	Limits proto.Limits
	// Version is the fsplane version sent in hello.
	Version string
	// OnEvent receives events (see Event), one call at a time, in order;
	// it must return promptly. Nil discards them.
	OnEvent func(Event)
	// Logger receives diagnostics (never file contents or the token).
	// Nil discards.
	Logger *slog.Logger
	// Load, when set, is told of every operation the host runs, from
	// when it is taken (queued ones included) until it is answered:
	// Request is called at the start and the function it returns at the
	// end (procs.Governor sizes GOMAXPROCS by it). It must be cheap and
	// safe for concurrent use.
	Load interface{ Request() func() }

	// backoff overrides BaseBackoff and MaxBackoff in tests.
	backoffBase, backoffMax time.Duration
	// queueOps and queueBytes override MaxQueuedOps and MaxQueuedBytes in
	// tests.
	queueOps   int
	queueBytes int64
}

// Host is one connector host. See the package documentation for its
// contracts.
type Host struct {
	url     string
	opts    Options
	client  *http.Client
	eng     *ops.Engine
	roots   []string
	limits  proto.Limits
	log     *slog.Logger
	mode    atomic.Pointer[proto.Mode]
	opSlots chan struct{}
	opsWG   sync.WaitGroup // op goroutines, waited for before Run returns

	queueMu     sync.Mutex // guards queued, queuedBytes: the ops waiting for a slot
	queued      int
	queuedBytes int64

	evMu sync.Mutex // serialises OnEvent calls

	helloMu sync.Mutex // serialises hellos; guards live
	live    *session

	stMu   sync.Mutex
	status Status

	ran atomic.Bool
}

// New checks opts and returns a host; Run connects it.
func New(opts Options) (*Host, error) {
	u, err := HubURL(opts.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Engine == nil:
		return nil, errors.New("host: an engine is required")
	case strings.TrimSpace(opts.Name) == "":
		return nil, errors.New("host: a name is required")
	case proto.CheckName(opts.Name) != nil:
		return nil, fmt.Errorf("host: %w", proto.CheckName(opts.Name))
	case opts.Mode != "" && !opts.Mode.Valid():
		return nil, fmt.Errorf("host: mode %q: use %s or %s", opts.Mode, proto.ReadOnly, proto.ReadWrite)
	case opts.TLS != nil && opts.TLS.InsecureSkipVerify:
		return nil, errors.New("host: TLS verification cannot be turned off")
	}
	opts.Token = strings.TrimSpace(opts.Token)
	if err := CheckToken(opts.Token); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	mode := opts.Mode
	if mode == "" {
		mode = proto.ReadOnly
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialFrameConn(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	if opts.TLS != nil {
		tr.TLSClientConfig = opts.TLS.Clone()
	}
	// The upgrade needs HTTP/1.1; never negotiate h2 on a wss connection.
	tr.ForceAttemptHTTP2 = false
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.backoffBase <= 0 {
		opts.backoffBase = BaseBackoff
	}
	if opts.backoffMax <= 0 {
		opts.backoffMax = MaxBackoff
	}
	if opts.queueOps <= 0 {
		opts.queueOps = MaxQueuedOps
	}
	if opts.queueBytes <= 0 {
		opts.queueBytes = MaxQueuedBytes
	}
	h := &Host{
		url:     u,
		opts:    opts,
		client:  &http.Client{Transport: tr},
		eng:     opts.Engine,
		roots:   opts.Engine.Workspace().Roots(),
		limits:  proto.DefaultLimits.Merge(opts.Limits),
		log:     log.With("component", "connector-host"),
		opSlots: make(chan struct{}, MaxConcurrentOps),
	}
	h.mode.Store(&mode)
	h.status = Status{State: Connecting, Mode: mode}
	return h, nil
}

// CheckToken refuses a token (or any secret sent in a header) no header
// can carry: one with a control character (a line break, a carriage return left by a token
// file written on Windows). Sent, it failed every dial before the request
// left ("invalid header field value"), and the host retried for ever
// saying the hub was unreachable. The error never shows the token.
// Surrounding white space is no part of a token (the hub trims it): trim
// it before checking.
func CheckToken(token string) error {
	for _, r := range token {
		if r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f {
			what := "a control character"
			if r == '\n' || r == '\r' {
				what = "a line break"
			}
			return fmt.Errorf("the value contains %s, which an HTTP header cannot carry", what)
		}
	}
	return nil
}

// HubURL normalises a hub URL: it checks the scheme (http, https, ws,
// wss) and appends /v2/connector unless the path already ends with it.
// Its errors show the URL as RedactURL does.
func HubURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	shown := RedactURL(raw)
	known := err == nil && slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme)
	if !known && !strings.Contains(raw, "://") {
		// "127.0.0.1:18091" does not parse ("first path segment in URL
		// cannot contain colon") and "localhost:18091" parses with the
		// scheme "localhost": either way, the scheme is what is missing.
		if strings.Contains(raw, "@") {
			// user:secret@host: nothing of it is shown, nor suggested.
			return "", fmt.Errorf("hub URL %q needs a scheme, and credentials in the URL are not supported: use http://HOST:PORT (or https://) and pass the token with --token or FSPLANE_CONNECTOR_TOKEN", shown)
		}
		return "", fmt.Errorf("hub URL %q needs a scheme: use http://%s (or https://)", shown, shown)
	}
	if err != nil {
		return "", fmt.Errorf("hub URL %q: %v", shown, parseError(err))
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return "", fmt.Errorf("hub URL %q: use http://, https://, ws:// or wss://", shown)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("hub URL %q has no host", shown)
	}
	if p := u.Port(); p != "" {
		// url.Parse takes any digits; a dial of them fails at every
		// attempt, retried for ever as "hub unreachable".
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("hub URL %q: port %s is not a port number (1 to 65535)", shown, p)
		}
	}
	if u.User != nil {
		return "", fmt.Errorf("hub URL %s: credentials in the URL are not supported; use the token", shown)
	}
	// A trailing slash is no part of the path asked for:
	// "…/v2/connector/" is the endpoint itself.
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), strings.TrimRight(u.RawPath, "/")
	if !strings.HasSuffix(u.Path, Path) {
		u.Path += Path
		if u.RawPath != "" { // an escaped prefix stays escaped
			u.RawPath += Path
		}
	}
	u.Fragment = ""
	return u.String(), nil
}

// URL returns the hub's connector URL the host dials. It may hold a
// secret in its query: show RedactURL's form.
func (h *Host) URL() string { return h.url }

// Name returns the host's name.
func (h *Host) Name() string { return h.opts.Name }

// Roots returns the workspace roots announced in hello.
func (h *Host) Roots() []string { return append([]string(nil), h.roots...) }

// Mode returns the mode in force.
func (h *Host) Mode() proto.Mode { return *h.mode.Load() }

// Status returns a snapshot of the connection state.
func (h *Host) Status() Status {
	h.stMu.Lock()
	defer h.stMu.Unlock()
	s := h.status
	s.Mode = h.Mode()
	return s
}

// SetMode switches the mode. Operations that start from now on obey it;
// when connected, hello is re-sent at once so the hub sees the change,
// and SetMode returns once it is sent. An error means the mode changed
// but the hub could not be told (the connection failed; the next
// connection's hello carries the mode).
//
// The hello waits for the messages ahead of it as long as the connection
// lives, with no bound of its own (WriteTimeout bounds a write to a hub
// that stopped reading): on a slow uplink a result being written may take
// longer than any fixed bound, and a hello given up on a working
// connection left the hub with the old mode for as long as it lasted.
func (h *Host) SetMode(m proto.Mode) error {
	if !m.Valid() {
		return fmt.Errorf("host: mode %q: use %s or %s", m, proto.ReadOnly, proto.ReadWrite)
	}
	h.helloMu.Lock()
	defer h.helloMu.Unlock()
	old := h.mode.Swap(&m)
	if *old != m {
		h.emit(Event{Kind: EventMode, Mode: m})
		h.log.Info("Mode changed", "mode", m)
	}
	if h.live == nil {
		return nil
	}
	return h.sendHelloLocked(h.live, 0)
}

// hello builds the announcement for the current mode.
func (h *Host) hello() *proto.Hello {
	return &proto.Hello{
		Name:         h.opts.Name,
		Roots:        h.roots,
		Mode:         h.Mode(),
		Capabilities: proto.Capabilities{Ops: Ops, Transfer: 1, Features: Features},
		Limits:       h.limits,
		Version:      h.opts.Version,
	}
}

// sendHelloLocked sends hello on s, giving up after limit (0: when the
// session ends); h.helloMu must be held.
func (h *Host) sendHelloLocked(s *session, limit time.Duration) error {
	ctx := s.ctx
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	if err := s.conn.Send(ctx, h.hello()); err != nil {
		return fmt.Errorf("sending hello: %w", err)
	}
	return nil
}

// emit delivers an event to OnEvent. A state event's mode is read under
// evMu: SetMode swaps the mode before it emits EventMode, so a state event
// that read the old mode is delivered before the EventMode, never after
// it (a TUI would otherwise go on showing the old mode).
func (h *Host) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	h.evMu.Lock()
	defer h.evMu.Unlock()
	if ev.Kind == EventState {
		ev.Mode = h.Mode()
		h.stMu.Lock()
		h.status = Status{State: ev.State, HostID: ev.HostID, Mode: ev.Mode, Reason: ev.Reason, Err: ev.Err}
		h.stMu.Unlock()
	}
	if h.opts.OnEvent != nil {
		h.opts.OnEvent(ev)
	}
}

// Run connects to the hub and serves it until ctx ends, reconnecting
// after failures (see the package documentation). It returns nil when ctx
// ends, or an error wrapping ErrUnauthorized, ErrUntrusted or ErrProtocol
// when the first connection cannot succeed. Before returning it waits for
// the operations still running (they are not answered), so the engine may
// be closed afterwards.
func (h *Host) Run(ctx context.Context) error {
	if h.ran.Swap(true) {
		return errors.New("host: Run called twice")
	}
	defer h.opsWG.Wait()
	stopped := func() error {
		h.opsWG.Wait() // their records come before "stopped"
		h.emit(Event{Kind: EventState, State: Stopped})
		return nil
	}
	attempt := 0
	everConnected := false
	warned := "" // the error last logged as a warning
	for {
		h.emit(Event{Kind: EventState, State: Connecting})
		welcomed, err := h.connectOnce(ctx)
		if ctx.Err() != nil {
			return stopped()
		}
		if welcomed {
			everConnected, attempt, warned = true, 0, ""
		}
		reason := h.scrubText(Reason(err))
		if !everConnected && permanent(err) {
			h.emit(Event{Kind: EventState, State: Failed, Reason: reason, Err: err.Error()})
			return err
		}
		wait := backoff(attempt, h.opts.backoffBase, h.opts.backoffMax, randFloat)
		attempt++
		// A warning with the whole error, which the events sum up in a
		// few words (connect --no-tui prints warnings on standard error);
		// once while it stays the same, not every few seconds.
		level := slog.LevelWarn
		if warnKey(err) == warned {
			level = slog.LevelDebug
		}
		warned = warnKey(err)
		h.log.Log(ctx, level, "Reconnecting", "reason", reason, "err", err, "retry_in", wait)
		h.emit(Event{Kind: EventState, State: Reconnecting, Retry: wait, Reason: reason, Err: err.Error()})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return stopped()
		case <-t.C:
		}
	}
}

// warnKey is what makes two failed attempts the same error for the
// warning: the error's text without the local address of the connection
// it names ("read tcp 127.0.0.1:48064->…"), a new port at every attempt.
func warnKey(err error) string {
	msg := err.Error()
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Source != nil {
		msg = strings.ReplaceAll(msg, oe.Source.String()+"->", "")
	}
	return msg
}

func permanent(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrUntrusted) || errors.Is(err, ErrProtocol)
}

// connectOnce runs one connection: dial, hello, welcome, serve. It reports
// whether the hub welcomed the host, and why the connection ended.
func (h *Host) connectOnce(ctx context.Context) (welcomed bool, err error) {
	ws, fc, err := h.dial(ctx)
	if err != nil {
		return false, err
	}
	conn := connector.New(ws, h.limits)
	if fc != nil {
		conn.GatherWrites(fc)
	}
	s := newSession(ctx, h, conn)
	defer s.end()
	conn.OnAbort(s.onAbort)

	runErr := make(chan error, 1)
	conn.HandOffAfter(inlineBudget)
	go func() { runErr <- conn.Run(s.ctx, s.handle) }()

	h.helloMu.Lock()
	h.live = s
	err = h.sendHelloLocked(s, helloTimeout)
	h.helloMu.Unlock()
	if err != nil {
		conn.Close()
		<-runErr
		return false, &phaseError{lost: true, err: err}
	}

	timer := time.NewTimer(WelcomeTimeout)
	defer timer.Stop()
	welcome := s.welcomed
	for {
		select {
		case <-welcome:
			welcomed, welcome = true, nil // a nil channel never fires again
			timer.Stop()
			h.emit(Event{Kind: EventState, State: Connected, HostID: s.HostID()})
			h.log.Info("Connected", "host_id", s.HostID())
		case <-timer.C:
			conn.Close()
			<-runErr
			return false, fmt.Errorf("the hub sent no welcome within %s of hello", WelcomeTimeout)
		case err := <-runErr:
			if err == nil || ctx.Err() != nil {
				err = errors.New("connection closed")
			}
			return welcomed, &phaseError{lost: true, err: err}
		}
	}
}
