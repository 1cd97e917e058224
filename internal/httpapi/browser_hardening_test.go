package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestBrowserRequestsAreRefused: a web page can reach a loopback server
// (simple POSTs need no preflight; DNS rebinding gets it a readable
// answer), so requests that carry a browser's marks are refused unless
// the operator allowed their origin, and without an API key the Host must
// be one no rebinding page can have.
func TestBrowserRequestsAreRefused(t *testing.T) {
	t.Parallel()
	const app = "https://app.example"
	mcpCalls := make(chan struct{}, 100)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mcpCalls <- struct{}{}
		w.WriteHeader(http.StatusOK)
	})
	open := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{MCP: mcp})
	allowing := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{AllowOrigins: []string{app}, AllowHosts: []string{"Dev.Box"}})
	keyed := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{APIKey: "k"})
	exposed := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{InsecureNoAuth: true})
	write := `{"path":"pwned.txt","content":"x"}`
	tests := []struct {
		name         string
		e            *env
		method, path string
		host, body   string
		header       []string
		status       int
		code         string
		hint         string // substring of the hint
	}{
		{name: "no Origin: curl, SDKs and agents", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", status: 200},
		{name: "simple cross-site POST", e: open, method: "POST", path: "/v2/fs/write", body: write,
			header: []string{"Content-Type", "text/plain", "Origin", "https://evil.example"}, status: 403, code: "forbidden_origin", hint: "--allow-origin https://evil.example"},
		{name: "Origin null (sandboxed iframe)", e: open, method: "POST", path: "/v2/fs/write", body: write,
			header: []string{"Origin", "null"}, status: 403, code: "forbidden_origin", hint: "--allow-origin"},
		{name: "v1 is refused with 403 too", e: open, method: "POST", path: "/v1/file/write", body: `{"file":"pwned.txt","content":"x"}`,
			header: []string{"Origin", "http://localhost:3000"}, status: 403, code: "forbidden_origin"},
		{name: "public probe", e: open, method: "GET", path: "/health", header: []string{"Origin", "https://evil.example"}, status: 403, code: "forbidden_origin"},
		{name: "MCP endpoint", e: open, method: "POST", path: "/mcp", body: `{}`, header: []string{"Origin", "https://evil.example"}, status: 403, code: "forbidden_origin"},
		{name: "Sec-Fetch-Site cross-site", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", header: []string{"Sec-Fetch-Site", "cross-site"}, status: 403, code: "forbidden_origin"},
		{name: "Sec-Fetch-Site same-site", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", header: []string{"Sec-Fetch-Site", "same-site"}, status: 403, code: "forbidden_origin"},
		{name: "Sec-Fetch-Site same-origin", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", header: []string{"Sec-Fetch-Site", "same-origin"}, status: 200},
		{name: "Sec-Fetch-Site none (typed URL)", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", header: []string{"Sec-Fetch-Site", "none"}, status: 200},
		{name: "DNS rebinding", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "rebind.evil.example:PORT", status: 403, code: "forbidden_host", hint: "--allow-host rebind.evil.example"},
		{name: "rebinding without a port", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "rebind.evil.example", status: 403, code: "forbidden_host"},
		{name: "a localhost subdomain is a name", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "evil.localhost:PORT", status: 403, code: "forbidden_host"},
		{name: "localhost", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "localhost:PORT", status: 200},
		{name: "LOCALHOST", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "LOCALHOST", status: 200},
		{name: "IPv4 without port", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "127.0.0.1", status: 200},
		{name: "another IPv4", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "10.1.2.3:PORT", status: 200},
		{name: "IPv6", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "[::1]:PORT", status: 200},
		{name: "IPv6 without port", e: open, method: "GET", path: "/v2/fs/read?path=a.txt", host: "[::1]", status: 200},
		{name: "allowed origin", e: allowing, method: "POST", path: "/v2/fs/write", body: `{"path":"ok.txt","content":"x"}`,
			header: []string{"Origin", app, "Sec-Fetch-Site", "cross-site"}, status: 200},
		{name: "allowed origin, other scheme", e: allowing, method: "GET", path: "/v2/fs/read?path=a.txt",
			header: []string{"Origin", "http://app.example"}, status: 403, code: "forbidden_origin"},
		{name: "allowed origin, other port", e: allowing, method: "GET", path: "/v2/fs/read?path=a.txt",
			header: []string{"Origin", app + ":8443"}, status: 403, code: "forbidden_origin"},
		{name: "allowed host, any case", e: allowing, method: "GET", path: "/v2/fs/read?path=a.txt", host: "dev.box:PORT", status: 200},
		{name: "with a key, any Host", e: keyed, method: "GET", path: "/v2/fs/read?path=a.txt", host: "rebind.evil.example:PORT",
			header: []string{"X-Api-Key", "k"}, status: 200},
		{name: "with a key, Origin is still refused", e: keyed, method: "GET", path: "/v2/fs/read?path=a.txt",
			header: []string{"X-Api-Key", "k", "Origin", "https://evil.example"}, status: 403, code: "forbidden_origin"},
		{name: "insecure-no-auth: container names work", e: exposed, method: "GET", path: "/v2/fs/read?path=a.txt", host: "sandbox:8080", status: 200},
		{name: "insecure-no-auth: Origin is still refused", e: exposed, method: "GET", path: "/v2/fs/read?path=a.txt",
			header: []string{"Origin", "https://evil.example"}, status: 403, code: "forbidden_origin"},
		// A rebinding page's same-origin GET carries no Origin, only the
		// browser's Sec-Fetch-Site mark: its Host is checked even here.
		{name: "insecure-no-auth: rebinding page refused", e: exposed, method: "GET", path: "/v2/fs/read?path=a.txt",
			host: "rebind.evil.example:PORT", header: []string{"Sec-Fetch-Site", "same-origin"}, status: 403, code: "forbidden_host"},
		{name: "insecure-no-auth: typed URL to a container name", e: exposed, method: "GET", path: "/v2/fs/read?path=a.txt",
			host: "sandbox:8080", header: []string{"Sec-Fetch-Site", "none"}, status: 200},
		{name: "api key: rebinding page needs the key anyway", e: keyed, method: "GET", path: "/v2/fs/read?path=a.txt",
			host: "rebind.evil.example:PORT", header: []string{"Sec-Fetch-Site", "same-origin"}, status: 401, code: "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.e.send(tt.method, tt.path, tt.host, tt.body, tt.header...)
			if got.status != tt.status || got.code() != tt.code {
				t.Fatalf("got %d %q %v, want %d %q", got.status, got.code(), got.body, tt.status, tt.code)
			}
			if tt.code == "" {
				return
			}
			msg, _ := got.body["message"].(string)
			hint, _ := got.body["hint"].(string)
			if tt.code == "forbidden_origin" && !strings.Contains(msg, "web pages") {
				t.Errorf("message %q does not say web pages are refused", msg)
			}
			if tt.code == "forbidden_host" && !(strings.Contains(hint, "localhost") && strings.Contains(hint, "--api-key")) {
				t.Errorf("hint %q does not name localhost and --api-key", hint)
			}
			if !strings.Contains(hint, tt.hint) {
				t.Errorf("hint %q lacks %q", hint, tt.hint)
			}
		})
	}
	// The parent's cleanup runs once every parallel case has finished.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(open.root, "pwned.txt")); err == nil {
			t.Error("a refused cross-site write reached the disk")
		}
		if n := len(mcpCalls); n != 0 {
			t.Errorf("the MCP handler ran %d times for refused requests", n)
		}
	})
}

