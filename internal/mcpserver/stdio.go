package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/edit"
)

// StdioTransport is the transport of `fsplane mcp`: newline-delimited
// JSON-RPC over r and w, read by the SDK's own transport. It writes
// successful responses itself. The SDK re-encodes every outgoing message
// with encoding/json, which re-scans an already encoded result byte by
// byte — about 1 ms for a 2,000-line read; here a response is its result
// with the envelope around it, one write. Everything else (requests and
// notifications to the client, error responses) is written by the SDK.
//
// JSON-RPC batches (protocol versions before 2025-06-18) must be answered
// with one array, which only the SDK's transport assembles: once a batch
// is seen on r, every message is left to it. Unlike the SDK's transport on
// its own, this one does not refuse batches on 2025-06-18 and later (the
// SDK tells the negotiated version only to its own connections).
//
// r and w are not closed. Each Connect reads r and writes w; use a
// transport for one session.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &stdioTransport{r: r, w: w}
}

type stdioTransport struct {
	r io.Reader
	w io.Writer
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &stdioConn{w: &lockedWriter{w: t.w}}
	tap := &batchTap{r: t.r, lineStart: true, seen: &c.batched}
	inner, err := (&mcp.IOTransport{Reader: io.NopCloser(tap), Writer: c.w}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	c.Connection = inner
	return c, nil
}

// stdioConn is the SDK's connection with Write taken over for successful
// responses.
type stdioConn struct {
	mcp.Connection
	w       *lockedWriter
	batched atomic.Bool // a batch was read: leave every write to the SDK
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || !resp.ID.IsValid() || len(resp.Result) == 0 ||
		c.batched.Load() || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return c.Connection.Write(ctx, msg)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return c.Connection.Write(ctx, msg)
	}
	const head, mid, tail = `{"jsonrpc":"2.0","id":`, `,"result":`, "}\n"
	line := make([]byte, 0, len(head)+len(id)+len(mid)+len(resp.Result)+len(tail))
	line = append(line, head...)
	line = append(line, id...)
	line = append(line, mid...)
	line = append(line, resp.Result...)
	line = append(line, tail...)
	_, err = c.w.Write(line)
	return err
}

// lockedWriter serialises whole-message writes from the SDK's transport
// and from stdioConn, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// batchTap passes r through and sets seen when a JSON-RPC batch may
// start: a '[' as the first byte that is not white space at the start of
// the stream or after a line break. Messages are one per line, and a raw
// line break cannot occur inside a JSON string, so every batch is seen
// (the SDK requires a line break right after each message). A
// pretty-printed message whose line starts with '[' is seen too, which
// only costs the fast path.
type batchTap struct {
	r         io.Reader
	lineStart bool // no byte but white space since a line break
	seen      *atomic.Bool
}

func (t *batchTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if !t.seen.Load() && t.scan(p[:n]) {
		t.seen.Store(true)
	}
	return n, err
}

// scan reports whether b, read after the bytes already scanned, holds a
// batch start.
func (t *batchTap) scan(b []byte) bool {
	for len(b) > 0 {
		if t.lineStart {
			switch b[0] {
			case '[':
				return true
			case ' ', '\t', '\r', '\n':
			default:
				t.lineStart = false
			}
			b = b[1:]
			continue
		}
		i := edit.IndexLineBreak(b)
		if i < 0 {
			return false
		}
		t.lineStart = true
		b = b[i+1:]
	}
	return false
}
