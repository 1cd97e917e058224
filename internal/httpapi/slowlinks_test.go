package httpapi_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestSlowReaderIsNotCut: a client reading a download through the hub at
// a slow but steady pace, through the kernel's own (autotuned) socket
// buffers, is not cut by the bound on a write to it, here shortened to
// 2 s, though it reads far less than a send buffer in that time. Without
// the send queue bounded (sendq), a write blocked until a third of the
// grown buffer had drained, longer than the bound: at 20 KB/s, real
// clients were cut after some 30 s of a download that was progressing.
func TestSlowReaderIsNotCut(t *testing.T) {
	if testing.Short() {
		t.Skip("reads for 12 s")
	}
	t.Parallel()
	const size, rate, span = 16 << 20, 256 << 10, 12 * time.Second
	e := newHubEnvWith(t, false, httpapi.Options{HostWriteTimeout: 2 * time.Second})
	e.connectHost(t, map[string]int64{"big.bin": size}, proto.Limits{})
	resp := openHostDownload(t, http.DefaultClient, e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	got := 0
	buf := make([]byte, 8<<10)
	for start := time.Now(); time.Since(start) < span; {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			t.Fatalf("the slow client's download was cut after %d bytes (%s): %v", got, time.Since(start).Round(time.Second), err)
		}
		if ahead := time.Duration(got)*time.Second/rate - time.Since(start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	// A cut shows only once the client has read what its buffers hold.
	rest, err := io.ReadAll(resp.Body)
	got += len(rest)
	if err != nil || got != size {
		t.Fatalf("the slow client got %d of %d bytes: %v", got, size, err)
	}
}

// TestAnswerOvertakesADownloadOnASlowUplink: while a host on a slow
// uplink sends a download, a stat's answer reaches the caller after at
// most a few hundred KiB more of the download, not after all that was
// queued before it. The host's kernel used to take megabytes of the
// download into its autotuned send buffer (a 2 MiB flow-control window
// and more), and an answer written after them waited for all of it: some
// 24 s at 200 KB/s. Measured in bytes the uplink passed, not in time.
func TestAnswerOvertakesADownloadOnASlowUplink(t *testing.T) {
	if testing.Short() {
		t.Skip("sends megabytes at 1 MB/s")
	}
	t.Parallel()
	const rate = 1 << 20
	e := newHubEnv(t, false)
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	proxy := testenv.Throttle(t, strings.TrimPrefix(e.url, "http://"), rate, &sent)
	e.connectHostVia(t, "http://"+proxy, root, proto.Limits{})

	resp := openHostDownload(t, http.DefaultClient, e.url+"/v2/hosts/laptop/fs/download?path=big.bin")
	go io.Copy(io.Discard, resp.Body) // a fast client: the uplink is the bottleneck
	testenv.WaitFor(t, time.Minute, "the download to fill the uplink", func() bool { return sent.Load() > 3<<20 })
	before := sent.Load()
	r, body, err := get(t, e.url+"/v2/hosts/laptop/fs/stat?path=a.txt")
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("a stat during the download: %v %s", err, body)
	}
	if ahead := sent.Load() - before; ahead > 1<<20 {
		t.Errorf("the stat's answer came after %d more bytes of the download, want under 1 MiB", ahead)
	} else {
		t.Logf("the stat's answer came after %d more bytes of the download", ahead)
	}
}
