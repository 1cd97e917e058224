package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestHTTPRefusesIDsTheSDKWouldChange: over /mcp, a call whose id the
// SDK would answer as another (past 2^53, outside int64, a fraction,
// null), alone or in a batch, is refused with 400 and -32600, id null;
// an id it keeps is answered with that very id.
func TestHTTPRefusesIDsTheSDKWouldChange(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, map[string]string{"f.txt": "x\n"}, ops.Options{})
	hs := httptest.NewServer(New(eng, Options{Version: "test"}).HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	initialize := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	}
	for _, tt := range []struct {
		name, body string
		refused    bool
	}{
		{"past 2^53", initialize("9007199254740993"), true},
		{"outside int64", initialize("12345678901234567890"), true},
		{"fraction", initialize("1.5"), true},
		{"null", initialize("null"), true},
		{"a second id, null", initialize(`1,"id":null`), true},
		{"in a batch", `[` + initialize("9007199254740993") + `]`, true},
		{"2^53", initialize("9007199254740992"), false},
		{"string", initialize(`"9007199254740993"`), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if !tt.refused {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				var id json.RawMessage
				json.Unmarshal([]byte(tt.body), &struct{ ID *json.RawMessage }{&id})
				if !strings.Contains(string(body), `"id":`+string(id)+`,"result"`) {
					t.Errorf("the answer does not carry the id %s: %s", id, body)
				}
				return
			}
			var got struct {
				ID    any `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &got) != nil || got.ID != nil || got.Error.Code != -32600 || !strings.Contains(got.Error.Message, "id") {
				t.Errorf("status %d, body %s; want 400 with a -32600 error about the id, id null", resp.StatusCode, body)
			}
		})
	}
}
