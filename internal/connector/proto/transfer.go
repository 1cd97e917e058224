package proto

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ChunkHeaderBytes is the binary frame header: transfer id and chunk index.
const ChunkHeaderBytes = 8

// IdleTimeout is how long a transfer may go without a frame.
const IdleTimeout = 30 * time.Second

// EncodeChunk renders one binary frame.
func EncodeChunk(id, index uint32, payload []byte) []byte {
	b := make([]byte, ChunkHeaderBytes+len(payload))
	binary.BigEndian.PutUint32(b[0:4], id)
	binary.BigEndian.PutUint32(b[4:8], index)
	copy(b[ChunkHeaderBytes:], payload)
	return b
}

// DecodeChunk parses one binary frame. The payload aliases frame.
func DecodeChunk(frame []byte) (id, index uint32, payload []byte, err error) {
	if len(frame) < ChunkHeaderBytes {
		return 0, 0, nil, fmt.Errorf("connector: binary frame of %d bytes is shorter than its %d-byte header", len(frame), ChunkHeaderBytes)
	}
	return binary.BigEndian.Uint32(frame[0:4]), binary.BigEndian.Uint32(frame[4:8]), frame[ChunkHeaderBytes:], nil
}

// Digest returns the lowercase hex SHA-256 of b, as TransferStart carries.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Split cuts data into the frames of one transfer: a start message, the
// binary chunks, an end message.
func Split(id uint32, opID, kind string, data []byte, chunk int) (*TransferStart, [][]byte, *TransferEnd) {
	if chunk <= 0 {
		chunk = DefaultLimits.ChunkBytes
	}
	start := &TransferStart{TransferID: id, OpID: opID, Kind: kind, TotalBytes: int64(len(data)), SHA256: Digest(data)}
	var frames [][]byte
	for i := 0; i*chunk < len(data); i++ {
		end := min((i+1)*chunk, len(data))
		frames = append(frames, EncodeChunk(id, uint32(i), data[i*chunk:end]))
	}
	return start, frames, &TransferEnd{TransferID: id}
}

// Errors of inbound transfers; each aborts the transfer.
var (
	ErrTooManyTransfers = errors.New("too many concurrent transfers")
	ErrTransferTooLarge = errors.New("transfer exceeds the size limit")
	ErrUnknownTransfer  = errors.New("unknown transfer")
)

// Assembler reassembles the inbound transfers of one connection. It is
// not safe for concurrent use: the connection's reader owns it.
type Assembler struct {
	limits Limits
	open   map[uint32]*inbound
}

type inbound struct {
	start TransferStart
	data  []byte
	next  uint32
	last  time.Time
}

// NewAssembler returns an assembler enforcing limits.
func NewAssembler(limits Limits) *Assembler {
	return &Assembler{limits: DefaultLimits.Merge(limits), open: map[uint32]*inbound{}}
}

// Start opens a transfer; on error the caller answers TransferAbort.
func (a *Assembler) Start(ts TransferStart, now time.Time) error {
	if _, dup := a.open[ts.TransferID]; dup {
		return fmt.Errorf("transfer %d is already open", ts.TransferID)
	}
	if len(a.open) >= a.limits.MaxConcurrentTransfers {
		return fmt.Errorf("%w (at most %d)", ErrTooManyTransfers, a.limits.MaxConcurrentTransfers)
	}
	if ts.TotalBytes > a.limits.MaxTransferBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTransferTooLarge, ts.TotalBytes, a.limits.MaxTransferBytes)
	}
	// No buffer yet: total_bytes is only what the peer announces, and
	// reserving it here let a peer hold max_transfer_bytes per transfer
	// without sending any. The buffer grows with the chunks (see Chunk).
	a.open[ts.TransferID] = &inbound{start: ts, last: now}
	return nil
}

// Chunk adds one binary frame's payload. On error the caller calls Abort
// (which returns the start message, for its op_id) and answers
// TransferAbort.
func (a *Assembler) Chunk(id, index uint32, payload []byte, now time.Time) error {
	t, ok := a.open[id]
	if !ok {
		return fmt.Errorf("%w %d", ErrUnknownTransfer, id)
	}
	switch {
	case index != t.next:
		return fmt.Errorf("chunk index %d arrived; expected %d", index, t.next)
	case int64(len(t.data)+len(payload)) > t.start.TotalBytes:
		return fmt.Errorf("transfer %d sent more than its %d bytes", id, t.start.TotalBytes)
	}
	if need := len(t.data) + len(payload); need > cap(t.data) {
		// Double, but never past the announced size, which a complete
		// transfer reaches exactly.
		grown := make([]byte, len(t.data), min(max(2*cap(t.data), need), int(t.start.TotalBytes)))
		copy(grown, t.data)
		t.data = grown
	}
	t.data = append(t.data, payload...)
	t.next++
	t.last = now
	return nil
}

// End completes a transfer, checking its size and SHA-256, and returns the
// start message and the reassembled bytes. On failure the start message
// is the transfer's (only its id, when it was never started).
func (a *Assembler) End(id uint32) (TransferStart, []byte, error) {
	t, ok := a.open[id]
	if !ok {
		// The id alone, for the transfer_abort that answers it.
		return TransferStart{TransferID: id}, nil, fmt.Errorf("%w %d", ErrUnknownTransfer, id)
	}
	delete(a.open, id)
	if int64(len(t.data)) != t.start.TotalBytes {
		return t.start, nil, fmt.Errorf("transfer %d ended after %d of %d bytes", id, len(t.data), t.start.TotalBytes)
	}
	if Digest(t.data) != t.start.SHA256 {
		return t.start, nil, errors.New("transfer SHA-256 mismatch")
	}
	return t.start, t.data, nil
}

// Started returns the start message of open transfer id, leaving it open.
// Both sides of a connection number their transfers from 1, so a
// transfer_abort naming id may be about the other direction's transfer
// id: its op id tells them apart.
func (a *Assembler) Started(id uint32) (TransferStart, bool) {
	t, ok := a.open[id]
	if !ok {
		return TransferStart{}, false
	}
	return t.start, true
}

// Abort drops a transfer and returns its start message, if it was open.
func (a *Assembler) Abort(id uint32) (TransferStart, bool) {
	t, ok := a.open[id]
	delete(a.open, id)
	if !ok {
		return TransferStart{}, false
	}
	return t.start, true
}

// Expired drops and returns the transfers idle for longer than IdleTimeout.
func (a *Assembler) Expired(now time.Time) []TransferStart {
	var out []TransferStart
	for id, t := range a.open {
		if now.Sub(t.last) > IdleTimeout {
			out = append(out, t.start)
			delete(a.open, id)
		}
	}
	return out
}

// Open returns the number of transfers in progress.
func (a *Assembler) Open() int { return len(a.open) }
