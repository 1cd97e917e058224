package connector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestCallerGoneBeforeItsTurnSendsNothing: a message whose sender gives up
// while another message is being written is never sent (an op its caller
// abandoned must not run after the caller was told it did not), while the
// message already being written is not cut (that would close the
// connection).
func TestCallerGoneBeforeItsTurnSendsNothing(t *testing.T) {
	t.Parallel()
	c, peer := pairWith(t, false)
	got := make(chan string, 4)
	go peer.Run(context.Background(), func(m any) { got <- m.(*proto.Cancel).OpID })
	go c.Run(context.Background(), func(any) {})
	c.turn <- struct{}{} // another message is being written
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() { sent <- c.Send(ctx, &proto.Cancel{OpID: "abandoned"}) }()
	time.Sleep(100 * time.Millisecond) // past Send's own check of ctx, waiting for the turn
	cancel()
	select {
	case err := <-sent:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Send waited for the turn after its caller gave up")
	}
	<-c.turn // the other write is done
	if err := c.Send(context.Background(), &proto.Cancel{OpID: "next"}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "next" {
			t.Fatalf("the peer received %q first, want only next: the abandoned message was sent", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next message never arrived")
	}
}
