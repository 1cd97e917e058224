package connector

import (
	"context"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestHandOffAfter: a Handler call that outlasts the budget does not hold
// up the messages behind it, fast calls keep arrival order, and Run ends
// with the connection even while a slow call still runs.
func TestHandOffAfter(t *testing.T) {
	t.Parallel()
	peer, c := pairWith(t, false)
	go peer.Run(context.Background(), func(any) {})
	c.HandOffAfter(time.Millisecond)
	release := make(chan struct{})
	got := make(chan string, 16)
	runDone := make(chan error, 1)
	go func() {
		runDone <- c.Run(context.Background(), func(msg any) {
			id := msg.(*proto.Cancel).OpID
			got <- id
			if id == "slow" {
				<-release
				got <- "slow returned"
			}
		})
	}()
	send := func(id string) {
		t.Helper()
		if err := peer.Send(context.Background(), &proto.Cancel{OpID: id}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		t.Helper()
		select {
		case id := <-got:
			return id
		case <-time.After(10 * time.Second):
			t.Fatal("no message handled within 10 s")
			return ""
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		send(id)
	}
	for _, want := range []string{"a", "b", "c"} {
		if id := next(); id != want {
			t.Fatalf("handled %q, want %q (arrival order)", id, want)
		}
	}
	send("slow")
	if id := next(); id != "slow" {
		t.Fatalf("handled %q, want slow", id)
	}
	send("after")
	if id := next(); id != "after" {
		t.Fatalf("handled %q while the slow call ran; want after, handled by the reader that took over", id)
	}
	peer.Close()
	select {
	case <-runDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with the connection while a slow call still ran")
	}
	close(release)
	if id := next(); id != "slow returned" {
		t.Fatalf("got %q, want the slow call to finish", id)
	}
}
