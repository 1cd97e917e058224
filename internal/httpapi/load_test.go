package httpapi_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// load is an httpapi.Options.Load that counts requests in flight.
type load struct {
	mu             sync.Mutex
	now, max, seen int
}

func (l *load) Request() func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now++
	l.seen++
	l.max = max(l.max, l.now)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.now--
	}
}

func (l *load) counts() (now, max, seen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now, l.max, l.seen
}

// TestLoadCountsRequestsNotStreams: a request is in flight while its
// handler runs; an open event stream or long poll is not, however long
// it stays open (it would keep procs.Governor wide).
func TestLoadCountsRequestsNotStreams(t *testing.T) {
	t.Parallel()
	l := &load{}
	e := newEnv(t, map[string]string{"w/f.txt": "x\n"}, httpapi.Options{Load: l})
	if _, err := e.c.Read(bg, client.ReadQuery{Path: "w/f.txt"}); err != nil {
		t.Fatal(err)
	}
	if now, max, seen := l.counts(); now != 0 || max != 1 || seen != 1 {
		t.Fatalf("after one read: %d in flight, at most %d, %d seen; want 0, 1, 1", now, max, seen)
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
	if now, _, seen := l.counts(); now != 0 || seen != 2 {
		t.Errorf("with an event stream and a long poll open: %d in flight, %d seen; want 0 and 2 (the read and the watch's creation)", now, seen)
	}
	if _, err := e.c.Read(bg, client.ReadQuery{Path: "w/f.txt"}); err != nil {
		t.Fatal(err)
	}
	if now, max, _ := l.counts(); now != 0 || max != 1 {
		t.Errorf("a read beside the streams: %d in flight after, at most %d; want 0 and 1", now, max)
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
	if now, _, seen := l.counts(); now != 0 || seen != 3 {
		t.Errorf("after the long poll: %d in flight, %d seen; want 0 and 3 (two reads and the watch's creation)", now, seen)
	}
}
