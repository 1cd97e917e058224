package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

var bg = context.Background()

// server is the real HTTP API over a workspace in a temporary directory,
// on a loopback listener.
type server struct {
	root     string
	url      string
	c        *client.Client
	requests atomic.Int64 // requests that reached the server
}

func newServer(t *testing.T, files map[string]string, opts httpapi.Options, eopts ops.Options) *server {
	t.Helper()
	root, eng := newEngine(t, files, eopts)
	s := &server{root: root}
	api := httpapi.New(eng, opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	var err error
	if s.c, err = client.New(srv.URL); err != nil {
		t.Fatal(err)
	}
	return s
}

// newEngine writes files into a new temporary directory and returns it
// with an engine over it.
func newEngine(t *testing.T, files map[string]string, opts ops.Options) (string, *ops.Engine) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
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
	return root, ops.New(ws, opts)
}

// newHostServer is a server with a hub, and a host named "laptop" with
// its own workspace connected to it over a real loopback WebSocket.
func newHostServer(t *testing.T, serverFiles, hostFiles map[string]string) (s *server, hostRoot string) {
	t.Helper()
	h := hub.New(hub.Options{Token: "t"})
	t.Cleanup(h.Close)
	s = newServer(t, serverFiles, httpapi.Options{Hub: h}, ops.Options{})
	hostRoot, eng := newEngine(t, hostFiles, ops.Options{})
	x, err := host.New(host.Options{URL: s.url, Token: "t", Name: "laptop", Mode: proto.ReadWrite, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l, err := s.c.Hosts(bg)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Hosts) == 1 {
			return s, hostRoot
		}
		if time.Now().After(deadline) {
			t.Fatal("the host never connected")
		}
	}
}
