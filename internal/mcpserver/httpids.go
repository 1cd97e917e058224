package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/fsplane/fsplane/internal/jsonx"
)

// screenIDs refuses a POST whose JSON-RPC message (or a member of its
// batch) has an id the SDK would answer as another, as the stdio
// transport refuses it (see checkID): the SDK reads numeric ids as
// float64, so 9007199254740993 was answered as 9007199254740992, the id
// of another call, if any; a null id made a call a notification, run and
// never answered. It answers 400 with a JSON-RPC error (-32600, id null)
// and returns false. It refuses as well, as stdio does, a message whose
// JSON text is not valid UTF-8 (a raw byte sequence, or a \u escape of
// half a surrogate pair), which the SDK's decoding would turn into
// U+FFFD, so that a write would store other text than was sent (-32700,
// id null). Otherwise it leaves the body for the SDK, whole, and returns
// true. Every body the handler takes (up to StdioMaxLine) is screened; a
// longer one is handed on unread for the SDK to refuse (413), and one
// that is not JSON for it to report.
func screenIDs(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return true
	}
	const limit = StdioMaxLine // HTTPHandler's MaxRequestBodyBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || len(body) > limit {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	refuse := func(code int64, msg string) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(errorLine(jsonrpc.ID{}, code, msg))
		return false
	}
	if err := bodyIDError(body); err != nil {
		return refuse(jsonrpc.CodeInvalidRequest, "Invalid request: "+err.Error())
	}
	if json.Valid(body) {
		if off, what := jsonx.InvalidText(body); off >= 0 {
			return refuse(jsonrpc.CodeParseError, fmt.Sprintf("Parse error: %s at byte offset %d of the request: JSON text must be valid UTF-8 "+
				"(decoding would replace it with U+FFFD), so the request was not run; send the text as UTF-8", what, off))
		}
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
