package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestHTTPTakesWhatStdioTakes: /mcp serves the same tools as fsplane mcp,
// so a call stdio takes (a message up to StdioMaxLine) is taken over
// HTTP too; the SDK's own default body limit (4 MiB) failed a write of a
// 5 MiB file with a transport error ("request body exceeds 4194304
// bytes") where stdio wrote it.
func TestHTTPTakesWhatStdioTakes(t *testing.T) {
	t.Parallel()
	root, eng := newEngine(t, nil, ops.Options{})
	srv := New(eng, Options{})
	hs := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-body", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	content := strings.Repeat(strings.Repeat("x", 99)+"\n", 12<<20/100) // 12 MiB
	r := callOn(t, cs, "write", args("path", "big.txt", "content", content))
	if r.err {
		t.Fatal(r.text)
	}
	e := &env{t: t, root: root}
	if got := e.file("big.txt"); got != content {
		t.Fatalf("big.txt holds %d bytes, want %d", len(got), len(content))
	}

	// Past the limit: refused (413) before any tool runs.
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write",
		Arguments: args("path", "huge.txt", "content", strings.Repeat("x", StdioMaxLine))})
	if err == nil || !strings.Contains(err.Error(), "Too Large") {
		t.Fatalf("a call over the limit: %v", err)
	}
}

// TestHTTPScreensLargeBodies: the screens /mcp puts before the SDK (an
// id it would answer as another, text that is not UTF-8, which decoding
// would store as U+FFFD) cover every body the SDK takes, not only those
// up to its default 4 MiB.
func TestHTTPScreensLargeBodies(t *testing.T) {
	t.Parallel()
	root, eng := newEngine(t, nil, ops.Options{})
	hs := httptest.NewServer(New(eng, Options{}).HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	post := func(sid, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	status, sid, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	if status, _, body = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", status, body)
	}
	pad := strings.Repeat("x", 5<<20)
	for _, tt := range []struct {
		name, file, id, content string
		code                    int
	}{
		{"an id past 2^53", "id.txt", "9007199254740993", pad, -32600},
		{"a lone surrogate", "surrogate.txt", "2", `a\ud800b` + pad, -32700},
		{"a raw invalid byte", "raw.txt", "3", "a\xff\xfeb" + pad, -32700},
		{"a lone surrogate in a small call", "small.txt", "4", `a\ud800b`, -32700},
		{"a raw invalid byte in a small call", "smallraw.txt", "5", "a\xff\xfeb", -32700},
	} {
		status, _, body := post(sid, `{"jsonrpc":"2.0","id":`+tt.id+`,"method":"tools/call","params":{"name":"write","arguments":{"path":"`+tt.file+`","content":"`+tt.content+`"}}}`)
		var got struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &got) != nil || got.ID != nil || got.Error.Code != tt.code {
			t.Errorf("%s: status %d, body %.300s; want 400 with %d, id null", tt.name, status, body, tt.code)
		}
		if _, err := os.Stat(root + "/" + tt.file); err == nil {
			t.Errorf("%s: %s was written", tt.name, tt.file)
		}
	}
}
