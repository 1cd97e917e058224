package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestQueueFullAnswersBusy: with every op slot taken, ops beyond what the
// host holds waiting (in number, or in bytes of args) are answered busy
// at once and never run, while the queued ones run once slots free up. A
// hub once grew a host to 4 GB by queueing 1 MB ops behind slow ones.
func TestQueueFullAnswersBusy(t *testing.T) {
	t.Parallel()
	big := base64.StdEncoding.EncodeToString(make([]byte, 1536<<10)) // over the byte cap, and sent as a transfer
	write := func(path, content string) *proto.Op {
		return &proto.Op{Op: proto.OpWrite, Path: path, Args: json.RawMessage(`{"Content":"` + content + `"}`)}
	}
	tests := []struct {
		name     string
		ops, mib int64
		queued   []*proto.Op // each finds the slots taken and waits
	}{
		{name: "count", ops: 2, mib: 64,
			queued: []*proto.Op{write("q1.txt", "aGkK"), write("q2.txt", "aGkK")}},
		{name: "bytes", ops: 100, mib: 1,
			queued: []*proto.Op{write("large.txt", big)}}, // alone in the queue: let in whatever its size
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hub := hosttest.Start(t, hosttest.Options{})
			f := setup(t, hub, proto.ReadWrite, nil, func(o *Options) { o.queueOps, o.queueBytes = int(tt.ops), tt.mib<<20 })
			for range MaxConcurrentOps {
				f.h.opSlots <- struct{}{}
			}
			released := false
			release := func() {
				if !released {
					released = true
					for range MaxConcurrentOps {
						<-f.h.opSlots
					}
				}
			}
			t.Cleanup(release)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
			defer cancel()
			var results []<-chan *proto.Result
			for _, op := range tt.queued {
				ch, _, err := hub.Start(ctx, op)
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, ch)
				f.waitRunning(t, op.OpID)
			}
			refused := write("busy.txt", "aGkK")
			r := f.do(t, refused) // answered while every slot is still held
			if r.OK || r.Error == nil || r.Error.Code != "busy" || r.Error.Details["retryable"] != true || !strings.Contains(r.Error.Hint, "retry") {
				t.Fatalf("op beyond the queue: %+v, want busy, retryable, with a hint to retry", r.Error)
			}
			release()
			for i, ch := range results {
				select {
				case r := <-ch:
					if !r.OK {
						t.Errorf("queued op %s: %+v", tt.queued[i].Path, r.Error)
					}
				case <-ctx.Done():
					t.Fatalf("queued op %s never ran", tt.queued[i].Path)
				}
			}
			if _, err := os.Stat(filepath.Join(f.root, refused.Path)); !os.IsNotExist(err) {
				t.Errorf("the op answered busy ran: %v", err)
			}
			f.h.queueMu.Lock()
			defer f.h.queueMu.Unlock()
			if f.h.queued != 0 || f.h.queuedBytes != 0 {
				t.Errorf("queue not emptied: %d ops, %d bytes", f.h.queued, f.h.queuedBytes)
			}
		})
	}
}
