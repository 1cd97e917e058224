package connector

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// paceSink takes bytes at rate bytes/s, as an HTTP response to a client on
// a slow link does. Finish ends a Write in progress, as closing a pipe
// does, and is counted: it must be called once.
type paceSink struct {
	rate     int
	finished chan struct{}
	finishes atomic.Int32
	done     chan error
}

func newPaceSink(rate int) *paceSink {
	return &paceSink{rate: rate, finished: make(chan struct{}), done: make(chan error, 2)}
}

func (s *paceSink) Write(p []byte) (int, error) {
	select {
	case <-time.After(time.Duration(len(p)) * time.Second / time.Duration(s.rate)):
		return len(p), nil
	case <-s.finished:
		return 0, errors.New("finished")
	}
}

func (s *paceSink) Finish(err error) {
	if s.finishes.Add(1) == 1 {
		close(s.finished)
	}
	s.done <- err
}

// TestSlowConsumerFailsOnlyItsOwnStream: without flow control (a peer from
// before it), a download whose consumer is slow but steady must not hold
// up the connection. At 40 KB/s a 256 KiB chunk
// took 6 s to write, long enough for the host's pong to miss its 5 s; at
// 300 KB/s no Write takes long, but the TCP buffers the consumer lets fill
// hold every other message back for many seconds, and the host's writes
// (its pongs behind them) block as long. Either way the stream is failed
// within seconds and the sender told, while the host's pongs (the hub
// pings it every half second) and a message sent afterwards still get
// through, and the host's connection stays up.
func TestSlowConsumerFailsOnlyItsOwnStream(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{40 << 10, 300 << 10} {
		t.Run(fmt.Sprintf("%d KiB/s", rate>>10), func(t *testing.T) {
			t.Parallel()
			slowConsumer(t, rate)
		})
	}
}

