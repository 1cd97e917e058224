package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// screenIDs refuses a POST whose JSON-RPC message (or a member of its
// batch) has an id the SDK would answer as another, as the stdio
// transport refuses it (see checkID): the SDK reads numeric ids as
// float64, so 9007199254740993 was answered as 9007199254740992, the id
// of another call, if any; a null id made a call a notification, run and
// never answered. It answers 400 with a JSON-RPC error (-32600, id null)
// and returns false; otherwise it leaves the body for the SDK, whole, and
// returns true. A body past the SDK's limit is handed on unread for the
// SDK to refuse (413), and one that is not JSON for it to report.
func screenIDs(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return true
	}
	const limit = mcp.DefaultMaxRequestBodyBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || len(body) > limit {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := bodyIDError(body); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(errorLine(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid request: "+err.Error()))
		return false
	}
	return true
}

// bodyIDError is checkID for a message or each member of a batch.
func bodyIDError(body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '[' {
		return checkID(body)
	}
	var raws []json.RawMessage
	if json.Unmarshal(body, &raws) != nil {
		return nil // not a batch the SDK can read: it says so
	}
	for _, raw := range raws {
		if err := checkID(raw); err != nil {
			return err
		}
	}
	return nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
