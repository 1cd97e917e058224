package proto

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// TestAssemblerGrowsWithTheChunks: transfer_start's total_bytes is only an
// announcement; the buffer follows the bytes that arrive. Reserving it at
// the start let a peer take max_transfer_bytes per transfer, four at once
// per connection, without sending any.
//
// Not parallel: MemStats counts the whole process.
func TestAssemblerGrowsWithTheChunks(t *testing.T) {
	a := NewAssembler(Limits{})
	now := time.Now()
	const announced = 200 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for id := range uint32(DefaultLimits.MaxConcurrentTransfers) {
		if err := a.Start(TransferStart{TransferID: id + 1, Kind: "op", TotalBytes: announced}, now); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("starting %d transfers of %d MiB allocated %d bytes before any chunk arrived", DefaultLimits.MaxConcurrentTransfers, announced>>20, got)
	}

	data := bytes.Repeat([]byte("0123456789"), 1000)
	for _, chunk := range []int{1, 64, 1000, len(data)} {
		b := NewAssembler(Limits{})
		start, frames, end := Split(9, "op-1", "op", data, chunk)
		if err := b.Start(*start, now); err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			id, idx, payload, err := DecodeChunk(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Chunk(id, idx, payload, now); err != nil {
				t.Fatalf("chunk %d of %d bytes: %v", idx, chunk, err)
			}
		}
		_, got, err := b.End(end.TransferID)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("chunks of %d: reassembled %d bytes, %v", chunk, len(got), err)
		}
		if cap(got) != len(data) {
			t.Errorf("chunks of %d: buffer of %d bytes for %d announced", chunk, cap(got), len(data))
		}
	}
}
