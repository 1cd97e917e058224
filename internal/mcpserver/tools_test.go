package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/fserr"
)

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

func TestToolsListedWithSchemasAndAnnotations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, envOptions{})
	tools := listTools(t, e.cs)
	type want struct {
		readOnly, destructive, idempotent bool
		required                          []string
		props                             []string
	}
	wants := map[string]want{
		"read":   {readOnly: true, idempotent: true, required: []string{"path"}, props: []string{"path", "line_from", "line_to"}},
		"grep":   {readOnly: true, idempotent: true, required: []string{"pattern"}, props: []string{"pattern", "path", "glob", "type", "case_insensitive", "fixed_strings", "multiline", "context", "max_results"}},
		"glob":   {readOnly: true, idempotent: true, required: []string{"pattern"}, props: []string{"pattern", "path"}},
		"list":   {readOnly: true, idempotent: true, required: []string{"path"}, props: []string{"path", "depth"}},
		"stat":   {readOnly: true, idempotent: true, required: []string{"path"}, props: []string{"path"}},
		"write":  {destructive: true, idempotent: true, required: []string{"path", "content"}, props: []string{"path", "content", "expected_version"}},
		"edit":   {destructive: true, required: []string{"path"}, props: []string{"path", "old_text", "new_text", "replace_all", "expected_version", "edits"}},
		"patch":  {destructive: true, required: []string{"patch"}, props: []string{"patch", "path", "dry_run", "expected_version", "expected_versions"}},
		"move":   {destructive: true, required: []string{"source", "destination"}, props: []string{"source", "destination", "overwrite", "expected_version"}},
		"delete": {destructive: true, idempotent: true, required: []string{"path"}, props: []string{"path", "recursive", "expected_version"}},
		"undo":   {destructive: true, required: []string{"path"}, props: []string{"path"}},
	}
	if len(tools) != len(wants) {
		t.Fatalf("%d tools listed, want %d", len(tools), len(wants))
	}
	for name, w := range wants {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tool %s not listed", name)
		}
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint != w.readOnly || a.IdempotentHint != w.idempotent ||
			a.OpenWorldHint == nil || *a.OpenWorldHint || a.Title == "" {
			t.Errorf("%s annotations = %+v", name, a)
		}
		if !w.readOnly && (a.DestructiveHint == nil || *a.DestructiveHint != w.destructive) {
			t.Errorf("%s destructiveHint = %v, want %v", name, a.DestructiveHint, w.destructive)
		}
		if len(tool.Description) < 200 || !strings.Contains(tool.Description, "Errors") {
			t.Errorf("%s description too thin: %q", name, tool.Description)
		}
		schema := tool.InputSchema.(map[string]any)
		var props []string
		for p := range schema["properties"].(map[string]any) {
			props = append(props, p)
		}
		var required []string
		for _, r := range schema["required"].([]any) {
			required = append(required, r.(string))
		}
		slices.Sort(props)
		slices.Sort(required)
		slices.Sort(w.props)
		slices.Sort(w.required)
		if diff := cmp.Diff(w.props, props); diff != "" {
			t.Errorf("%s properties mismatch (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(w.required, required); diff != "" {
			t.Errorf("%s required mismatch (-want +got):\n%s", name, diff)
		}
		if schema["additionalProperties"] != false {
			t.Errorf("%s accepts unknown arguments", name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", name)
		}
	}
	// new_text is a plain string in the schema, though a pointer in Go.
	nt := tools["edit"].InputSchema.(map[string]any)["properties"].(map[string]any)["new_text"].(map[string]any)
	if nt["type"] != "string" {
		t.Errorf("edit new_text schema = %v", nt)
	}
}

func TestReadOnlyListsOnlyReadingTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{server: Options{ReadOnly: true}, readOnlyEng: true})
	var names []string
	for n := range listTools(t, e.cs) {
		names = append(names, n)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"glob", "grep", "list", "read", "stat"}, names); diff != "" {
		t.Fatalf("tools mismatch (-want +got):\n%s", diff)
	}
	// An unlisted tool is a protocol error, not a tool result.
	_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write", Arguments: args("path", "a.txt", "content", "x")})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "unknown tool") {
		t.Fatalf("write on a read-only server: err = %v", err)
	}
	if !strings.Contains(e.cs.InitializeResult().Instructions, "read-only") {
		t.Error("instructions do not say the server is read-only")
	}
	e.ok("read", args("path", "a.txt"))
}

func TestReadOnlyEngineRefusesEvenIfToolsListed(t *testing.T) {
	t.Parallel()
	// The front hides write tools; the engine is the guard. A server
	// built without ReadOnly over a read-only engine still refuses.
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{readOnlyEng: true})
	e.fail("write", args("path", "a.txt", "content", "b\n"), "read_only")
	if e.file("a.txt") != "a\n" {
		t.Fatal("read-only engine wrote")
	}
}

