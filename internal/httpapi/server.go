package httpapi

import (
	"context"
	"log/slog"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/ops"
)

// Options configure a Server. Zero values mean: no auth, both API
// surfaces, discard logs, no requests from web pages, and (without a key)
// only requests addressed to localhost or an IP address.
type Options struct {
	// APIKey, when set, is required on every non-public route. It also
	// turns off the Host check (see browserGuard): a rebinding page does
	// not know the key.
	APIKey string
	// AllowOrigins lists the browser origins (scheme://host[:port], see
	// NormalizeOrigin) whose requests are served, with CORS headers. Any
	// other request from a web page is refused, because a page can reach
	// a loopback server without the user knowing (see browserGuard).
	AllowOrigins []string
	// AllowHosts lists host names that requests may be addressed to (the
	// Host header) when no API key is set, besides localhost and IP
	// addresses; any other name may be a DNS-rebinding page's.
	AllowHosts []string
	// InsecureNoAuth records that the operator chose to serve without a
	// key beyond loopback (serve --insecure-no-auth). The Host check is
	// then skipped: on that network, clients reach the server by names
	// such as sandbox:8080. Requests from web pages are still refused.
	InsecureNoAuth bool
	// Surface is "full" (v1 and v2, the default) or "v2" (only /v2/*).
	Surface string
	// Version is reported by /health, /v2/sandbox and the OpenAPI document.
	Version string
	Logger  *slog.Logger
	// Hub, when set, accepts hosts on /v2/connector and serves the
	// /v2/hosts routes for them.
	Hub *hub.Hub
	// MCP, when set, serves the Model Context Protocol (streamable HTTP)
	// on /mcp, behind the same authentication and browser guard as the
	// API.
	MCP http.Handler
	// BodyIdleTimeout bounds each wait for the next part of a request
	// body (see cutIdleBodies); 0 means 60 s, negative means no bound.
	BodyIdleTimeout time.Duration
	// HostWriteTimeout bounds each write of a host download to its
	// client, so a client that stops reading is cut (see
	// Server.hostWriteTimeout); 0 means proto.IdleTimeout (30 s), the
	// connector's own bound on a consumer taking one chunk. Tests shorten
	// it.
	HostWriteTimeout time.Duration
	// Load, when set, is told of every request while it runs, except on
	// streaming routes (route.Stream): one open for hours is not work in
	// flight. fsplane serve passes its procs.Governor, which gives the
	// process more than one P only while two requests run at once.
	Load interface{ Request() (done func()) }
}

// Server is the HTTP front. It is safe for concurrent use.
type Server struct {
	eng     *ops.Engine
	hub     *hub.Hub
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	routes  []route
	started time.Time
	handler http.Handler
	// streams is cancelled by EndStreams; MCP event streams end with it.
	streams    context.Context
	endStreams context.CancelFunc
	docCache
}

// route is one registered endpoint and what the OpenAPI document says of
// it (see Server.responses for how failures are described).
type route struct {
	Method, Path string
	Summary      string
	Tag          string
	Query        reflect.Type // struct describing query parameters, or nil
	Params       []param      // parameters the Query struct does not hold
	Body         reflect.Type // JSON request body, or nil
	RawBody      string       // media type of a request body that is not JSON
	// Data is the envelope's data on success, or with Raw set to
	// application/json the whole body; nil for any.
	Data reflect.Type
	Raw  string // content type of a non-envelope response
	// Statuses are the failure statuses of an operation's errors, answered
	// in the envelope with the error as data. A route that runs an
	// operation lists them (other statuses are its "default"); a v1 route,
	// which answers those failures with 200 (FailOK), lists none.
	Statuses []int
	// FailOK: expected failures answer 200 with success:false and the
	// error as data, as AIO's v1 does.
	FailOK bool
	// ErrData is a failure's data when it is not client.FileError (Agent
	// Zero's text_editor answers its own result).
	ErrData reflect.Type
	// BareErrors: failures may also carry no data (data null), as AIO's
	// watch routes answer theirs.
	BareErrors bool
	// Conditional: served as http.ServeContent serves (the local download
	// route by it, the host's to the same rules), so Range and conditional
	// requests add 206, 304 and 412.
	Conditional bool
	// Stream: a request that may stay open indefinitely (an event stream,
	// a long poll, a host's WebSocket), not counted as work in flight
	// (see Options.Load).
	Stream bool
}

