package hub

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// BenchmarkRemoteRead is one 4 KiB read through the hub and a real host
// over loopback, against the same read on the local engine; hub-stat is
// the round trip of an operation with a small result.
func BenchmarkRemoteRead(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	eng := ops.New(ws, ops.Options{})
	h := New(Options{Token: "t"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	x, err := host.New(host.Options{URL: srv.URL, Token: "t", Name: "bench", Mode: proto.ReadOnly, Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go x.Run(ctx)
	for deadline := time.Now().Add(5 * time.Second); len(h.Hosts()) == 0; {
		if time.Now().After(deadline) {
			b.Fatal("host did not connect")
		}
		time.Sleep(time.Millisecond)
	}
	r, err := h.Remote("")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Read(ctx, ops.ReadRequest{Path: "small.txt"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hub-stat", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Stat(ctx, ops.StatRequest{Path: "small.txt"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hub", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Read(ctx, ops.ReadRequest{Path: "small.txt"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
