package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// slowSink receives a download at a bounded pace.
type slowSink struct {
	buf   bytes.Buffer
	pause time.Duration
	done  chan error
}

func (s *slowSink) Write(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.buf.Write(p)
}

func (s *slowSink) Finish(err error) { s.done <- err }

// TestDownloadOutlivesTheOpTimeout: an op's timeout bounds running it (here:
// opening the file and answering), not the data transfer after its result,
// which may take as long as the bytes take to arrive.
func TestDownloadOutlivesTheOpTimeout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := make([]byte, 32<<20)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(root, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := realHost(t, root)
	x, err := h.Find("")
	if err != nil {
		t.Fatal(err)
	}
	// 512 chunks of 64 KiB at 10 ms each (6.4 MB/s, fast enough for the
	// hub to keep the stream): 5 s, more than the socket buffers hold, so
	// the host is still sending long after the op timeout of 1.5 s (long
	// enough to open and answer, even under -race on a busy machine).
	sink := &slowSink{pause: 10 * time.Millisecond, done: make(chan error, 1)}
	ctx := WithTimeout(context.Background(), 1500*time.Millisecond)
	var res proto.DownloadResult
	if err := x.CallData(ctx, proto.OpDownload, "big.bin", "", struct{}{}, &res, sink); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sink.done:
		if err != nil {
			t.Fatalf("the download failed: %v", err)
		}
	case <-time.After(2 * time.Minute): // 5 s unloaded; -race on a busy CI machine is slower
		t.Fatal("the download never finished")
	}
	if res.Size != int64(len(data)) || !bytes.Equal(sink.buf.Bytes(), data) {
		t.Fatalf("got %d bytes (result says %d), want the file's %d", sink.buf.Len(), res.Size, len(data))
	}
}

// TestHeadCopesWithAHostThatSendsAnyway: a host from before Head ignores
// it and sends the file after its result. The hub, which expects no bytes
// for a HEAD, answers from the result and refuses the transfer
// (transfer_abort), so the host stops sending and frees its slot; the
// host's connection stays usable.
func TestHeadCopesWithAHostThatSendsAnyway(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{Timeout: 10 * time.Second})
	data := bytes.Repeat([]byte("d"), 4<<20)
	var conn atomic.Pointer[connector.Conn]
	sent := make(chan error, 1)
	f := dial(t, srv, "old", proto.ReadOnly, func(op *proto.Op) *proto.Result {
		if op.Op != proto.OpDownload {
			return ok(struct{}{})
		}
		// As a host sends a download: the result, then the bytes.
		go func() {
			c, ctx := conn.Load(), context.Background()
			res := ok(proto.DownloadResult{Size: int64(len(data)), Version: "v1"})
			res.OpID = op.OpID
			if err := c.Send(ctx, res); err != nil {
				sent <- err
				return
			}
			sent <- c.SendData(ctx, op.OpID, bytes.NewReader(data), int64(len(data)))
		}()
		return nil
	})
	conn.Store(f.conn)
	r, err := h.Remote("old")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Download(context.Background(), proto.DownloadRequest{Path: "big.bin", Head: true}, nil)
	if err != nil || res.Size != int64(len(data)) || res.Version != "v1" {
		t.Fatalf("HEAD: %+v, %v", res, err)
	}
	select {
	case err := <-sent:
		if err == nil {
			t.Error("the host's unwanted transfer completed; want it refused")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host's unwanted transfer was never refused")
	}
	if err := r.host.Call(context.Background(), proto.OpStat, "a", "", nil, nil); err != nil {
		t.Errorf("a call after the refused transfer: %v", err)
	}
}