// TestAllowedOriginCORS: AIO documents CORS as open, so an origin the
// operator allowed gets CORS headers and its preflight answered; no other
// origin gets either.
func TestAllowedOriginCORS(t *testing.T) {
	t.Parallel()
	const app = "https://app.example"
	e := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{AllowOrigins: []string{app}, APIKey: "k"})
	pre := e.send("OPTIONS", "/v2/fs/write", "", "", "Origin", app, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type, x-api-key")
	if pre.status != http.StatusNoContent || pre.header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(pre.header.Get("Access-Control-Allow-Headers")), "x-api-key") {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	got := e.send("GET", "/v2/fs/read?path=a.txt", "", "", "Origin", app, "X-Api-Key", "k")
	if got.status != 200 || got.header.Get("Access-Control-Allow-Origin") != app || !strings.Contains(got.header.Get("Vary"), "Origin") {
		t.Fatalf("allowed origin: %d %v", got.status, got.header)
	}
	// The key is still required: CORS is not authentication.
	if got := e.send("GET", "/v2/fs/read?path=a.txt", "", "", "Origin", app); got.status != 401 {
		t.Fatalf("allowed origin without the key: %d", got.status)
	}
	for _, h := range [][]string{{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}, {}} {
		got := e.send("OPTIONS", "/v2/fs/write", "", "", h...)
		if got.header.Get("Access-Control-Allow-Origin") != "" || got.status == http.StatusNoContent {
			t.Errorf("OPTIONS %v: %d %v", h, got.status, got.header)
		}
	}
}

// TestConnectorKeepsItsOwnOriginCheck: /v2/connector authenticates with
// the connector token and checks Origin against --connector-allow-origin
// itself; the browser guard leaves it alone.
func TestConnectorKeepsItsOwnOriginCheck(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "tok", AllowedOrigins: []string{"https://desk.example"}})
	t.Cleanup(h.Close)
	e := newEnv(t, nil, httpapi.Options{Hub: h})
	got := e.send("GET", "/v2/connector", "", "", "Origin", "https://desk.example", "Authorization", "Bearer tok")
	if got.status == http.StatusForbidden {
		t.Fatalf("a connector origin the hub allows was refused: %d %v", got.status, got.body)
	}
	if got := e.send("GET", "/v2/connector", "", "", "Origin", "https://evil.example", "Authorization", "Bearer tok"); got.status != http.StatusForbidden || got.code() != "" {
		t.Fatalf("the hub's own origin check: %d %q", got.status, got.code())
	}
}

func TestNormalizeOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "https://app.example", want: "https://app.example"},
		{in: "HTTPS://App.Example/", want: "https://app.example"},
		{in: "http://localhost:3000", want: "http://localhost:3000"},
		{in: "https://app.example:443", want: "https://app.example"},
		{in: "http://app.example:80", want: "http://app.example"},
		{in: "http://[::1]:8080", want: "http://[::1]:8080"},
		{in: "app.example", bad: true},
		{in: "https://app.example/path", bad: true},
		{in: "https://app.example?x=1", bad: true},
		{in: "https://user@app.example", bad: true},
		{in: "chrome-extension://abcdefghij", want: "chrome-extension://abcdefghij"},
		{in: "tauri://localhost", want: "tauri://localhost"},
		{in: "https://xn--bcher-kva.example", want: "https://xn--bcher-kva.example"},
		{in: "https://bücher.example", bad: true}, // browsers send the punycode form
		{in: "null", bad: true},
		{in: "", bad: true},
	}
	for _, tt := range tests {
		got, err := httpapi.NormalizeOrigin(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q, bad %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}
