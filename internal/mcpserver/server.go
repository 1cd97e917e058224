package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
)

// Options configure a Server. The zero value serves every tool, read and
// write, under the name "fsplane".
type Options struct {
	// ReadOnly leaves the mutating tools (write, edit, patch, move, delete,
	// undo) out of tools/list altogether. Pair it with an engine opened
	// with ops.Options{ReadOnly: true}, which refuses writes whatever the
	// front does.
	ReadOnly bool
	// Name and Version identify the server in the initialize result;
	// defaults "fsplane" and "dev".
	Name, Version string
	// IgnoreClientRoots serves the whole allowed set even to clients that
	// advertise roots.
	IgnoreClientRoots bool
	// Logger receives the SDK's and the server's logs (never file
	// contents). Nil discards.
	Logger *slog.Logger
}

// Server is an MCP server over one ops engine. Create it with New, then
// serve it with Run (one connection, e.g. stdio) or HTTPHandler (many
// sessions over streamable HTTP). It is safe for concurrent use.
type Server struct {
	eng    *ops.Engine
	opts   Options
	log    *slog.Logger
	sdkLog *slog.Logger // opts.Logger for the SDK (see sdkLogger)
	mcp    *mcp.Server

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session

	remote *remote // set by ServeHosts
}

// rootsTimeout bounds the roots/list request a tool call may wait for.
const rootsTimeout = 10 * time.Second

// New returns a server whose tools run on eng. The server does not own
// eng: the caller closes its workspace after the server's last use.
func New(eng *ops.Engine, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "fsplane"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{eng: eng, opts: opts, log: log.With("component", "mcp"), sessions: map[*mcp.ServerSession]*session{}}
	s.sdkLog = sdkLogger(opts.Logger)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "fsplane file tools", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: instructions(opts.ReadOnly),
			Logger:       s.sdkLog,
			// Tools only: no logging capability, and tools/list_changed
			// advertised even before the first tool is added.
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
			//lint:ignore SA1019 roots are honoured on the protocol versions served (see roots.go)
			RootsListChangedHandler:   s.rootsChanged,
			SupportedProtocolVersions: sessionProtocolVersions(),
		})
	s.mcp.AddReceivingMiddleware(errorMeta)
	s.mcp.AddReceivingMiddleware(bigTextResults) // outermost: sees the final result
	s.addLocalTools()
	return s
}

// statelessProtocol is the first MCP version without sessions (SEP-2575)
// and with roots deprecated (SEP-2577).
const statelessProtocol = "2026-07-28"

// sessionProtocolVersions are the protocol versions the server speaks: the
// ones with sessions. fsplane's MCP front is stateful by design — a
// session's reads are what let it edit by line numbers (DESIGN.md §5), and
// its roots narrow what it may touch — and from 2026-07-28 on every HTTP
// request is a session of its own. Clients that prefer 2026-07-28 fall
// back to the initialize handshake, which every SDK keeps.
func sessionProtocolVersions() []string {
	var vs []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < statelessProtocol {
			vs = append(vs, v)
		}
	}
	return vs
}

// MCP returns the underlying go-sdk server, e.g. to connect a transport
// directly (tests use mcp.NewInMemoryTransports).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Engine returns the engine the local tools run on.
func (s *Server) Engine() *ops.Engine { return s.eng }

// Run serves one connection (e.g. StdioTransport) until the client
// disconnects, or ctx ends, when it returns ctx's error. It is the SDK's
// Server.Run without its log lines, one of which is an ERROR for a stop
// that was asked for ("server run cancelled").
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		ss.Close()
		<-ended
		return ctx.Err()
	}
}

// sdkLogger returns the logger the SDK logs to: l, with the SDK's records
// below WARN logged at DEBUG. At INFO the SDK narrates every session
// ("server run start", "server connecting", "session_id=\"\"" on stdio),
// which says nothing to an operator; its warnings and errors still show,
// and --log-level debug shows the rest. Nil discards.
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(quietHandler{l.Handler()})
}

