package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
)

// rawClient speaks newline-delimited JSON-RPC to a server run over
// StdioTransport, so the test sees the exact lines the transport writes.
type rawClient struct {
	t    *testing.T
	root string // the engine's root
	in   *io.PipeWriter
	out  *bufio.Reader
}

// newRawClient starts a server on StdioTransport, changed by opts, and
// initializes a session at version.
func newRawClient(t *testing.T, files map[string]string, version string, opts ...func(*stdioTransport)) *rawClient {
	t.Helper()
	return newRawClientWith(t, nil, files, version, opts...)
}

// newRawClientWith is newRawClient with setup, when not nil, changing the
// server before it runs (adding a tool).
func newRawClientWith(t *testing.T, setup func(*Server), files map[string]string, version string, opts ...func(*stdioTransport)) *rawClient {
	t.Helper()
	root, eng := newEngine(t, files, ops.Options{})
	srv := New(eng, Options{})
	if setup != nil {
		setup(srv)
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	tr := StdioTransport(sr, sw).(*stdioTransport)
	for _, o := range opts {
		o(tr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, tr)
		sw.Close()
		sr.Close() // a send after the session ended fails rather than blocks
	}()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		<-done
	})
	c := &rawClient{t: t, root: root, in: cw, out: bufio.NewReaderSize(cr, 1<<20)}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version))
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one line and decodes it; the line must be one JSON value,
// and come within ten seconds.
func (c *rawClient) recv() any {
	c.t.Helper()
	type read struct {
		line []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := c.out.ReadBytes('\n')
		ch <- read{line, err}
	}()
	var line []byte
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("reading a response: %v", r.err)
		}
		line = r.line
	case <-time.After(10 * time.Second):
		c.t.Fatal("no response within 10s")
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		c.t.Fatalf("response line is not JSON: %v\n%.300s", err, line)
	}
	return v
}

