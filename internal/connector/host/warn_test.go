package host

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// lockedLog is a log destination safe for concurrent writes.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestResetHubWarnedOnce: a server that resets every connection fails
// each attempt with the same error but for the local port it names
// ("read tcp 127.0.0.1:48064->…"); the whole error is a warning once while
// it stays the same, not at every attempt.
func TestResetHubWarnedOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 16)
			_, _ = c.Read(buf) // the request has been sent
			c.(*net.TCPConn).SetLinger(0)
			c.Close() // RST
		}
	}()
	ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	rec := newRecorder()
	var log lockedLog
	h, err := New(Options{URL: "http://" + l.Addr().String(), Name: "n", Engine: ops.New(ws, ops.Options{}), OnEvent: rec.add,
		Logger:      slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		backoffBase: time.Millisecond, backoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	from := 0
	for range 4 {
		_, i := rec.wait(t, 20*time.Second, from, "reconnecting", func(e Event) bool { return e.State == Reconnecting })
		from = i + 1
	}
	cancel()
	<-done
	// A warning per change of reason at most (a reset may, rarely, be
	// read as an abrupt close instead: another error, warned again).
	changes, prev := 0, ""
	for _, e := range rec.all() {
		if e.State == Reconnecting && e.Reason != prev {
			changes, prev = changes+1, e.Reason
		}
	}
	if n := strings.Count(log.String(), "level=WARN msg=Reconnecting"); n > changes || n == 0 {
		t.Errorf("%d warnings for attempts failing alike (%d different reasons in a row), want 1 per reason:\n%s", n, changes, log.String())
	}
}
