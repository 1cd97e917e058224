//lint:file-ignore SA1019 clients in tests advertise roots (deprecated from 2026-07-28)

package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// env is a server over a temporary root and a client session connected
// to it through in-memory transports.
type env struct {
	t    *testing.T
	root string
	srv  *Server
	cs   *mcp.ClientSession
}

type envOptions struct {
	server      Options
	readOnlyEng bool
	roots       []string // extra workspace roots
	clientRoots []string // file:// URIs the client advertises
	client      *mcp.ClientOptions
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newEngine opens a workspace over a new temporary root holding files
// (and over extraRoots) and an engine over it; both close at cleanup.
func newEngine(t testing.TB, files map[string]string, o ops.Options, extraRoots ...string) (root string, eng *ops.Engine) {
	t.Helper()
	root = t.TempDir()
	writeFiles(t, root, files)
	ws, err := workspace.Open(workspace.Options{Roots: append([]string{root}, extraRoots...), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	eng = ops.New(ws, o)
	t.Cleanup(func() { eng.Close() })
	return root, eng
}

func newEnv(t *testing.T, files map[string]string, o envOptions) *env {
	t.Helper()
	root, eng := newEngine(t, files, ops.Options{ReadOnly: o.readOnlyEng}, o.roots...)
	e := &env{t: t, root: root, srv: New(eng, o.server)}
	e.cs = e.connect(o.client, o.clientRoots...)
	return e
}

// connect opens another client session to the server.
func (e *env) connect(opts *mcp.ClientOptions, roots ...string) *mcp.ClientSession {
	e.t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: r})
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func (e *env) path(name string) string { return filepath.Join(e.root, name) }

func (e *env) file(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) write(name, content string) {
	e.t.Helper()
	writeFiles(e.t, e.root, map[string]string{name: content})
}

// result is a decoded tool result.
type result struct {
	text  string
	out   map[string]any // structured content
	err   bool
	meta  map[string]any // _meta["fsplane/error"]
	calls *mcp.CallToolResult
}

// callOn calls a tool on session cs; a protocol error fails the test.
func callOn(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) result {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	var r result
	r.calls = res
	r.err = res.IsError
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r.text = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r.out); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
	}
	if m, ok := res.Meta[errorMetaKey].(map[string]any); ok {
		r.meta = m
	}
	return r
}

func (e *env) call(name string, args map[string]any) result {
	e.t.Helper()
	return callOn(e.t, e.cs, name, args)
}

// ok calls a tool that must succeed.
func (e *env) ok(name string, args map[string]any) result {
	e.t.Helper()
	r := e.call(name, args)
	if r.err {
		e.t.Fatalf("%s %v failed: %s", name, args, r.text)
	}
	return r
}

// fail calls a tool that must fail with code, and checks the error's
// shape: the text starts with "Error (code):" and _meta carries the code.
func (e *env) fail(name string, args map[string]any, code string) result {
	e.t.Helper()
	return wantFail(e.t, e.call(name, args), name, code)
}

func wantFail(t *testing.T, r result, name, code string) result {
	t.Helper()
	if !r.err {
		t.Fatalf("%s succeeded, want %s: %s", name, code, r.text)
	}
	if !strings.HasPrefix(r.text, "Error ("+code+"): ") {
		t.Fatalf("%s error text = %q, want code %s", name, r.text, code)
	}
	if r.meta["code"] != code {
		t.Fatalf("%s _meta = %v, want code %s", name, r.meta, code)
	}
	if r.out != nil {
		t.Fatalf("%s error carries structured content %v", name, r.out)
	}
	return r
}

func wantContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("output lacks %q:\n%s", w, abbrev(got))
		}
	}
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// abbrev shortens long output for failure messages.
func abbrev(s string) string {
	if len(s) <= 4000 {
		return s
	}
	return s[:2000] + "\n[…]\n" + s[len(s)-2000:]
}

// on returns e reporting to t (a subtest's).
func (e *env) on(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// newEnvB is newEnv for benchmarks: the client session only.
func newEnvB(b *testing.B, files map[string]string) *mcp.ClientSession {
	b.Helper()
	_, eng := newEngine(b, files, ops.Options{})
	srv := New(eng, Options{})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}
