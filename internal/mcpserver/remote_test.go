package mcpserver

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
)

// remoteEnv is an MCP server following a real hub with one in-process
// host connected over a real loopback WebSocket.
type remoteEnv struct {
	*env
	hub      *hub.Hub
	host     *host.Host
	hostRoot string
	changed  chan struct{}
	stopHost func()
}

func newRemoteEnv(t *testing.T, files map[string]string) *remoteEnv {
	t.Helper()
	changed := make(chan struct{}, 100)
	e := newEnv(t, nil, envOptions{client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	h := hub.New(hub.Options{Token: "t"})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	t.Cleanup(e.srv.ServeHosts(h))

	root, eng := newEngine(t, files, ops.Options{})
	x, err := host.New(host.Options{URL: srv.URL, Token: "t", Name: "laptop", Mode: proto.ReadOnly, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	r := &remoteEnv{env: e, hub: h, host: x, hostRoot: root, changed: changed, stopHost: stop}
	r.waitTools(t, toolTextEditorRemote)
	return r
}

// waitTools waits until tools/list has (or, with "!" names, lacks) names.
func (r *remoteEnv) waitTools(t *testing.T, names ...string) []*mcp.Tool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := r.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		has := func(n string) bool {
			return slices.ContainsFunc(res.Tools, func(x *mcp.Tool) bool { return x.Name == n })
		}
		okAll := true
		for _, n := range names {
			if want, ok := strings.CutPrefix(n, "!"); ok {
				okAll = okAll && !has(want)
			} else {
				okAll = okAll && has(n)
			}
		}
		if okAll {
			return res.Tools
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/list never matched %v", names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// editorTool returns text_editor_remote's actions and whether it is
// annotated read-only.
func editorTool(t *testing.T, tools []*mcp.Tool) (actions []any, readOnly bool) {
	t.Helper()
	for _, x := range tools {
		if x.Name == toolTextEditorRemote {
			props := x.InputSchema.(map[string]any)["properties"].(map[string]any)
			return props["action"].(map[string]any)["enum"].([]any), x.Annotations.ReadOnlyHint
		}
	}
	t.Fatal("no text_editor_remote")
	return nil, false
}

func TestRemoteToolsFollowTheHosts(t *testing.T) {
	t.Parallel()
	r := newRemoteEnv(t, map[string]string{"notes.txt": "alpha\nbeta\n", "src/a.go": "package a\n"})
	tools := r.waitTools(t, toolTextEditorRemote, toolRemoteGrep, toolRemoteList, "!"+toolRemoteUndo)
	all := []any{"read", "write", "patch"}
	if got, ro := editorTool(t, tools); !slices.Equal(got, all) || !ro {
		t.Fatalf("read-only host: actions %v, read-only %v; want all three actions, annotated read-only", got, ro)
	}
	// A write is refused by the hub, which says what to do.
	res := r.fail(toolTextEditorRemote, args("action", "write", "path", "notes.txt", "content", "x"), "read_only")
	wantContains(t, res.text, "Press F3")

	res = r.ok(toolTextEditorRemote, args("action", "read", "path", "notes.txt"))
	if res.text != "notes.txt 2 lines\n>>>\n   1 | alpha\n   2 | beta\n\n<<<" {
		t.Fatalf("read: %q", res.text)
	}
	wantContains(t, r.ok(toolRemoteGrep, args("pattern", "bet")).text, "notes.txt:2:beta")
	wantContains(t, r.ok(toolRemoteList, args("path", ".", "depth", 2)).text, "src/a.go")
	r.fail(toolTextEditorRemote, args("action", "read", "path", "missing.txt"), "not_found")
	r.fail(toolTextEditorRemote, args("action", "read", "path", "/etc/passwd"), "outside_root")
	r.fail(toolRemoteGrep, args("pattern", "x", "host", "nobody"), "not_found")

	// F3: the host turns Read&Write; clients hear list_changed and see the
	// write actions.
	for len(r.changed) > 0 {
		<-r.changed
	}
	if err := r.host.SetMode(proto.ReadWrite); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after the mode change")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ro := editorTool(t, r.waitTools(t, toolTextEditorRemote)); !ro {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("text_editor_remote never annotated as writing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res = r.ok(toolTextEditorRemote, args("action", "patch", "path", "notes.txt", "old_text", "beta", "new_text", "BETA"))
	if res.text != "notes.txt patched successfully" {
		t.Fatalf("patch: %q", res.text)
	}
	r.ok(toolTextEditorRemote, args("action", "patch", "path", "notes.txt",
		"edits", []map[string]any{{"from": 1, "to": 1, "content": "ALPHA"}}))
	r.fail(toolTextEditorRemote, args("action", "patch", "path", "notes.txt", "old_text", "zzz", "new_text", "y"), "no_match")
	r.fail(toolTextEditorRemote, args("action", "write", "path", "x.txt"), "bad_request") // content is required

	// remote_undo steps back through the host's own history.
	r.waitTools(t, toolRemoteUndo)
	wantContains(t, r.ok(toolRemoteUndo, args("path", "notes.txt")).text, "Undid the line edit of notes.txt")
	if got := r.hostFile(t, "notes.txt"); got != "alpha\nBETA\n" {
		t.Fatalf("after one undo: %q", got)
	}
	r.ok(toolRemoteUndo, args("path", "notes.txt", "host", "laptop"))
	if got := r.hostFile(t, "notes.txt"); got != "alpha\nbeta\n" {
		t.Fatalf("after two undos: %q", got)
	}
	// The undos were text_editor_remote's own context's: its view follows
	// them, so a line edit needs no new read (with another caller, the
	// undo looked like someone else's change: stale_version).
	r.ok(toolTextEditorRemote, args("action", "patch", "path", "notes.txt",
		"edits", []map[string]any{{"from": 2, "to": 2, "content": "gamma"}}))
	if got := r.hostFile(t, "notes.txt"); got != "alpha\ngamma\n" {
		t.Fatalf("line edit after the undos: %q", got)
	}
	r.ok(toolRemoteUndo, args("path", "notes.txt"))
	r.fail(toolRemoteUndo, args("path", "notes.txt"), "bad_request") // nothing left to undo
	r.fail(toolRemoteUndo, args("path", "/etc/passwd"), "outside_root")
	if err := r.host.SetMode(proto.ReadOnly); err != nil {
		t.Fatal(err)
	}
	r.waitTools(t, "!"+toolRemoteUndo, toolTextEditorRemote)

	// The host leaves: the remote tools go away.
	r.stopHost()
	r.waitTools(t, "!"+toolTextEditorRemote, "!"+toolRemoteGrep, "!"+toolRemoteList, "!"+toolRemoteUndo)
}

// hostFile reads a file of the host's root.
func (r *remoteEnv) hostFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.hostRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
