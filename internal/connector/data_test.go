package connector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// finishSink records how its stream ended.
type finishSink struct {
	io.Writer
	done chan error
}

func (s finishSink) Finish(err error) { s.done <- err }

func newFinishSink() finishSink { return finishSink{Writer: io.Discard, done: make(chan error, 1)} }

// finished waits for sink's Finish and returns its error.
func (s finishSink) finished(t *testing.T, what string) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the receiver's sink was never finished: its consumer would wait forever", what)
		return nil
	}
}

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("disk gone")
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// TestSendDataFailureFinishesTheReceiver: a data transfer that cannot
// start, or stops midway, ends the receiver's sink with an error (the hub's
// HTTP response is cut) instead of leaving it waiting.
func TestSendDataFailureFinishesTheReceiver(t *testing.T) {
	t.Parallel()
	host, hub := pairWith(t, false)
	go host.Run(context.Background(), func(any) {})
	go hub.Run(context.Background(), func(any) {})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		r    io.Reader
		size int64
	}{
		{"over the transfer limit", context.Background(), bytes.NewReader(nil), proto.DefaultLimits.MaxTransferBytes + 1},
		{"cancelled before it starts", cancelled, bytes.NewReader(make([]byte, 1<<20)), 1 << 20},
		{"reading fails midway", context.Background(), &failingReader{n: 1 << 20}, 4 << 20},
	} {
		op := "op-" + tc.name
		sink := newFinishSink()
		hub.ExpectData(op, sink)
		if err := host.SendData(tc.ctx, op, tc.r, tc.size); err == nil {
			t.Fatalf("%s: SendData succeeded", tc.name)
		}
		if err := sink.finished(t, tc.name); err == nil {
			t.Errorf("%s: the sink was finished without an error", tc.name)
		}
	}
}

// blockedSink is a pipe nobody reads, as an HTTP response to a client
// that stopped reading: Write blocks until Finish closes the pipe.
type blockedSink struct {
	w       *io.PipeWriter
	entered chan struct{}
	once    sync.Once
	done    chan error
}

func newBlockedSink() *blockedSink {
	_, w := io.Pipe()
	return &blockedSink{w: w, entered: make(chan struct{}), done: make(chan error, 1)}
}

func (s *blockedSink) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	return s.w.Write(p)
}

func (s *blockedSink) Finish(err error) {
	s.w.CloseWithError(errors.New("finished"))
	s.done <- err
}

// TestBlockedSinkIsFailedWhenAbandoned: a sink that blocks does not hold
// the reader's lock, so abandoning its op (ForgetData) fails the stream,
// which ends the blocked Write; the sender is told (transfer_abort) and
// stops, and the connection carries messages again.
func TestBlockedSinkIsFailedWhenAbandoned(t *testing.T) {
	t.Parallel()
	host, hub := pairWith(t, false)
	got := make(chan any, 16)
	go host.Run(context.Background(), func(any) {})
	go hub.Run(context.Background(), func(m any) { got <- m })
	sink := newBlockedSink()
	hub.ExpectData("dl", sink)
	sent := make(chan error, 1)
	data := make([]byte, 8<<20)
	go func() { sent <- host.SendData(context.Background(), "dl", bytes.NewReader(data), int64(len(data))) }()
	select {
	case <-sink.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the data never reached the sink")
	}
	hub.ForgetData("dl")
	select {
	case err := <-sink.done:
		if err == nil {
			t.Error("the abandoned stream was finished without an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned stream was not failed while its sink blocked: the reader holds its lock across Write")
	}
	select {
	case err := <-sent:
		if !errors.Is(err, errPeerAborted) {
			t.Errorf("SendData = %v, want the receiver's abort", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender kept sending after the receiver aborted the transfer")
	}
	if err := host.Send(context.Background(), &proto.Result{OpID: "after", OK: true, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-got:
			if r, ok := m.(*proto.Result); ok && r.OpID == "after" {
				return
			}
		case <-deadline:
			t.Fatal("no message got through after the stream was failed")
		}
	}
}