// quietHandler logs records below WARN at DEBUG (see sdkLogger).
type quietHandler struct{ h slog.Handler }

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, quieter(l))
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if l := quieter(r.Level); l != r.Level {
		r = r.Clone()
		r.Level = l
	}
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler { return quietHandler{q.h.WithAttrs(as)} }
func (q quietHandler) WithGroup(name string) slog.Handler    { return quietHandler{q.h.WithGroup(name)} }

func quieter(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

// Close ends every connected session (their open streams included), so
// an http.Server's Shutdown need not wait for long-lived MCP streams. The
// server stays usable: clients may connect again.
func (s *Server) Close() error {
	var sessions []*mcp.ServerSession
	for ss := range s.mcp.Sessions() {
		sessions = append(sessions, ss)
	}
	var first error
	for _, ss := range sessions {
		if err := ss.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// HTTPOptions configure HTTPHandler. The zero value is the default.
type HTTPOptions struct {
	// SessionTimeout closes sessions idle for this long (and forgets their
	// read state); 0 means 30 minutes, negative means never.
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions open at once; 0 means 1024. A new
	// session past it closes the one least recently used, so clients
	// that open sessions and walk away cost a bounded amount, and never
	// lock out the next client.
	MaxSessions int
	// HostChecked says the server that mounts the handler checks Host
	// headers against DNS rebinding itself, with its own rules (fsplane
	// serve's browser guard: off with an API key, --allow-host names): the
	// handler's loopback-only check is then off, so that a name the
	// server allows (a TLS proxy on the same machine that keeps Host)
	// reaches /mcp as it reaches every other route.
	HostChecked bool
}

// defaultMaxSessions is HTTPOptions.MaxSessions' default: each session
// holds two goroutines and its read state (tens of KB).
const defaultMaxSessions = 1024

// HTTPHandler serves MCP's streamable HTTP transport (stateful: each
// session has an Mcp-Session-Id, which is its freshness caller). Mount it
// at /mcp behind the same authentication as the rest of the API; the
// handler itself checks none. It rejects requests that reach a loopback
// address with a non-loopback Host header (DNS rebinding; unless
// HTTPOptions.HostChecked), and calls whose
// id the SDK would answer as another (see screenIDs).
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = 30 * time.Minute
	case timeout < 0:
		timeout = 0
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: timeout, Logger: s.sdkLog, DisableLocalhostProtection: opts.HostChecked,
			// A message may be as long on /mcp as on stdio: the same
			// tools take the same calls (the SDK's default is 4 MiB).
			MaxRequestBodyBytes: StdioMaxLine})
	max := opts.MaxSessions
	if max <= 0 {
		max = defaultMaxSessions
	}
	lim := &sessionLimit{srv: s, max: max, seen: map[string]*sessionUse{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !screenIDs(w, r) {
			return
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			rec := &statusRecorder{ResponseWriter: w}
			end, closing := lim.begin(id, r.Method != http.MethodGet)
			if closing {
				// Chosen to make room: a call let in now would be cut.
				http.Error(w, "session closed to make room for a new one: initialize a new session", http.StatusNotFound)
				return
			}
			defer func() { // also when the handler panics (net/http recovers)
				var answered time.Time
				if rec.status != http.StatusAccepted {
					answered = rec.wrote
				}
				end(answered)
			}()
			h.ServeHTTP(rec, r)
			return
		}
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		// A new session: one at a time, so two cannot both find room.
		lim.create.Lock()
		defer lim.create.Unlock()
		lim.makeRoom()
		h.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			lim.add(id)
		}
	})
}

