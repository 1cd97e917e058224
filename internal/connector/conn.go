// Package connector carries fsplane's connector protocol
// (docs/connector-protocol.md) over a WebSocket. Conn is the transport both
// sides share: it sends messages (as one text frame, or as a transfer of
// binary chunks when larger than the negotiated limit), reads frames,
// reassembles transfers and keeps the connection alive with pings. The hub
// (package hub) and the host (package host) build on it.
package connector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// Keepalive timing: a ping every PingInterval; a peer silent for
// PingTimeout is gone.
const (
	PingInterval = 15 * time.Second
	PingTimeout  = 45 * time.Second
)

// ErrTooLarge is returned (wrapped) by Send for a message larger than the
// negotiated transfer limit; the sender should answer too_large instead.
var ErrTooLarge = errors.New("connector: message exceeds the transfer limit")

// Conn is one end of a connector WebSocket.
//
// Concurrency: Send may be called from any goroutine; Run must be called
// once and owns reading. Close may be called any time, more than once, and
// unblocks Run.
type Conn struct {
	ws     *websocket.Conn
	limits atomic.Pointer[proto.Limits]
	nextID atomic.Uint32
	out    chan struct{} // outbound transfer slots
	onAbrt func(proto.TransferAbort)
	closed chan struct{}
	once   sync.Once

	sinkMu    sync.Mutex
	sinks     map[string]DataSink // op id → receiver of its data transfer
	forgotten []string            // op ids whose streams must be failed

	frames *FrameConn // when set, each message goes out in one write
}

// New wraps ws. limits are this side's own; Negotiate lowers them to the
// peer's once known.
func New(ws *websocket.Conn, limits proto.Limits) *Conn {
	l := proto.DefaultLimits.Merge(limits)
	c := &Conn{ws: ws, out: make(chan struct{}, l.MaxConcurrentTransfers), closed: make(chan struct{})}
	c.limits.Store(&l)
	// A transfer chunk plus its header, or a message up to the limit,
	// must fit one read.
	ws.SetReadLimit(max(l.MaxMessageBytes, int64(l.ChunkBytes)) + 64<<10)
	return c
}

// GatherWrites makes each message this side sends leave in one write on
// fc, the connection under the WebSocket (see FrameConn). Call it before
// Run and Send.
func (c *Conn) GatherWrites(fc *FrameConn) { c.frames = fc }

// write sends one WebSocket message.
func (c *Conn) write(ctx context.Context, typ websocket.MessageType, b []byte) error {
	if c.frames == nil {
		return c.ws.Write(ctx, typ, b)
	}
	c.frames.hold()
	err := c.ws.Write(ctx, typ, b)
	if rerr := c.frames.release(); err == nil {
		err = rerr
	}
	return err
}

// Limits returns the limits in force.
func (c *Conn) Limits() proto.Limits { return *c.limits.Load() }

// Negotiate applies the smaller of this side's and the peer's limits.
func (c *Conn) Negotiate(peer proto.Limits) {
	l := c.Limits().Merge(peer)
	c.limits.Store(&l)
}

// Send delivers msg (a *proto.Op, *proto.Result, …). A message whose
// encoding exceeds MaxMessageBytes moves as a transfer; at most
// MaxConcurrentTransfers of those are in flight, and Send waits for a slot
// (or ctx).
func (c *Conn) Send(ctx context.Context, msg any) error {
	b, err := proto.Encode(msg)
	if err != nil {
		return err
	}
	l := c.Limits()
	if int64(len(b)) <= l.MaxMessageBytes {
		return c.write(ctx, websocket.MessageText, b)
	}
	if int64(len(b)) > l.MaxTransferBytes {
		return fmt.Errorf("%w: message of %d bytes, the transfer limit is %d", ErrTooLarge, len(b), l.MaxTransferBytes)
	}
	release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	kind, opID := proto.TypeOp, ""
	switch m := msg.(type) {
	case *proto.Op:
		opID = m.OpID
	case *proto.Result:
		kind, opID = proto.TypeResult, m.OpID
	}
	start, frames, end := proto.Split(c.nextID.Add(1), opID, kind, b, l.ChunkBytes)
	if err := c.sendText(ctx, start); err != nil {
		return err
	}
	for _, f := range frames {
		if err := c.write(ctx, websocket.MessageBinary, f); err != nil {
			return err
		}
	}
	return c.sendText(ctx, end)
}

