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

// WriteTimeout bounds one write to the WebSocket. Writes do not end with
// their caller's context (see Conn.write); a peer that takes no frame for
// this long has stopped reading, and the connection is closed.
const WriteTimeout = PingTimeout

// closeGrace bounds how long Close waits for the peer's close frame
// before it drops the connection.
const closeGrace = time.Second

// frameChunkBytes caps the payload this side puts in one frame: a text
// message over it goes out in fragments (a binary chunk frame, with its
// header, stays whole), a transfer chunk stays below the
// negotiated chunk_bytes (256 KiB by default). The WebSocket
// library gives a pong 5 s to be written, and a pong waits for the frame
// being written: a 64 KiB frame crosses even a 13 KB/s uplink in time,
// where a 256 KiB one needs 52 KB/s. The peer reads each frame sooner too.
const frameChunkBytes = 64 << 10

// errPeerAborted is the cause that ends an outbound transfer when the
// receiver sent transfer_abort for it: the sender stops and does not
// answer with an abort of its own.
var errPeerAborted = errors.New("connector: the receiver aborted the transfer")

// maxDropped bounds how many aborted inbound transfers a reader remembers
// in order to ignore their late frames; past it, each late frame is
// answered with transfer_abort again.
const maxDropped = 1024

// ErrClosed is what Run, Send and the transfers return once the
// connection is closed: by Close, or by the connection itself when the
// peer stopped answering pings or stopped reading (see PingTimeout and
// WriteTimeout). A host tells the person "the hub stopped responding"
// from it, where the bare text would say nothing.
var ErrClosed = errors.New("connector: connection closed")

// ErrBroken is matched (errors.Is) by the error of a write to the
// WebSocket that failed: the connection broke under it (the peer went
// away, reset it, or it was closed meanwhile). The message was not sent
// whole, so the peer never handles it. The error's text is the library's.
var ErrBroken = errors.New("connector: the connection broke")

// broken marks a failed write as ErrBroken, keeping its text and chain.
type broken struct{ error }

func (b broken) Unwrap() error        { return b.error }
func (b broken) Is(target error) bool { return target == ErrBroken }

// ErrMaybeSent is matched (errors.Is) by the error of a write to the
// WebSocket that failed after every byte of the message had been handed
// to the network: a gathered write (see GatherWrites) that failed in the
// bytes behind the message's (a pong the library wrote meanwhile). The
// connection broke, and the peer may have received the message whole and
// handled it, or not: an op sent so may have been applied, and must not
// be sent again blindly. It does not match ErrBroken, whose message the
// peer never handles. The error's text is the network's.
var ErrMaybeSent = errors.New("connector: the connection broke after the message was written")

// maybeSent marks a failed write as ErrMaybeSent, keeping its text and
// chain.
type maybeSent struct{ error }

func (m maybeSent) Unwrap() error        { return m.error }
func (m maybeSent) Is(target error) bool { return target == ErrMaybeSent }

// failed marks the error of a write that failed: ErrMaybeSent when the
// FrameConn wrote the message whole before it failed, else ErrBroken.
func failed(err error) error {
	if errors.As(err, new(sentWhole)) {
		return maybeSent{err}
	}
	return broken{err}
}

// partOnly is the error of a write of a frame that is not the last of
// its message (a transfer's start or chunk): written whole or not, the
// message is not, so the peer never handles it.
func partOnly(err error) error {
	var m maybeSent
	if errors.As(err, &m) {
		return broken(m)
	}
	return err
}

// ErrEncode is matched (errors.Is) by the error of a Send whose message
// could not be encoded. Nothing was sent, and sending the same message
// again fails the same way: it is not a failure to retry.
var ErrEncode = errors.New("connector: cannot encode the message")

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
	slots  slots         // outbound transfers in progress
	turn   chan struct{} // held while a message is written (see write)
	onAbrt func(proto.TransferAbort)
	closed chan struct{}
	once   sync.Once
	// shut is closed once Close or closeNow has closed the WebSocket (see
	// Run).
	shut chan struct{}

	sinkMu    sync.Mutex
	sinks     map[string]DataSink // op id → receiver of its data transfer
	forgotten []string            // op ids whose streams must be failed

	outMu sync.Mutex
	outs  map[uint32]outbound // transfers being sent, by transfer id

	frames *FrameConn // when set, each message goes out in one write

	handoff time.Duration // see HandOffAfter; 0: never

	alarms Alarms // handoff budgets, write timeouts, callers' deadlines
}

