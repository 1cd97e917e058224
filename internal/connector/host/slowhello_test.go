package host

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestModeReachesTheHubOnASlowUplink: a mode switched while a result
// crosses a slow uplink (the write holds the connection for longer than
// the 5 s a hello was given) still reaches the hub, once the result is
// through. The hello was given up after 5 s, on a connection that was
// fine: the hub kept the old mode for as long as the connection lasted,
// and refused writes to a host in Read&Write (its text_editor checks the
// mode it knows).
func TestModeReachesTheHubOnASlowUplink(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends 160 KB at 16 KB/s")
	}
	hub := hosttest.Start(t, hosttest.Options{})
	var sent atomic.Int64
	proxy := testenv.Throttle(t, strings.TrimPrefix(hub.URL, "http://"), 16<<10, &sent)
	root := t.TempDir()
	// 160 KB of text: one message, under max_message_bytes, that takes
	// some 10 s to send (in fragments of 64 KiB, each well within the 5 s
	// a pong may wait behind one).
	text := strings.Repeat("0123456789abcdef\n", 160<<10/17)
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	rec := newRecorder()
	h, err := New(Options{URL: "http://" + proxy, Name: "laptop", Mode: proto.ReadOnly, Engine: ops.New(ws, ops.Options{}),
		OnEvent: rec.add, backoffBase: 10 * time.Millisecond, backoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Small socket buffers, as on a slow link: writes block instead of
	// filling megabytes of loopback buffer.
	tr := h.client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if fc, ok := c.(*connector.FrameConn); ok && err == nil {
			_ = fc.Conn.(*net.TCPConn).SetWriteBuffer(8 << 10)
		}
		return c, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if err := hub.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 20*time.Second, 0, "connected", func(e Event) bool { return e.State == Connected })

	before := sent.Load()
	results, _, err := hub.Start(wctx, &proto.Op{Op: proto.OpRead, Path: "big.txt"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Minute, "the result to be on its way", func() bool { return sent.Load()-before > 20<<10 })
	if err := h.SetMode(proto.ReadWrite); err != nil {
		t.Errorf("SetMode while a result crosses the uplink: %v", err)
	}
	select {
	case r := <-results:
		if !r.OK {
			t.Fatalf("the read failed: %+v", r.Error)
		}
	case <-wctx.Done():
		t.Fatal("the read's result never came")
	}
	// A round trip after the result: a hello sent since has arrived.
	if _, err := hub.Do(wctx, &proto.Op{Op: proto.OpStat, Path: "big.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := hub.LastHello().Mode; got != proto.ReadWrite {
		t.Errorf("the hub knows the host as %s, want %s", got, proto.ReadWrite)
	}
}
