package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// finishSink records a data transfer's end.
type finishSink struct{ done chan error }

func (s *finishSink) Write(p []byte) (int, error) { return len(p), nil }
func (s *finishSink) Finish(err error)            { s.done <- err }

// answeredDownload makes a download through a hub from a host that
// answers it and sends no bytes; it returns once the host has answered.
func answeredDownload(t *testing.T) (*fakeHost, *finishSink) {
	t.Helper()
	h, srv := newHub(t, Options{Timeout: 10 * time.Second})
	answered := make(chan struct{})
	f := dial(t, srv, "laptop", proto.ReadOnly, func(op *proto.Op) *proto.Result {
		defer close(answered)
		return ok(proto.DownloadResult{Size: 10, Version: "v1"})
	})
	r, err := h.Remote("laptop")
	if err != nil {
		t.Fatal(err)
	}
	sink := &finishSink{done: make(chan error, 1)}
	if _, err := r.Download(context.Background(), proto.DownloadRequest{Path: "a"}, sink); err != nil {
		t.Fatal(err)
	}
	<-answered
	return f, sink
}

// TestDisconnectBeforeTheBytesFailsTheDownload: a host that answers a
// download and goes away before its data transfer starts fails the
// download's sink at once (a closed connection fails everything pending on
// it), instead of leaving whoever waits for the bytes (an HTTP response)
// waiting for ever.
func TestDisconnectBeforeTheBytesFailsTheDownload(t *testing.T) {
	t.Parallel()
	f, sink := answeredDownload(t)
	f.conn.Close()
	select {
	case err := <-sink.done:
		if err == nil {
			t.Error("the download's sink finished without an error; want the disconnect")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the download's sink was never finished after its host disconnected")
	}
}

// TestAnsweredDownloadWithoutBytesFails: a host that answers a download
// and then sends nothing, its connection still up, fails the download's
// sink once connector.DataStartTimeout has passed, instead of leaving
// the HTTP response waiting for ever. (It waits that minute, beside the
// package's other tests.)
func TestAnsweredDownloadWithoutBytesFails(t *testing.T) {
	t.Parallel()
	_, sink := answeredDownload(t)
	select {
	case err := <-sink.done:
		if err == nil || !strings.Contains(err.Error(), "never started") {
			t.Errorf("the download's sink finished with %v, want the never-started error", err)
		}
	case <-time.After(connector.DataStartTimeout + 30*time.Second):
		t.Fatal("the download's sink was never finished: its host answered and sent no bytes")
	}
}
