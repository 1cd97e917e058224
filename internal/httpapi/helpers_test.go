package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// env is one server over a real loopback listener with the real handler
// chain (request log, auth, routes).
type env struct {
	t      *testing.T
	root   string
	srv    *httptest.Server
	c      *client.Client
	logBuf *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T, files map[string]string, opts httpapi.Options) *env {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	buf := &syncBuffer{}
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

// raw sends a request and returns the status and decoded JSON body.
func (e *env) raw(method, path, body string, header ...string) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
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
	var m map[string]any
	if len(b) > 0 && json.Unmarshal(b, &m) != nil {
		e.t.Fatalf("%s %s: non-JSON body %q", method, path, b)
	}
	return resp.StatusCode, m
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
