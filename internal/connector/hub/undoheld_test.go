package hub

import (
	"context"
	"testing"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestUndoHeldNeedsAHostThatHoldsIt: an undo held to something, an
// expected_version or a caller's view of the file (MCP's remote_undo),
// is refused without being sent to a host that does not announce
// proto.FeatureUndoHeld, which would ignore both and revert the newest
// change whoever made it. A plain undo still goes.
func TestUndoHeldNeedsAHostThatHoldsIt(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	old := dial(t, srv, "old", proto.ReadWrite, func(*proto.Op) *proto.Result { return ok(ops.UndoResult{Path: "a.txt"}) })
	r, err := h.Remote("old")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  ops.UndoRequest
		sent bool
	}{
		{"expected_version", ops.UndoRequest{Path: "a.txt", ExpectedVersion: "v1"}, false},
		{"a caller's view", ops.UndoRequest{Path: "a.txt", Caller: "mcp:s1"}, false},
		{"plain", ops.UndoRequest{Path: "a.txt"}, true},
	} {
		old.mu.Lock()
		before := len(old.ops)
		old.mu.Unlock()
		_, err := r.Undo(context.Background(), tc.req)
		old.mu.Lock()
		sent := len(old.ops) > before
		old.mu.Unlock()
		if sent != tc.sent || (err == nil) != tc.sent || (err != nil && !fserr.Is(err, fserr.BadRequest)) {
			t.Errorf("%s: err %v, sent to the host %v; want sent %v", tc.name, err, sent, tc.sent)
		}
	}
}
