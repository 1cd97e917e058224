package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/mcpserver"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

type serveConfig struct {
	listen, apiKey, stateDir, defaultUser, surface string
	connectorToken                                 string
	allowOrigins, roots                            []string
	apiOrigins, apiHosts                           []string
	insecureNoAuth                                 bool
	opTimeout                                      time.Duration
}

func newServeCmd() *cobra.Command {
	var c serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the AIO-compatible file API (v1 and v2) over HTTP",
		Long: `Serve AIO Sandbox's file API (v1 and v2) and fsplane's extensions over HTTP.

Every flag can also be set with an environment variable: FSPLANE_LISTEN,
FSPLANE_ROOT (colon-separated), FSPLANE_API_KEY (or AIO_API_KEY),
FSPLANE_STATE_DIR, FSPLANE_DEFAULT_USER, FSPLANE_API_SURFACE.

The server binds loopback by default. Binding another address requires an
API key (or --insecure-no-auth). Paths are confined to the roots; use
--root / for AIO's whole-filesystem behaviour in a sandbox image.

Requests from web pages (an Origin header, or Sec-Fetch-Site cross-site or
same-site) are refused, since any page the user opens can reach a loopback
server; --allow-origin lets one origin in, with CORS. Without an API key,
requests must also be addressed to localhost or an IP address (a
DNS-rebinding page sends its own name); --allow-host adds a name. An
--api-key turns that check off; --insecure-no-auth keeps it only for
requests a browser marks as coming from a page (Sec-Fetch-Site).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), c, cmd.ErrOrStderr())
		},
	}
	cwd, _ := os.Getwd()
	defRoots := []string{cwd}
	if v := os.Getenv("FSPLANE_ROOT"); v != "" {
		defRoots = strings.Split(v, string(os.PathListSeparator))
	}
	f := cmd.Flags()
	f.StringVar(&c.listen, "listen", envOr("FSPLANE_LISTEN", "127.0.0.1:18091"), "address to listen on")
	f.StringArrayVar(&c.roots, "root", defRoots, "workspace root (repeatable; the first is the base for relative paths)")
	f.StringVar(&c.apiKey, "api-key", envOr("FSPLANE_API_KEY", os.Getenv("AIO_API_KEY")), "require this key (Bearer, x-api-key or ?api_key=)")
	stateDirFlag(f, &c.stateDir)
	f.StringVar(&c.defaultUser, "default-user", envOr("FSPLANE_DEFAULT_USER", os.Getenv("AIO_DEFAULT_USER")), "account that owns new files when a request names none")
	f.StringVar(&c.surface, "api-surface", envOr("FSPLANE_API_SURFACE", "full"), "full (v1 and v2) or v2")
	f.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow a non-loopback address without an API key")
	f.StringVar(&c.connectorToken, "connector-token", envOr("FSPLANE_CONNECTOR_TOKEN", ""), "token hosts (fsplane connect) authenticate with; default the API key; without either, no host can connect")
	f.StringArrayVar(&c.allowOrigins, "connector-allow-origin", nil, "browser origin allowed to connect hosts (repeatable; none by default)")
	f.StringArrayVar(&c.apiOrigins, "allow-origin", nil, "browser origin (scheme://host[:port], exact) allowed to call the API, with CORS (repeatable; by default web pages are refused)")
	f.StringArrayVar(&c.apiHosts, "allow-host", nil, "host name requests may be addressed to without an API key, besides localhost and IP addresses (repeatable)")
	f.DurationVar(&c.opTimeout, "op-timeout", hub.DefaultTimeout, "how long the hub waits for a host to answer an operation")
	return cmd
}

// checkListen refuses to expose an unauthenticated server beyond loopback.
func checkListen(addr, key string, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (use host:port, e.g. 127.0.0.1:18091)", addr, err)
	}
	if key != "" || insecure {
		return nil
	}
	if host == "localhost" {
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
	if c.surface != "full" && c.surface != "v2" {
		return &exitError{code: 2, err: fmt.Errorf("--api-surface %q: use full or v2", c.surface)}
	}
	if err := checkListen(c.listen, c.apiKey, c.insecureNoAuth); err != nil {
		return &exitError{code: 2, err: err}
	}
	for _, o := range c.apiOrigins {
		if _, err := httpapi.NormalizeOrigin(o); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--allow-origin: %v", err)}
		}
	}
	for _, h := range c.apiHosts {
		if _, err := httpapi.NormalizeHostName(h); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--allow-host: %v", err)}
		}
	}
	if c.stateDir == "" {
		var err error
		if c.stateDir, err = workspace.DefaultStateDir(); err != nil {
			return &exitError{code: 1, err: describe(err)}
		}
	}
	ws, err := openWorkspace(c.roots, c.stateDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	if c.defaultUser != "" {
		// Fail at start, not on the first write, when the account is wrong.
		if _, err := workspace.LookupOwner(c.defaultUser); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--default-user: %v", describe(err))}
		}
	}
	eng := ops.New(ws, ops.Options{Logger: log, DefaultUser: c.defaultUser})
	token := c.connectorToken
	if token == "" {
		token = c.apiKey
	}
	h := hub.New(hub.Options{Token: token, AllowedOrigins: c.allowOrigins, Timeout: c.opTimeout, Version: buildVersion(), Logger: log})
	defer h.Close()
	mcpSrv := mcpserver.New(eng, mcpserver.Options{Version: buildVersion(), Logger: log})
	defer mcpSrv.ServeHosts(h)()
	// InsecureNoAuth also turns off the Host check: the operator exposed
	// the server on a network where clients use names (sandbox:8080).
	api := httpapi.New(eng, httpapi.Options{APIKey: c.apiKey, Surface: c.surface, Version: buildVersion(), Logger: log, Hub: h,
		MCP:          mcpSrv.HTTPHandler(mcpserver.HTTPOptions{}),
		AllowOrigins: c.apiOrigins, AllowHosts: c.apiHosts, InsecureNoAuth: c.insecureNoAuth})
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listen on %s: %w", c.listen, err)}
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	// Open MCP event streams would hold Shutdown until its timeout.
	srv.RegisterOnShutdown(func() { _ = mcpSrv.Close() })
	// Watchers end with the server: their long polls and event streams
	// would otherwise keep Shutdown waiting.
	defer eng.Close()
	srv.RegisterOnShutdown(func() { _ = eng.Close() })
	log.Info("Serving", "addr", "http://"+ln.Addr().String(), "roots", strings.Join(ws.Roots(), ","),
		"auth", c.apiKey != "", "hosts", token != "", "surface", c.surface, "state_dir", c.stateDir, "version", buildVersion())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return &exitError{code: 1, err: err}
	case <-ctx.Done():
	}
	// In-flight requests (writes included) run to completion: Shutdown
	// waits for them, and commits are atomic, so nothing is torn.
	log.Info("Shutting down; finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: 1, err: fmt.Errorf("shutdown: %w", err)}
	}
	log.Info("Stopped")
	return nil
}