// New wraps ws. limits are this side's own; Negotiate lowers them to the
// peer's once known.
func New(ws *websocket.Conn, limits proto.Limits) *Conn {
	l := proto.DefaultLimits.Merge(limits)
	c := &Conn{ws: ws, closed: make(chan struct{}), shut: make(chan struct{}), turn: make(chan struct{}, 1), slots: slots{free: make(chan struct{})}}
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

// write sends one WebSocket message. It does not end with ctx:
// coder/websocket closes the whole connection when a write's context ends
// mid-write, so one caller going away (an HTTP client disconnecting, an op
// timing out) would fail every other operation on the connection. Callers
// check ctx between messages instead, and WriteTimeout bounds a write to a
// peer that stopped reading.
func (c *Conn) write(ctx context.Context, typ websocket.MessageType, b []byte) error {
	// Wait for the turn to write with the caller's context: a caller who
	// gives up while another message is going out sends nothing (so an op
	// it abandoned is never run). Once writing, the write is not tied to
	// the caller (see WriteTimeout).
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		// The cause, not ctx.Err(): a transfer the peer aborted ends
		// with errPeerAborted, which tells the sender not to answer
		// with an abort of its own.
		return context.Cause(ctx)
	case <-c.closed:
		return ErrClosed
	}
	defer func() { <-c.turn }()
	// A write that outlasts WriteTimeout closes the connection, which
	// ends the write (as the library does when a write's context ends).
	stuck := c.alarms.After(WriteTimeout, c.closeNow)
	defer stuck.Stop()
	ctx = context.WithoutCancel(ctx)
	if len(b) <= frameChunkBytes+proto.ChunkHeaderBytes {
		if err := c.gathered(func() error { return c.ws.Write(ctx, typ, b) }); err != nil {
			return failed(err)
		}
		return nil
	}
	// A longer message goes out in fragments (RFC 6455 §5.4) of at most
	// frameChunkBytes, so a pong waits for one of them, not the whole
	// message (see frameChunkBytes). The peer's library reassembles them.
	w, err := c.ws.Writer(ctx, typ)
	if err != nil {
		return broken{err}
	}
	for len(b) > 0 && err == nil {
		n := min(len(b), frameChunkBytes)
		err = c.gathered(func() error { _, err := w.Write(b[:n]); return err })
		b = b[n:]
	}
	if err == nil {
		err = c.gathered(w.Close)
	}
	if err != nil {
		// Half a message is on the wire and the writer still holds the
		// library's message lock: nothing more can be sent. (Or all of
		// it, when the write of its last frame failed after it: see
		// failed.)
		c.closeNow()
		return failed(err)
	}
	return nil
}

// gathered runs one frame write, as one write to the network when writes
// are gathered (see GatherWrites). The FrameConn's verdict on a failed
// write (sentWhole) wins over the library's error, which does not carry
// it.
func (c *Conn) gathered(write func() error) error {
	if c.frames == nil {
		return write()
	}
	c.frames.hold()
	err := write()
	if rerr := c.frames.release(); rerr != nil && (err == nil || errors.As(rerr, new(sentWhole))) {
		err = rerr
	}
	return err
}

// HandOffAfter lets the Handler do short work inline: when one call of it
// lasts longer than d, reading goes on in a new goroutine, so a slow
// handler delays the messages behind it (cancels, pings, other
// operations) by d at most. Handler calls may then overlap, and Run
// returns when the connection ends even while such a call still runs.
// Data chunks are not Handler calls and never change goroutine. Without
// it, the Handler must return promptly. Call it before Run.
//
// A handler that answers most messages within d saves the goroutine
// switch (and the thread wake-up) a handoff per message costs.
func (c *Conn) HandOffAfter(d time.Duration) { c.handoff = d }

// Limits returns the limits in force.
func (c *Conn) Limits() proto.Limits { return *c.limits.Load() }

// Negotiate applies the smaller of this side's and the peer's limits.
func (c *Conn) Negotiate(peer proto.Limits) {
	l := c.Limits().Negotiate(peer)
	c.limits.Store(&l)
}

