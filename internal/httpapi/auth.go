package httpapi

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/fsplane/fsplane/internal/bearer"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/refuse"
)

// publicPaths answer without a key: probes and the API description.
var publicPaths = map[string]bool{
	"/": true, "/health": true, "/v1/ping": true,
	"/openapi.json": true, "/v1/openapi.json": true, "/v2/openapi.json": true,
}

// selfAuthenticated paths check their own credentials: the connector
// endpoint takes the connector token, which may differ from the API key.
var selfAuthenticated = map[string]bool{"/v2/connector": true}

// requireKey rejects requests without the API key (when one is set) before
// any handler runs, WebSocket upgrades included. The key is accepted as
// "Authorization: Bearer", "x-api-key" or "?api_key=", compared in
// constant time, and never logged (see logRequests).
//
// The refusal is AIO's (401, success false, message "Unauthorized", which
// AIO clients check) with fsplane's error data and a hint added, as every
// other failure has: a caller told only "Unauthorized" cannot tell a
// missing key from a wrong one, nor where the key comes from. Neither
// names the key the server holds nor echoes the one that was sent.
//
// The refusal closes the connection without waiting for the request's
// body (see package refuse), and so does a public path's answer to a
// request without the key: otherwise anyone who can reach the server could
// hold its connections open without the key — with slow bodies, or with a
// public request every idle timeout on each of --max-connections
// keep-alive connections, locking every agent and host out.
func requireKey(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	want := []byte(key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case selfAuthenticated[r.URL.Path] || keyMatches(r, want):
			next.ServeHTTP(w, r)
			return
		case publicPaths[r.URL.Path]:
			refuse.CloseAfter(w)
			next.ServeHTTP(w, r)
			return
		}
		refuse.CloseAfter(w)
		// RFC 9110 §11.6.1: a 401 names its scheme.
		w.Header().Set("WWW-Authenticate", `Bearer realm="fsplane"`)
		why := "no key was sent"
		if keySent(r) {
			why = "the key sent is not this server's"
		}
		failWith(w, http.StatusUnauthorized, fserr.New(unauthorized, "request", r.URL.Path, "Unauthorized").
			WithHint("%s: send Authorization: Bearer <key> (or x-api-key: <key>), the key given to fsplane serve --api-key or FSPLANE_API_KEY (or AIO_API_KEY)", why))
	})
}

// keySent reports whether r carries a key in any of the places
// keyMatches looks.
func keySent(r *http.Request) bool {
	_, bearer := bearer.Token(r)
	return bearer || r.Header.Get("X-Api-Key") != "" || queryValues(r).Has("api_key")
}

func keyMatches(r *http.Request, want []byte) bool {
	var candidates []string
	if k, ok := bearer.Token(r); ok {
		candidates = append(candidates, k)
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		candidates = append(candidates, k)
	}
	if k := queryValues(r).Get("api_key"); k != "" {
		candidates = append(candidates, k)
	}
	match := 0
	for _, c := range candidates {
		match |= subtle.ConstantTimeCompare([]byte(c), want)
	}
	return match == 1
}

// browserGuard refuses what web pages send, before authentication.
//
// A page in the user's browser can reach a server on loopback: a "simple"
// request (a POST with Content-Type text/plain, whose JSON body decode
// parses anyway) needs no CORS preflight, so the write happens even though
// the page cannot read the answer; and a DNS-rebinding page (its own name,
// re-resolved to 127.0.0.1) is same-origin with the server and reads every
// answer. Without an API key, the default on loopback, nothing else stops
// either. So:
//
//   - A request with an Origin header (any value, "null" included), or with
//     Sec-Fetch-Site cross-site or same-site, comes from a web page and is
//     refused (403 forbidden_origin) unless its origin was allowed
//     (Options.AllowOrigins, serve --allow-origin). Allowed origins get
//     CORS headers, and their preflights are answered here, since AIO's
//     API is CORS-open by design. Tools, SDKs and agents send no Origin and
//     are unaffected; Sec-Fetch-Site same-origin and none (a typed URL)
//     pass.
//   - Without an API key, the Host header must be localhost, an IP literal
//     or a name in Options.AllowHosts (serve --allow-host), since a
//     rebinding page can only send its own name (403 forbidden_host).
//     With a key there is no Host check: the page does not know the key.
//     With Options.InsecureNoAuth (serve --insecure-no-auth) it applies
//     only to requests a browser marks as made by a page (Sec-Fetch-Site
//     other than none): the operator exposed the server to a network on
//     purpose, where clients use names such as sandbox:8080, but a
//     rebinding page's same-origin fetch carries no Origin, only that
//     mark (browsers too old to send it are not covered).
//
// Refusals, and preflights with a body, close the connection without
// waiting for the request's body (see package refuse).
//
// /v2/connector is left alone: it authenticates with the connector token
// (no token, no connection) and checks Origin against its own list
// (--connector-allow-origin).
type browserGuard struct {
	origins map[string]bool // normalized, see NormalizeOrigin
	hosts   map[string]bool // normalized, see NormalizeHostName
	noKey   bool            // no API key: the Host is checked ...
	exposed bool            // ... for every request unless --insecure-no-auth, then for pages' only
	next    http.Handler
}

