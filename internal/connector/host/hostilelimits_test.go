package host

import (
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestHostileWelcomeLimits: limits in a hub's welcome that no sender can
// obey (a chunk of no bytes or fewer, a negative size or count) are
// ignored as absent: the host goes on serving reads and downloads with the
// defaults, instead of crashing (a negative chunk_bytes made the data
// transfer's frame buffer a negative length) or refusing everything.
func TestHostileWelcomeLimits(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("0123456789abcdef\n", 8<<10) // 136 KiB: several chunks
	for _, tc := range []struct {
		name   string
		limits proto.Limits
	}{
		{"negative chunk", proto.Limits{ChunkBytes: -100}},
		{"chunk of -1", proto.Limits{ChunkBytes: -1}},
		{"negative message limit", proto.Limits{MaxMessageBytes: -1}},
		{"negative transfer limit", proto.Limits{MaxTransferBytes: -1}},
		{"negative concurrency", proto.Limits{MaxConcurrentTransfers: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hub := hosttest.Start(t, hosttest.Options{Limits: tc.limits})
			f := setup(t, hub, proto.ReadOnly, map[string]string{"a.txt": content}, nil)
			var rd struct{ Content string }
			f.ok(t, &proto.Op{Op: proto.OpRead, Path: "a.txt"}, &rd)
			if rd.Content != content {
				t.Errorf("read returned %d bytes, want the file's %d", len(rd.Content), len(content))
			}
			var dl proto.DownloadResult
			f.ok(t, &proto.Op{Op: proto.OpDownload, Path: "a.txt"}, &dl)
			if dl.Size != int64(len(content)) || dl.Version == "" {
				t.Errorf("download result %+v, want the file's size %d and a version", dl, len(content))
			}
		})
	}
}
