package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// env is one server over a real loopback listener with the real handler
// chain (request log, auth, routes).
type env struct {
	t      *testing.T
	root   string
	srv    *httptest.Server
	c      *client.Client
	logBuf *testenv.SyncBuffer
}

func newEnv(t *testing.T, files map[string]string, opts httpapi.Options) *env {
	t.Helper()
	return newEnvUndo(t, files, workspace.UndoLimits{}, opts)
}

// newEnvUndo is newEnv with chosen undo limits (zero fields: defaults).
func newEnvUndo(t *testing.T, files map[string]string, undo workspace.UndoLimits, opts httpapi.Options) *env {
	t.Helper()
	root := t.TempDir()
	testenv.WriteTree(t, root, files)
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: undo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	buf := &testenv.SyncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(buf, nil))
	srv := httptest.NewServer(httpapi.New(ops.New(ws, ops.Options{Logger: opts.Logger}), opts))
	t.Cleanup(srv.Close)
	var copts []client.Option
	if opts.APIKey != "" {
		copts = append(copts, client.WithAPIKey(opts.APIKey))
	}
	c, err := client.New(srv.URL, copts...)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, root: root, srv: srv, c: c, logBuf: buf}
}

func (e *env) file(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// reply is one raw HTTP exchange: status, headers and the decoded body.
type reply struct {
	status int
	header http.Header
	body   map[string]any // nil when the body is empty (a 204 preflight) or not JSON
	// badJSON is a non-empty body that did not decode into body: some
	// answers (the connector hub's plain-text refusals) legitimately are
	// not JSON, so send leaves judging it to the caller.
	badJSON []byte
}

// code is the envelope's data.error_type, or "".
func (r reply) code() string {
	if d, ok := r.body["data"].(map[string]any); ok {
		s, _ := d["error_type"].(string)
		return s
	}
	return ""
}

// send makes one request to e with a chosen Host header (host "" keeps
// the listener's address; "PORT" in it is replaced by the listener's
// port) and extra headers as name, value pairs.
func (e *env) send(method, path, host, body string, header ...string) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if host != "" {
		u, _ := url.Parse(e.srv.URL)
		req.Host = strings.ReplaceAll(host, "PORT", u.Port())
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header}
	if len(b) > 0 && json.Unmarshal(b, &r.body) != nil {
		r.badJSON = b
	}
	return r
}

// raw sends a request and returns the status and decoded JSON body; the
// API's own routes always answer in JSON, so any other body fails the
// test.
func (e *env) raw(method, path, body string, header ...string) (int, map[string]any) {
	e.t.Helper()
	r := e.send(method, path, "", body, header...)
	if r.badJSON != nil {
		e.t.Fatalf("%s %s: non-JSON body %q", method, path, r.badJSON)
	}
	return r.status, r.body
}

// wantErr asserts err is a *client.Error with this status and code, and
// returns it.
func wantErr(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *client.Error", err)
	}
	if ce.Status != status || ce.Code() != code {
		t.Fatalf("got status %d code %q (%s), want %d %q", ce.Status, ce.Code(), ce.Message, status, code)
	}
	return ce
}

var bg = context.Background()
