package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
)

// wantRPCError checks that resp is a JSON-RPC error response with code and
// id (nil: null) whose message holds each of wants.
func wantRPCError(t *testing.T, resp any, code int, id any, wants ...string) {
	t.Helper()
	m, ok := resp.(map[string]any)
	if !ok {
		t.Fatalf("response = %v, want an object", resp)
	}
	gotID, hasID := m["id"]
	e, _ := m["error"].(map[string]any)
	if m["jsonrpc"] != "2.0" || !hasID || gotID != id || e == nil || e["code"] != float64(code) || m["result"] != nil {
		t.Fatalf("response = %v, want error %d with id %v", resp, code, id)
	}
	for _, w := range wants {
		if msg, _ := e["message"].(string); !strings.Contains(msg, w) {
			t.Errorf("error message %q does not hold %q", msg, w)
		}
	}
}

// wantPong sends a ping and checks it is answered: the session goes on.
func (c *rawClient) wantPong() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if d := cmp.Diff(map[string]any{"jsonrpc": "2.0", "id": "after", "result": map[string]any{}}, c.recv()); d != "" {
		c.t.Errorf("ping after the bad line (-want +got):\n%s", d)
	}
}

func writeCall(id, content string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"write","arguments":{"path":"bad.txt","content":"%s"}}}`, id, content)
}

func TestStdioTransportBadLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		line string
		code int
		id   any // nil: null
		want string
	}{
		{"not JSON", `this is not json`, jsonrpc.CodeParseError, nil, "byte offset"},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":"ping"`, jsonrpc.CodeParseError, nil, "unexpected end"},
		{"two values on a line", `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, jsonrpc.CodeParseError, nil, "after top-level value"},
		{"no jsonrpc member", `{"id":19,"method":"ping"}`, jsonrpc.CodeInvalidRequest, 19.0, `expected "2.0"`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"v1","method":"ping"}`, jsonrpc.CodeInvalidRequest, "v1", `"1.0"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil, "ID"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, nil, "ID"},
		{"neither method nor id", `{"jsonrpc":"2.0"}`, jsonrpc.CodeInvalidRequest, nil, "invalid request"},
		{"a string", `"ping"`, jsonrpc.CodeInvalidRequest, nil, "JSON object"},
		{"empty batch", `[]`, jsonrpc.CodeInvalidRequest, nil, "empty batch"},
		{"batch of a number", `[1]`, jsonrpc.CodeInvalidRequest, nil, "batch member 0"},
		{"repeated id in a batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, nil, "own id"},
		{"message nested too deep", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`, jsonrpc.CodeInvalidRequest, 8.0, "depth"},
		{"batch nested too deep", `[{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}}]`, jsonrpc.CodeInvalidRequest, nil, "deeper than 1000"},
		{"invalid UTF-8 in a call", writeCall("21", "a\xff\xfeb"), jsonrpc.CodeInvalidParams, 21.0, "invalid UTF-8 (byte 0xff)"},
		{"lone surrogate in a call", writeCall(`"s"`, `a\ud800b`), jsonrpc.CodeInvalidParams, "s", `unpaired UTF-16 surrogate escape \ud800`},
		{"low surrogate first", writeCall("23", `\udc00\ud800`), jsonrpc.CodeInvalidParams, 23.0, `\udc00`},
		{"invalid UTF-8 in a notification", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\xff\"}", jsonrpc.CodeParseError, nil, "invalid UTF-8"},
		{"invalid UTF-8 in a batch", `[` + writeCall("24", "\xc0") + `]`, jsonrpc.CodeParseError, nil, "invalid UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newRawClient(t, nil, "2025-06-18")
			c.send(tc.line)
			wantRPCError(t, c.recv(), tc.code, tc.id, tc.want)
			c.wantPong()
			if _, err := os.Stat(filepath.Join(c.root, "bad.txt")); err == nil {
				t.Error("bad.txt was written")
			}
		})
	}
}

