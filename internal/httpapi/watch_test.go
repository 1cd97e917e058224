package httpapi_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/watch"
)

// watchBound is the longest a test waits for an event.
const watchBound = 10 * time.Second

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

type ev struct{ Type, Rel, Old string }

func evs(list []client.WatchEvent, root string) []ev {
	out := []ev{}
	for _, e := range list {
		x := ev{Type: e.Type}
		if e.RelativePath != nil {
			x.Rel = *e.RelativePath
		}
		if e.OldPath != nil {
			x.Old = strings.TrimPrefix(*e.OldPath, root+"/")
		}
		out = append(out, x)
	}
	return out
}

// pollUntil long-polls until n events arrived or the bound passed, then
// waits a little more for stragglers.
func pollUntil(t *testing.T, c *client.Client, id string, cursor int64, n int) ([]client.WatchEvent, int64) {
	t.Helper()
	var got []client.WatchEvent
	deadline := time.Now().Add(watchBound)
	for len(got) < n && time.Now().Before(deadline) {
		res, err := c.PollWatch(bg, id, client.PollQuery{Cursor: &cursor, Timeout: f64(time.Until(deadline).Seconds())})
		if err != nil {
			t.Fatal(err)
		}
		got, cursor = append(got, res.Events...), res.Cursor
	}
	time.Sleep(300 * time.Millisecond)
	res, err := c.PollWatch(bg, id, client.PollQuery{Cursor: &cursor})
	if err != nil {
		t.Fatal(err)
	}
	return append(got, res.Events...), res.Cursor
}

