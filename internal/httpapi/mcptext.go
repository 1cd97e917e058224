package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/jsonx"
)

// mcpText refuses an MCP message whose JSON text is not valid UTF-8 (a
// raw byte sequence, or a lone surrogate escape) with a JSON-RPC parse
// error, as the stdio server does: the SDK decodes it with encoding/json,
// which turns either into U+FFFD, so a write would store other text than
// the caller sent. Bodies over the SDK's limit, and bodies that are not
// JSON at all, are the SDK's to refuse.
func mcpText(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
		if err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if int64(len(body)) <= mcp.DefaultMaxRequestBodyBytes && json.Valid(body) {
			if off, what := jsonx.InvalidText(body); off >= 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg := fmt.Sprintf("%s at byte offset %d of the request: JSON text must be valid UTF-8", what, off)
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
					"error": map[string]any{"code": -32700, "message": msg}})
				return
			}
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		next(w, r)
	}
}
