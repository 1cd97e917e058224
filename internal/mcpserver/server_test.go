package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestSDKLogger: the SDK's records below WARN are logged at DEBUG, so the
// default level hides its narration of every session while its warnings
// and errors show, and a debug level shows everything.
func TestSDKLogger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level slog.Level
		want  []string
		not   []string
	}{
		{slog.LevelInfo, []string{`level=WARN msg="sdk warn"`, `level=ERROR msg="sdk error"`}, []string{"sdk info", "sdk debug"}},
		{slog.LevelDebug, []string{`level=DEBUG msg="sdk info" session_id=x`, `level=DEBUG msg="sdk debug"`, `level=WARN msg="sdk warn"`, `level=ERROR msg="sdk error"`}, nil},
		{slog.LevelError, []string{`level=ERROR msg="sdk error"`}, []string{"sdk info", "sdk warn"}},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			l := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})))
			l.Debug("sdk debug")
			l.With("session_id", "x").Info("sdk info")
			l.Warn("sdk warn")
			l.Error("sdk error")
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, buf.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(buf.String(), n) {
					t.Errorf("log has %q:\n%s", n, buf.String())
				}
			}
		})
	}
	if sdkLogger(nil) != nil {
		t.Error("sdkLogger(nil) is not nil: the SDK discards with nil")
	}
}

// TestRunStopsQuietly: Run returns ctx's error when ctx ends, and a stop
// asked for logs no ERROR (the SDK's own Run logged "server run
// cancelled" at ERROR).
func TestRunStopsQuietly(t *testing.T) {
	t.Parallel()
	_, eng := newEngine(t, nil, ops.Options{})
	var logs testenv.SyncBuffer
	srv := New(eng, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "server run") {
		t.Errorf("the stop is logged as a failure or narrated:\n%s", logs.String())
	}
}
