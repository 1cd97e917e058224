package hub

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	case <-time.After(30 * time.Second):
		t.Fatal("the download never finished")
	}
	if res.Size != int64(len(data)) || !bytes.Equal(sink.buf.Bytes(), data) {
		t.Fatalf("got %d bytes (result says %d), want the file's %d", sink.buf.Len(), res.Size, len(data))
	}
}