func (c *Conn) sendText(ctx context.Context, msg any) error {
	b, err := proto.Encode(msg)
	if err != nil {
		return err
	}
	return c.write(ctx, websocket.MessageText, b)
}

// Handler receives each complete message Run reads: decoded messages of
// the protocol (transfers already reassembled), in arrival order, on Run's
// goroutine. It must not block for long; long work goes to a goroutine.
type Handler func(msg any)

// Run reads until the connection ends or ctx is done, pinging the peer
// meanwhile. Malformed messages are answered with an error message and
// skipped; transfer failures are answered with transfer_abort (and passed
// to OnAbort so a waiting operation can fail). It returns why reading
// stopped.
//
// Frames are read into one reused buffer and handled on the reading
// goroutine, so a data transfer costs no allocation per chunk; a second
// goroutine expires idle transfers.
func (c *Conn) Run(ctx context.Context, handle Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.keepalive(ctx)
	r := &reader{c: c, ctx: ctx, handle: handle, asm: proto.NewAssembler(c.Limits()), streams: map[uint32]*dataStream{}}
	defer r.close()
	go r.expire(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-c.closed:
		}
		cancel() // unblocks the read below
	}()
	var buf bytes.Buffer
	for {
		typ, rd, err := c.ws.Reader(ctx)
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(rd)
		}
		if err != nil {
			select {
			case <-c.closed:
				return errors.New("connector: connection closed")
			default:
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.closeNow()
			return err
		}
		r.frame(typ, buf.Bytes())
	}
}

// reader is the state of Run: open transfers and data streams, guarded by
// mu against the expiry goroutine.
type reader struct {
	c       *Conn
	ctx     context.Context
	handle  Handler
	mu      sync.Mutex
	asm     *proto.Assembler
	streams map[uint32]*dataStream
}

func (r *reader) frame(typ websocket.MessageType, data []byte) {
	c, ctx := r.c, r.ctx
	if typ == websocket.MessageBinary {
		id, idx, payload, err := proto.DecodeChunk(data)
		r.mu.Lock()
		defer r.mu.Unlock()
		if d, ok := r.streams[id]; ok && err == nil {
			if err := d.chunk(idx, payload, time.Now()); err != nil {
				r.failStream(id, err.Error())
			}
			return
		}
		if err == nil {
			err = r.asm.Chunk(id, idx, payload, time.Now())
		}
		if err != nil {
			ts, _ := r.asm.Abort(id)
			ts.TransferID = id
			c.abort(ctx, ts, err.Error())
		}
		return
	}
	msg, err := proto.Decode(data)
	if err != nil {
		_ = c.sendText(ctx, &proto.ErrorMsg{Code: "bad_message", Message: err.Error()})
		return
	}
	switch m := msg.(type) {
	case *proto.TransferStart:
		r.mu.Lock()
		defer r.mu.Unlock()
		if m.Kind == proto.KindData {
			r.startStream(m)
			return
		}
		if err := r.asm.Start(*m, time.Now()); err != nil {
			c.abort(ctx, *m, err.Error())
		}
	case *proto.TransferEnd:
		r.mu.Lock()
		if d, ok := r.streams[m.TransferID]; ok {
			delete(r.streams, m.TransferID)
			r.mu.Unlock()
			err := d.end(m.SHA256)
			d.sink.Finish(err)
			if err != nil {
				c.abort(ctx, d.start, err.Error())
			}
			return
		}
		ts, data, err := r.asm.End(m.TransferID)
		r.mu.Unlock()
		if err != nil {
			c.abort(ctx, ts, err.Error())
			return
		}
		inner, err := proto.Decode(data)
		if err != nil {
			c.abort(ctx, ts, err.Error())
			return
		}
		r.handle(inner)
	case *proto.TransferAbort:
		r.mu.Lock()
		if d, ok := r.streams[m.TransferID]; ok {
			delete(r.streams, m.TransferID)
			d.sink.Finish(errors.New("the sender aborted: " + m.Reason))
		}
		r.asm.Abort(m.TransferID)
		r.mu.Unlock()
		r.handle(m)
	default:
		r.handle(msg)
	}
}

