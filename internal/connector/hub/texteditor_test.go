package hub

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// realHost connects a real host (host.Host over an ops.Engine on root) to
// a new hub and returns the hub once the host is registered.
func realHost(t *testing.T, root string) *Hub {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	x, err := host.New(host.Options{URL: srv.URL, Token: token, Name: "laptop", Mode: proto.ReadOnly, Engine: ops.New(ws, ops.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); len(h.Hosts()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the host did not connect")
		}
	}
	return h
}

// TestTextEditorReadPages: a read asks the host for one page (2000 lines)
// at most, so a file of any size reads page by page — one over the 16 MiB
// a whole read returns too — and the page says where to continue.
func TestTextEditorReadPages(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var small strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&small, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte(small.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 180_000) // 18 MB
	if err := os.WriteFile(filepath.Join(root, "big.log"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	var crs strings.Builder // a log with progress-bar carriage returns
	for i := 1; i <= 2500; i++ {
		if i%100 == 0 {
			fmt.Fprintf(&crs, "progress %d\rdone %d\n", i, i)
		} else {
			fmt.Fprintf(&crs, "line %d\n", i)
		}
	}
	files := map[string]string{
		"cr.txt":   "keep1\rkeep2\nchange-me\n",
		"crs.log":  crs.String(),
		"wide.txt": "short\n" + strings.Repeat("w", 300<<10) + "\nafter\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := realHost(t, root)
	tests := []struct {
		name           string
		req            client.TextEditorRequest
		from, to, next int
		total          int
		output         string // the output holds this
	}{
		{"first page", client.TextEditorRequest{Path: "small.txt"}, 1, 2000, 2001, 2500, ""},
		{"last page", client.TextEditorRequest{Path: "small.txt", LineFrom: client.Int(2001)}, 2001, 2500, 0, 2500, ""},
		{"a range within a page", client.TextEditorRequest{Path: "small.txt", LineFrom: client.Int(10), LineTo: client.Int(20)}, 10, 20, 0, 2500, ""},
		{"a range over a page", client.TextEditorRequest{Path: "small.txt", LineFrom: client.Int(2), LineTo: client.Int(2400)}, 2, 2001, 2002, 2500, ""},
		{"exactly one page", client.TextEditorRequest{Path: "small.txt", LineTo: client.Int(2000)}, 1, 2000, 0, 2500, ""},
		{"a file over 16 MiB", client.TextEditorRequest{Path: "big.log", LineFrom: client.Int(5)}, 5, 2004, 2005, 180_000, ""},
		{"a lone CR ends a line", client.TextEditorRequest{Path: "cr.txt"}, 1, 3, 0, 3,
			"cr.txt 3 lines\n>>>\n   1 | keep1\n   2 | keep2\n   3 | change-me\n<<<"},
		{"lines numbered as the host numbers them", client.TextEditorRequest{Path: "crs.log"}, 1, 2000, 2001, 2525,
			"\n 101 | done 100\n 102 | line 101\n"},
		{"one line over the byte cap", client.TextEditorRequest{Path: "wide.txt", LineFrom: client.Int(2)}, 2, 1, 3, 3,
			"line 2 alone is over 256 KiB. Continue with line_from=3 to skip it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.Action = "read"
			res, err := h.TextEditor(context.Background(), "", tt.req)
			if err != nil {
				t.Fatalf("read: %v (%s)", err, res.Output)
			}
			if res.LineFrom != tt.from || res.LineTo != tt.to || res.NextLine != tt.next || res.Truncated != (tt.next != 0) || res.TotalLines != tt.total {
				t.Errorf("lines %d-%d next %d truncated %v total %d; want %d-%d next %d total %d",
					res.LineFrom, res.LineTo, res.NextLine, res.Truncated, res.TotalLines, tt.from, tt.to, tt.next, tt.total)
			}
			if tt.to >= tt.from {
				for _, want := range []string{fmt.Sprintf("\n%4d | ", tt.from), fmt.Sprintf("\n%4d | ", tt.to)} {
					if !strings.Contains(res.Output, want) {
						t.Errorf("output lacks the line %q", want)
					}
				}
			}
			if extra := fmt.Sprintf("\n%4d | ", tt.to+1); strings.Contains(res.Output, extra) {
				t.Errorf("output has the line %q past the page", extra)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output %.300q lacks %q", res.Output, tt.output)
			}
			if tt.next != 0 && tt.to >= tt.from && !strings.Contains(res.Output, fmt.Sprintf("Remote text read truncated by max_lines. Continue with line_from=%d.", tt.next)) {
				t.Errorf("output does not say where to continue: ...%q", res.Output[max(0, len(res.Output)-200):])
			}
		})
	}
}