// sessionLimit keeps the streamable HTTP sessions under max by closing
// the least recently used when a new one starts. A session with a call in
// progress is never closed. Its GET event stream does not count as use,
// not even its start: SDK clients open one on their own, at a moment of
// their choosing after the session begins, and keep it for the session's
// whole life, called or not — a client that only holds its stream open is
// the one to close first.
type sessionLimit struct {
	srv    *Server
	max    int
	create sync.Mutex // held while a new session is made
	mu     sync.Mutex
	seen   map[string]*sessionUse // by session ID: only sessions this handler made
}

type sessionUse struct {
	last    time.Time // when a request on it last began or ended
	busy    int       // requests in progress
	closing bool      // chosen by makeRoom: no request is let in any more
}

// add records a session just made.
func (l *sessionLimit) add(id string) {
	l.mu.Lock()
	l.seen[id] = &sessionUse{last: time.Now()}
	l.mu.Unlock()
}

// begin marks a POST on session id (an ID the handler made; others, which
// the SDK refuses, are not recorded) as use, and returns its end; until
// then (busy) the session is not closed. A GET (the event stream) is not
// use (see sessionLimit). end(answered) counts the moment the answer was
// written as use too, not the moment the handler returned: the client may
// have the answer and be calling on another session by then, and this
// one would look the newer. A POST the SDK answers 202 (a notification,
// or the client's answer to a request of ours, such as roots/list during
// a call) counts by its start alone (answered is zero): the SDK writes
// that 202 after passing the message on, so possibly after the call it
// unblocked has answered.
//
// closing reports a session makeRoom chose, which is being closed: the
// request must not reach it (end is then nil).
func (l *sessionLimit) begin(id string, call bool) (end func(answered time.Time), closing bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.seen[id]
	if u != nil && u.closing {
		return nil, true
	}
	if u == nil || !call {
		return func(time.Time) {}, false
	}
	u.last = time.Now()
	u.busy++
	return func(answered time.Time) {
		l.mu.Lock()
		u.busy--
		if answered.After(u.last) {
			u.last = answered
		}
		l.mu.Unlock()
	}, false
}

// statusRecorder remembers the status the SDK answered with and when it
// last wrote. Unwrap lets the SDK's http.ResponseController reach the
// connection (it flushes event streams through it).
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  time.Time
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.wrote = time.Now()
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.wrote = time.Now()
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// makeRoom closes the least recently used idle sessions until a new one
// fits, and forgets the sessions that have ended. The sessions to close
// are chosen and marked closing under the lock that requests take to
// begin, so none can start on them between the choice and the close.
func (l *sessionLimit) makeRoom() {
	type candidate struct {
		ss   *mcp.ServerSession
		u    *sessionUse
		last time.Time // u.last, read under the lock
	}
	var idle []candidate
	open := 0
	l.mu.Lock()
	live := make(map[string]*sessionUse, len(l.seen))
	for ss := range l.srv.mcp.Sessions() {
		u := l.seen[ss.ID()]
		if u == nil {
			continue // not this handler's (stdio, in-memory), or made this instant
		}
		live[ss.ID()] = u
		if u.closing {
			continue // on its way out
		}
		open++
		if u.busy == 0 {
			idle = append(idle, candidate{ss, u, u.last})
		}
	}
	l.seen = live
	if open < l.max {
		l.mu.Unlock()
		return
	}
	slices.SortFunc(idle, func(a, b candidate) int { return a.last.Compare(b.last) })
	idle = idle[:min(len(idle), open-l.max+1)]
	for _, c := range idle {
		c.u.closing = true
	}
	l.mu.Unlock()
	for _, c := range idle {
		l.srv.log.Info("MCP session closed to make room for a new one", "max_sessions", l.max, "idle", time.Since(c.last).Round(time.Second))
		_ = c.ss.Close()
	}
}

// NewHTTPHandler is New(eng, opts).HTTPHandler(HTTPOptions{}): the /mcp
// handler for a daemon that adds no tools of its own.
func NewHTTPHandler(eng *ops.Engine, opts Options) http.Handler {
	return New(eng, opts).HTTPHandler(HTTPOptions{})
}
