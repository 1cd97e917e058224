package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/mcpserver"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/sendq"
	"github.com/fsplane/fsplane/internal/workspace"
)

type serveConfig struct {
	listen, apiKey, stateDir, defaultUser, surface string
	connectorToken                                 string
	tlsCert, tlsKey                                string
	allowOrigins, roots                            []string
	apiOrigins, apiHosts                           []string
	insecureNoAuth, latencyTuning                  bool
	opTimeout, grace, idle, spinWait               time.Duration
	maxConns                                       int
	// source names where a flag's value came from, for errors (see
	// flagSource).
	source func(flag string) string
}

// defaultGrace is how long in-flight requests may run once a stop was
// asked for: enough for a write or an upload under way to finish, short
// enough that a client that stalled does not hold the stop up.
const defaultGrace = 10 * time.Second

// defaultSpinWait bounds the hub's poll for a host's answer (see
// connector.SpinConn): a host on the same machine or network answers a
// small read within it; hosts whose answers take longer are never spun for.
const defaultSpinWait = 300 * time.Microsecond

// maxSpinWait caps --spin-wait: past a millisecond, sleeping costs less
// than the CPU spent polling.
const maxSpinWait = time.Millisecond

// defaultIdle is how long a keep-alive connection may sit between
// requests (see serve's http.Server).
const defaultIdle = 2 * time.Minute

