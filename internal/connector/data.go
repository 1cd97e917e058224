package connector

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// DataSink receives the bytes of a data transfer (a download). Write is
// called in order on a goroutine of the stream's own, never the
// connection's reader, and may be as slow as the consumer is: with flow
// control (both peers announce window_bytes) the sender waits for the
// sink, and only a sink whose Write takes over 30 s, or that takes nothing
// for 30 s, fails its stream.
// With a peer that predates flow control a few chunks queue for it, and a
// sink that takes nothing for 2 s, or under 2 MiB in 2 s while its queue is
// full, fails its stream rather than hold up the connection. An io.Pipe to
// an HTTP response whose writes have a deadline is fine.
type DataSink interface {
	io.Writer
	// Finish is called exactly once: with nil after the last byte was
	// written and the size and SHA-256 verified; or with why the stream
	// failed. It may run while a Write is blocked (the op was abandoned
	// with ForgetData, or the consumer is too slow) and must then make
	// that Write return (io.PipeWriter.CloseWithError does); a Write may
	// even start after a failing Finish, and must then fail too.
	Finish(err error)
}

// ExpectData registers sink for the data transfer of operation opID.
// Register before sending the op: its bytes may follow its result at once.
func (c *Conn) ExpectData(opID string, sink DataSink) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	if c.sinks == nil {
		c.sinks = map[string]DataSink{}
	}
	c.sinks[opID] = sink
}

// ForgetData drops the registration for opID (its op failed or was
// cancelled). A stream already in progress for it is failed.
func (c *Conn) ForgetData(opID string) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	delete(c.sinks, opID)
	c.forgotten = append(c.forgotten, opID)
}

// AwaitData bounds the wait for the data transfer of opID once its op
// has been answered: when no transfer_start for it (nor a transfer_abort)
// has arrived within d (DataStartTimeout, but for tests), the sink is
// finished with an error. A peer that answered and then sent nothing
// would otherwise leave whoever waits for the bytes (an HTTP response)
// waiting for ever, while its connection stays up. Call it once the
// result is in.
func (c *Conn) AwaitData(opID string, d time.Duration) {
	c.After(d, func() {
		if s, ok := c.takeSink(opID); ok {
			s.Finish(fmt.Errorf("no data came within %s of the answer: the peer never started the transfer", d))
		}
	})
}

// DataStartTimeout is how long a data transfer may take to start after
// its op's result: a sender that did not reserve a slot waits up to
// dataSlotWait for one at transfer_start, and then aborts; twice that
// leaves it the time to say so.
const DataStartTimeout = 2 * dataSlotWait

func (c *Conn) takeSink(opID string) (DataSink, bool) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	s, ok := c.sinks[opID]
	delete(c.sinks, opID)
	return s, ok
}

// SendData streams size bytes from r as the data transfer of opID, in
// chunks, computing the SHA-256 on the way (sent in transfer_end). It
// takes one of the outbound transfer slots, unless size is 0.
//
// The peer waits for these bytes once it has the op's result, so every
// failure tells it: when SendData cannot start (size over the transfer
// limit, ctx ended while waiting for a slot) or stops midway (ctx ended,
// reading r failed), it sends transfer_abort with opID, and the peer fails
// the op's sink. ctx is checked between chunks, never during a write (see
// Send). A transfer_abort from the peer stops SendData without an answer.
//
// With flow control, SendData keeps at most the negotiated window of
// bytes beyond what the receiver has granted (transfer_credit) in flight,
// waiting for credit as long as ctx allows: a slow consumer slows its own
// transfer, not the connection.
func (c *Conn) SendData(ctx context.Context, opID string, r io.Reader, size int64) error {
	return c.sendData(ctx, opID, r, size, nil)
}

// ReserveData takes an outbound data transfer slot ahead of the transfer,
// waiting at most wait (then ErrBusy), for a sender that must answer
// before it sends: a download's result starts the hub's HTTP answer, so
// a connection already sending as many downloads as it may is to refuse
// the download before it, not cut the answer after. release gives the
// slot back when the transfer is not made; SendDataReserved takes it
// over.
func (c *Conn) ReserveData(ctx context.Context, wait time.Duration) (release func(), err error) {
	actx, stop := context.WithTimeoutCause(ctx, wait, ErrBusy)
	defer stop()
	return c.acquire(actx, true)
}

