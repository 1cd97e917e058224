package host

import (
	"context"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
)

// waitIdle waits until no operation is in flight: the end of one is told
// just after its answer is sent, so a moment after the hub has it.
func waitIdle(t *testing.T, l *testenv.Load) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, "no operation in flight", func() bool { now, _, _ := l.Counts(); return now == 0 })
}

// TestLoadToldOfEveryOp: Options.Load hears of each operation the host
// runs, from its start until it is answered, so that a governor sees two
// in flight while a long grep runs and a stat comes in beside it, and
// none once both are done.
func TestLoadToldOfEveryOp(t *testing.T) {
	t.Parallel()
	load := &testenv.Load{}
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, map[string]string{"a.txt": "x\n"}, func(o *Options) { o.Load = load })
	var st ops.StatResult
	f.ok(t, &proto.Op{Op: "stat", Path: "a.txt"}, &st)
	waitIdle(t, load)
	if _, most, calls := load.Counts(); calls != 1 || most != 1 {
		t.Fatalf("after one stat: %d calls, at most %d in flight; want 1, 1", calls, most)
	}

	slowTree(t, f.root, 3000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := hub.Start(ctx, &proto.Op{OpID: "long", Op: "grep", Path: "slow", Args: args(t, ops.GrepRequest{Pattern: slowPattern, MaxFileSize: "0"})}); err != nil {
		t.Fatal(err)
	}
	f.waitRunning(t, "long")
	if now, _, _ := load.Counts(); now != 1 {
		t.Errorf("%d in flight while the grep runs, want 1", now)
	}
	f.ok(t, &proto.Op{Op: "stat", Path: "a.txt"}, &st)
	if _, most, _ := load.Counts(); most != 2 {
		t.Errorf("at most %d in flight with a stat beside the grep, want 2", most)
	}
	if err := hub.Cancel(ctx, "long"); err != nil {
		t.Fatal(err)
	}
	f.rec.wait(t, 30*time.Second, 0, "the grep's record", func(e Event) bool { return e.Kind == EventOp && e.Op.ID == "long" })
	waitIdle(t, load)
	if _, _, calls := load.Counts(); calls != 3 {
		t.Errorf("%d operations told, want 3", calls)
	}
}
