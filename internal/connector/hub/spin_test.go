package hub

import (
	"context"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
)

// With a spin wait, every call settles what it expected however it ends:
// answered, timed out, or cut off by the host's disconnection. A call
// left counted would keep the reader spinning for nothing.
func TestSpinWaitSettlesEveryCall(t *testing.T) {
	t.Parallel()
	h, srv := newHub(t, Options{SpinWait: 300 * time.Microsecond})
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	f := dial(t, srv, "spin", proto.ReadWrite, func(op *proto.Op) *proto.Result {
		if op.Path == "hang" {
			<-hang
			return nil
		}
		return ok(ops.ReadResult{Content: "hi", TotalLines: 1})
	})
	x, err := h.Find("spin")
	if err != nil {
		t.Fatal(err)
	}
	if x.spin == nil {
		t.Fatal("the host's connection is not a SpinConn")
	}
	ctx := context.Background()
	for range 20 {
		var res ops.ReadResult
		if err := x.Call(ctx, proto.OpRead, "a.txt", "c", ops.ReadRequest{Path: "a.txt"}, &res); err != nil || res.Content != "hi" {
			t.Fatalf("read: %+v, %v", res, err)
		}
	}
	if n := x.spin.Awaiting(); n != 0 {
		t.Fatalf("after 20 answered reads, %d still awaited", n)
	}
	if err := x.Call(WithTimeout(ctx, 50*time.Millisecond), proto.OpRead, "hang", "c", ops.ReadRequest{Path: "hang"}, new(ops.ReadResult)); err == nil {
		t.Fatal("a call the host never answers succeeded")
	}
	if n := x.spin.Awaiting(); n != 0 {
		t.Fatalf("after a timeout, %d still awaited", n)
	}
	done := make(chan error, 1)
	go func() {
		done <- x.Call(ctx, proto.OpRead, "hang", "c", ops.ReadRequest{Path: "hang"}, new(ops.ReadResult))
	}()
	waitUntil(t, func() bool { return x.spin.Awaiting() == 1 })
	f.conn.Close()
	if err := <-done; err == nil {
		t.Fatal("a call cut off by the disconnection succeeded")
	}
	if n := x.spin.Awaiting(); n != 0 {
		t.Fatalf("after the host went away, %d still awaited", n)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