// Send delivers msg (a *proto.Op, *proto.Result, …), which it encodes
// into a frame of its own: nothing of msg (a Result's bytes included) is
// used once Send returns, so the caller may reuse it. A message whose
// encoding exceeds MaxMessageBytes moves as a transfer; at most
// MaxConcurrentTransfers of those are in flight, and Send waits for a slot
// (or ctx).
//
// ctx is checked before the message and between the frames of a transfer,
// never during a write (see write): when it ends midway, the peer is sent
// transfer_abort, so it drops the partial message, and Send returns ctx's
// error; a message that was not sent whole is never handled by the peer.
// A transfer_abort from the peer ends the transfer the same way.
//
// When the connection breaks under the write, the error matches
// ErrBroken if the message was not written whole (the peer never handles
// it), ErrMaybeSent if it was (the peer may have). A message that cannot
// be encoded is ErrEncode.
func (c *Conn) Send(ctx context.Context, msg any) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	frame := frames.Get().(*[]byte)
	b, err := proto.AppendEncode((*frame)[:0], msg)
	defer recycleFrame(frame, b)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEncode, err)
	}
	l := c.Limits()
	if int64(len(b)) <= l.MaxMessageBytes {
		return c.write(ctx, websocket.MessageText, b)
	}
	if int64(len(b)) > l.MaxTransferBytes {
		return fmt.Errorf("%w: message of %d bytes, the transfer limit is %d", ErrTooLarge, len(b), l.MaxTransferBytes)
	}
	release, err := c.acquire(ctx, false)
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
	id := c.nextID.Add(1)
	start, frames, end := proto.Split(id, opID, kind, b, min(l.ChunkBytes, frameChunkBytes))
	ctx, done := c.track(ctx, id, opID, nil)
	defer done()
	if err := c.sendText(ctx, start); err != nil {
		return partOnly(err)
	}
	defer func() {
		if err != nil {
			c.abandon(ctx, id, opID, err)
		}
	}()
	for _, f := range frames {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := c.write(ctx, websocket.MessageBinary, f); err != nil {
			return partOnly(err)
		}
	}
	return c.sendText(ctx, end)
}

// outbound is a transfer this side is sending.
type outbound struct {
	opID string
	stop context.CancelCauseFunc
	flow *credit // a data transfer's, else nil
}

// track registers outbound transfer id of opID, so a transfer_abort from
// the receiver stops it (the returned context then ends with cause
// errPeerAborted) and, for a data transfer, its transfer_credit reaches
// flow. done unregisters it.
func (c *Conn) track(ctx context.Context, id uint32, opID string, flow *credit) (_ context.Context, done func()) {
	ctx, stop := context.WithCancelCause(ctx)
	c.outMu.Lock()
	if c.outs == nil {
		c.outs = map[uint32]outbound{}
	}
	c.outs[id] = outbound{opID: opID, stop: stop, flow: flow}
	c.outMu.Unlock()
	return ctx, func() {
		c.outMu.Lock()
		delete(c.outs, id)
		c.outMu.Unlock()
		stop(nil)
	}
}

// stopOutbound stops the outbound transfer m aborts and reports whether m
// was about one. Both sides number their transfers from 1, so an abort
// matches an outbound transfer only with its op id too (or none: the
// receiver did not know the transfer at all).
func (c *Conn) stopOutbound(m *proto.TransferAbort) bool {
	c.outMu.Lock()
	o, ok := c.outs[m.TransferID]
	c.outMu.Unlock()
	if !ok || (m.OpID != "" && m.OpID != o.opID) {
		return false
	}
	o.stop(fmt.Errorf("%w: %s", errPeerAborted, m.Reason))
	return true
}

// grant passes a transfer_credit to the data transfer it is about. Like an
// abort, it must match the op id as well as the transfer id; credit for a
// transfer that has ended is dropped.
func (c *Conn) grant(m *proto.TransferCredit) {
	c.outMu.Lock()
	o, ok := c.outs[m.TransferID]
	c.outMu.Unlock()
	if ok && o.flow != nil && (m.OpID == "" || m.OpID == o.opID) {
		o.flow.add(m.Bytes)
	}
}

