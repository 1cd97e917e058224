package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioMaxLine is the longest input line StdioTransport accepts: 16 MiB,
// the SDK's own bound (mcp.DefaultMaxLineLength), line break excluded.
// It bounds what one request may hold in memory while it is read and
// decoded; files bigger than that go through the HTTP API's upload.
const StdioMaxLine = mcp.DefaultMaxLineLength

// stdioDrainTimeout bounds how long a session whose input has ended waits
// for the calls it already received to be answered.
const stdioDrainTimeout = time.Minute

// StdioTransport is the transport of `fsplane mcp`: newline-delimited
// JSON-RPC over r and w, on top of the SDK's own transport
// (mcp.IOTransport).
//
// Input. The transport reads r itself, one line at a time, and hands the
// SDK only lines that hold one well-formed JSON-RPC message (or batch), so
// that no input can end the session. A line that is not answered by the
// SDK is answered here, through the same writer, and the session goes on:
//   - not one JSON value: -32700 (parse error), id null;
//   - JSON but not a JSON-RPC 2.0 message (no or another "jsonrpc", an
//     object or boolean id, an empty batch, a batch with a bad member,
//     nesting deeper than the SDK's 1000 levels): -32600 (invalid
//     request), with the request's id when it can be read;
//   - an id MCP forbids and the SDK would mishandle: null (dropped as a
//     notification, unanswered), a number with a fraction, or an integer
//     a float64 does not hold exactly (past 2^53, or outside int64; each
//     answered as another id): -32600, id null;
//   - a call whose id is that of a call still in flight (or repeated
//     within its batch): -32600, id null, so that the error is not taken
//     for the answer to the first call;
//   - text that is not valid UTF-8 (raw bytes, or a \u escape of half a
//     surrogate pair), which decoding would silently turn into U+FFFD:
//     -32602 (invalid params) with the id of a call, -32700 with id null
//     otherwise; the request is not run;
//   - longer than StdioMaxLine bytes: -32600 naming the limit, with the
//     id when the line's first 4 KiB or its end show it (clients put it
//     at either end), else null. The line is discarded as it is read,
//     never held whole.
//
// Blank lines are skipped. A message must not span lines (as MCP's stdio
// transport specifies): a pretty-printed one is a parse error per line.
//
// End of input. When r reaches EOF, the calls already received are still
// answered (and take effect) before the SDK is told the input ended and
// the session closes: the transport waits until every call it handed on
// has been answered, the session is closed, or a minute has passed,
// whichever is first. A call still running then is cancelled; its answer
// may be lost.
//
// Output. Successful responses are written here: the SDK re-encodes every
// outgoing message with encoding/json, which re-scans an already encoded
// result byte by byte — about 1 ms for a 2,000-line read; here a response
// is its result with the envelope around it, one write. Everything else
// (requests and notifications to the client, error responses) is written
// by the SDK, those it sends with code 0 — plain Go errors, such as a
// call before initialize — given a JSON-RPC code first (withCode). Whole
// messages are written one at a time, so lines never interleave. A call
// the client cancelled (notifications/cancelled while it was in flight)
// is not answered at all, as MCP asks: neither the error of a search cut
// short nor the result of a change that completed all the same.
//
// JSON-RPC batches (protocol versions before 2025-06-18) must be answered
// with one array, which only the SDK's transport assembles: once a batch
// has been read, every message is left to it. It is handed a batch of
// the calls alone: the other members (notifications, responses) go on
// lines of their own (see splitBatch), since the SDK's transport waits
// for an answer to each member of a batch, notifications included. A
// batch of notifications alone is answered by nothing, as JSON-RPC says.
// Unlike the SDK's transport on its own, this one does not refuse batches
// on 2025-06-18 and later (the SDK tells the negotiated version only to
// its own connections).
//
// r and w are not closed. Each Connect reads r and writes w; use a
// transport for one session. A read of r that is under way when the
// session ends is left to return (stdin cannot be interrupted portably);
// what it read is dropped.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &stdioTransport{r: r, w: w, maxLine: StdioMaxLine, drain: stdioDrainTimeout}
}

type stdioTransport struct {
	r       io.Reader
	w       io.Writer
	maxLine int           // longest line passed on, line break excluded; tests lower it
	drain   time.Duration // how long EOF waits for outstanding calls; tests lower it
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:         &lockedWriter{w: t.w},
		inFlight:  map[jsonrpc.ID]struct{}{},
		cancelled: map[jsonrpc.ID]struct{}{},
		idle:      make(chan struct{}, 1),
		closed:    make(chan struct{}),
	}
	pr, pw := io.Pipe()
	// The SDK's own line cap is off: it reads only lines the reader below
	// has bounded and checked.
	inner, err := (&mcp.IOTransport{Reader: pr, Writer: c.w, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		pr.Close()
		return nil, err
	}
	c.Connection = inner
	in := &lineReader{br: bufio.NewReaderSize(t.r, 64<<10), maxLine: t.maxLine}
	go c.feed(in, pw, t.drain)
	return c, nil
}

