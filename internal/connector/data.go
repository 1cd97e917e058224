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
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// DataSink receives the bytes of a data transfer (a download) as they
// arrive, on Run's goroutine: while Write blocks, nothing else is read
// from the connection, so a sink must hand the bytes on promptly and give
// up (fail its Write) on a consumer that stopped taking them. An io.Pipe
// to an HTTP response whose writes have a deadline is fine.
type DataSink interface {
	io.Writer
	// Finish is called exactly once: with nil after the last byte, the
	// size and SHA-256 verified; or with why the stream failed. A stream
	// is failed while its Write is blocked when the op is abandoned
	// (ForgetData) or the Write takes longer than proto.IdleTimeout, so
	// Finish may run concurrently with Write and must then make that
	// Write return (io.PipeWriter.CloseWithError does).
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

func (c *Conn) takeSink(opID string) (DataSink, bool) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	s, ok := c.sinks[opID]
	delete(c.sinks, opID)
	return s, ok
}

// SendData streams size bytes from r as the data transfer of opID, in
// chunks, computing the SHA-256 on the way (sent in transfer_end). It
// takes one of the outbound transfer slots.
//
// The peer waits for these bytes once it has the op's result, so every
// failure tells it: when SendData cannot start (size over the transfer
// limit, ctx ended while waiting for a slot) or stops midway (ctx ended,
// reading r failed), it sends transfer_abort with opID, and the peer fails
// the op's sink. ctx is checked between chunks, never during a write (see
// Send). A transfer_abort from the peer stops SendData without an answer.
func (c *Conn) SendData(ctx context.Context, opID string, r io.Reader, size int64) (err error) {
	id := c.nextID.Add(1)
	ctx, done := c.track(ctx, id, opID)
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
	release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := c.sendText(ctx, &proto.TransferStart{TransferID: id, OpID: opID, Kind: proto.KindData, TotalBytes: size}); err != nil {
		return err
	}
	h := sha256.New()
	frame := make([]byte, 8+l.ChunkBytes)
	binary.BigEndian.PutUint32(frame[0:4], id)
	var sent int64
	for idx := uint32(0); sent < size; idx++ {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		n, err := io.ReadFull(r, frame[8:8+min(int64(l.ChunkBytes), size-sent)])
		if err != nil {
			return fmt.Errorf("connector: reading data for %s: %w", opID, err)
		}
		binary.BigEndian.PutUint32(frame[4:8], idx)
		h.Write(frame[8 : 8+n])
		if err := c.write(ctx, websocket.MessageBinary, frame[:8+n]); err != nil {
			return err
		}
		sent += int64(n)
	}
	return c.sendText(ctx, &proto.TransferEnd{TransferID: id, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// acquire takes an outbound transfer slot, waiting for one (or ctx, or
// the connection's end); release gives it back.
func (c *Conn) acquire(ctx context.Context) (release func(), err error) {
	select {
	case c.out <- struct{}{}:
		return func() { <-c.out }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-c.closed:
		return nil, errors.New("connector: connection closed")
	}
}

// dataStream is an inbound data transfer being handed to its sink. The
// reader's mu guards it, except sink.Write (see reader.streamChunk).
type dataStream struct {
	start   proto.TransferStart
	sink    DataSink
	hash    hash.Hash
	got     int64
	next    uint32
	last    time.Time // when a chunk was last accepted (or the start)
	writing bool      // the sink's Write is in progress
}

// check validates the next chunk before it goes to the sink.
func (d *dataStream) check(idx uint32, payload []byte) error {
	if idx != d.next {
		return fmt.Errorf("chunk index %d arrived; expected %d", idx, d.next)
	}
	if d.got+int64(len(payload)) > d.start.TotalBytes {
		return fmt.Errorf("data transfer sent more than its %d bytes", d.start.TotalBytes)
	}
	return nil
}

// commit accounts for a chunk the sink took.
func (d *dataStream) commit(payload []byte, now time.Time) {
	d.hash.Write(payload)
	d.got += int64(len(payload))
	d.next++
	d.last = now
}

func (d *dataStream) end(sum string) error {
	if d.got != d.start.TotalBytes {
		return fmt.Errorf("data transfer ended after %d of %d bytes", d.got, d.start.TotalBytes)
	}
	if sum == "" || hex.EncodeToString(d.hash.Sum(nil)) != sum {
		return errors.New("transfer SHA-256 mismatch")
	}
	return nil
}