func slowConsumer(t *testing.T, rate int) {
	ctx := context.Background()
	host, hub := pairWith(t, true) // the host gathers its writes, as fsplane connect does
	host.Negotiate(proto.Limits{}) // the peer announced no window
	hub.Negotiate(proto.Limits{})
	hostEnd := make(chan error, 1)
	go func() { hostEnd <- host.Run(ctx, func(any) {}) }()
	got := make(chan any, 16)
	go hub.Run(ctx, func(m any) { got <- m })
	sink := newPaceSink(rate)
	hub.ExpectData("dl", sink)
	sent := make(chan error, 1)
	data := make([]byte, 64<<20)
	go func() { sent <- host.SendData(ctx, "dl", bytes.NewReader(data), int64(len(data))) }()
	pingErr := make(chan error, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			pctx, cancel := context.WithTimeout(ctx, PingTimeout)
			err := hub.ws.Ping(pctx)
			cancel()
			if err != nil {
				pingErr <- err
				return
			}
		}
	}()
	start := time.Now()
	select {
	case err := <-sink.done:
		if err == nil {
			t.Fatal("the slow consumer's stream was finished without an error")
		}
		t.Logf("the slow consumer's stream failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case err := <-hostEnd:
		t.Fatalf("the host's connection ended after %v: %v (a slow download consumer took it down)", time.Since(start), err)
	case err := <-pingErr:
		t.Fatalf("a ping of the host failed after %v: %v", time.Since(start), err)
	case <-time.After(10 * time.Second):
		t.Fatal("the slow consumer's stream was not failed within 10 s: it holds up the connection")
	}
	select {
	case err := <-sent:
		if !errors.Is(err, errPeerAborted) {
			t.Errorf("SendData = %v, want the receiver's abort", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender kept sending after the receiver failed the stream")
	}
	if err := host.Send(ctx, &proto.Result{OpID: "after", OK: true, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case m := <-got:
			r, ok := m.(*proto.Result)
			done = ok && r.OpID == "after"
		case err := <-hostEnd:
			t.Fatalf("the host's connection ended: %v", err)
		case <-deadline:
			t.Fatal("a message sent after the failed stream did not arrive within 5 s")
		}
	}
	select {
	case err := <-pingErr:
		t.Fatalf("a ping of the host failed: %v", err)
	default:
	}
	if n := sink.finishes.Load(); n != 1 {
		t.Errorf("the sink was finished %d times, want once", n)
	}
}

// countReader counts the bytes read from it.
type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestFlowControlPacesTheSender: with flow control, a slow consumer gets
// its whole download, correct, at its own pace; the sender never runs
// more than the window ahead of what the consumer took, and the
// connection stays quick for everything else meanwhile (pings, a message
// sent mid-stream).
func TestFlowControlPacesTheSender(t *testing.T) {
	t.Parallel()
	// Small chunks too: the receiver's queue must hold a window of them.
	for _, chunk := range []int{64 << 10, 4 << 10} {
		t.Run(fmt.Sprintf("%d KiB chunks", chunk>>10), func(t *testing.T) {
			t.Parallel()
			flowControlPaces(t, chunk)
		})
	}
}

func flowControlPaces(t *testing.T, chunk int) {
	ctx := context.Background()
	const window, rate = 128 << 10, 256 << 10
	host, hub := pairWith(t, true)
	peer := proto.DefaultLimits
	peer.WindowBytes, peer.ChunkBytes = window, chunk
	host.Negotiate(peer)
	hub.Negotiate(peer)
	hostEnd := make(chan error, 1)
	go func() { hostEnd <- host.Run(ctx, func(any) {}) }()
	got := make(chan any, 16)
	go hub.Run(ctx, func(m any) { got <- m })

	data := make([]byte, 1<<20)
	rand.Read(data)
	src := &countReader{r: bytes.NewReader(data)}
	var ahead atomic.Int64 // the most the sender read beyond what the sink took
	sink := &recordSink{done: make(chan error, 2)}
	paced := newPaceSink(rate)
	hub.ExpectData("dl", dataSinkFunc{write: func(p []byte) (int, error) {
		sink.mu.Lock()
		a := src.n.Load() - int64(sink.buf.Len())
		sink.mu.Unlock()
		if a > ahead.Load() {
			ahead.Store(a)
		}
		if _, err := paced.Write(p); err != nil {
			return 0, err
		}
		return sink.Write(p)
	}, finish: sink.Finish})
	sent := make(chan error, 1)
	go func() { sent <- host.SendData(ctx, "dl", src, int64(len(data))) }()

	time.Sleep(time.Second) // the stream is in its paced middle
	start := time.Now()
	if err := host.Send(ctx, &proto.Result{OpID: "during", OK: true, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for arrived := false; !arrived; {
		select {
		case m := <-got:
			r, ok := m.(*proto.Result)
			arrived = ok && r.OpID == "during"
		case <-time.After(5 * time.Second):
			// Generous for a loaded -race run; the window check below is
			// what tells flow control apart.
			t.Fatal("a message sent during the slow download waited over 5 s")
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := hub.ws.Ping(pctx); err != nil {
		t.Fatalf("ping during the slow download: %v", err)
	}
	t.Logf("message and ping through in %v", time.Since(start).Round(time.Millisecond))

	select {
	case err := <-sink.done:
		if err != nil {
			t.Fatalf("the slow consumer's stream failed: %v", err)
		}
	case err := <-hostEnd:
		t.Fatalf("the host's connection ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the download did not finish")
	}
	if err := <-sent; err != nil {
		t.Fatalf("SendData = %v", err)
	}
	if !bytes.Equal(sink.buf.Bytes(), data) {
		t.Fatalf("the sink got %d bytes, not the %d sent", sink.buf.Len(), len(data))
	}
	if a := ahead.Load(); a > window {
		t.Errorf("the sender ran %d bytes ahead of the consumer, over the %d-byte window", a, window)
	}
}

// dataSinkFunc is a DataSink made of two functions.
type dataSinkFunc struct {
	write  func([]byte) (int, error)
	finish func(error)
}

func (f dataSinkFunc) Write(p []byte) (int, error) { return f.write(p) }
func (f dataSinkFunc) Finish(err error)            { f.finish(err) }

// recordSink keeps what it is given, taking pause per Write, and notes how
// much it held when it was finished.
type recordSink struct {
	pause    time.Duration
	mu       sync.Mutex
	buf      bytes.Buffer
	atFinish int
	finishes int
	done     chan error
}

func (s *recordSink) Write(p []byte) (int, error) {
	time.Sleep(s.pause)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *recordSink) Finish(err error) {
	s.mu.Lock()
	s.atFinish = s.buf.Len()
	s.finishes++
	s.mu.Unlock()
	s.done <- err
}

// TestDataStreamChecksAfterTheQueue: chunks queued for a sink slower than
// the connection reach it whole and in order; the size and SHA-256 from
// transfer_end are checked once all of them were written, and Finish is
// called once, with the check's verdict.
func TestDataStreamChecksAfterTheQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	peer, c := pairWith(t, false)
	go peer.Run(ctx, func(any) {})
	got := make(chan any, 16)
	go c.Run(ctx, func(m any) { got <- m })
	data := make([]byte, 16*frameChunkBytes+100)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	sum := proto.Digest(data)
	for i, tc := range []struct {
		name    string
		total   int64
		sum     string
		wantErr string
	}{
		{"whole", int64(len(data)), sum, ""},
		{"corrupt", int64(len(data)), proto.Digest(nil), "SHA-256 mismatch"},
		{"short", int64(len(data)) + 1, sum, "ended after"},
	} {
		id, op := uint32(i+1), "op-"+tc.name
		sink := &recordSink{pause: 5 * time.Millisecond, done: make(chan error, 2)}
		c.ExpectData(op, sink)
		if err := peer.sendText(ctx, &proto.TransferStart{TransferID: id, OpID: op, Kind: proto.KindData, TotalBytes: tc.total}); err != nil {
			t.Fatal(err)
		}
		for idx := 0; idx*frameChunkBytes < len(data); idx++ {
			chunk := data[idx*frameChunkBytes : min((idx+1)*frameChunkBytes, len(data))]
			if err := peer.write(ctx, websocket.MessageBinary, proto.EncodeChunk(id, uint32(idx), chunk)); err != nil {
				t.Fatal(err)
			}
		}
		if err := peer.sendText(ctx, &proto.TransferEnd{TransferID: id, SHA256: tc.sum}); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-sink.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the sink was never finished", tc.name)
		}
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: Finish(%v), want nil", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: Finish(%v), want %q", tc.name, err, tc.wantErr)
		}
		// A round trip through the connection, for a second Finish to show.
		if err := peer.Send(ctx, &proto.Cancel{OpID: "sync-" + tc.name}); err != nil {
			t.Fatal(err)
		}
		for synced := false; !synced; {
			select {
			case m := <-got:
				m2, ok := m.(*proto.Cancel)
				synced = ok && m2.OpID == "sync-"+tc.name
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: a message after the transfer never arrived", tc.name)
			}
		}
		sink.mu.Lock()
		if sink.atFinish != len(data) || !bytes.Equal(sink.buf.Bytes(), data) || sink.finishes != 1 {
			t.Errorf("%s: the sink held %d bytes at Finish (want all %d; equal: %v), finished %d times",
				tc.name, sink.atFinish, len(data), bytes.Equal(sink.buf.Bytes(), data), sink.finishes)
		}
		sink.mu.Unlock()
	}
}

// TestAwaitDataFailsATransferThatNeverStarts: a sink whose op was
// answered and whose transfer never began is finished with an error once
// AwaitData's wait has passed, the connection still up; a transfer that
// did begin in time is not disturbed by the wait ending later.
func TestAwaitDataFailsATransferThatNeverStarts(t *testing.T) {
	t.Parallel()
	host, hub := pairWith(t, false)
	go host.Run(context.Background(), func(any) {})
	go hub.Run(context.Background(), func(any) {})
	const wait = 100 * time.Millisecond

	silent := newFinishSink()
	hub.ExpectData("silent", silent)
	hub.AwaitData("silent", wait)
	if err := silent.finished(t, "no transfer_start"); err == nil || !strings.Contains(err.Error(), "never started") {
		t.Errorf("the silent transfer's sink finished with %v, want the never-started error", err)
	}

	sent := newFinishSink()
	hub.ExpectData("sent", sent)
	hub.AwaitData("sent", wait)
	if err := host.SendData(context.Background(), "sent", bytes.NewReader(make([]byte, 1000)), 1000); err != nil {
		t.Fatal(err)
	}
	if err := sent.finished(t, "a transfer in time"); err != nil {
		t.Errorf("the transfer in time failed: %v", err)
	}
	time.Sleep(2 * wait) // the wait ends: the sink must not be finished again
	select {
	case err := <-sent.done:
		t.Errorf("the sink was finished a second time (%v) after its transfer", err)
	default:
	}
	select {
	case <-hub.Done():
		t.Error("the connection ended")
	default:
	}
}
