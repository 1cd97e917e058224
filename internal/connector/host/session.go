package host

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/sendq"
)

// dial opens the WebSocket, authenticating with the token and requesting
// the protocol's subprotocol, and classifies failures. It also returns the
// FrameConn under the WebSocket (nil if the transport did not dial one).
func (h *Host) dial(ctx context.Context) (*websocket.Conn, *connector.FrameConn, error) {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	var fc *connector.FrameConn
	ctx = context.WithValue(ctx, frameSlot{}, &fc)
	hdr := http.Header{}
	if h.opts.Token != "" {
		hdr.Set("Authorization", "Bearer "+h.opts.Token)
	}
	ws, resp, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{
		HTTPClient:   h.client,
		HTTPHeader:   hdr,
		Subprotocols: []string{proto.Protocol},
	})
	if err != nil {
		return nil, nil, h.scrub(h.dialError(resp, err))
	}
	if ws.Subprotocol() != proto.Protocol {
		_ = ws.Close(websocket.StatusProtocolError, "subprotocol "+proto.Protocol+" required")
		return nil, nil, fmt.Errorf("%w: the server accepted the WebSocket without subprotocol %s", ErrProtocol, proto.Protocol)
	}
	return ws, fc, nil
}

// frameSlot keys the context value through which the transport's dialer
// hands dial the FrameConn it made.
type frameSlot struct{}

// dialFrameConn dials like the default transport and wraps the connection
// in a FrameConn, so each message the host sends (a result, a chunk) leaves
// in one write instead of one per 4 KiB (see connector.FrameConn).
func dialFrameConn(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// A download on a slow uplink then queues in the host, not in
		// the kernel, and an answer written meanwhile waits for one
		// chunk, not for megabytes (see sendq).
		_ = sendq.Bound(c)
		fc := connector.NewFrameConn(c)
		if slot, ok := ctx.Value(frameSlot{}).(**connector.FrameConn); ok {
			*slot = fc
		}
		return fc, nil
	}
}

// dialError explains a failed dial: the HTTP status and the first line of
// the hub's answer when the upgrade was refused, else the network or TLS
// error.
func (h *Host) dialError(resp *http.Response, err error) error {
	var (
		unknownCA *x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return fmt.Errorf("%w: %v", ErrUntrusted, certReason(err))
	}
	// net/http reports a TLS handshake that met a plain HTTP answer with
	// this text alone (the tls.RecordHeaderError is not kept), and a
	// retry can only meet it again.
	if err != nil && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return fmt.Errorf("%w: the hub answered plain HTTP to an https:// URL; use http:// for a hub without TLS (on this computer), or start the hub with --tls-cert and --tls-key", ErrProtocol)
	}
	if resp == nil {
		return &phaseError{err: err}
	}
	var body string
	if resp.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		body = string(b)
	}
	why := firstLine(body)
	what := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if why != "" {
		what += ": " + why
	}
	switch {
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(body, "HTTP request to an HTTPS server") && strings.HasPrefix(h.url, "ws://"):
		// net/http's answer to plain HTTP on a TLS port: the same URL
		// with https:// reaches the hub.
		return fmt.Errorf("%w: use %s", ErrNeedsTLS, h.tlsURL())
	case resp.StatusCode == http.StatusForbidden && strings.Contains(body, proto.NoHostsRefusal):
		return fmt.Errorf("%w (%s)", ErrHubHasNoToken, what)
	case resp.StatusCode == http.StatusUnauthorized && h.opts.Token == "":
		// Without the hub's text: it can only guess "missing or wrong",
		// and the host knows which.
		return fmt.Errorf("%w (HTTP %d %s)", ErrTokenMissing, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w (%s)", ErrUnauthorized, what)
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusOK, http.StatusUpgradeRequired, http.StatusBadRequest:
		return fmt.Errorf("%w (%s)", ErrProtocol, what)
	}
	return fmt.Errorf("the hub refused the connection (%s)", what)
}

// tlsURL is the URL the person gave with https:// in place of http://,
// its query masked, for advice.
func (h *Host) tlsURL() string {
	u, err := url.Parse(h.url)
	if err != nil {
		return "https://"
	}
	u.Scheme = "https"
	u.Path, u.RawPath = strings.TrimSuffix(u.Path, Path), ""
	return RedactURL(u.String())
}

// certReason is the x509 part of a TLS error, without the dial wrapping.
func certReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "tls: "); i >= 0 {
		return msg[i:]
	}
	if i := strings.Index(msg, "x509: "); i >= 0 {
		return msg[i:]
	}
	return msg
}

// firstLine returns s's first non-empty line, printable and at most 200
// characters: it comes from the network and goes to a terminal.
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		return Printable(l, 200)
	}
	return ""
}