func TestStdioTransportResponses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("say(\"<hi>\") // \\ ü\n", 2000)
	c := newRawClient(t, map[string]string{"big.txt": big}, "2025-06-18")

	c.send(`{"jsonrpc":"2.0","id":"p-1","method":"ping"}`)
	if d := cmp.Diff(map[string]any{"jsonrpc": "2.0", "id": "p-1", "result": map[string]any{}}, c.recv()); d != "" {
		t.Errorf("ping (-want +got):\n%s", d)
	}

	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"path":"big.txt"}}}`)
	resp := c.recv().(map[string]any)
	if resp["jsonrpc"] != "2.0" || resp["id"] != 7.0 || resp["error"] != nil {
		t.Fatalf("read response envelope = %v", resp)
	}
	text := resp["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if n := strings.Count(text, "say(\"<hi>\") // \\ ü\n"); n != 2000 {
		t.Errorf("read text holds %d of the 2000 lines", n)
	}

	c.send(`{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`)
	errResp := c.recv().(map[string]any)
	if errResp["id"] != 8.0 || errResp["error"] == nil || errResp["result"] != nil {
		t.Errorf("unknown method response = %v, want a JSON-RPC error", errResp)
	}
}

func TestStdioTransportBatches(t *testing.T) {
	t.Parallel()
	c := newRawClient(t, nil, "2025-03-26")
	c.send(`  [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	got, ok := c.recv().([]any)
	if !ok || len(got) != 2 {
		t.Fatalf("batch response = %v, want an array of two responses", got)
	}
	ids := map[float64]bool{}
	for _, r := range got {
		ids[r.(map[string]any)["id"].(float64)] = true
	}
	if !ids[1] || !ids[2] {
		t.Errorf("batch response ids = %v, want 1 and 2", ids)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := c.recv().(map[string]any); r["id"] != 3.0 {
		t.Errorf("single request after a batch = %v", r)
	}
}

// recordingConn is a Connection that records what is written through it.
type recordingConn struct {
	mcp.Connection
	wrote []jsonrpc.Message
}

func (r *recordingConn) Write(_ context.Context, m jsonrpc.Message) error {
	r.wrote = append(r.wrote, m)
	return nil
}

func TestStdioConnWrite(t *testing.T) {
	t.Parallel()
	id, _ := jsonrpc.MakeID("a\"b")
	cases := []struct {
		name    string
		msg     jsonrpc.Message
		batched bool
		direct  string // the line written directly; "" when left to the SDK
	}{
		{"result", &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"x":[1,"\n"]}`)}, false, `{"jsonrpc":"2.0","id":"a\"b","result":{"x":[1,"\n"]}}` + "\n"},
		{"after a batch", &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}, true, ""},
		{"error", &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: 1, Message: "no"}}, false, ""},
		{"raw line break", &jsonrpc.Response{ID: id, Result: json.RawMessage("{\n}")}, false, ""},
		{"request", &jsonrpc.Request{ID: id, Method: "roots/list"}, false, ""},
	}
	for _, tc := range cases {
		var out strings.Builder
		inner := &recordingConn{}
		c := &stdioConn{Connection: inner, w: &lockedWriter{w: &out}}
		c.batched.Store(tc.batched)
		if err := c.Write(context.Background(), tc.msg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.String() != tc.direct {
			t.Errorf("%s: wrote %q directly, want %q", tc.name, out.String(), tc.direct)
		}
		if toSDK := len(inner.wrote) == 1; toSDK != (tc.direct == "") {
			t.Errorf("%s: left to the SDK = %v, want %v", tc.name, toSDK, tc.direct == "")
		}
	}
}

// TestCancelledReadingToolIsNoResult: a reading tool cancelled by the
// client (notifications/cancelled) does not end in what it had found by
// then — a search cut short would read as "no matches" — but in an
// error. On stdio nothing is sent for it at all (see
// TestStdioCancelledCallIsNotAnswered); the outcome is what a transport
// that does answer would send.
func TestCancelledReadingToolIsNoResult(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	type outcome struct {
		res mcp.Result
		err error
	}
	ended := make(chan outcome, 1)
	c := newRawClientWith(t, func(s *Server) {
		AddTool(s, &mcp.Tool{Name: "slow", Description: "waits", Annotations: readOnlyTool("Wait")},
			func(ctx context.Context, _ *Call, _ struct{}) (string, struct{}, error) {
				close(started)
				<-ctx.Done()
				return "No matches", struct{}{}, nil
			})
		s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "tools/call" {
					ended <- outcome{res, err}
				}
				return res, err
			}
		})
	}, nil, "2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not start")
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"stop"}}`)
	select {
	case o := <-ended:
		if r, ok := o.res.(*mcp.CallToolResult); o.err == nil && (!ok || r == nil || !r.IsError) {
			t.Errorf("the cancelled call ended in the result %v; want an error", o.res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
}

// TestStdioTransportRefusedIDs: the ids MCP forbids, which the SDK would
// drop (null: taken for a notification, neither run nor answered) or
// change (1.5 answered as 1), are refused with -32600 and id null; the
// SDK's uncoded errors (code 0) go out with a JSON-RPC code.
func TestStdioTransportRefusedIDs(t *testing.T) {
	t.Parallel()
	c := newRawClient(t, nil, "2025-06-18")
	errOf := func(line string) (id any, code float64, msg string) {
		t.Helper()
		c.send(line)
		resp := c.recv().(map[string]any)
		e, ok := resp["error"].(map[string]any)
		if !ok {
			t.Fatalf("%s: answered %v, want an error", line, resp)
		}
		return resp["id"], e["code"].(float64), e["message"].(string)
	}
	for _, tc := range []struct {
		line   string
		wantID any
		code   float64
		says   string
	}{
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, -32600, "the id is null"},
		{`{"jsonrpc":"2.0","id":3.5,"method":"ping"}`, nil, -32600, "the id 3.5 is not an integer"},
		{`{"jsonrpc":"2.0","id":-0.25,"method":"tools/list"}`, nil, -32600, "not an integer"},
		{`[{"jsonrpc":"2.0","id":null,"method":"ping"}]`, nil, -32600, "batch member 0: the id is null"},
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			9.0, -32600, `duplicate "initialize"`},
	} {
		id, code, msg := errOf(tc.line)
		if id != tc.wantID || code != tc.code || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: id %v, code %v, %q; want id %v, code %v, saying %q", tc.line, id, code, msg, tc.wantID, tc.code, tc.says)
		}
	}
	// Integral numbers, even written with a fraction, stay ids.
	c.send(`{"jsonrpc":"2.0","id":4.0,"method":"ping"}`)
	if resp := c.recv().(map[string]any); resp["id"] != 4.0 || resp["error"] != nil {
		t.Errorf("id 4.0: %v", resp)
	}
}