func TestWatchRoutes(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{Watch: watch.Options{MaxWatchers: 2}})
	os.Mkdir(e.path("w"), 0o755)
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "w", Debounce: client.Int(50)})
	if err != nil || created.Reused || created.InitialCursor != 0 || created.Status != "active" || created.Path != e.path("w") || len(created.WatcherID) != 12 {
		t.Fatalf("create: %+v %v", created, err)
	}
	id := created.WatcherID
	os.WriteFile(e.path("w/util.py"), []byte("X = 1\n"), 0o644)
	got, cursor := pollUntil(t, e.c, id, 0, 2)
	if diff := cmp.Diff([]ev{{Create, "util.py", ""}, {Write, "util.py", ""}}, evs(got, e.path("w"))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got[1].Seq != 2 || cursor != 2 || got[1].Size == nil || *got[1].Size != 6 || got[1].Mtime == nil || got[1].Inode == nil || got[1].Timestamp == 0 {
		t.Errorf("event fields: %+v", got[1])
	}
	// v1 poll by body replays from cursor 0.
	res, err := e.c.V1PollWatch(bg, id, client.PollRequest{Cursor: i64(0), Limit: client.Int(1)})
	if err != nil || len(res.Events) != 1 || res.Cursor != 1 || res.Overflow {
		t.Fatalf("v1 poll: %+v %v", res, err)
	}
	// Identical config: shared, with the current cursor.
	again, err := e.c.V1CreateWatch(bg, client.CreateWatchRequest{Path: e.path("w"), Debounce: client.Int(50)})
	if err != nil || !again.Reused || again.WatcherID != id || again.InitialCursor != 2 {
		t.Fatalf("reuse: %+v %v", again, err)
	}
	list, err := e.c.Watches(bg)
	if err != nil || len(list) != 1 || list[0].SubscriberCount != 2 || list[0].LatestSeq != 2 || !list[0].Recursive {
		t.Fatalf("list: %+v %v", list, err)
	}
	// The 129th (here 3rd) distinct watcher.
	os.Mkdir(e.path("x"), 0o755)
	os.Mkdir(e.path("y"), 0o755)
	if _, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "y"})
	if ce := wantErr(t, err, 429, ""); !strings.Contains(ce.Message, "Watcher limit reached") {
		t.Errorf("429 message %q", ce.Message)
	}
	// Bad parameters: 400; wrong types: 422; unknown ids: 404.
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v2/watch", `{"path":"w","debounce":10}`, 400},
		{"POST", "/v2/watch", `{"path":"w","debounce":6000}`, 400},
		{"POST", "/v2/watch", `{"path":"w","exclude":["[x"]}`, 400},
		{"POST", "/v2/watch", `{"path":"w","debounce":"fast"}`, 422},
		{"POST", "/v2/watch", `{}`, 422},
		{"POST", "/v2/watch", `{"path":"missing"}`, 404},
		{"POST", "/v2/watch", `{"path":"/etc"}`, 403},
		{"GET", "/v2/watch/" + id + "/poll?limit=0", "", 400},
		{"GET", "/v2/watch/" + id + "/poll?limit=1001", "", 400},
		{"GET", "/v2/watch/" + id + "/poll?timeout=61", "", 400},
		{"GET", "/v2/watch/" + id + "/poll?limit=ten", "", 422},
		{"POST", "/v1/file/watch/" + id + "/poll", `{"limit":5000}`, 400},
		{"GET", "/v2/watch/nope/poll", "", 404},
		{"GET", "/v2/watch/nope/events", "", 404},
		{"DELETE", "/v2/watch/nope", "", 404},
		{"POST", "/v1/file/watch/wait", `{"path":"w/f","timeout":0}`, 400},
		{"POST", "/v1/file/watch/wait", `{"path":"w/f","event_types":["boom"]}`, 400},
	} {
		if status, m := e.rawCT(tc.method, tc.path, tc.body, "application/json"); status != tc.status {
			t.Errorf("%s %s %s: %d %v, want %d", tc.method, tc.path, tc.body, status, m, tc.status)
		} else if status != 422 && m["message"] == "" {
			t.Errorf("%s %s: no message", tc.method, tc.path)
		}
	}
	// Each DELETE releases one subscriber.
	st, err := e.c.StopWatch(bg, id)
	if err != nil || st.Status != "active" || st.SubscriberCount != 1 {
		t.Fatalf("first delete: %+v %v", st, err)
	}
	st, err = e.c.V1StopWatch(bg, id)
	if err != nil || st.Status != "stopped" {
		t.Fatalf("second delete: %+v %v", st, err)
	}
	_, err = e.c.StopWatch(bg, id)
	wantErr(t, err, 404, "")
	caps, err := e.c.Capabilities(bg)
	if err != nil || !caps.Files["watch"] || !caps.Files["download"] {
		t.Errorf("capabilities: %+v %v", caps, err)
	}
}

func TestWatchLongPollReturnsOnEvent(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: ".", Debounce: client.Int(50)})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(e.path("late"), nil, 0o644)
	}()
	start := time.Now()
	res, err := e.c.PollWatch(bg, created.WatcherID, client.PollQuery{Timeout: f64(30)})
	if err != nil || len(res.Events) == 0 {
		t.Fatalf("long poll: %+v %v", res, err)
	}
	if el := time.Since(start); el > watchBound {
		t.Fatalf("long poll returned after %v", el)
	}
}

