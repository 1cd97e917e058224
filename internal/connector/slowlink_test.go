package connector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestPongCrossesASlowUplink: a host on a slow uplink answers a read with a
// message under max_message_bytes (no transfer) that takes seconds to
// send. A ping arriving meanwhile must be answered: the WebSocket library
// gives a pong 5 s to be written, and a pong stuck behind the whole
// message used to close the connection, failing the result and every
// other operation on it.
func TestPongCrossesASlowUplink(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 400 KB at 48 KB/s")
	}
	t.Parallel()
	ctx := context.Background()
	const rate = 48 << 10
	client, server := pair(t, pairOpts{gather: true, uplink: rate})
	defer func() { client.closeNow(); server.closeNow() }()
	got := make(chan *proto.Result, 1)
	go server.Run(ctx, func(m any) {
		if r, ok := m.(*proto.Result); ok {
			got <- r
		}
	})
	go client.Run(ctx, func(any) {})
	big := strings.Repeat("x", 400<<10)
	sent := make(chan error, 1)
	go func() {
		sent <- client.Send(ctx, &proto.Result{OpID: "r", OK: true, Result: []byte(`"` + big + `"`)})
	}()
	time.Sleep(300 * time.Millisecond) // the message is on its way
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := server.ws.Ping(pctx); err != nil {
		t.Fatalf("ping during a slow send: %v (the sender's pong did not get through)", err)
	}
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("send: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("send did not finish")
	}
	select {
	case r := <-got:
		if r.OpID != "r" || len(r.Result) != len(big)+2 {
			t.Fatalf("got result %q with %d bytes, want r with %d", r.OpID, len(r.Result), len(big)+2)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the result never arrived")
	}
}