// abandon tells the peer that outbound transfer id (of opID) will not
// complete, so it drops what arrived and fails whoever waits for it
// instead of waiting for the idle timeout. Nothing is sent when the peer
// itself aborted the transfer, or when the connection is gone.
func (c *Conn) abandon(ctx context.Context, id uint32, opID string, why error) {
	if errors.Is(context.Cause(ctx), errPeerAborted) {
		return
	}
	select {
	case <-c.closed:
		return
	default:
	}
	// ctx has usually ended (that is why the transfer stops): the abort
	// must go out anyway.
	_ = c.sendText(context.WithoutCancel(ctx), &proto.TransferAbort{TransferID: id, OpID: opID, Reason: "the sender stopped: " + why.Error()})
}

func (c *Conn) sendText(ctx context.Context, msg any) error {
	b, err := proto.Encode(msg)
	if err != nil {
		return err
	}
	return c.write(ctx, websocket.MessageText, b)
}

// frames recycles the buffers Send encodes messages into: writes are
// synchronous (the library and FrameConn are done with a message's bytes
// when its write returns), so the buffer is free once Send returns, and a
// read result's frame (the file's text) was otherwise a fresh allocation
// per result.
var frames = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledFrame bounds the frame buffers kept: a rare large message
// (a transfer, up to the transfer limit) does not pin its memory.
const maxPooledFrame = 2 << 20

func recycleFrame(frame *[]byte, b []byte) {
	if cap(b) <= maxPooledFrame {
		*frame = b[:0]
		frames.Put(frame)
	}
}

// Handler receives each complete message Run reads: decoded messages of
// the protocol (transfers already reassembled), in arrival order, on the
// goroutine reading the connection. It must not block for long (long work
// goes to a goroutine) unless the Conn hands reading off (HandOffAfter);
// then calls that outlast the budget may overlap later ones. In particular
// a Handler must not call SendData without a handoff: with flow control,
// SendData waits for credit that only reading brings in.
type Handler func(msg any)

// Run reads until the connection ends or ctx is done, pinging the peer
// meanwhile. Malformed messages are answered with an error message and
// skipped; transfer failures are answered with transfer_abort (and passed
// to OnAbort so a waiting operation can fail). It returns why reading
// stopped.
//
// Frames are read into one reused buffer; a data chunk is copied into a
// buffer its stream's own goroutine recycles, so a data transfer costs no
// allocation per chunk. A second goroutine expires idle transfers.
func (c *Conn) Run(ctx context.Context, handle Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.keepalive(ctx)
	r := &reader{c: c, ctx: ctx, handler: handle, asm: proto.NewAssembler(c.Limits()), streams: map[uint32]*dataStream{},
		dropped: map[uint32]droppedIn{}, ended: make(chan error, 1)}
	defer r.close()
	go r.expire(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-c.closed:
			// Close sends a close frame and waits for the peer's. Cutting
			// the read short now would close the socket under that frame
			// (the library closes it when a read's context ends), and the
			// peer would see the connection break instead of a goodbye:
			// a host would say "connection lost" for a hub that shut
			// down. So the read goes on until the handshake is over, or
			// closeGrace for a peer that does not answer.
			t := time.NewTimer(closeGrace)
			select {
			case <-c.shut:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		cancel() // unblocks the read below
	}()
	if c.handoff > 0 {
		// Reading may move between goroutines (see HandOffAfter).
		go r.loop()
	} else {
		r.loop()
	}
	return <-r.ended
}

// loop reads frames until the connection ends (then it sends why to
// r.ended), or until a Handler call outlasts the handoff budget and
// reading moves on to a new loop (then it just ends).
func (r *reader) loop() {
	c, ctx := r.c, r.ctx
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
				err = ErrClosed
			default:
				if ctx.Err() != nil {
					err = ctx.Err()
				} else {
					c.closeNow()
				}
			}
			r.ended <- err
			return
		}
		select {
		case <-c.closed:
			// Read while Close says goodbye (see Run): handled by no
			// one, and the read goes on, so that the peer's close frame
			// is read, or the read is cut at closeGrace. Returning here
			// would leave nobody reading, and the library would wait its
			// own 5 s for that frame.
			continue
		default:
		}
		if r.frame(typ, buf.Bytes()) {
			return
		}
	}
}