func TestWatchSSEResume(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: ".", Debounce: client.Int(50)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.WatcherID
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(e.path(n), nil, 0o644)
	}
	read := func(s *client.EventStream, n int) []client.SSEEvent {
		t.Helper()
		var out []client.SSEEvent
		for len(out) < n {
			ev, err := s.Next()
			if err != nil {
				t.Fatalf("stream: %v after %d events", err, len(out))
			}
			out = append(out, ev)
		}
		return out
	}
	s, err := e.c.WatchEvents(bg, id, "")
	if err != nil {
		t.Fatal(err)
	}
	first := read(s, 3) // watch_started, a, b
	s.Close()
	if first[0].Event != "watch_started" || !strings.Contains(string(first[0].Data), id) {
		t.Fatalf("first event: %+v", first[0])
	}
	if first[2].Event != "file_change" || first[2].ID != id+":2" {
		t.Fatalf("second change: %+v", first[2])
	}
	s, err = e.c.WatchEvents(bg, id, first[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rest := read(s, 2) // watch_started, then c
	var we client.WatchEvent
	if err := json.Unmarshal(rest[1].Data, &we); err != nil {
		t.Fatal(err)
	}
	if rest[1].ID != id+":3" || we.Seq != 3 || deref(we.RelativePath) != "c" {
		t.Fatalf("resumed event: %+v %+v", rest[1], we)
	}
	// Another watcher's event id does not skip this one's events: the
	// stream replays from the start.
	other, err := e.c.WatchEvents(bg, id, "w-other:2")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(other, 2); got[1].ID != id+":1" {
		t.Errorf("with another watcher's Last-Event-ID the stream starts at %+v, want %s:1", got[1], id)
	}
	other.Close()
	// It must still be an event id.
	if s, err := e.c.WatchEvents(bg, id, "w-other:garbage"); err == nil {
		s.Close()
		t.Error("a Last-Event-ID of another watcher with no sequence number was accepted")
	}
	// Stopping the watcher ends the stream.
	if _, err := e.c.StopWatch(bg, id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(watchBound)
	for time.Now().Before(deadline) {
		ev, err := s.Next()
		if err != nil || ev.Event == "watch_stopped" {
			return
		}
	}
	t.Fatal("stream still open after the watcher stopped")
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestWatchOwnStaging: fsplane stages what it writes under names of its
// own (temps, part files, staged trees) and renames it into place.
// Watchers see none of that, whatever their filters (here none), only
// the destination appearing: a create, also when a file is replaced.
func TestWatchOwnStaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pre  func(e *xenv) // before the watcher starts
		op   func(e *xenv) error
		want []ev
	}{
		{"upload", nil, func(e *xenv) error {
			_, err := e.c.Upload(bg, "up.bin", bytes.NewReader([]byte("payload")), "")
			return err
		}, []ev{{Create, "up.bin", ""}}},
		{"write new", nil, func(e *xenv) error {
			_, err := e.c.Write(bg, client.WriteRequest{Path: "new.txt", Content: "x"})
			return err
		}, []ev{{Create, "new.txt", ""}}},
		{"write over", func(e *xenv) { os.WriteFile(e.path("old.txt"), []byte("old"), 0o644) }, func(e *xenv) error {
			_, err := e.c.Write(bg, client.WriteRequest{Path: "old.txt", Content: "new"})
			return err
		}, []ev{{Create, "old.txt", ""}}},
		{"tree into a new directory", nil, func(e *xenv) error {
			tr := makeTar(t, []tarEntry{{Name: "a/", Type: tar.TypeDir, Mode: 0o755}, {Name: "a/f", Type: tar.TypeReg, Body: "f"}, {Name: "g", Type: tar.TypeReg, Body: "g"}})
			_, err := e.c.PutTree(bg, client.TreeQuery{Path: "t"}, bytes.NewReader(tr))
			return err
		}, []ev{{Create, "t", ""}, {Create, "t/a", ""}, {Create, "t/a/f", ""}, {Create, "t/g", ""}}},
		{"tree merged", func(e *xenv) { os.Mkdir(e.path("m"), 0o755) }, func(e *xenv) error {
			tr := makeTar(t, []tarEntry{{Name: "x", Type: tar.TypeReg, Body: "x"}})
			_, err := e.c.PutTree(bg, client.TreeQuery{Path: "m"}, bytes.NewReader(tr))
			return err
		}, []ev{{Create, "m/x", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			if tt.pre != nil {
				tt.pre(e)
			}
			w, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: ".", Debounce: client.Int(50), Exclude: &[]string{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.op(e); err != nil {
				t.Fatal(err)
			}
			got, _ := pollUntil(t, e.c, w.WatcherID, 0, len(tt.want))
			if diff := cmp.Diff(tt.want, evs(got, e.root)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchWaitV1(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(e.path("flag"), []byte("1"), 0o644)
	}()
	res, err := e.c.V1Wait(bg, client.WaitRequest{Path: "flag", Timeout: f64(10), EventTypes: []string{"write"}})
	if err != nil || res.Event.Type != "write" || res.Event.Path != e.path("flag") {
		t.Fatalf("wait: %+v %v", res, err)
	}
	_, err = e.c.V1Wait(bg, client.WaitRequest{Path: "flag", Timeout: f64(1), EventTypes: []string{"remove"}})
	if ce := wantErr(t, err, 503, ""); ce.Message != "timed out waiting for file event" {
		t.Errorf("timeout message %q", ce.Message)
	}
	_, err = e.c.V1Wait(bg, client.WaitRequest{Path: "no/dir/f", Timeout: f64(1)})
	wantErr(t, err, 404, "")
}

const (
	Create = "create"
	Write  = "write"
	Rename = "rename"
)

var _ = fmt.Sprint

// testClock is a watch registry clock (watch.Options.Now) moved by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestWatchStoppedFreeSlots: watchers whose directories were removed no
// longer answer 429 to new ones; each stays listed with its reason and
// pollable until its last events are read, then answers 404 saying why.
func TestWatchStoppedFreeSlots(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{Watch: watch.Options{MaxWatchers: 2}})
	var ids []string
	for _, d := range []string{"tree/a", "tree/b", "spare"} {
		os.MkdirAll(e.path(d), 0o755)
	}
	for _, d := range []string{"tree/a", "tree/b"} {
		created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: d, Debounce: client.Int(50)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.WatcherID)
	}
	_, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "spare"})
	wantErr(t, err, 429, "")
	if err := os.RemoveAll(e.path("tree")); err != nil {
		t.Fatal(err)
	}
	var list []client.WatcherInfo
	deadline := time.Now().Add(watchBound)
	for stopped := 0; stopped < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("watchers of removed directories: %+v", list)
		}
		time.Sleep(10 * time.Millisecond)
		if list, err = e.c.Watches(bg); err != nil {
			t.Fatal(err)
		}
		stopped = 0
		for _, w := range list {
			if w.Status == "stopped" && strings.Contains(w.StopReason, "was removed or moved away") {
				stopped++
			}
		}
	}
	res, err := e.c.PollWatch(bg, ids[0], client.PollQuery{})
	if err != nil || len(res.Events) != 1 || res.Events[0].Type != "remove" || deref(res.Events[0].RelativePath) != "." {
		t.Fatalf("last events of a stopped watcher: %+v %v", res, err)
	}
	_, err = e.c.PollWatch(bg, ids[0], client.PollQuery{Cursor: &res.Cursor})
	if ce := wantErr(t, err, 404, ""); !strings.Contains(ce.Message, "removed") || !strings.Contains(ce.Message, "read") {
		t.Errorf("404 after its last events were read: %q", ce.Message)
	}
	if _, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "spare"}); err != nil {
		t.Fatalf("with both watchers stopped: %v", err)
	}
}

// TestWatchIdleExpiry: a watcher nobody polls for IdleTimeout answers
// 404 saying it expired.
func TestWatchIdleExpiry(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Unix(1_700_000_000, 0)}
	e := newXEnv(t, ops.Options{Watch: watch.Options{IdleTimeout: time.Minute, Now: clock.Now}})
	created, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "."})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(59 * time.Second)
	if _, err := e.c.PollWatch(bg, created.WatcherID, client.PollQuery{}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	_, err = e.c.PollWatch(bg, created.WatcherID, client.PollQuery{})
	if ce := wantErr(t, err, 404, ""); !strings.Contains(ce.Message, "expired") || !strings.Contains(ce.Message, "polled") {
		t.Errorf("404 message %q", ce.Message)
	}
	if list, err := e.c.Watches(bg); err != nil || len(list) != 0 {
		t.Errorf("list: %+v %v", list, err)
	}
}
