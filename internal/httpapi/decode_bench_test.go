package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
)

// BenchmarkDecodeWrite decodes a 32 MiB /v2/fs/write body of source text
// (a line break every ~60 bytes, each escaped in JSON).
func BenchmarkDecodeWrite(b *testing.B) {
	content := strings.Repeat("\tif err := s.search(ctx, root, start); err != nil { return err }\n", (32<<20)/66)
	body, _ := json.Marshal(map[string]any{"path": "big.go", "content": content})
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v2/fs/write", bytes.NewReader(body))
		var req client.WriteRequest
		if errs := decode(r, &req, bodyRules{}); len(errs) > 0 || len(req.Content) != len(content) {
			b.Fatalf("%v %d", errs, len(req.Content))
		}
	}
}
