package connector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestAbortOfOwnTransferSparesThePeers: both sides number their transfers
// from 1, so a transfer_abort naming transfer 1 may be the peer's late
// abort of this side's (finished) outbound transfer 1 of op A. It must not
// touch the peer's own inbound transfer 1 of op B: neither one being
// reassembled (op B must still arrive) nor one this side dropped (its late
// frames must still be ignored, not answered with another abort).
func TestAbortOfOwnTransferSparesThePeers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lateAbort := &proto.TransferAbort{TransferID: 1, OpID: "A", Reason: "the client went away"}

	t.Run("reassembling", func(t *testing.T) {
		t.Parallel()
		peer, c := pairWith(t, false)
		go peer.Run(ctx, func(any) {})
		got := make(chan any, 16)
		go c.Run(ctx, func(m any) { got <- m })
		op := &proto.Op{OpID: "B", Op: proto.OpWrite, Path: "x", Args: []byte(`"` + strings.Repeat("a", 300<<10) + `"`)}
		b, err := proto.Encode(op)
		if err != nil {
			t.Fatal(err)
		}
		start, frames, end := proto.Split(1, "B", proto.TypeOp, b, 256<<10)
		mustSend(t, peer.sendText(ctx, start))
		mustSend(t, peer.write(ctx, websocket.MessageBinary, frames[0]))
		mustSend(t, peer.sendText(ctx, lateAbort))
		for _, f := range frames[1:] {
			mustSend(t, peer.write(ctx, websocket.MessageBinary, f))
		}
		mustSend(t, peer.sendText(ctx, end))
		deadline := time.After(10 * time.Second)
		for {
			select {
			case m := <-got:
				if o, ok := m.(*proto.Op); ok && o.OpID == "B" {
					return
				}
			case <-deadline:
				t.Fatal("op B never arrived: the abort of op A's transfer 1 dropped op B's transfer 1")
			}
		}
	})

	t.Run("dropped", func(t *testing.T) {
		t.Parallel()
		peer, c := pairWith(t, false)
		aborts := make(chan *proto.TransferAbort, 16)
		synced := make(chan struct{})
		go peer.Run(ctx, func(m any) {
			switch m := m.(type) {
			case *proto.TransferAbort:
				aborts <- m
			case *proto.Cancel:
				close(synced)
			}
		})
		go c.Run(ctx, func(m any) {
			if _, ok := m.(*proto.Cancel); ok {
				_ = c.Send(ctx, &proto.Cancel{OpID: "synced"})
			}
		})
		// Op B's transfer 1 is over the limit: c aborts it, once.
		mustSend(t, peer.sendText(ctx, &proto.TransferStart{TransferID: 1, OpID: "B", Kind: proto.TypeOp,
			TotalBytes: proto.DefaultLimits.MaxTransferBytes + 1, SHA256: strings.Repeat("0", 64)}))
		mustSend(t, peer.sendText(ctx, lateAbort))
		mustSend(t, peer.write(ctx, websocket.MessageBinary, proto.EncodeChunk(1, 0, []byte("late"))))
		mustSend(t, peer.Send(ctx, &proto.Cancel{OpID: "sync"}))
		select {
		case <-synced:
		case <-time.After(10 * time.Second):
			t.Fatal("no answer to the message sent last")
		}
		if n := len(aborts); n != 1 {
			t.Errorf("c sent %d aborts for op B's transfer, want 1 (its late frame was answered again)", n)
		}
	})
}

func mustSend(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTransferFramesAreSmall: whatever chunk_bytes allows, this side's
// binary frames carry at most frameChunkBytes, data and message transfers
// alike, so a pong waits for little on a slow uplink.
func TestTransferFramesAreSmall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, raw := pairWith(t, true)
	defer func() { c.closeNow(); raw.closeNow() }() // raw does not read: no closing handshake
	go func() {
		_ = c.SendData(ctx, "dl", strings.NewReader(strings.Repeat("d", 1<<20)), 1<<20)
	}()
	go func() {
		_ = c.Send(ctx, &proto.Op{OpID: "w", Op: proto.OpWrite, Path: "x", Args: []byte(`"` + strings.Repeat("a", 2<<20) + `"`)})
	}()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for ends := 0; ends < 2; {
		typ, b, err := raw.ws.Read(rctx)
		if err != nil {
			t.Fatal(err)
		}
		if typ == websocket.MessageText {
			if m, err := proto.Decode(b); err == nil {
				if _, ok := m.(*proto.TransferEnd); ok {
					ends++
				}
			}
			continue
		}
		id, idx, payload, err := proto.DecodeChunk(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(payload) > 64<<10 {
			t.Fatalf("transfer %d chunk %d carries %d bytes, want at most 64 KiB", id, idx, len(payload))
		}
	}
}