// startStream opens an inbound data transfer (mu held).
func (r *reader) startStream(m *proto.TransferStart) {
	c := r.c
	sink, ok := c.takeSink(m.OpID)
	switch {
	case !ok:
		c.abort(r.ctx, *m, "no receiver for the data of op "+m.OpID)
	case len(r.streams)+r.asm.Open() >= c.Limits().MaxConcurrentTransfers:
		sink.Finish(proto.ErrTooManyTransfers)
		c.abort(r.ctx, *m, proto.ErrTooManyTransfers.Error())
	case m.TotalBytes > c.Limits().MaxTransferBytes:
		sink.Finish(proto.ErrTransferTooLarge)
		c.abort(r.ctx, *m, proto.ErrTransferTooLarge.Error())
	default:
		r.streams[m.TransferID] = &dataStream{start: *m, sink: sink, hash: sha256.New(), last: time.Now()}
	}
}

// failStream ends a data stream with reason (mu held).
func (r *reader) failStream(id uint32, reason string) {
	d := r.streams[id]
	delete(r.streams, id)
	d.sink.Finish(errors.New(reason))
	r.c.abort(r.ctx, d.start, reason)
}

// expire aborts idle transfers and the streams of abandoned operations.
func (r *reader) expire(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.mu.Lock()
			for _, ts := range r.asm.Expired(now) {
				r.c.abort(ctx, ts, "transfer idle for 30 s")
			}
			for id, d := range r.streams {
				if now.Sub(d.last) > proto.IdleTimeout {
					r.failStream(id, "transfer idle for 30 s")
				}
			}
			r.c.sinkMu.Lock()
			gone := r.c.forgotten
			r.c.forgotten = nil
			r.c.sinkMu.Unlock()
			for _, op := range gone {
				for id, d := range r.streams {
					if d.start.OpID == op {
						r.failStream(id, "the operation was abandoned")
					}
				}
			}
			r.mu.Unlock()
		}
	}
}

// close fails the streams still open when Run returns.
func (r *reader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, d := range r.streams {
		delete(r.streams, id)
		d.sink.Finish(errors.New("connection closed during the data transfer"))
	}
}

// abort tells the peer a transfer failed and tells our own side, so an
// operation waiting for the transferred message fails instead of hanging.
func (c *Conn) abort(ctx context.Context, ts proto.TransferStart, reason string) {
	msg := proto.TransferAbort{TransferID: ts.TransferID, OpID: ts.OpID, Reason: reason}
	_ = c.sendText(ctx, &msg)
	if c.onAbrt != nil {
		c.onAbrt(msg)
	}
}

// OnAbort registers f to learn of transfers this side aborted (call before
// Run).
func (c *Conn) OnAbort(f func(proto.TransferAbort)) { c.onAbrt = f }

func (c *Conn) keepalive(ctx context.Context) {
	t := time.NewTicker(PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, PingTimeout)
			err := c.ws.Ping(pctx)
			cancel()
			if err != nil {
				c.Close()
				return
			}
		}
	}
}

// Close ends the connection.
func (c *Conn) Close() {
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.Close(websocket.StatusNormalClosure, "")
	})
}

// closeNow drops a connection that already failed, without a handshake.
func (c *Conn) closeNow() {
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.CloseNow()
	})
}

// Done is closed when the connection is closed.
func (c *Conn) Done() <-chan struct{} { return c.closed }