// SendDataReserved is SendData in the slot ReserveData took; it releases
// the slot when it returns, whatever happened.
func (c *Conn) SendDataReserved(ctx context.Context, opID string, r io.Reader, size int64, release func()) error {
	return c.sendData(ctx, opID, r, size, release)
}

// sendData is SendData, in the slot reserved holds or, when it is nil, in
// one it takes.
func (c *Conn) sendData(ctx context.Context, opID string, r io.Reader, size int64, reserved func()) (err error) {
	if reserved != nil {
		defer reserved()
	}
	id := c.nextID.Add(1)
	flow := &credit{more: make(chan struct{}, 1)}
	ctx, done := c.track(ctx, id, opID, flow)
	defer done()
	defer func() {
		if err != nil {
			c.abandon(ctx, id, opID, err)
		}
	}()
	l := c.Limits()
	if size > l.MaxTransferBytes {
		return fmt.Errorf("%w: %d bytes, the transfer limit is %d", ErrTooLarge, size, l.MaxTransferBytes)
	}
	// A transfer of no bytes (an empty file's download) is its start and
	// its end, and holds nothing: it takes no slot, or it waited behind
	// slow downloads for one, up to dataSlotWait, and then failed while
	// the peer waited for its end (the hub answers an empty file once the
	// transfer has ended).
	if reserved == nil && size > 0 {
		actx, stop := context.WithTimeoutCause(ctx, dataSlotWait, ErrBusy)
		release, err := c.acquire(actx, true)
		stop()
		if err != nil {
			return err
		}
		defer release()
	}
	if err := c.sendText(ctx, &proto.TransferStart{TransferID: id, OpID: opID, Kind: proto.KindData, TotalBytes: size}); err != nil {
		return err
	}
	h := sha256.New()
	chunk := min(l.ChunkBytes, frameChunkBytes) // <= MinWindowBytes
	frame := make([]byte, proto.ChunkHeaderBytes+chunk)
	binary.BigEndian.PutUint32(frame[0:4], id)
	var sent int64
	for idx := uint32(0); sent < size; idx++ {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		want := min(int64(chunk), size-sent)
		if l.WindowBytes > 0 {
			if err := c.await(ctx, flow, sent+want-l.WindowBytes); err != nil {
				return err
			}
		}
		n, err := io.ReadFull(r, frame[proto.ChunkHeaderBytes:proto.ChunkHeaderBytes+want])
		if err != nil {
			return fmt.Errorf("connector: reading data for %s: %w", opID, err)
		}
		binary.BigEndian.PutUint32(frame[4:8], idx)
		h.Write(frame[proto.ChunkHeaderBytes : proto.ChunkHeaderBytes+n])
		if err := c.write(ctx, websocket.MessageBinary, frame[:8+n]); err != nil {
			return err
		}
		sent += int64(n)
	}
	return c.sendText(ctx, &proto.TransferEnd{TransferID: id, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// credit counts the bytes a data transfer's receiver granted its sender.
type credit struct {
	granted atomic.Int64
	more    chan struct{} // signalled after each grant
}

func (f *credit) add(n int64) {
	f.granted.Add(n)
	select {
	case f.more <- struct{}{}:
	default:
	}
}

// await waits until the receiver has granted at least need bytes (or ctx
// ends, or the connection).
func (c *Conn) await(ctx context.Context, f *credit, need int64) error {
	for f.granted.Load() < need {
		select {
		case <-f.more:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-c.closed:
			return ErrClosed
		}
	}
	return nil
}

// slots counts this side's outbound transfers against the negotiated
// max_concurrent_transfers (read at each acquire, so a peer's lower limit
// holds from its hello on). Data transfers move at their consumer's pace,
// which may be slow for hours, so they may take all slots but one: a large
// op or result never waits behind downloads, only behind other large
// messages, which move at the connection's speed.
type slots struct {
	mu        sync.Mutex
	all, data int
	free      chan struct{} // closed, and replaced, when a slot is released
}

// dataSlotWait bounds how long a data transfer waits for a slot: a
// download behind slow ones fails with ErrBusy instead of waiting for
// hours.
const dataSlotWait = proto.IdleTimeout

var ErrBusy = errors.New("connector: the connection is already sending as many downloads as it may; try again when one finishes")

// acquire takes an outbound transfer slot (a data transfer's when data),
// waiting for one (or ctx, or the connection's end); release gives it back.
func (c *Conn) acquire(ctx context.Context, data bool) (release func(), err error) {
	s := &c.slots
	for {
		limit := max(c.Limits().MaxConcurrentTransfers, 1)
		s.mu.Lock()
		if s.all < limit && (!data || s.data < max(limit-1, 1)) {
			s.all++
			if data {
				s.data++
			}
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				s.all--
				if data {
					s.data--
				}
				close(s.free)
				s.free = make(chan struct{})
				s.mu.Unlock()
			}, nil
		}
		freed := s.free
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-c.closed:
			return nil, ErrClosed
		}
	}
}

// Pacing of inbound data streams. Each stream's chunks wait in a queue for
// a goroutine of the stream's own that writes them to the sink, so the
// reader hands a chunk on and goes on reading (other ops' messages, the
// peer's pongs) while the consumer takes it.
//
// With flow control the queue holds a whole window (in chunks of at least
// minCreditChunk; fsplane sends 64 KiB) and the drain goroutine grants
// credit each time the sink has taken a quarter of the window: the sender
// never sends more than the queue holds, however slow the consumer, and a
// sink is failed only when one Write takes over proto.IdleTimeout. The
// rest below applies only to a sender of smaller chunks.
//
// Without it (a peer that predates flow control) the queue holds
// streamQueue chunks, and a consumer slower than the sender (an HTTP
// client on a slow link) fills it. The reader
// then waits for room, which slows the sender down through TCP — and the
// whole connection with it: every other message queues behind the
// megabytes the TCP buffers hold, and the sender's pongs wait behind its
// blocked writes, past the 5 s the WebSocket library allows them (at
// 200 KB/s, the connection is lost). So the wait is bounded: once the
// queue is found full, the consumer has consumerStall to take
// consumerKeepUp bytes (1 MiB/s) or catch up, and a sink that takes
// nothing for consumerStall is as slow. Too slow, the stream fails (its
// sink is finished with an error, the sender told with transfer_abort)
// and the connection goes on at full speed.
const (
	streamQueue    = 4
	consumerStall  = 2 * time.Second
	consumerKeepUp = 2 << 20
	minCreditChunk = 1 << 10
)

// dataStream is an inbound data transfer: the reader checks and queues its
// chunks (q), and its drain goroutine writes them to the sink, hashing
// them; when the reader closes q at transfer_end, the drain goroutine
// checks the size and SHA-256 and finishes the sink.
type dataStream struct {
	start  proto.TransferStart
	sink   DataSink
	window int64 // the flow-control window, 0 without flow control

	// Guarded by the reader's mu.
	next      uint32    // the index the next chunk must have
	recv      int64     // bytes received
	last      time.Time // when a chunk last arrived (or the start)
	ended     bool      // transfer_end arrived: q is closed
	sum       string    // its SHA-256, read by the drain once q is closed
	done      bool      // the sink is finished (or being finished by the drain)
	fullSince time.Time // when the reader found q full (see streamChunk)
	fullMark  int64     // written at fullSince

	q       chan []byte   // the chunks, in order, for the drain goroutine
	free    chan []byte   // buffers the drain goroutine is done with
	dead    chan struct{} // closed when the stream fails
	written atomic.Int64  // bytes the sink took
	writing atomic.Int64  // when the Write in progress began (Unix ns), or 0
	taken   atomic.Int64  // when the sink last took a chunk (Unix ns), or 0
	allIn   atomic.Bool   // transfer_end arrived (no more credit needed)
	hash    hash.Hash     // of the bytes the sink took (drain goroutine)
	granted int64         // credit granted beyond the window (drain goroutine)
}

func newDataStream(start proto.TransferStart, sink DataSink, now time.Time, window int64) *dataStream {
	n := streamQueue
	if window > 0 {
		n = int(window/minCreditChunk) + 1
	}
	return &dataStream{start: start, sink: sink, window: window, last: now, hash: sha256.New(),
		q: make(chan []byte, n), free: make(chan []byte, n+2), dead: make(chan struct{})}
}

// idle reports whether nothing happened on the stream for the idle
// timeout: no chunk arrived and the sink took none (with flow control a
// sender waits for a slow sink, so only both together mean the transfer
// is stuck). Reader's mu held.
func (d *dataStream) idle(now time.Time) bool {
	last := d.last
	if t := d.taken.Load(); t != 0 && time.Unix(0, t).After(last) {
		last = time.Unix(0, t)
	}
	return now.Sub(last) > proto.IdleTimeout
}

// check validates the next chunk before it is queued.
func (d *dataStream) check(idx uint32, payload []byte) error {
	switch {
	case d.ended:
		return errors.New("a chunk arrived after transfer_end")
	case idx != d.next:
		return fmt.Errorf("chunk index %d arrived; expected %d", idx, d.next)
	case d.recv+int64(len(payload)) > d.start.TotalBytes:
		return fmt.Errorf("data transfer sent more than its %d bytes", d.start.TotalBytes)
	}
	return nil
}

// copyOf copies payload out of the read buffer, into a buffer the drain
// goroutine is done with when there is one: a stream allocates a few
// buffers, not one per chunk.
func (d *dataStream) copyOf(payload []byte) []byte {
	var b []byte
	select {
	case b = <-d.free:
	default:
	}
	return append(b[:0], payload...)
}

// put waits up to wait for room in the queue and reports whether b was
// queued. It gives up early when the stream fails or reading stops.
func (d *dataStream) put(ctx context.Context, b []byte, wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case d.q <- b:
		return true
	case <-t.C:
	case <-d.dead:
	case <-ctx.Done():
	}
	return false
}

