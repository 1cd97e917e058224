package httpapi_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// xenv is a server for transfer and watch tests: the real handler chain
// over a real listener, an engine closed at cleanup.
type xenv struct {
	t    testing.TB
	root string
	srv  *httptest.Server
	c    *client.Client
	eng  *ops.Engine
}

func newXEnv(t testing.TB, eopts ops.Options) *xenv {
	t.Helper()
	return newXEnvRoots(t, eopts, t.TempDir())
}

// newXEnvRoots is newXEnv over chosen roots ("/" for AIO's setup); root
// is the first.
func newXEnvRoots(t testing.TB, eopts ops.Options, roots ...string) *xenv {
	t.Helper()
	root := roots[0]
	ws, err := workspace.Open(workspace.Options{Roots: roots, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	eng := ops.New(ws, eopts)
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &xenv{t: t, root: root, srv: srv, c: c, eng: eng}
}

func (e *xenv) path(name string) string { return filepath.Join(e.root, name) }

func (e *xenv) put(name string, content []byte) {
	e.t.Helper()
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// strays lists files under the root whose names mark unfinished work.
func (e *xenv) strays() []string {
	var out []string
	_ = filepath.WalkDir(e.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && (filepath.Ext(p) == ".part" || filepath.Ext(p) == ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
