package connector

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestDownloadsLeaveASlotForMessages: data transfers move at their
// consumer's pace, possibly for hours, so they may take all transfer
// slots but one: a large result still goes out while downloads hold the
// rest, and a further download waits. The limit is the negotiated one,
// also when the peer's is lower than this side's.
func TestDownloadsLeaveASlotForMessages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ limit, data int }{{4, 3}, {2, 1}} {
		t.Run(fmt.Sprintf("limit %d", tt.limit), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			host, hub := pairWith(t, true)
			peer := proto.DefaultLimits
			peer.MaxConcurrentTransfers = tt.limit
			host.Negotiate(peer)
			hub.Negotiate(peer)
			go host.Run(ctx, func(any) {})
			got := make(chan any, 16)
			go hub.Run(ctx, func(m any) { got <- m })
			// Downloads whose file never yields its bytes keep their
			// slots until the test ends.
			stuck, release := io.Pipe()
			defer release.Close()
			for i := range tt.data + 1 {
				op := fmt.Sprintf("dl%d", i)
				hub.ExpectData(op, newFinishSink())
				go host.SendData(ctx, op, stuck, 1<<20)
			}
			testenv.WaitFor(t, 10*time.Second, "the downloads to take their slots", func() bool {
				host.slots.mu.Lock()
				defer host.slots.mu.Unlock()
				return host.slots.data == tt.data
			})
			big := strings.Repeat("r", 2<<20)
			if err := host.Send(ctx, &proto.Result{OpID: "big", OK: true, Result: []byte(`"` + big + `"`)}); err != nil {
				t.Fatal(err)
			}
			for arrived := false; !arrived; {
				select {
				case m := <-got:
					r, ok := m.(*proto.Result)
					arrived = ok && r.OpID == "big" && len(r.Result) == len(big)+2
				case <-time.After(10 * time.Second):
					t.Fatal("a large result waited behind the downloads")
				}
			}
			host.slots.mu.Lock()
			defer host.slots.mu.Unlock()
			if host.slots.data != tt.data || host.slots.all != tt.data {
				t.Errorf("%d transfers (%d data) in progress, want %d downloads and the one waiting", host.slots.all, host.slots.data, tt.data)
			}
		})
	}
}

// countingConn counts the writes to the network.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestDataChunkIsOneWrite: a 64 KiB chunk and its header go out as one
// frame in one write to the network (fragmenting it would cost the peer a
// wake-up per piece).
func TestDataChunkIsOneWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var cc *countingConn
	host, hub := pair(t, pairOpts{gather: true, wrap: func(c net.Conn) net.Conn { cc = &countingConn{Conn: c}; return cc }})
	go host.Run(ctx, func(any) {})
	go hub.Run(ctx, func(any) {})
	sink := newFinishSink()
	hub.ExpectData("dl", sink)
	const chunks = 64
	before := cc.writes.Load()
	if err := host.SendData(ctx, "dl", bytes.NewReader(make([]byte, chunks*frameChunkBytes)), chunks*frameChunkBytes); err != nil {
		t.Fatal(err)
	}
	if err := sink.finished(t, "the download"); err != nil {
		t.Fatal(err)
	}
	// transfer_start and transfer_end are one write each.
	if n := cc.writes.Load() - before; n > chunks+2 {
		t.Errorf("%d chunks took %d writes, want %d", chunks, n, chunks+2)
	}
}

// TestStallLimit: one sink Write may take 2 s without flow control (the
// connection waits for it), and up to the idle timeout with it (only its
// own stream does), whether or not all the bytes have arrived.
func TestStallLimit(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tt := range []struct {
		window  int64
		writing time.Duration // how long the Write in progress has taken; 0: none
		want    bool
	}{
		{0, 0, false},
		{0, time.Second, false},
		{0, 3 * time.Second, true},
		{2 << 20, 3 * time.Second, false},
		{2 << 20, proto.IdleTimeout + time.Second, true},
	} {
		d := newDataStream(proto.TransferStart{TransferID: 1, OpID: "x", Kind: proto.KindData}, newFinishSink(), now, tt.window)
		if tt.writing > 0 {
			d.writing.Store(now.Add(-tt.writing).UnixNano())
		}
		if got := d.stalled(now); got != tt.want {
			t.Errorf("window %d, Write in progress for %v: stalled = %v, want %v", tt.window, tt.writing, got, tt.want)
		}
	}
}