func newServeCmd() *cobra.Command {
	var c serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the AIO-compatible file API (v1 and v2) over HTTP or HTTPS",
		Long: `Serve AIO Sandbox's file API (v1 and v2) and fsplane's extensions over HTTP
or HTTPS.

The server binds loopback by default. Binding another address requires an
API key (or --insecure-no-auth). Paths are confined to the roots; use
--root / for AIO's whole-filesystem behaviour in a sandbox image.

--tls-cert and --tls-key (both, or neither) serve HTTPS instead of HTTP,
TLS 1.2 or later, for every route: the API, /mcp and /v2/connector (wss://).
A server reachable beyond loopback should use them, or sit behind a proxy
that terminates TLS: the API key and the connector token travel in request
headers, and file contents in the bodies. Started beyond loopback over plain
HTTP, or with --insecure-no-auth, the server warns at every start. fsplane
connect verifies the certificate: for a self-signed one, pass its file to
connect's --ca-file.

Requests from web pages (an Origin header, or Sec-Fetch-Site cross-site or
same-site) are refused, since any page the user opens can reach a loopback
server; --allow-origin lets one origin in, with CORS. Without an API key,
requests must also be addressed to localhost or an IP address (a
DNS-rebinding page sends its own name); --allow-host adds a name. An
--api-key turns that check off; --insecure-no-auth keeps it only for
requests a browser marks as coming from a page (Sec-Fetch-Site).

At most --max-connections connections (requests, event streams, hosts'
WebSockets) are open at once; further clients wait to be accepted until one
closes. This keeps the server's descriptors for its files when many clients,
or slow ones, connect; keep it well under the open-file limit (ulimit -n).

SIGINT or SIGTERM stops the server: it stops accepting connections, lets
the requests in flight finish for up to --shutdown-grace, then closes the
connections still open (an upload cut short leaves nothing behind) and
exits with status 0. A second SIGINT or SIGTERM cuts the grace short and
exits with 128 plus the signal's number (130, 143).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.source = func(flag string) string { return flagSource(cmd, flag) }
			return serve(cmd.Context(), c, cmd.ErrOrStderr())
		},
	}
	cwd, _ := os.Getwd()
	f := cmd.Flags()
	f.StringVar(&c.listen, "listen", "127.0.0.1:18091", "address to listen on, host:port (0.0.0.0:PORT for every interface)")
	f.StringArrayVar(&c.roots, "root", []string{cwd}, "workspace root (repeatable; the first is the base for relative paths)")
	f.StringVar(&c.apiKey, "api-key", "", "require this key (Bearer, x-api-key or ?api_key=)")
	stateDirFlag(f, &c.stateDir)
	f.StringVar(&c.defaultUser, "default-user", "", "account that owns new files when a request names none")
	f.StringVar(&c.surface, "api-surface", "full", "full (v1 and v2) or v2")
	f.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow a non-loopback address without an API key")
	f.StringVar(&c.connectorToken, "connector-token", "", "token hosts (fsplane connect) authenticate with; default the API key; without either, no host can connect")
	f.StringArrayVar(&c.allowOrigins, "connector-allow-origin", nil, "browser origin allowed to connect hosts (repeatable; none by default)")
	f.StringArrayVar(&c.apiOrigins, "allow-origin", nil, "browser origin (scheme://host[:port], exact) allowed to call the API, with CORS (repeatable; by default web pages are refused)")
	f.StringArrayVar(&c.apiHosts, "allow-host", nil, "host name requests may be addressed to without an API key, besides localhost and IP addresses (repeatable)")
	f.DurationVar(&c.opTimeout, "op-timeout", hub.DefaultTimeout, "how long the hub waits for a host to answer an operation")
	f.DurationVar(&c.spinWait, "spin-wait", defaultSpinWait, "how long the hub polls a host's connection for an answer before it sleeps (lower latency for hosts that answer within it, for CPU); 0 turns it off")
	f.DurationVar(&c.grace, "shutdown-grace", defaultGrace, "on SIGINT or SIGTERM, how long requests in flight may run before their connections are closed")
	f.DurationVar(&c.idle, "idle-timeout", defaultIdle, "close a keep-alive connection idle this long between requests (never one whose request, stream or WebSocket runs)")
	f.IntVar(&c.maxConns, "max-connections", defaultMaxConns, "connections open at once (hosts' included); more wait to be accepted; 0 means no cap")
	f.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate (then any intermediates) to serve HTTPS with; needs --tls-key")
	f.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	latencyTuningFlag(f, &c.latencyTuning, "its monitor thread on a steady tick, and one CPU while at most one request runs")
	bindEnv(f, "listen", "FSPLANE_LISTEN")
	bindEnv(f, "root", "FSPLANE_ROOT")
	bindEnv(f, "api-key", "FSPLANE_API_KEY", "AIO_API_KEY")
	bindEnv(f, "default-user", "FSPLANE_DEFAULT_USER", "AIO_DEFAULT_USER")
	bindEnv(f, "api-surface", "FSPLANE_API_SURFACE")
	bindEnv(f, "connector-token", "FSPLANE_CONNECTOR_TOKEN")
	bindEnv(f, "tls-cert", "FSPLANE_TLS_CERT")
	bindEnv(f, "tls-key", "FSPLANE_TLS_KEY")
	cmd.Long += "\n\n" + envHelp(f)
	return cmd
}

// checkListen refuses an address that is not host:port, and to expose an
// unauthenticated server beyond loopback. source names where addr came
// from ("--listen"). The port is checked here, with the form, so that
// every malformed address is a usage error (listen would refuse a port
// past 65535 only later, as a failure at run time).
func checkListen(source, addr, key string, insecure bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("%s %q: %v (use host:port with a port from 0 to 65535, e.g. 127.0.0.1:18091)", source, addr, err)
	}
	if key != "" || insecure {
		return nil
	}
	if strings.EqualFold(host, "localhost") { // names are case-insensitive
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	what := host
	if host == "" {
		what = "every interface"
	}
	return fmt.Errorf("refusing to listen on %s without authentication: set --api-key (or FSPLANE_API_KEY), or pass --insecure-no-auth if the network is trusted", what)
}

func serve(ctx context.Context, c serveConfig, stderr interface{ Write([]byte) (int, error) }) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if c.source == nil {
		c.source = func(flag string) string { return "--" + flag }
	}
	if c.surface != "full" && c.surface != "v2" {
		return &exitError{code: 2, err: fmt.Errorf("%s %q: use full or v2", c.source("api-surface"), c.surface)}
	}
	if c.idle <= 0 {
		return &exitError{code: 2, err: fmt.Errorf("--idle-timeout %s: must be positive", c.idle)}
	}
	if c.maxConns < 0 {
		return &exitError{code: 2, err: fmt.Errorf("--max-connections %d: must not be negative (0 means no cap)", c.maxConns)}
	}
	if c.grace < 0 {
		return &exitError{code: 2, err: fmt.Errorf("--shutdown-grace %s: must not be negative", c.grace)}
	}
	if c.spinWait < 0 || c.spinWait > maxSpinWait {
		return &exitError{code: 2, err: fmt.Errorf("--spin-wait %s: use 0 (off) to %s", c.spinWait, maxSpinWait)}
	}
	if c.opTimeout <= 0 {
		return &exitError{code: 2, err: fmt.Errorf("--op-timeout %s: must be positive", c.opTimeout)}
	}
	for _, s := range []struct {
		flag  string
		value *string
	}{{"api-key", &c.apiKey}, {"connector-token", &c.connectorToken}} {
		v, err := headerSecret(c.source(s.flag), *s.value)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		*s.value = v
	}
	if err := checkListen(c.source("listen"), c.listen, c.apiKey, c.insecureNoAuth); err != nil {
		return &exitError{code: 2, err: err}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		set, unset := c.source("tls-cert"), "--tls-key"
		if c.tlsCert == "" {
			set, unset = c.source("tls-key"), "--tls-cert"
		}
		return &exitError{code: 2, err: fmt.Errorf("%s is set without %s: pass both (the certificate and its private key) to serve HTTPS, or neither to serve HTTP", set, unset)}
	}
	for _, o := range c.apiOrigins {
		if _, err := httpapi.NormalizeOrigin(o); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--allow-origin: %v", err)}
		}
	}
	// The hub compares a WebSocket's Origin header as browsers send it
	// (lower case, no default port): a value written otherwise would
	// silently never match.
	for i, o := range c.allowOrigins {
		n, err := httpapi.NormalizeOrigin(o)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--connector-allow-origin: %v", err)}
		}
		c.allowOrigins[i] = n
	}
	for _, h := range c.apiHosts {
		if _, err := httpapi.NormalizeHostName(h); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--allow-host: %v", err)}
		}
	}
	// Before any file is read: the restart would read it again.
	keepMonitorAwake(ctx, c.latencyTuning, stderr)
	if c.stateDir == "" {
		var err error
		if c.stateDir, err = workspace.DefaultStateDir(); err != nil {
			return &exitError{code: 1, err: describe(err)}
		}
	}
	var tlsConf *tls.Config
	var leaf *x509.Certificate
	if c.tlsCert != "" {
		var err error
		if tlsConf, leaf, err = serverTLS(c.source("tls-cert"), c.tlsCert, c.source("tls-key"), c.tlsKey); err != nil {
			return &exitError{code: 1, err: err}
		}
		if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
			log.Warn("The --tls-cert certificate is not valid now; clients will refuse it",
				"file", c.tlsCert, "not_before", leaf.NotBefore, "not_after", leaf.NotAfter)
		}
	}
	ws, err := openWorkspace(c.roots, sameSource(c.source("root")), c.stateDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	if c.defaultUser != "" {
		// Fail at start, not on the first write, when the account is wrong.
		if _, err := workspace.LookupOwner(c.defaultUser); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("%s: %v", c.source("default-user"), describe(err))}
		}
	}
	gov := governor(c.latencyTuning)
	defer gov.Close()
	eopts := ops.Options{Logger: log, DefaultUser: c.defaultUser}
	load := governed(gov, &eopts)
	eng := ops.New(ws, eopts)
	token := c.connectorToken
	if token == "" {
		token = c.apiKey
	}
	h := hub.New(hub.Options{Token: token, AllowedOrigins: c.allowOrigins, Timeout: c.opTimeout, SpinWait: c.spinWait, Version: buildVersion(), Logger: log})
	defer h.Close()
	mcpSrv := mcpserver.New(eng, mcpserver.Options{Version: buildVersion(), Logger: log})
	defer mcpSrv.ServeHosts(h)()
	// InsecureNoAuth also turns off the Host check: the operator exposed
	// the server on a network where clients use names (sandbox:8080).
	api := httpapi.New(eng, httpapi.Options{APIKey: c.apiKey, Surface: c.surface, Version: buildVersion(), Logger: log, Hub: h,
		MCP:          mcpSrv.HTTPHandler(mcpserver.HTTPOptions{HostChecked: true}), // by the browser guard
		AllowOrigins: c.apiOrigins, AllowHosts: c.apiHosts, InsecureNoAuth: c.insecureNoAuth, Load: load})
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		err = fmt.Errorf("listen on %s: %w", c.listen, err)
		var dnsErr *net.DNSError
		switch {
		case errors.Is(err, syscall.EADDRINUSE):
			err = fmt.Errorf("%w\nHint: another process listens there; stop it or choose another address with --listen", err)
		case errors.Is(err, syscall.EADDRNOTAVAIL), errors.As(err, &dnsErr):
			err = fmt.Errorf("%w\nHint: --listen must name an address of this machine: 127.0.0.1:PORT for it alone, 0.0.0.0:PORT for every interface", err)
		}
		return &exitError{code: 1, err: err}
	}
	// Slow readers and slow links: see sendq.
	ln = sendq.Listener(ln)
	if c.maxConns > 0 {
		if lim, ok := openFileLimit(); ok && uint64(c.maxConns)+fdReserve > lim {
			log.Warn("The open-file limit leaves little room beyond --max-connections; raise it (ulimit -n) or lower --max-connections",
				"max_connections", c.maxConns, "open_file_limit", lim)
		}
		ln = limitConns(ln, c.maxConns, func() {
			log.Warn("Connection limit reached; new connections wait until one closes", "max_connections", c.maxConns)
		})
	}
	conns := &connTracker{}
	// IdleTimeout closes keep-alive connections that sit between requests
	// (it never applies while a request, an event stream, a long poll or
	// a hijacked WebSocket runs): without it every client that keeps
	// connections open holds a descriptor forever, and past the process's
	// limit accept fails for everyone.
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: c.idle, ConnState: conns.state,
		// net/http's own reports (a failed TLS handshake, an accept
		// error) in the log's format, not the log package's on stderr.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	scheme := "http"
	if tlsConf != nil {
		// HTTP/1.1 only, as over plain HTTP (a non-nil TLSNextProto keeps
		// net/http from adding h2): the hub's WebSocket upgrade needs it,
		// and shutdown relies on a connection's close coming after its
		// handler returned (connTracker), which HTTP/2's streams do not
		// promise. ReadHeaderTimeout also bounds the handshake.
		srv.TLSConfig = tlsConf
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		scheme = "https"
	}
	// Open MCP event streams would hold Shutdown until its timeout; their
	// sessions close once it returns, not before, so that the calls in
	// flight on them finish within the grace as other requests do.
	srv.RegisterOnShutdown(api.EndStreams)
	defer mcpSrv.Close()
	// Watchers end with the server: their long polls and event streams
	// would otherwise keep Shutdown waiting.
	defer eng.Close()
	srv.RegisterOnShutdown(func() { _ = eng.Close() })
	addr, everywhere, loopback := localURL(scheme, ln.Addr(), leaf)
	// The refusal of checkListen has an override; what it lets through
	// beyond loopback is said loudly, at every start (never the key), and
	// before the start line, which the tests wait for.
	if !loopback {
		if c.apiKey == "" {
			log.Warn("No authentication (--insecure-no-auth): anyone who can reach this server can read, change and delete the files under the roots; set --api-key unless every client on the network is trusted")
		}
		if tlsConf == nil {
			exposed := "file contents"
			if c.apiKey != "" {
				exposed = "the API key, the connector token and file contents"
			} else if token != "" {
				exposed = "the connector token and file contents"
			}
			log.Warn("Serving plain HTTP beyond loopback: " + exposed + " cross the network unencrypted; pass --tls-cert and --tls-key, or put a proxy that terminates TLS in front")
		}
	}
	start := []any{"addr", addr}
	if everywhere {
		start = append(start, "interfaces", "all")
	}
	log.Info("Serving", append(start, "roots", strings.Join(ws.Roots(), ","),
		"auth", c.apiKey != "", "hosts", token != "", "surface", c.surface, "state_dir", c.stateDir, "version", buildVersion())...)
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			errc <- srv.ServeTLS(ln, "", "") // the pair is in srv.TLSConfig
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return &exitError{code: 1, err: err}
	case <-ctx.Done():
	}
	cut := func() { h.Close(); _ = mcpSrv.Close() }
	if err := shutdown(srv, conns, cut, c.grace, forcedStop(ctx), log); err != nil {
		return &exitError{code: 1, err: err}
	}
	log.Info("Stopped")
	return nil
}

// localURL returns the URL of a server listening on addr, one a client
// on this machine can use, and whether addr is every interface or
// loopback only. "[::]" and "0.0.0.0" are not addresses to connect to:
// 127.0.0.1 (or, with TLS, a name from the certificate) is shown instead. On every interface with TLS, leaf (the server's
// certificate) decides the name: a client checks the URL's host against
// it, so 127.0.0.1 is shown only when the certificate names it (or names
// nothing usable), else localhost when it names that, else its first DNS
// name (not a wildcard), else its first IP address.
func localURL(scheme string, addr net.Addr, leaf *x509.Certificate) (url string, everywhere, loopback bool) {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return scheme + "://" + addr.String(), false, false
	}
	shown := *ta // keeps an IPv6 zone (fe80::1%eth0)
	if ta.IP.IsUnspecified() {
		// Go listens on every interface with one dual-stack socket
		// ("[::]"), which IPv4's loopback reaches too.
		everywhere, shown.IP, shown.Zone = true, net.IPv4(127, 0, 0, 1), ""
		if name := certName(leaf); name != "" {
			return scheme + "://" + net.JoinHostPort(name, strconv.Itoa(ta.Port)), true, false
		}
	}
	return scheme + "://" + shown.String(), everywhere, ta.IP.IsLoopback()
}

// certName is the host name localURL shows for a server on every
// interface with certificate leaf, or "" to show 127.0.0.1.
func certName(leaf *x509.Certificate) string {
	if leaf == nil || leaf.VerifyHostname("127.0.0.1") == nil {
		return ""
	}
	if leaf.VerifyHostname("localhost") == nil {
		return "localhost"
	}
	for _, n := range leaf.DNSNames {
		if !strings.HasPrefix(n, "*.") {
			return n
		}
	}
	if len(leaf.IPAddresses) > 0 {
		return leaf.IPAddresses[0].String()
	}
	return ""
}

// handlerWait bounds the wait for handlers to return once their
// connections are closed: they fail at their next read or write, so this
// is only reached by one stuck elsewhere.
const handlerWait = 5 * time.Second

// shutdown stops srv, which must be serving. It stops accepting at once
// and lets the requests in flight run for up to grace: writes complete,
// and commits are atomic, so nothing is torn. Then it closes the
// connections still open and calls cut (the hub's hosts, the MCP
// sessions), which fails the reads and writes of their requests: a
// stalled upload removes its part file, as for any client that goes away. Last it waits for their handlers to
// return, so that the process does not exit under them. forced (the
// user's second signal) ends the grace at once.
//
// Closing connections after the grace is part of an orderly stop, not a
// failure: only handlers that do not return make it one.
func shutdown(srv *http.Server, conns *connTracker, cut func(), grace time.Duration, forced <-chan struct{}, log *slog.Logger) error {
	log.Info("Shutting down; finishing in-flight requests", "grace", grace)
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-forced:
			cancel()
		case <-gctx.Done():
		}
	}()
	if err := srv.Shutdown(gctx); err == nil {
		return nil
	}
	select {
	case <-forced:
		log.Warn("Stop forced; closing the connections of requests still running", "connections", conns.open())
	default:
		log.Warn("Grace period over; closing the connections of requests still running", "connections", conns.open())
	}
	_ = srv.Close()
	cut()
	if !conns.wait(handlerWait) {
		return fmt.Errorf("%d requests did not end within %s of their connections being closed; exiting anyway", conns.open(), handlerWait)
	}
	return nil
}

// connTracker counts an http.Server's connections (its ConnState hook)
// that are neither closed nor hijacked. The server reports a connection
// closed only once its handler has returned, so a count of zero after
// Server.Close means no handler is left running. Hijacked connections
// (the hub's WebSockets) are the hub's to close.
type connTracker struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced at every change of n
}

func (t *connTracker) state(_ net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s {
	case http.StateNew:
		t.n++
	case http.StateHijacked, http.StateClosed:
		t.n--
	default:
		return
	}
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

func (t *connTracker) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// wait waits up to d for the count to reach zero, and reports whether it
// did.
func (t *connTracker) wait(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		if t.n == 0 {
			t.mu.Unlock()
			return true
		}
		if t.changed == nil {
			t.changed = make(chan struct{})
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}