// reader is the state of Run: open transfers and data streams, guarded by
// mu against the expiry goroutine and the streams' drain goroutines. The
// reader never calls a sink's Write: each data stream's own goroutine does
// (see streamChunk and drain).
type reader struct {
	c       *Conn
	ctx     context.Context
	handler Handler
	ended   chan error // why reading ended, from the loop that read last
	mu      sync.Mutex
	asm     *proto.Assembler
	// streams holds the data streams arriving, and those whose
	// transfer_end arrived while their queue still drains to the sink.
	streams map[uint32]*dataStream
	// dropped holds the inbound transfers this side aborted: the frames
	// the sender sent before it learnt of the abort are ignored, not
	// answered one abort each.
	dropped map[uint32]droppedIn
	outbox  []pendingAbort // aborts to send once mu is released (see unlock)
}

// droppedIn is an inbound transfer this side aborted.
type droppedIn struct {
	opID string
	last time.Time // when a frame of it last arrived
}

// frame handles one frame; it reports whether reading was handed to a new
// loop while the Handler ran (this loop must then stop).
func (r *reader) frame(typ websocket.MessageType, data []byte) (handedOff bool) {
	c, ctx := r.c, r.ctx
	if typ == websocket.MessageBinary {
		id, idx, payload, err := proto.DecodeChunk(data)
		r.mu.Lock()
		if d, ok := r.streams[id]; ok && err == nil {
			r.streamChunk(d, idx, payload) // unlocks
			return
		}
		defer r.unlock()
		if dr, ok := r.dropped[id]; ok && err == nil {
			dr.last = time.Now()
			r.dropped[id] = dr
			return
		}
		if err == nil {
			err = r.asm.Chunk(id, idx, payload, time.Now())
		}
		if err != nil {
			ts, _ := r.asm.Abort(id)
			ts.TransferID = id
			r.abortIn(ts, err.Error())
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
		defer r.unlock()
		if m.Kind == proto.KindData {
			r.startStream(m)
			return
		}
		if err := r.asm.Start(*m, time.Now()); err != nil {
			r.abortIn(*m, err.Error())
		}
	case *proto.TransferEnd:
		r.mu.Lock()
		if d, ok := r.streams[m.TransferID]; ok {
			// The drain goroutine writes what is queued, then checks
			// the size and the SHA-256 and finishes the sink.
			if !d.ended {
				d.ended, d.sum = true, m.SHA256
				d.allIn.Store(true)
				close(d.q)
			}
			r.unlock()
			return
		}
		if _, ok := r.dropped[m.TransferID]; ok {
			delete(r.dropped, m.TransferID)
			r.unlock()
			return
		}
		ts, data, err := r.asm.End(m.TransferID)
		r.unlock()
		if err != nil {
			c.abort(ctx, ts, err.Error())
			return
		}
		inner, err := proto.Decode(data)
		if err != nil {
			c.abort(ctx, ts, err.Error())
			return
		}
		return r.handle(inner)
	case *proto.TransferCredit:
		c.grant(m)
	case *proto.TransferAbort:
		if c.stopOutbound(m) {
			return r.handle(m) // the receiver dropped what this side sends
		}
		// The sender gives up an inbound transfer. Both sides number
		// their transfers from 1, so this may also be the receiver's
		// late abort of a transfer this side sent and finished: an
		// inbound transfer with the same id, of another op, is left
		// alone.
		ofIt := func(opID string) bool { return m.OpID == "" || m.OpID == opID }
		why := errors.New("the sender aborted: " + m.Reason)
		r.mu.Lock()
		d, ok := r.streams[m.TransferID]
		ok = ok && ofIt(d.start.OpID)
		if ok {
			r.endStream(d, why)
		}
		if dr, dropped := r.dropped[m.TransferID]; dropped && ofIt(dr.opID) {
			delete(r.dropped, m.TransferID)
		}
		if ts, open := r.asm.Started(m.TransferID); open && ofIt(ts.OpID) {
			r.asm.Abort(m.TransferID)
		}
		r.unlock()
		if !ok && m.OpID != "" {
			// A data transfer given up before it started (the op ended
			// first, the file is over the limit): its receiver must not
			// wait for bytes that will never come.
			if sink, waiting := c.takeSink(m.OpID); waiting {
				sink.Finish(why)
			}
		}
		return r.handle(m)
	default:
		return r.handle(msg)
	}
	return false
}

// handle passes msg to the Handler, handing reading to a new loop if the
// call outlasts the budget (see HandOffAfter).
func (r *reader) handle(msg any) (handedOff bool) {
	d := r.c.handoff
	if d <= 0 {
		r.handler(msg)
		return false
	}
	const running, returned, handed = 0, 1, 2
	var state atomic.Int32
	t := r.c.alarms.After(d, func() {
		if state.CompareAndSwap(running, handed) {
			go r.loop()
		}
	})
	r.handler(msg)
	t.Stop()
	return !state.CompareAndSwap(running, returned)
}

// streamChunk queues one chunk of data stream d for its drain goroutine,
// copied out of the read buffer. mu is held on entry and released on
// return. When the queue is full the reader waits for room, without mu,
// but only as long as the consumer keeps up (see streamQueue); past that
// the stream is failed and reading goes on.
func (r *reader) streamChunk(d *dataStream, idx uint32, payload []byte) {
	if err := d.check(idx, payload); err != nil {
		r.failStream(d, err.Error())
		r.unlock()
		return
	}
	now := time.Now()
	d.next++
	d.recv += int64(len(payload))
	d.last = now
	b := d.copyOf(payload)
	// A spell of slowness opens when the queue is found full and closes
	// once the consumer has caught up or taken consumerKeepUp bytes.
	if !d.fullSince.IsZero() && (len(d.q) == 0 || d.written.Load()-d.fullMark >= consumerKeepUp) {
		d.fullSince = time.Time{}
	}
	select {
	case d.q <- b:
		r.unlock()
		return
	default:
	}
	if d.fullSince.IsZero() {
		d.fullSince, d.fullMark = now, d.written.Load()
	}
	wait := d.fullSince.Add(consumerStall).Sub(now)
	r.unlock()
	if wait > 0 && d.put(r.ctx, b, wait) {
		return
	}
	r.mu.Lock()
	defer r.unlock()
	if r.ctx.Err() == nil { // else close fails it
		r.failStream(d, fmt.Sprintf("the receiver of the data cannot keep up: its consumer took under %d MiB in %d s", consumerKeepUp>>20, consumerStall/time.Second))
	}
}

// startStream opens an inbound data transfer (mu held).
func (r *reader) startStream(m *proto.TransferStart) {
	c := r.c
	sink, ok := c.takeSink(m.OpID)
	switch {
	case !ok:
		r.abortIn(*m, "no receiver for the data of op "+m.OpID)
	case r.streams[m.TransferID] != nil:
		err := fmt.Errorf("transfer %d is already open", m.TransferID)
		sink.Finish(err)
		r.abortIn(*m, err.Error())
	case m.TotalBytes > 0 && r.receiving()+r.asm.Open() >= c.Limits().MaxConcurrentTransfers:
		// A transfer of no bytes holds nothing, and its sender takes no
		// slot for it (see sendData): it is never one too many.
		sink.Finish(proto.ErrTooManyTransfers)
		r.abortIn(*m, proto.ErrTooManyTransfers.Error())
	case m.TotalBytes > c.Limits().MaxTransferBytes:
		sink.Finish(proto.ErrTransferTooLarge)
		r.abortIn(*m, proto.ErrTransferTooLarge.Error())
	default:
		d := newDataStream(*m, sink, time.Now(), c.Limits().WindowBytes)
		r.streams[m.TransferID] = d
		go r.drain(d)
	}
}

// receiving counts the data streams still arriving, not those only
// draining their queue after transfer_end (mu held).
func (r *reader) receiving() int {
	n := 0
	for _, d := range r.streams {
		if !d.ended {
			n++
		}
	}
	return n
}

// failStream ends data stream d with reason and tells the sender (mu
// held). A stream already finished is left alone.
func (r *reader) failStream(d *dataStream, reason string) {
	if r.endStream(d, errors.New(reason)) {
		r.abortIn(d.start, reason)
	}
}

// retire marks d finished and unregisters it (mu held); false when it was
// finished already.
func (r *reader) retire(d *dataStream) bool {
	if d.done {
		return false
	}
	d.done = true
	if r.streams[d.start.TransferID] == d {
		delete(r.streams, d.start.TransferID)
	}
	return true
}

// endStream finishes data stream d's sink with err (mu held): it
// unregisters d and stops its drain goroutine, whose Write in progress
// Finish ends (see DataSink). It reports false, doing nothing, when d was
// finished already.
func (r *reader) endStream(d *dataStream, err error) bool {
	if !r.retire(d) {
		return false
	}
	close(d.dead)
	d.sink.Finish(err)
	return true
}

// abortIn aborts an inbound transfer (mu held) and remembers it, so the
// frames still on their way are dropped quietly.
func (r *reader) abortIn(ts proto.TransferStart, reason string) {
	if len(r.dropped) < maxDropped {
		r.dropped[ts.TransferID] = droppedIn{opID: ts.OpID, last: time.Now()}
	}
	r.outbox = append(r.outbox, pendingAbort{ts, reason})
}

// pendingAbort is a transfer_abort decided under mu, sent by unlock.
type pendingAbort struct {
	ts     proto.TransferStart
	reason string
}

// unlock releases mu and then sends the aborts decided under it: a write
// can wait on a congested connection (up to WriteTimeout), and the reader,
// which needs mu, must keep reading meanwhile. The goroutine that decided
// an abort sends it before it goes on, so aborts keep their order with
// what that goroutine sends next.
func (r *reader) unlock() {
	out := r.outbox
	r.outbox = nil
	r.mu.Unlock()
	for _, a := range out {
		r.c.abort(r.ctx, a.ts, a.reason)
	}
}

// expire aborts idle transfers, streams whose sink accepts nothing, and
// the streams of abandoned operations. Once reading has stopped (ctx done)
// it still watches the streams left draining their queue, until none is.
func (r *reader) expire(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for now := range t.C {
		r.mu.Lock()
		reading := ctx.Err() == nil
		if reading {
			for _, ts := range r.asm.Expired(now) {
				r.abortIn(ts, "transfer idle for 30 s")
			}
		}
		for _, d := range r.streams {
			switch {
			case !d.ended && d.idle(now):
				r.failStream(d, "transfer idle for 30 s")
			case d.stalled(now):
				r.failStream(d, fmt.Sprintf("the receiver of the data accepted nothing for %d s", d.stallLimit()/time.Second))
			}
		}
		for id, dr := range r.dropped {
			if now.Sub(dr.last) > proto.IdleTimeout {
				delete(r.dropped, id)
			}
		}
		r.c.sinkMu.Lock()
		gone := r.c.forgotten
		r.c.forgotten = nil
		r.c.sinkMu.Unlock()
		for _, op := range gone {
			for _, d := range r.streams {
				if d.start.OpID == op {
					r.failStream(d, "the operation was abandoned")
				}
			}
		}
		over := !reading && len(r.streams) == 0
		r.unlock()
		if over {
			return
		}
	}
}

// close fails the data streams still arriving when Run returns, and the
// sinks still waiting for a stream to start (an op answered just before
// the connection ended: its bytes can no longer come). Those whose bytes
// all arrived go on draining to their sinks.
func (r *reader) close() {
	r.mu.Lock()
	for _, d := range r.streams {
		if !d.ended {
			r.endStream(d, errors.New("connection closed during the data transfer"))
		}
	}
	r.unlock()
	c := r.c
	c.sinkMu.Lock()
	waiting := c.sinks
	c.sinks = nil
	c.sinkMu.Unlock()
	for _, sink := range waiting {
		sink.Finish(errors.New("connection closed before the data transfer started"))
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

// Close ends the connection with a close handshake (StatusNormalClosure),
// so the peer learns it was closed on purpose. Sending fails at once; it
// returns when the peer answered, or, when it does not, within about
// closeGrace while Run is reading (which it cuts then), else within the
// WebSocket library's own wait (5 s): Close before Run, or from a handler
// that Run waits for.
func (c *Conn) Close() { c.CloseWith(websocket.StatusNormalClosure, "") }

// CloseWith is Close with another status and a reason (at most 123 bytes)
// for the peer: a connection ended for what the peer did, not for a
// shutdown.
func (c *Conn) CloseWith(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.Close(code, reason)
		close(c.shut)
	})
}

// closeNow drops a connection that already failed, without a handshake.
func (c *Conn) closeNow() {
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.CloseNow()
		close(c.shut)
	})
}

// After runs f once d has passed unless the alarm is stopped first, on
// the connection's one timer (see Alarms): for deadlines of operations on
// the connection, which are rarely reached. f must return promptly.
func (c *Conn) After(d time.Duration, f func()) *Alarm { return c.alarms.After(d, f) }

// Done is closed when the connection is closed.
func (c *Conn) Done() <-chan struct{} { return c.closed }