// param is an OpenAPI parameter outside a Query struct (a header, or a
// query parameter that several routes share).
type param struct {
	Name, In, Type, Description string
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// New returns a server over eng.
func New(eng *ops.Engine, opts Options) *Server {
	if opts.Surface == "" {
		opts.Surface = "full"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{eng: eng, hub: opts.Hub, opts: opts, log: log.With("component", "http"), mux: http.NewServeMux(), started: time.Now()}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	s.metaRoutes()
	s.v2Routes()
	s.fsRoutes()
	s.searchRoutes()
	s.transferRoutes()
	s.watchRoutes()
	if opts.Hub != nil {
		s.hostRoutes()
	}
	if opts.MCP != nil {
		// POST answers JSON (or an event stream when the client accepts
		// one); GET is the session's event stream.
		for _, mr := range [][2]string{{"POST", "application/json"}, {"GET", "text/event-stream"}, {"DELETE", "application/json"}} {
			m, raw := mr[0], mr[1]
			h := opts.MCP.ServeHTTP
			if m == "GET" {
				h = s.endWithStreams(h)
			}
			s.handle(route{Method: m, Path: "/mcp", Summary: "Model Context Protocol, streamable HTTP (JSON-RPC; GET opens the event stream, DELETE ends a session)", Tag: "mcp", Raw: raw, Stream: m == "GET"}, h)
		}
	}
	if opts.Surface != "v2" {
		s.v1Routes()
	}
	// The browser guard runs first, on every route (MCP included): a
	// request a web page made is refused whether or not it has the key.
	idle := opts.BodyIdleTimeout
	if idle == 0 {
		idle = defaultBodyIdle
	}
	s.handler = logRequests(s.log, guardBrowsers(opts, s.log, requireKey(opts.APIKey, cutIdleBodies(idle, http.HandlerFunc(s.dispatch)))))
	return s
}

// EndStreams ends the MCP event streams (GET /mcp) open now, and any
// opened later, leaving the sessions and the calls in flight on them
// alone. Register it with http.Server.RegisterOnShutdown: an open stream
// would hold Shutdown until its grace ran out, and closing the MCP
// sessions instead cut the calls still running, which a stop lets finish.
func (s *Server) EndStreams() { s.endStreams() }

// endWithStreams runs h with a request context that EndStreams also ends.
func (s *Server) endWithStreams(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.streams, cancel)()
		h(w, r.WithContext(ctx))
	}
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handle registers h for rt; every route goes through here so the OpenAPI
// document lists exactly what is served.
func (s *Server) handle(rt route, h http.HandlerFunc) {
	s.routes = append(s.routes, rt)
	if load := s.opts.Load; load != nil && !rt.Stream {
		inner := h
		h = func(w http.ResponseWriter, r *http.Request) {
			defer load.Request()()
			inner(w, r)
		}
	}
	s.mux.HandleFunc(rt.Method+" "+rt.Path, h)
}

// Routes returns "METHOD /path" for every registered route.
func (s *Server) Routes() []string {
	out := make([]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = r.Method + " " + r.Path
	}
	return out
}

// dispatch routes r, answering unknown routes and methods in the envelope.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, envelope{Success: false, Message: "Method Not Allowed: use " + strings.Join(allow, " or ") + " " + r.URL.Path})
		return
	}
	writeJSON(w, http.StatusNotFound, envelope{Success: false, Message: "Not Found: " + r.Method + " " + r.URL.Path + " (GET /openapi.json lists the routes)"})
}
