package httpapi_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestLoadCountsRequestsNotStreams: a request is in flight while its
// handler runs; an open event stream or long poll is not, however long
// it stays open (it would keep procs.Governor wide).
func TestLoadCountsRequestsNotStreams(t *testing.T) {
	t.Parallel()
	l := &testenv.Load{}
	e := newEnv(t, map[string]string{"w/f.txt": "x\n"}, httpapi.Options{Load: l})
	if _, err := e.c.Read(bg, client.ReadQuery{Path: "w/f.txt"}); err != nil {
		t.Fatal(err)
	}
	if now, most, seen := l.Counts(); now != 0 || most != 1 || seen != 1 {
		t.Fatalf("after one read: %d in flight, at most %d, %d seen; want 0, 1, 1", now, most, seen)
	}
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "w"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := e.c.WatchEvents(bg, created.WatcherID, "")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if _, err := stream.Next(); err != nil { // watch_started: the stream is open
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() {
		_, err := e.c.PollWatch(bg, created.WatcherID, client.PollQuery{Timeout: f64(30)})
		polled <- err
	}()
	time.Sleep(100 * time.Millisecond) // the long poll is likely in its handler by now
	if now, _, seen := l.Counts(); now != 0 || seen != 2 {
		t.Errorf("with an event stream and a long poll open: %d in flight, %d seen; want 0 and 2 (the read and the watch's creation)", now, seen)
	}
	if _, err := e.c.Read(bg, client.ReadQuery{Path: "w/f.txt"}); err != nil {
		t.Fatal(err)
	}
	if now, most, _ := l.Counts(); now != 0 || most != 1 {
		t.Errorf("a read beside the streams: %d in flight after, at most %d; want 0 and 1", now, most)
	}
	if err := os.WriteFile(filepath.Join(e.root, "w", "g.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-polled:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not end with the event")
	}
	// Whatever the timing above, a counted long poll shows here.
	if now, _, seen := l.Counts(); now != 0 || seen != 3 {
		t.Errorf("after the long poll: %d in flight, %d seen; want 0 and 3 (two reads and the watch's creation)", now, seen)
	}
}