func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, envOptions{})
	_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown tool: err = %v", err)
	}
	// Arguments that break the schema are reported to the model as a tool
	// error (the SDK's choice, per the spec), so it can fix them.
	r := e.call("read", args("path", "a.txt", "bogus", 1))
	if !r.err || !strings.Contains(r.text, "bogus") {
		t.Fatalf("unknown argument: %+v", r)
	}
	r = e.call("read", args("path", 7))
	if !r.err {
		t.Fatalf("wrong type: %+v", r)
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	// A handler's *jsonrpc.Error is a protocol error; context errors too.
	if err := asToolError("x", &jsonrpc.Error{Code: 1, Message: "m"}); err.(*jsonrpc.Error).Code != 1 {
		t.Fatal(err)
	}
	if _, ok := asToolError("x", context.Canceled).(*jsonrpc.Error); !ok {
		t.Fatal("context.Canceled not a protocol error")
	}
	// Plain errors become io_error tool errors; codes without a hint get
	// the table's recovery.
	te := asToolError("x", errors.New("boom")).(*toolError)
	if te.e.Code != fserr.IOError || !strings.Contains(te.Error(), "Hint: ") {
		t.Fatal(te.Error())
	}
	for _, c := range []fserr.Code{fserr.NotFound, fserr.NoMatch, fserr.AmbiguousMatch, fserr.StaleVersion, fserr.MustRead,
		fserr.OutsideRoot, fserr.ReadOnly, fserr.Conflict, fserr.DecodeError, fserr.TooLarge, fserr.BadRequest} {
		if recovery[c] == "" {
			t.Errorf("no recovery for %s", c)
		}
	}
	got := (&toolError{e: fserr.New(fserr.NoMatch, "edit", "a.go", "old_text was not found")}).Error()
	want := "Error (no_match): a.go: old_text was not found\nHint: " + recovery[fserr.NoMatch]
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestToolsAddedAndRemovedAtRuntime is the registry the hub's remote tools
// will use: AddTool and RemoveTools notify connected clients.
func TestToolsAddedAndRemovedAtRuntime(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 10)
	e := newEnv(t, nil, envOptions{client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	wait := func() {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatal("no notifications/tools/list_changed")
		}
	}
	type in struct {
		Host string `json:"host" jsonschema:"the host"`
	}
	type out struct {
		Caller string `json:"caller"`
	}
	AddTool(e.srv, &mcp.Tool{Name: "remote_list", Description: "list on a host"}, func(_ context.Context, c *Call, a in) (string, out, error) {
		if a.Host == "gone" {
			return "", out{}, fserr.New(fserr.Unavailable, "remote_list", "", "host %s is not connected", a.Host)
		}
		return "listed " + a.Host, out{Caller: c.Caller}, nil
	})
	wait()
	if listTools(t, e.cs)["remote_list"] == nil {
		t.Fatal("added tool not listed")
	}
	r := e.ok("remote_list", args("host", "h1"))
	if r.text != "listed h1" || !strings.HasPrefix(r.out["caller"].(string), "mcp:session-") {
		t.Fatalf("got %+v", r)
	}
	wantContains(t, e.fail("remote_list", args("host", "gone"), "unavailable").text, "host gone is not connected", "Hint: the target is not connected")
	e.srv.RemoveTools("remote_list")
	wait()
	if listTools(t, e.cs)["remote_list"] != nil {
		t.Fatal("removed tool still listed")
	}
}

func TestSessionStateDroppedWhenSessionEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{})
	cs := e.connect(nil)
	callOn(t, cs, "read", args("path", "a.txt"))
	e.srv.mu.Lock()
	n := len(e.srv.sessions)
	var caller string
	for _, st := range e.srv.sessions {
		caller = st.caller
	}
	e.srv.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d sessions tracked", n)
	}
	if _, ok := e.srv.Engine().Tracker().Seen(caller, e.path("a.txt")); !ok {
		t.Fatal("read not tracked for the session")
	}
	cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.srv.mu.Lock()
		n = len(e.srv.sessions)
		e.srv.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session state kept after the session ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := e.srv.Engine().Tracker().Seen(caller, e.path("a.txt")); ok {
		t.Fatal("read state kept after the session ended")
	}
}

func TestStructuredOutputMatchesSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "x\n"}, envOptions{})
	r := e.ok("stat", args("path", "a.txt"))
	b, _ := json.Marshal(r.out)
	var got statResult
	if err := json.Unmarshal(b, &got); err != nil || got.Type != "file" || got.Size != 2 || got.Version == "" {
		t.Fatalf("stat structured = %s (%v)", b, err)
	}
}

// TestSchemaErrorsLookLikeToolErrors: arguments the SDK refuses against
// the input schema (a missing or mistyped field) fail like every other
// call: "Error (bad_request): ..." with a hint, and the code in _meta.
func TestSchemaErrorsLookLikeToolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n"}, envOptions{})
	for _, a := range []map[string]any{{}, {"path": 5}} {
		r := e.call("read", a)
		if !r.err || !strings.HasPrefix(r.text, "Error (bad_request): invalid arguments: ") || !strings.Contains(r.text, "\nHint: ") {
			t.Errorf("read %v: %q", a, r.text)
		}
		if r.meta["code"] != "bad_request" {
			t.Errorf("read %v: _meta %v", a, r.meta)
		}
	}
}
