//lint:file-ignore SA1019 tests of the (deprecated from 2026-07-28) roots feature

package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/testenv"
)

func fileURI(p string) string { return "file://" + filepath.ToSlash(p) }

func TestClientRootsNarrowTheAllowedSet(t *testing.T) {
	t.Parallel()
	files := map[string]string{"proj/a.go": "package a\n", "other/x.txt": "x\n"}
	// The client's root is a directory inside the allowed root.
	e := newEnv(t, files, envOptions{})
	proj := e.path("proj")
	cs := e.connect(nil, fileURI(proj))
	call := func(name string, a map[string]any) result { return callOn(t, cs, name, a) }

	r := call("read", args("path", "a.go")) // relative to the session's first root
	if r.err {
		t.Fatal(r.text)
	}
	wantContains(t, r.text, "a.go — 1 line")
	if r.out["path"] != filepath.Join(proj, "a.go") {
		t.Fatal(r.out)
	}
	wantContains(t, wantFail(t, call("read", args("path", "../other/x.txt")), "read", "outside_root").text,
		"outside this session's roots ("+proj+")")
	wantFail(t, call("read", args("path", e.path("other/x.txt"))), "read", "outside_root")
	wantFail(t, call("list", args("path", e.root)), "list", "outside_root")

	// A link inside the session root that leads out of it is refused.
	if err := os.Symlink(e.path("other/x.txt"), filepath.Join(proj, "link.txt")); err != nil {
		t.Fatal(err)
	}
	wantFail(t, call("read", args("path", "link.txt")), "read", "outside_root")

	// Searches and listings start at the session root; paths shown are
	// relative to it.
	r = call("list", args("path", "."))
	wantContains(t, r.text, ".: 0 directories, 2 files\na.go  10 bytes\n")
	r = call("grep", args("pattern", "x|package"))
	wantContains(t, r.text, "a.go:1:package a\n")
	if r.out["files_matched"] != 1.0 {
		t.Fatal(r.text)
	}
	// Writes land in the session root too, patches included (rewritten
	// with absolute paths because the workspace's first root differs).
	if r := call("write", args("path", "new.txt", "content", "n\n")); r.err {
		t.Fatal(r.text)
	}
	if r := call("patch", args("patch", "*** Begin Patch\n*** Add File: p.txt\n+p\n*** Update File: a.go\n-package a\n+package b\n*** End Patch")); r.err {
		t.Fatal(r.text)
	}
	if got, _ := os.ReadFile(filepath.Join(proj, "p.txt")); string(got) != "p\n" {
		t.Fatalf("patch wrote %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(proj, "a.go")); string(got) != "package b\n" {
		t.Fatalf("patch wrote %q", got)
	}
	wantFail(t, call("patch", args("patch", "*** Begin Patch\n*** Add File: ../other/p.txt\n+p\n*** End Patch")), "patch", "outside_root")
	wantFail(t, call("move", args("source", "new.txt", "destination", "../other/new.txt")), "move", "outside_root")

	// The first session, without roots, still sees everything.
	e.ok("read", args("path", "other/x.txt"))
}

func TestClientRootsOutsideAllowedGrantNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{})
	cs := e.connect(nil, fileURI(t.TempDir()), "https://example.com/not-a-file-root")
	r := wantFail(t, callOn(t, cs, "read", args("path", "a.txt")), "read", "outside_root")
	wantContains(t, r.text, "none of the client's roots", "lies inside the roots this server allows ("+e.root+")")
	wantFail(t, callOn(t, cs, "grep", args("pattern", "a")), "grep", "outside_root")
}

func TestClientRootContainingAllowedRoots(t *testing.T) {
	t.Parallel()
	extra := t.TempDir()
	writeFiles(t, extra, map[string]string{"e.txt": "e\n"})
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{roots: []string{extra}})
	// "/" contains both allowed roots: the session keeps both.
	cs := e.connect(nil, "file:///")
	for _, p := range []string{"a.txt", filepath.Join(extra, "e.txt")} {
		if r := callOn(t, cs, "read", args("path", p)); r.err {
			t.Fatal(r.text)
		}
	}
	// A client root equal to the second allowed root makes it the base.
	cs = e.connect(nil, fileURI(extra))
	if r := callOn(t, cs, "read", args("path", "e.txt")); r.err {
		t.Fatal(r.text)
	}
	wantFail(t, callOn(t, cs, "read", args("path", e.path("a.txt"))), "read", "outside_root")
}

func TestRootsListChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"one/a.txt": "1\n", "two/b.txt": "2\n"}, envOptions{})
	client := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: fileURI(e.path("one"))})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if r := callOn(t, cs, "read", args("path", "a.txt")); r.err {
		t.Fatal(r.text)
	}
	client.RemoveRoots(fileURI(e.path("one")))
	client.AddRoots(&mcp.Root{URI: fileURI(e.path("two"))})
	// The notification is asynchronous: wait until the server acts on it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := callOn(t, cs, "read", args("path", "b.txt"))
		if !r.err {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("roots change not seen: %s", r.text)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantFail(t, callOn(t, cs, "read", args("path", e.path("one/a.txt"))), "read", "outside_root")
}

func TestIgnoreClientRoots(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"}, envOptions{server: Options{IgnoreClientRoots: true}})
	cs := e.connect(nil, fileURI(e.path("sub")))
	if r := callOn(t, cs, "read", args("path", "a.txt")); r.err {
		t.Fatal(r.text)
	}
}

func TestIntersect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"p/q/f": ""}, envOptions{})
	got := e.srv.intersect([]string{
		fileURI(e.path("p")), fileURI(e.path("p")), // duplicates collapse
		fileURI(e.path("p/q")),
		"file://remotehost" + e.root, // another host: ignored
		"file:relative",
		"not a uri\x00",
	})
	if len(got) != 2 || got[0] != e.path("p") || got[1] != e.path("p/q") {
		t.Fatalf("intersect = %v", got)
	}
}

// TestFailingRootsListNeverWidens: a client that advertises roots but
// fails to answer roots/list must not get the whole allowed set: before
// it ever answered, its calls are refused; after, it keeps the roots it
// gave last. (A failure used to widen the session to every root.)
func TestFailingRootsListNeverWidens(t *testing.T) {
	t.Parallel()
	var refused atomic.Int32 // roots/list calls the client refused
	e := newEnv(t, map[string]string{"one/a.txt": "1\n", "two/b.txt": "2\n"}, envOptions{})
	connect := func(failing *atomic.Bool) (*mcp.Client, *mcp.ClientSession) {
		client := mcp.NewClient(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
		client.AddRoots(&mcp.Root{URI: fileURI(e.path("one"))})
		client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "roots/list" && failing.Load() {
					refused.Add(1)
					return nil, errors.New("roots unavailable")
				}
				return next(ctx, method, req)
			}
		})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := e.srv.MCP().Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := client.Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return client, cs
	}

	// Never answered: refused, not widened.
	var never atomic.Bool
	never.Store(true)
	_, cs := connect(&never)
	r := wantFail(t, callOn(t, cs, "read", args("path", e.path("two/b.txt"))), "read", "outside_root")
	wantContains(t, r.text, "did not answer roots/list")
	never.Store(false) // it recovers: asked again on the next call
	if r := callOn(t, cs, "read", args("path", "a.txt")); r.err {
		t.Fatal(r.text)
	}

	// Answered once, then fails after a change: keeps its roots.
	var later atomic.Bool
	client, cs := connect(&later)
	if r := callOn(t, cs, "read", args("path", "a.txt")); r.err {
		t.Fatal(r.text)
	}
	refused.Store(0)
	later.Store(true)
	client.AddRoots(&mcp.Root{URI: fileURI(e.path("two"))}) // sends roots/list_changed
	// The notification is asynchronous: call until the server has asked
	// again and been refused, so the path under test did run.
	testenv.WaitFor(t, 10*time.Second, "a refused roots/list", func() bool {
		callOn(t, cs, "read", args("path", "a.txt"))
		return refused.Load() > 0
	})
	wantFail(t, callOn(t, cs, "read", args("path", e.path("two/b.txt"))), "read", "outside_root")
	if r := callOn(t, cs, "read", args("path", "a.txt")); r.err {
		t.Fatal(r.text)
	}
}