// Printable makes text from the hub safe to show on a terminal: control
// characters (escape sequences included) become '?', and it is cut to max
// runes (0 means no limit).
func Printable(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if max > 0 && n == max {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) && r != ' ' {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// session is one live connection: its context (cancelled when it ends,
// which drops the operations in flight), its Conn and its operations.
type session struct {
	h        *Host
	conn     *connector.Conn
	ctx      context.Context
	cancel   context.CancelCauseFunc
	welcomed chan struct{} // closed at the first welcome

	mu       sync.Mutex
	hostID   string
	inflight map[string]context.CancelCauseFunc
}

func newSession(parent context.Context, h *Host, conn *connector.Conn) *session {
	ctx, cancel := context.WithCancelCause(withConn(parent, conn))
	return &session{h: h, conn: conn, ctx: ctx, cancel: cancel, welcomed: make(chan struct{}),
		inflight: map[string]context.CancelCauseFunc{}}
}

// HostID returns the id the hub assigned, once welcomed.
func (s *session) HostID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostID
}

// end closes the connection and drops its operations.
func (s *session) end() {
	s.h.helloMu.Lock()
	if s.h.live == s {
		s.h.live = nil
	}
	s.h.helloMu.Unlock()
	s.cancel(errDisconnected)
	s.conn.Close()
}

// handle receives each message Conn.Run reads, on its reading goroutine.
// It runs an operation right there: most answer within the Conn's handoff
// budget (inlineBudget), and reading moves on without a slower one.
func (s *session) handle(msg any) {
	h := s.h
	switch m := msg.(type) {
	case *proto.Welcome:
		s.mu.Lock()
		first := s.hostID == ""
		if first {
			s.hostID = Printable(m.HostID, 100)
		}
		s.mu.Unlock()
		if first {
			s.conn.Negotiate(m.Limits)
			close(s.welcomed)
		}
	case *proto.Op:
		s.startOp(m)
	case *proto.Cancel:
		s.mu.Lock()
		cancel := s.inflight[m.OpID]
		s.mu.Unlock()
		if cancel != nil {
			cancel(errCancelled)
		}
	case *proto.TransferAbort:
		h.emit(Event{Kind: EventNotice, Message: "the hub aborted a transfer" + opSuffix(m.OpID) + ": " + Printable(m.Reason, 200)})
	case *proto.ErrorMsg:
		h.log.Warn("Error from the hub", "code", m.Code, "message", m.Message)
		h.emit(Event{Kind: EventNotice, Message: "hub error " + Printable(m.Code, 50) + ": " + Printable(m.Message, 200)})
	case *proto.Hello, *proto.Result, *proto.TransferStart, *proto.TransferEnd:
		// Not for a host (transfers are reassembled by Conn).
		h.log.Warn("Unexpected message from the hub", "type", fmt.Sprintf("%T", m))
	}
}

// onAbort learns of inbound transfers this side aborted (an op too large,
// corrupt or idle): the op never arrives, so there is nothing to answer.
func (s *session) onAbort(a proto.TransferAbort) {
	s.h.emit(Event{Kind: EventNotice, Message: "aborted a transfer from the hub" + opSuffix(a.OpID) + ": " + Printable(a.Reason, 200)})
}

func opSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " (op " + Printable(id, 64) + ")"
}

// startOp registers op and runs it on the calling goroutine (the Conn
// hands reading off when it takes long; see inlineBudget) — unless every
// op slot is taken: then it waits for one on a goroutine of its own, so a
// queue of ops never holds the reader a budget per op. An op that finds
// the queue full (see MaxQueuedOps) is answered busy at once and not run.
func (s *session) startOp(op *proto.Op) {
	h := s.h
	start := time.Now()
	s.mu.Lock()
	if _, dup := s.inflight[op.OpID]; dup {
		s.mu.Unlock()
		s.refuse(op, start, fserr.New(fserr.BadRequest, op.Op, op.Path, "duplicate op_id %q: an operation with this id is running", op.OpID))
		return
	}
	haveSlot := false
	select {
	case h.opSlots <- struct{}{}:
		haveSlot = true
	default:
		if !h.enqueue(int64(len(op.Args))) {
			s.mu.Unlock()
			e := fserr.New(fserr.Busy, op.Op, op.Path, "host %s is busy: %d operations are running and as many as it holds are waiting; this %s was not run", h.opts.Name, MaxConcurrentOps, op.Op).
				WithHint("retry in a moment, or send fewer operations at once")
			e.Retryable = true
			s.refuse(op, start, e)
			return
		}
	}
	// streamCtx ends with a cancel from the hub or the session; ctx also
	// at the op's timeout, which bounds running the op, not the data
	// transfer a download sends after its result.
	streamCtx, cancel := context.WithCancelCause(s.ctx)
	s.inflight[op.OpID] = cancel
	s.mu.Unlock()
	ctx := streamCtx
	// A timeout too large for a time.Duration is no timeout.
	// The deadline is an alarm on the connection's timer, not a context
	// timer per op (see connector.Alarms).
	if op.TimeoutMS > 0 && op.TimeoutMS <= math.MaxInt64/int64(time.Millisecond) {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		due := s.conn.After(time.Duration(op.TimeoutMS)*time.Millisecond, func() { stop(errTimeout) })
		prev := cancel
		cancel = func(cause error) { due.Stop(); stop(cause); prev(cause) }
	}
	o := &runningOp{op: op, start: start, ctx: ctx, streamCtx: streamCtx, cancel: cancel}
	h.opsWG.Add(1)
	if haveSlot {
		defer h.opsWG.Done()
		s.run(o, true)
		return
	}
	go func() {
		defer h.opsWG.Done()
		s.run(o, false)
	}()
}