func TestStdioTransportValidText(t *testing.T) {
	t.Parallel()
	// A surrogate pair and raw UTF-8 are text: written as sent.
	c := newRawClient(t, nil, "2025-06-18")
	c.send(writeCall("1", `\ud83d\ude00 é`))
	if r := c.recv().(map[string]any); r["id"] != 1.0 || r["error"] != nil {
		t.Fatalf("write = %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(c.root, "bad.txt")); string(b) != "😀 é" {
		t.Errorf("file = %q", b)
	}
}

func TestStdioTransportCallIDInFlight(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, nil, ops.Options{})
	srv := New(eng, Options{})
	release := make(chan struct{})
	AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *Call, _ struct{}) (string, struct{}, error) {
		<-release
		return "done", struct{}{}, nil
	})
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), StdioTransport(sr, sw)); sw.Close() }()
	c := &rawClient{t: t, in: cw, out: bufio.NewReader(cr)}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	wantRPCError(t, c.recv(), jsonrpc.CodeInvalidRequest, nil, "in flight")
	close(release)
	if r := c.recv().(map[string]any); r["id"] != 7.0 || r["result"] == nil {
		t.Fatalf("wait = %v", r)
	}
	// Answered: the id may be used again.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if r := c.recv().(map[string]any); r["id"] != 7.0 || r["result"] == nil {
		t.Fatalf("ping = %v", r)
	}
	cw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestStdioTransportTooLongLine(t *testing.T) {
	t.Parallel()
	const limit = 1024
	big := strings.Repeat("x", 100<<10) // several reads of the input
	ping := `{"jsonrpc":"2.0","id":"fits","method":"ping"}`
	fits := ping + strings.Repeat(" ", limit-len(ping)) // exactly limit bytes
	ping33 := `{"jsonrpc":"2.0","id":33,"method":"ping"}`
	cases := []struct {
		name string
		line string
		id   any
	}{
		{"id first (Go, Python)", `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"write","arguments":{"path":"bad.txt","content":"` + big + `"}}}`, 31.0},
		{"id last (TypeScript)", `{"method":"tools/call","params":{"name":"write","arguments":{"path":"bad.txt","content":"` + big + `"}},"jsonrpc":"2.0","id":"ts-32"}` + "\r", "ts-32"},
		{"string id last with escapes", `{"params":{"c":"` + big + `"},"method":"x","jsonrpc":"2.0", "id" : "a\\\"b"}`, `a\"b`},
		{"id inside params at the end", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + big + `","id":5}}`, nil},
		{"id after params, not last", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + big + `"},"id":6,"z":1}`, nil},
		{"id in a string at the end", `{"jsonrpc":"2.0","method":"x","params":{"c":"` + big + `"},"d":"\",\"id\":7"}`, nil},
		{"one byte over", ping33 + strings.Repeat(" ", limit+1-len(ping33)), 33.0},
		{"not JSON", big, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newRawClient(t, nil, "2025-06-18", func(tr *stdioTransport) { tr.maxLine = limit })
			c.send(tc.line)
			wantRPCError(t, c.recv(), jsonrpc.CodeInvalidRequest, tc.id,
				"limit of 1024 bytes", "POST /v2/fs/upload", "edit or patch")
			c.wantPong()
			if _, err := os.Stat(filepath.Join(c.root, "bad.txt")); err == nil {
				t.Error("bad.txt was written")
			}
		})
	}
	t.Run("exactly the limit", func(t *testing.T) {
		t.Parallel()
		c := newRawClient(t, nil, "2025-06-18", func(tr *stdioTransport) { tr.maxLine = limit })
		c.send(fits + "\r") // the line break is not counted
		if r := c.recv().(map[string]any); r["id"] != "fits" || r["result"] == nil {
			t.Fatalf("ping = %v", r)
		}
	})
}

func TestLineReader(t *testing.T) {
	t.Parallel()
	const limit = 16
	long := strings.Repeat("y", 1<<20)
	in := "a\n\n  {}  \r\n" + strings.Repeat("z", limit) + "\n" + long + "\n" + strings.Repeat("w", limit+1) + "\r\n" + `{"id":1}` + "\n" + "last"
	r := &lineReader{br: bufio.NewReaderSize(strings.NewReader(in), 16), maxLine: limit}
	type line struct {
		Text string
		Size int
		Err  error
	}
	var got []line
	maxCap := 0
	for {
		l, err := r.next()
		got = append(got, line{string(l.text), l.size, err})
		maxCap = max(maxCap, cap(r.buf))
		if err != nil {
			break
		}
	}
	want := []line{
		{"a", 1, nil}, {"", 0, nil}, {"{}", 6, nil}, {strings.Repeat("z", limit), limit, nil},
		{"", len(long), nil}, {"", limit + 1, nil}, {`{"id":1}`, 8, nil}, {"last", 4, io.EOF},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	if maxCap > 4*idHead {
		t.Errorf("the reader held %d bytes for a line limit of %d", maxCap, limit)
	}
}

// FuzzLineReader holds lineReader to strings.SplitAfter on '\n', whatever
// the line limit and the buffer size.
func FuzzLineReader(f *testing.F) {
	f.Add("a\r\n\n {} \nlast", 2, 16)
	f.Add(strings.Repeat("x", 100)+"\r\n", 99, 17)
	f.Fuzz(func(t *testing.T, data string, limit, bufSize int) {
		limit, bufSize = min(max(limit, 0), 1<<10), min(max(bufSize, 16), 1<<10)
		r := &lineReader{br: bufio.NewReaderSize(strings.NewReader(data), bufSize), maxLine: limit}
		for i, want := range strings.SplitAfter(data, "\n") {
			if w, ok := strings.CutSuffix(want, "\n"); ok {
				want = strings.TrimSuffix(w, "\r")
			}
			got, err := r.next()
			if got.size != len(want) {
				t.Fatalf("line %d: size %d, want %d", i, got.size, len(want))
			}
			if wantText := strings.Trim(want, jsonSpace); len(want) <= limit && string(got.text) != wantText {
				t.Fatalf("line %d: %q, want %q", i, got.text, wantText)
			} else if len(want) > limit && got.text != nil {
				t.Fatalf("line %d over the limit: %q", i, got.text)
			}
			if n := strings.Count(data, "\n"); (err == io.EOF) != (i == n) || err != nil && err != io.EOF {
				t.Fatalf("line %d of %d: error %v", i, n, err)
			}
		}
	})
}

func TestLongLineID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		head, tail string
		want       any
	}{
		{`{"jsonrpc":"2.0","id":1,"params":{"a":"xx`, `x"}}`, int64(1)},
		{`{"params":{"a":"xx`, `x"}, "id": "q"}`, "q"},
		{`{"params":{"a":"xx`, `x"},"id":-2}` + "\r\n", int64(-2)},
		{`{"params":{"a":"xx`, `xx\\","id":"e"}`, "e"},
		{`{"params":{"a":"xx`, `x"},"id":null}`, nil},
		{`{"params":{"a":"xx`, `x"},"id":{}}`, nil},
		{`{"params":{"a":"xx`, `x"},"xid":3}`, nil},
		{`{"params":{"a":"xx`, `x","id":3}}`, nil},
		{`[{"id":1,`, `}]`, nil},
		// The head cuts a number off: 12 of 123456 is no id.
		{`{"jsonrpc":"2.0","id":12`, `3456,"params":{}}`, nil},
	}
	for _, tc := range cases {
		id := headID([]byte(tc.head))
		if !id.IsValid() {
			id = tailID([]byte(tc.tail))
		}
		if id.Raw() != tc.want {
			t.Errorf("%s…%s: id %v, want %v", tc.head, tc.tail, id.Raw(), tc.want)
		}
	}
}

