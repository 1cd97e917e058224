package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestHTTPHandler drives the /mcp handler over a real HTTP listener with
// the go-sdk's streamable client: two sessions, each its own caller.
func TestHTTPHandler(t *testing.T) {
	t.Parallel()
	root, eng := newEngine(t, map[string]string{"f.txt": "one\ntwo\n"}, ops.Options{})
	srv := New(eng, Options{Version: "test"})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close) // after the sessions' cleanups: their streams must end first

	changed := make(chan struct{}, 4)
	connect := func() *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("session IDs %q %q", a.ID(), b.ID())
	}
	if v := a.InitializeResult().ProtocolVersion; v >= statelessProtocol {
		t.Fatalf("negotiated %s: sessions are needed", v)
	}
	if n := len(listTools(t, a)); n != 11 {
		t.Fatalf("%d tools", n)
	}
	edit := args("path", "f.txt", "edits", []any{map[string]any{"from": 1, "to": 1, "content": "ONE"}})

	if r := callOn(t, a, "read", args("path", "f.txt")); r.err || !strings.Contains(r.text, "     1\tone\n") {
		t.Fatal(r.text)
	}
	if r := callOn(t, a, "edit", edit); r.err {
		t.Fatal(r.text)
	}
	// Session b never read the file.
	wantFail(t, callOn(t, b, "edit", edit), "edit", "must_read")
	if _, ok := eng.Tracker().Seen("mcp:"+a.ID(), root+"/f.txt"); !ok {
		t.Fatal("the HTTP session ID is not the caller")
	}
	wantContains(t, callOn(t, b, "grep", args("pattern", "ONE")).text, "f.txt:1:ONE")

	// Tools added at runtime reach HTTP sessions too.
	type noArgs struct{}
	AddTool(srv, &mcp.Tool{Name: "ping_host", Description: "test"}, func(context.Context, *Call, noArgs) (string, any, error) {
		return "pong", nil, nil
	})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed over HTTP")
	}
	if r := callOn(t, b, "ping_host", nil); r.text != "pong" {
		t.Fatal(r.text)
	}

	// DNS rebinding: a loopback server refuses a foreign Host header.
	req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(`{}`))
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: %d", res.StatusCode)
	}
}

// TestNewHTTPHandler is the one-call constructor the daemon mounts.
func TestNewHTTPHandler(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, map[string]string{"a.txt": "a\n"}, ops.Options{ReadOnly: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", NewHTTPHandler(eng, Options{ReadOnly: true}))
	hs := httptest.NewServer(mux)
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if n := len(listTools(t, cs)); n != 5 {
		t.Fatalf("read-only lists %d tools", n)
	}
	wantContains(t, callOn(t, cs, "read", args("path", "a.txt")).text, "     1\ta\n")
}

// TestCloseEndsHTTPStreams: Close lets http.Server.Shutdown finish while
// clients hold their standalone SSE streams open.
func TestCloseEndsHTTPStreams(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, nil, ops.Options{})
	srv := New(eng, Options{})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listTools(t, cs)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := hs.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	hs.Close()
}

// TestHTTPSessionLimit: past MaxSessions a new session closes the one
// least recently used; the others, and the new one, work on.
//
// A session whose request is still in its handler is never closed, and a
// client may have its answer a moment before the handler returns: the new
// session is made once no POST is in a handler, or the session used
// first could be the busy one, passed over.
func TestHTTPSessionLimit(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, map[string]string{"f.txt": "one\n"}, ops.Options{})
	srv := New(eng, Options{Version: "test"})
	h := srv.HTTPHandler(HTTPOptions{MaxSessions: 3})
	var posts atomic.Int64 // POSTs in the handler
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			defer posts.Add(-1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	connect := func() *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "limit-test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	read := args("path", "f.txt")
	a, b, c := connect(), connect(), connect()
	for _, s := range []*mcp.ClientSession{b, a, c} { // b is now the least recently used
		if r := callOn(t, s, "read", read); r.err {
			t.Fatal(r.text)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); posts.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d POSTs still in the handler after 5 s", posts.Load())
		}
	}
	d := connect()
	for name, s := range map[string]*mcp.ClientSession{"a": a, "c": c, "d": d} {
		if r := callOn(t, s, "read", read); r.err {
			t.Errorf("session %s after the limit: %s", name, r.text)
		}
	}
	if _, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "read", Arguments: read}); err == nil {
		t.Error("the least recently used session still answers past the limit")
	}
	n := 0
	for range srv.mcp.Sessions() {
		n++
	}
	if n != 3 {
		t.Errorf("%d sessions open, want 3", n)
	}
}

// TestSessionLimitClosingSession: once makeRoom has chosen a session to
// close, no request begins on it (the handler answers 404 instead of
// letting a call start that the close would cut); others begin and end.
func TestSessionLimitClosingSession(t *testing.T) {
	t.Parallel()
	l := &sessionLimit{seen: map[string]*sessionUse{"chosen": {closing: true}, "other": {}}}
	for _, call := range []bool{true, false} {
		if end, closing := l.begin("chosen", call); !closing || end != nil {
			t.Errorf("begin on a closing session (call %v): closing %v", call, closing)
		}
	}
	end, closing := l.begin("other", true)
	if closing || end == nil {
		t.Fatalf("begin on an open session: closing %v", closing)
	}
	if u := l.seen["other"]; u.busy != 1 {
		t.Errorf("busy %d during the call, want 1", u.busy)
	}
	at := time.Now().Add(time.Second)
	end(at)
	if u := l.seen["other"]; u.busy != 0 || !u.last.Equal(at) {
		t.Errorf("after the call: busy %d, last %v; want 0, %v", u.busy, u.last, at)
	}
}