// stalled reports whether the sink's Write in progress began over
// stallLimit before now.
func (d *dataStream) stalled(now time.Time) bool {
	w := d.writing.Load()
	return w != 0 && now.Sub(time.Unix(0, w)) > d.stallLimit()
}

// stallLimit is how long one Write may take: without flow control a
// stuck sink holds up the connection, so not long; with it, only its own
// stream.
func (d *dataStream) stallLimit() time.Duration {
	if d.window > 0 {
		return proto.IdleTimeout
	}
	return consumerStall
}

// failed reports whether the stream failed.
func (d *dataStream) failed() bool {
	select {
	case <-d.dead:
		return true
	default:
		return false
	}
}

// drain writes stream d's chunks to its sink, in order, until the reader
// closes the queue at transfer_end (then it checks the size and SHA-256
// and finishes the sink: after the last byte was written, and only if
// nothing failed the stream meanwhile) or the stream fails (whoever failed
// it finished the sink).
func (r *reader) drain(d *dataStream) {
	for {
		var b []byte
		var more bool
		select {
		case b, more = <-d.q:
		case <-d.dead:
			return
		}
		if !more {
			break
		}
		if d.failed() {
			return
		}
		d.writing.Store(time.Now().UnixNano())
		_, err := d.sink.Write(b)
		d.writing.Store(0)
		if err != nil {
			r.mu.Lock()
			r.failStream(d, "the receiver stopped: "+err.Error())
			r.unlock()
			return
		}
		d.hash.Write(b)
		w := d.written.Add(int64(len(b)))
		d.taken.Store(time.Now().UnixNano())
		select {
		case d.free <- b:
		default:
		}
		if d.window > 0 && w-d.granted >= d.window/4 && !d.allIn.Load() {
			// An error means the connection is gone; the stream
			// fails with it.
			_ = r.c.sendText(r.ctx, &proto.TransferCredit{TransferID: d.start.TransferID, OpID: d.start.OpID, Bytes: w - d.granted})
			d.granted = w
		}
	}
	r.mu.Lock()
	retired := r.retire(d)
	r.unlock()
	if !retired {
		return
	}
	err := d.end()
	d.sink.Finish(err)
	if err != nil {
		r.c.abort(r.ctx, d.start, err.Error())
	}
}

// end checks what the sink took against the transfer's size and the
// SHA-256 its transfer_end carried (drain goroutine, q closed).
func (d *dataStream) end() error {
	if got := d.written.Load(); got != d.start.TotalBytes {
		return fmt.Errorf("data transfer ended after %d of %d bytes", got, d.start.TotalBytes)
	}
	if d.sum == "" || hex.EncodeToString(d.hash.Sum(nil)) != d.sum {
		return errors.New("transfer SHA-256 mismatch")
	}
	return nil
}