// refuse answers op with e without running it, on the reading goroutine
// (the Conn hands reading off if the send waits), after dropping op's
// args: a refused op holds no memory while its answer waits to be sent.
func (s *session) refuse(op *proto.Op, start time.Time, e *fserr.Error) {
	op.Args = nil
	w := wireError(op.Op, op.Path, e)
	s.answer(op, start, nil, w, w.Code)
}

// enqueue takes a place among the ops waiting for a slot, for args of n
// bytes, and reports whether there was one (see MaxQueuedOps).
func (h *Host) enqueue(n int64) bool {
	h.queueMu.Lock()
	defer h.queueMu.Unlock()
	if h.queued >= h.opts.queueOps || (h.queued > 0 && h.queuedBytes+n > h.opts.queueBytes) {
		return false
	}
	h.queued++
	h.queuedBytes += n
	return true
}

// dequeue gives back the place enqueue took.
func (h *Host) dequeue(n int64) {
	h.queueMu.Lock()
	defer h.queueMu.Unlock()
	h.queued--
	h.queuedBytes -= n
}

// runningOp is an op startOp registered.
type runningOp struct {
	op             *proto.Op
	start          time.Time
	ctx, streamCtx context.Context
	cancel         context.CancelCauseFunc
}

// run executes o, answers it and records it; haveSlot says whether an op
// slot is already held for it.
func (s *session) run(o *runningOp, haveSlot bool) {
	h, op, ctx, start := s.h, o.op, o.ctx, o.start
	if h.opts.Load != nil {
		defer h.opts.Load.Request()()
	}
	defer func() {
		s.mu.Lock()
		delete(s.inflight, op.OpID)
		s.mu.Unlock()
		o.cancel(nil)
	}()
	if !haveSlot {
		n := int64(len(op.Args))
		select {
		case h.opSlots <- struct{}{}:
			h.dequeue(n)
		case <-ctx.Done():
			h.dequeue(n)
			s.record(op, start, ctxResult(ctx, ctx.Err()), false)
			return
		}
	}
	var once sync.Once
	release := func() { once.Do(func() { <-h.opSlots }) }
	defer release()
	res, after, err := execute(ctx, h.eng, h.Mode(), op, func(v any, stack []byte) {
		h.log.Error("Operation panicked", "op", op.Op, "panic", errString(v), "stack", string(stack))
	})
	if err != nil {
		if why := ctxResult(ctx, err); why != "" {
			s.record(op, start, why, false)
			return
		}
		e := wireError(op.Op, op.Path, err)
		s.answer(op, start, nil, e, e.Code)
		return
	}
	if after == nil {
		s.answer(op, start, res, nil, ResultOK)
		recycleResult(res)
		return
	}
	err = s.conn.Send(s.ctx, res)
	recycleResult(res)
	if err != nil {
		after.release()
		s.record(op, start, ResultOK, false)
		return
	}
	// The op is done; its data transfer is bounded by the Conn's transfer
	// slots, not by op slots, which a queue of slow downloads would
	// otherwise hold from every other op for as long as they take.
	release()
	result := ResultOK
	if err := after.stream(o.streamCtx, s.conn, op.OpID); err != nil {
		result = ctxResult(o.streamCtx, err)
		if result == "" {
			result = "io_error"
		}
		h.log.Info("Data transfer failed", "op", op.Op, "op_id", op.OpID, "err", err)
	}
	s.record(op, start, result, result == ResultOK)
}

// answer sends op's result (res, or a failure with e) and records it.
func (s *session) answer(op *proto.Op, start time.Time, res *proto.Result, e *proto.Error, result string) {
	if res == nil {
		res = &proto.Result{OpID: op.OpID, Error: e}
	}
	err := s.conn.Send(s.ctx, res)
	if err != nil {
		s.h.log.Info("Result not delivered", "op", op.Op, "op_id", op.OpID, "err", err)
		if s.ctx.Err() == nil && errors.Is(err, connector.ErrTooLarge) {
			// A result too large even for a transfer: say so instead.
			e := &proto.Error{Code: "too_large", Message: fmt.Sprintf("the %s result cannot be sent: %v", op.Op, err)}
			err = s.conn.Send(s.ctx, &proto.Result{OpID: op.OpID, Error: e})
			result = e.Code
		}
	}
	s.record(op, start, result, err == nil)
}

// record emits op's log record.
func (s *session) record(op *proto.Op, start time.Time, result string, delivered bool) {
	s.h.emit(Event{Kind: EventOp, Time: start, Op: &OpRecord{
		ID: op.OpID, Op: op.Op, Path: op.Path, Result: result, Duration: time.Since(start), Delivered: delivered,
	}})
}