// guardBrowsers wraps next in a browserGuard configured from opts. Entries
// that do not parse are logged and ignored; serve validates its flags with
// NormalizeOrigin and NormalizeHostName first.
func guardBrowsers(opts Options, log *slog.Logger, next http.Handler) http.Handler {
	g := &browserGuard{origins: map[string]bool{}, hosts: map[string]bool{}, next: next,
		noKey: opts.APIKey == "", exposed: opts.InsecureNoAuth}
	for _, o := range opts.AllowOrigins {
		n, err := NormalizeOrigin(o)
		if err != nil {
			log.Warn("Ignoring an allowed origin", "origin", o, "error", err)
			continue
		}
		g.origins[n] = true
	}
	for _, h := range opts.AllowHosts {
		n, err := NormalizeHostName(h)
		if err != nil {
			log.Warn("Ignoring an allowed host", "host", h, "error", err)
			continue
		}
		g.hosts[n] = true
	}
	return g
}

func (g *browserGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if selfAuthenticated[r.URL.Path] {
		g.next.ServeHTTP(w, r)
		return
	}
	site := r.Header.Get("Sec-Fetch-Site")
	marked := site != "" && site != "none" // a browser says a page sent it
	if g.noKey && (!g.exposed || marked) && !g.hostAllowed(r.Host) {
		refuse.CloseAfter(w)
		fail(w, v2, "request", r.URL.Path, fserr.New(forbiddenHost, "request", r.URL.Path,
			"Host %q is refused: without an API key, fsplane answers only requests addressed to localhost or an IP address (protection against DNS rebinding)", r.Host).
			WithHint("connect with the IP address (e.g. 127.0.0.1) or localhost, restart fsplane serve with --allow-host %s, or set --api-key", hostName(r.Host)))
		return
	}
	origin, hasOrigin := r.Header["Origin"]
	o := strings.Join(origin, ",")
	n, err := NormalizeOrigin(o)
	switch {
	case hasOrigin && err == nil && g.origins[n]:
		if !allowCORS(w, r, o) {
			g.next.ServeHTTP(w, r)
		}
	case hasOrigin:
		refuse.CloseAfter(w)
		allow := "scheme://host[:port] naming the page's origin exactly"
		if err == nil {
			allow = n + " (an exact scheme://host[:port] match)"
		}
		fail(w, v2, "request", r.URL.Path, fserr.New(forbiddenOrigin, "request", r.URL.Path,
			"requests from web pages are refused: origin %q is not allowed", o).
			WithHint("fsplane serves tools and agents, not browsers; to let a page call it, restart fsplane serve with --allow-origin %s", allow))
	case site == "cross-site" || site == "same-site":
		refuse.CloseAfter(w)
		fail(w, v2, "request", r.URL.Path, fserr.New(forbiddenOrigin, "request", r.URL.Path,
			"requests from web pages are refused (Sec-Fetch-Site: %s)", site).
			WithHint("fsplane serves tools and agents, not browsers; to let a page call it, restart fsplane serve with --allow-origin scheme://host[:port] naming the page's origin exactly"))
	default:
		g.next.ServeHTTP(w, r)
	}
}

// allowCORS sets the CORS headers for an allowed origin and answers its
// preflight, reporting whether it did (the request is then finished).
// Preflights carry no credentials, so they are answered before the key
// check; the request that follows still needs the key.
func allowCORS(w http.ResponseWriter, r *http.Request, origin string) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", "*")
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	if refuse.HasBody(r) {
		refuse.CloseAfter(w)
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// hostAllowed reports whether a request addressed to hostport (the Host
// header) may be served without an API key. An empty Host (HTTP/1.0)
// cannot come from a browser.
func (g *browserGuard) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true
	}
	name := hostName(hostport)
	if name == "localhost" {
		return true
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return g.hosts[name]
}

// hostName is the host part of a Host header, without brackets or port,
// lower case and without a trailing dot.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// NormalizeOrigin checks a browser origin given to --allow-origin and
// returns it as browsers send it: scheme://host[:port], lower case, the
// default port left out. Paths, queries, user info and "null" are errors:
// an origin has none of them, and a value that can never match would
// silently allow nothing.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("origin %q: %v", s, err)
	}
	// Any scheme with a host: browser extensions and app shells send
	// origins such as chrome-extension://id or tauri://localhost.
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("origin %q: use scheme://host[:port], e.g. https://app.example.com or http://localhost:3000", s)
	}
	for _, c := range u.Hostname() {
		if c >= 0x80 {
			return "", fmt.Errorf("origin %q: give the host in its ASCII (punycode, xn--...) form, which is what browsers send", s)
		}
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("origin %q: an origin is only scheme://host[:port], without user, path or query", s)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// NormalizeHostName checks a host name given to --allow-host and returns
// it as the Host check compares it: lower case, without a trailing dot.
// A port is an error (every port of the name is allowed), and so is
// anything that is not a host name.
func NormalizeHostName(s string) (string, error) {
	n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if n == "" || strings.ContainsAny(n, ":/@?#[] ") {
		return "", fmt.Errorf("host %q: give a host name without scheme or port, e.g. sandbox or dev.example.internal", s)
	}
	return n, nil
}
