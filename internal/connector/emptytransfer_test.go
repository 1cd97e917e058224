package connector

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestEmptyDataTransferNeedsNoSlot: a data transfer of no bytes (an empty
// file's download) is a transfer_start and a transfer_end, which hold
// nothing: it goes out while downloads hold every data slot, and the
// receiver takes it while as many transfers as it allows arrive. It waited
// for a slot instead, and after 30 s failed as busy: the hub, which
// answers an empty file's download 200 once the transfer has ended, cut
// the response.
func TestEmptyDataTransferNeedsNoSlot(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host, hub := pairWith(t, true)
	go host.Run(ctx, func(any) {})
	go hub.Run(ctx, func(any) {})
	// Downloads whose file never yields its bytes hold their slots until
	// the test ends; with a large op arriving too, the hub receives as
	// many transfers as it allows.
	stuck, release := io.Pipe()
	defer release.Close()
	data := proto.DefaultLimits.MaxConcurrentTransfers - 1
	for i := range data {
		op := fmt.Sprintf("dl%d", i)
		hub.ExpectData(op, newFinishSink())
		go host.SendData(ctx, op, stuck, 1<<20)
	}
	testenv.WaitFor(t, 10*time.Second, "the downloads to take their slots", func() bool {
		host.slots.mu.Lock()
		defer host.slots.mu.Unlock()
		return host.slots.data == data
	})
	// A large result whose second half never comes: the hub holds it
	// open, its fourth transfer.
	big := []byte(`{"type":"result","op_id":"big","ok":true,"result":"` + strings.Repeat("r", 2<<20) + `"}`)
	start, frames, _ := proto.Split(999, "big", proto.TypeResult, big, 64<<10)
	if err := host.sendText(ctx, start); err != nil {
		t.Fatal(err)
	}
	if err := host.write(ctx, websocket.MessageBinary, frames[0]); err != nil {
		t.Fatal(err)
	}
	sink := newFinishSink()
	hub.ExpectData("empty", sink)
	sent := make(chan error, 1)
	go func() { sent <- host.SendData(ctx, "empty", strings.NewReader(""), 0) }()
	select {
	case err := <-sink.done:
		if err != nil {
			t.Errorf("the empty transfer's receiver finished with %v, want success", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the empty transfer's receiver was never finished")
	}
	if err := <-sent; err != nil {
		t.Errorf("SendData of no bytes: %v", err)
	}
}
