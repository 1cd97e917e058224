package httpapi_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/watch"
)

// TestWatchSSEOverflowInOrder: the event stream tells of lost events
// where they were lost. A file made before the loss comes before the
// overflow event: a client rescans on overflow and applies what follows
// it over the scan, so an event from before the loss sent after it
// would replay a change the scan has already superseded.
func TestWatchSSEOverflowInOrder(t *testing.T) {
	t.Parallel()
	// A budget of 4 directory watches: the root, and three of the six
	// directories made below; the others cannot be watched (overflow).
	e := newXEnv(t, ops.Options{Watch: watch.Options{MaxUserWatches: 4}})
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: ".", Debounce: client.Int(50)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.WatcherID
	if err := os.WriteFile(e.path("before"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := pollUntil(t, e.c, id, 0, 1); len(got) == 0 || deref(got[0].RelativePath) != "before" {
		t.Fatalf("first events: %+v", got)
	}
	for i := range 6 {
		if err := os.Mkdir(e.path(fmt.Sprintf("d%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var cursor int64
	deadline := time.Now().Add(watchBound)
	for {
		res, err := e.c.PollWatch(bg, id, client.PollQuery{Cursor: &cursor, Timeout: f64(1)})
		if err != nil {
			t.Fatal(err)
		}
		if cursor = res.Cursor; res.Overflow {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no overflow for directories beyond the watch budget")
		}
	}
	s, err := e.c.WatchEvents(bg, id, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var order []string
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("stream: %v after %v", err, order)
		}
		switch ev.Event {
		case "overflow":
			order = append(order, "overflow")
		case "file_change":
			var we client.WatchEvent
			if err := json.Unmarshal(ev.Data, &we); err != nil {
				t.Fatal(err)
			}
			order = append(order, deref(we.RelativePath))
		}
		if len(order) > 0 && order[len(order)-1] == "overflow" {
			break
		}
	}
	if order[0] != "before" {
		t.Errorf("stream from the start: %v; want before's create ahead of the overflow", order)
	}
}

// TestWatchReportsUnwatched: a poll and the watcher listing say how many
// directories exist unwatched for want of watches (nothing below them is
// reported), and that count falls to 0 once watches are freed and the
// registry watches them.
func TestWatchReportsUnwatched(t *testing.T) {
	t.Parallel()
	// The root and three of the six directories made below are watched.
	e := newXEnv(t, ops.Options{Watch: watch.Options{MaxUserWatches: 4}})
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: ".", Debounce: client.Int(50)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.WatcherID
	for i := range 6 {
		if err := os.Mkdir(e.path(fmt.Sprintf("d%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	waitUnwatched := func(want int) {
		t.Helper()
		var cursor int64
		for deadline := time.Now().Add(watchBound); ; {
			res, err := e.c.PollWatch(bg, id, client.PollQuery{Cursor: &cursor, Timeout: f64(0.2)})
			if err != nil {
				t.Fatal(err)
			}
			cursor = res.Cursor
			list, err := e.c.Watches(bg)
			if err != nil || len(list) != 1 {
				t.Fatalf("watches: %+v %v", list, err)
			}
			if res.Unwatched == want && list[0].Unwatched == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("unwatched: poll %d, listing %d; want %d", res.Unwatched, list[0].Unwatched, want)
			}
		}
	}
	waitUnwatched(3)
	for i := range 6 {
		if err := os.Remove(e.path(fmt.Sprintf("d%d", i))); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			break // three removed: room for the other three, whichever they are
		}
	}
	waitUnwatched(0)
}
