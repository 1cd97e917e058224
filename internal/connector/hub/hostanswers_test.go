package hub

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// rawHost is a host played by hand on a bare WebSocket: it sends what a
// test writes, byte for byte, and hands the test every frame the hub
// sends, so a test can break the protocol where connector.Conn would not.
type rawHost struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialRaw opens a connector WebSocket to the hub and says hello as name
// with limits, then waits for the welcome.
func dialRaw(t *testing.T, srv *httptest.Server, name string, mode proto.Mode, limits proto.Limits) *rawHost {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := &rawHost{t: t, ws: dialHub(ctx, t, srv)}
	t.Cleanup(func() { r.ws.CloseNow() })
	r.ws.SetReadLimit(64 << 20)
	r.sendJSON(map[string]any{"type": "hello", "protocol": proto.Protocol, "name": name, "roots": []string{"/r"},
		"mode": mode, "limits": limits})
	if typ, m := r.next(); typ != websocket.MessageText || m["type"] != proto.TypeWelcome {
		t.Fatalf("after hello the hub sent %v, want welcome", m)
	}
	return r
}

// send writes one message of typ as it is.
func (r *rawHost) send(typ websocket.MessageType, b []byte) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.ws.Write(ctx, typ, b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawHost) sendJSON(v any) {
	r.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	r.send(websocket.MessageText, b)
}

// read returns the next message, its JSON decoded when it is text (m) or
// its bytes when binary (b).
func (r *rawHost) read() (typ websocket.MessageType, m map[string]any, b []byte) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	typ, b, err := r.ws.Read(ctx)
	if err != nil {
		r.t.Fatalf("reading from the hub: %v", err)
	}
	if typ == websocket.MessageText {
		if err := json.Unmarshal(b, &m); err != nil {
			r.t.Fatalf("the hub sent %q: %v", b, err)
		}
	}
	return typ, m, b
}

func (r *rawHost) next() (websocket.MessageType, map[string]any) {
	typ, m, _ := r.read()
	return typ, m
}

// TestTinyChunksAreRaised: a host announcing chunk_bytes of 1 is sent the
// chunks of a large op at MinChunkBytes at least. At 1 byte a chunk, the hub
// cut a 256 MiB write into 256 Mi frames at once (gigabytes), one
// allocation each.
func TestTinyChunksAreRaised(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	r := dialRaw(t, srv, "tiny", proto.ReadWrite, proto.Limits{MaxMessageBytes: 4 << 10, ChunkBytes: 1})
	rem, err := h.Remote("tiny")
	if err != nil {
		t.Fatal(err)
	}
	content := []byte(strings.Repeat("x", 16<<10))
	go rem.Write(context.Background(), ops.WriteRequest{Path: "big.txt", Content: content})
	typ, start := r.next()
	if typ != websocket.MessageText || start["type"] != proto.TypeTransferStart {
		t.Fatalf("a write of %d bytes began with %v, want transfer_start", len(content), start)
	}
	total := int(start["total_bytes"].(float64))
	var sizes []int
	for got := 0; got < total; {
		typ, m, b := r.read()
		if typ != websocket.MessageBinary {
			t.Fatalf("after %d of %d bytes the hub sent %v, want a chunk", got, total, m)
		}
		sizes = append(sizes, len(b)-proto.ChunkHeaderBytes)
		got += len(b) - proto.ChunkHeaderBytes
	}
	for i, n := range sizes[:len(sizes)-1] {
		if n < proto.MinChunkBytes {
			t.Fatalf("chunk %d of %d carries %d bytes, want at least %d", i, len(sizes), n, proto.MinChunkBytes)
		}
	}
}

// TestHostErrorCodesAreFsplanes: a host's error reaches the caller with
// its code only when that is one of fsplane's stable codes. Any other (none
// at all, or a front's own such as unauthorized, which the HTTP front
// answers 401 as though the caller's key were wrong) is io_error, with
// the host's code and message in the message.
func TestHostErrorCodesAreFsplanes(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	r := dialRaw(t, srv, "odd", proto.ReadOnly, proto.DefaultLimits)
	rem, err := h.Remote("odd")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		code, wantCode, wantIn string
	}{
		{"not_found", "not_found", "no such file"},
		{"stale_version", "stale_version", "no such file"},
		{"", "io_error", `error code ""`},
		{"unauthorized", "io_error", `error code "unauthorized"`},
		{"Not Found", "io_error", `error code "Not Found"`},
	} {
		errc := make(chan error, 1)
		go func() {
			_, err := rem.Read(context.Background(), ops.ReadRequest{Path: "a.txt"})
			errc <- err
		}()
		_, op := r.next()
		r.sendJSON(map[string]any{"type": "result", "op_id": op["op_id"], "ok": false,
			"error": map[string]any{"code": tt.code, "message": "no such file"}})
		err := <-errc
		e, isF := fserr.As(err)
		if !isF || string(e.Code) != tt.wantCode || !strings.Contains(e.Message, tt.wantIn) || !strings.Contains(e.Message, "no such file") {
			t.Errorf("host code %q: the call failed with %#v, want code %s and a message with %q and the host's", tt.code, err, tt.wantCode, tt.wantIn)
		}
	}
}

// TestLostAnswerMayHaveApplied: when the hub aborts a host's result on its
// way in (here its SHA-256 does not match), the host ran the op: the
// caller is told it may have been applied and to re-read, as after a
// disconnect, not just "transfer aborted", which read as though nothing
// had happened.
func TestLostAnswerMayHaveApplied(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{})
	r := dialRaw(t, srv, "lossy", proto.ReadWrite, proto.DefaultLimits)
	rem, err := h.Remote("lossy")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := rem.Write(context.Background(), ops.WriteRequest{Path: "a.txt", Content: []byte("new\n")})
		errc <- err
	}()
	_, op := r.next()
	res, err := proto.Encode(&proto.Result{OpID: op["op_id"].(string), OK: true, Result: json.RawMessage(`{"path":"/r/a.txt"}`)})
	if err != nil {
		t.Fatal(err)
	}
	start, frames, end := proto.Split(1, op["op_id"].(string), proto.TypeResult, res, 1<<10)
	start.Type, end.Type, start.SHA256 = proto.TypeTransferStart, proto.TypeTransferEnd, strings.Repeat("0", 64)
	r.sendJSON(start)
	for _, f := range frames {
		r.send(websocket.MessageBinary, f)
	}
	r.sendJSON(end)
	err = <-errc
	e, ok := fserr.As(err)
	if !ok || e.Code != fserr.Unavailable || !strings.Contains(e.Message, "may or may not have been applied: re-read before retrying") || e.Retryable {
		t.Errorf("the write failed with %#v, want unavailable, not retryable, saying it may have been applied", err)
	}
}