// stdioConn is the SDK's connection with Write taken over for successful
// responses, fed by feed.
type stdioConn struct {
	mcp.Connection
	w       *lockedWriter
	batched atomic.Bool // a batch was read: leave every write to the SDK

	// inFlight holds the ids of the calls handed to the SDK and not yet
	// answered; an id leaves it just before its response is written (the
	// client may reuse it as soon as it reads the response). writing
	// counts responses being written. The input has been answered when
	// both are empty, which idle signals.
	mu       sync.Mutex
	inFlight map[jsonrpc.ID]struct{}
	writing  int
	idle     chan struct{}
	// cancelled holds the ids in inFlight that the client cancelled
	// (notifications/cancelled): their responses are dropped (see Write).
	cancelled map[jsonrpc.ID]struct{}

	closeOnce sync.Once
	closed    chan struct{} // closed by Close
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	if resp.ID.IsValid() {
		cancelled := c.answering(resp.ID)
		defer c.answered()
		if cancelled && !c.batched.Load() {
			// MCP: the receiver of notifications/cancelled should not
			// answer the cancelled request, and clients that forgot it
			// report the answer as an error of their own (the TypeScript
			// SDK: "Received a response for an unknown message ID").
			// A batch's answer is the SDK's to assemble, every member
			// included.
			return nil
		}
	}
	if resp.Error != nil {
		msg = withCode(resp)
	}
	if resp.Error != nil || !resp.ID.IsValid() || len(resp.Result) == 0 ||
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

// uncoded maps what the SDK's errors without a JSON-RPC code say to the
// code for it, first match wins; an error not listed is -32603.
var uncoded = []struct {
	says string
	code int64
}{
	{"is invalid during session initialization", jsonrpc.CodeInvalidRequest}, // a call before initialize
	{"duplicate", jsonrpc.CodeInvalidRequest},                                // a second initialize
	{"before", jsonrpc.CodeInvalidRequest},                                   // initialized before initialize
	{"params", jsonrpc.CodeInvalidParams},                                    // missing required "params"
	{"cursor", jsonrpc.CodeInvalidParams},
	{"page token", jsonrpc.CodeInvalidParams},
	{"unmarshaling", jsonrpc.CodeInvalidParams},
}

// withCode is resp, or, when its error has no JSON-RPC code (the SDK
// sends a plain Go error as code 0, which JSON-RPC does not define and
// clients cannot act on), a copy with the code for it (uncoded).
func withCode(resp *jsonrpc.Response) jsonrpc.Message {
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		return resp
	}
	msg := resp.Error.Error()
	code := int64(jsonrpc.CodeInternalError)
	for _, u := range uncoded {
		if strings.Contains(msg, u.says) {
			code = u.code
			break
		}
	}
	coded := *resp
	coded.Error = &jsonrpc.Error{Code: code, Message: msg}
	return &coded
}

// Close closes the SDK's connection (and with it the pipe feed writes
// to) and ends feed's wait for outstanding calls.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// answering records that the response to call id is about to be written,
// and reports whether the client cancelled the call.
func (c *stdioConn) answering(id jsonrpc.ID) (cancelled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inFlight, id)
	_, cancelled = c.cancelled[id]
	delete(c.cancelled, id)
	c.writing++
	return cancelled
}

// cancel records that the client cancelled call id, if it is in flight;
// a cancel of a call already answered (or never made) is ignored, as MCP
// allows, so that a later call reusing the id is answered.
func (c *stdioConn) cancel(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.inFlight[id]; ok {
		c.cancelled[id] = struct{}{}
	}
}

// answered records that a response has been written (or failed to be).
func (c *stdioConn) answered() {
	c.mu.Lock()
	c.writing--
	idle := c.writing <= 0 && len(c.inFlight) == 0
	c.mu.Unlock()
	if idle {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}

// register adds the ids of calls about to be handed to the SDK to
// inFlight. It fails, adding none, when one of them is in flight already
// or repeated among ids.
func (c *stdioConn) register(ids []jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		if _, dup := c.inFlight[id]; dup {
			for _, added := range ids[:i] {
				delete(c.inFlight, added)
			}
			return false
		}
		c.inFlight[id] = struct{}{}
	}
	return true
}

// busy reports whether a call handed on is unanswered.
func (c *stdioConn) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inFlight) > 0 || c.writing > 0
}

// feed reads the input line by line, answers the lines the SDK must not
// see and writes the others to pw, which the SDK's transport reads. At
// EOF it waits (see StdioTransport) before closing pw; another read
// error is passed on at once, and the line it cut short dropped. It returns when the input ends or the
// connection is closed.
func (c *stdioConn) feed(in *lineReader, pw *io.PipeWriter, drain time.Duration) {
	for {
		line, err := in.next()
		if err != nil && err != io.EOF {
			pw.CloseWithError(err)
			return
		}
		select {
		case <-c.closed:
			return // the session ended while the line was read
		default:
		}
		var reply []byte
		switch {
		case line.size > in.maxLine:
			reply = tooLong(line.id, line.size, in.maxLine)
		case len(line.text) > 0:
			var lines [][]byte
			reply, lines = c.admit(line.text)
			if reply == nil && lines == nil {
				lines = [][]byte{line.text}
			}
			for _, l := range lines {
				if _, werr := pw.Write(append(l, '\n')); werr != nil {
					return // the connection is closed
				}
			}
		}
		if reply != nil {
			// A failed write means the client is gone; the SDK's next
			// write fails too and ends the session.
			c.w.Write(reply)
		}
		if err == io.EOF {
			c.wait(drain)
			pw.Close()
			return
		}
	}
}

// wait returns once no call handed on is unanswered, the connection is
// closed, or timeout has passed.
func (c *stdioConn) wait(timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for c.busy() {
		select {
		case <-c.idle:
		case <-c.closed:
			return
		case <-timer.C:
			return
		}
	}
}

// lockedWriter serialises whole-message writes from the SDK's transport,
// stdioConn and feed, so lines never interleave.
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