// FuzzTailID holds tailID to its claim: on a JSON object, an id it finds
// is the object's own (top-level) id.
func FuzzTailID(f *testing.F) {
	f.Add(`{"a":"x","id":"q"}`)
	f.Add(`{"a":{"id":1}}`)
	f.Add(`{"a":"\",\"id\":7"}`)
	f.Fuzz(func(t *testing.T, line string) {
		id := tailID([]byte(line))
		var obj map[string]json.RawMessage
		if !id.IsValid() || json.Unmarshal([]byte(line), &obj) != nil {
			return
		}
		var v any
		if json.Unmarshal(obj["id"], &v) != nil {
			t.Fatalf("%s: tailID found %v, but the object has no id", line, id.Raw())
		}
		if want, err := jsonrpc.MakeID(v); err != nil || want != id {
			t.Fatalf("%s: tailID found %v, want %v", line, id.Raw(), v)
		}
	})
}

// stdioRun serves input (then EOF) on StdioTransport, with the wait for
// outstanding calls bounded by drain, and returns what was written and
// how long Run took.
func stdioRun(t *testing.T, srv *Server, input string, drain time.Duration) ([]map[string]any, time.Duration) {
	t.Helper()
	var out bytes.Buffer
	tr := StdioTransport(strings.NewReader(input), &out).(*stdioTransport)
	tr.drain = drain
	start := time.Now()
	if err := srv.Run(context.Background(), tr); err != nil {
		t.Fatalf("Run: %v", err)
	}
	took := time.Since(start)
	var resps []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		resps = append(resps, m)
	}
	return resps, took
}

const stdioHello = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

func TestStdioTransportAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	root, eng := newEngine(t, nil, ops.Options{})
	srv := New(eng, Options{})
	input := stdioHello +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"piped.txt","content":"hi\n"}}}` + "\n" +
		`this is not json` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` // no line break before EOF
	resps, _ := stdioRun(t, srv, input, time.Minute)
	ids := map[any]bool{}
	for _, r := range resps {
		ids[r["id"]] = true
	}
	if want := map[any]bool{0.0: true, 1.0: true, nil: true, 2.0: true}; !cmp.Equal(ids, want) {
		t.Errorf("answered ids %v, want %v", ids, want)
	}
	if b, err := os.ReadFile(filepath.Join(root, "piped.txt")); string(b) != "hi\n" {
		t.Errorf("piped.txt = %q, %v", b, err)
	}
}

func TestStdioTransportEOFWaitIsBounded(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, nil, ops.Options{})
	srv := New(eng, Options{})
	AddTool(srv, &mcp.Tool{Name: "stuck"}, func(ctx context.Context, _ *Call, _ struct{}) (string, struct{}, error) {
		<-ctx.Done() // until the session ends
		return "", struct{}{}, ctx.Err()
	})
	input := stdioHello +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	resps, took := stdioRun(t, srv, input, 100*time.Millisecond)
	if took > 10*time.Second {
		t.Errorf("Run took %v after the input ended", took)
	}
	var pong bool
	for _, r := range resps {
		pong = pong || r["id"] == 2.0 && r["result"] != nil
	}
	if !pong {
		t.Errorf("the ping sent with the stuck call was not answered: %v", resps)
	}
}

func TestWriteDescriptionStatesLimits(t *testing.T) {
	t.Parallel()
	d := description("write")
	for _, want := range []string{
		// HTTPHandler takes StdioMaxLine too.
		fmt.Sprintf("at most %d MiB, over stdio (`fsplane mcp`) and over HTTP (`/mcp`) alike", StdioMaxLine>>20),
		"POST /v2/fs/upload",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the write description does not say %q", want)
		}
	}
}
