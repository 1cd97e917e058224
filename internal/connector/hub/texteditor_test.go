package hub

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, root, "laptop", proto.ReadOnly)
	return h
}

// connectHost connects a real host named name, serving root in mode, to
// the hub h listening at url, and waits until the hub has registered it.
func connectHost(t *testing.T, h *Hub, url, root, name string, mode proto.Mode) {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	x, err := host.New(host.Options{URL: url, Token: token, Name: name, Mode: mode, Engine: ops.New(ws, ops.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	// Wait for the name, not for the count to change: counted after Run
	// started, a host that connected at once was never seen to arrive.
	connected := func() bool {
		return slices.ContainsFunc(h.Hosts(), func(i Info) bool { return i.Name == name })
	}
	for deadline := time.Now().Add(10 * time.Second); !connected(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the host did not connect")
		}
	}
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
		"open.txt": "keep1\nno final line break",
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
			"cr.txt 3 lines\n>>>\n   1 | keep1\n   2 | keep2\n   3 | change-me\n\n<<<"},
		{"a last line without a line break", client.TextEditorRequest{Path: "open.txt"}, 1, 2, 0, 2,
			"open.txt 2 lines\n>>>\n   1 | keep1\n   2 | no final line break\n<<<"},
		{"lines numbered as the host numbers them", client.TextEditorRequest{Path: "crs.log"}, 1, 2000, 2001, 2525,
			"\n 101 | done 100\n 102 | line 101\n"},
		{"line_from past the end", client.TextEditorRequest{Path: "cr.txt", LineFrom: client.Int(10)}, 10, 3, 0, 3,
			"cr.txt 3 lines\n>>>\n\n<<<"},
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

// TestTextEditorAgentZeroTexts: the texts a model sees are Agent Zero's
// where it has one (the freshness prompts unwrapped, {x!r} as Python
// prints it), name the host actually called, and say when a patch landed
// on a file that changed since this context read it.
func TestTextEditorAgentZeroTexts(t *testing.T) {
	t.Parallel()
	laptop, desk := t.TempDir(), t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(laptop, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var long strings.Builder
	for i := 1; i <= 2100; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	write("long.txt", long.String())
	for _, name := range []string{"fresh.txt", "stale.txt", "m.txt", "p.txt", "nofrom.txt"} {
		write(name, "a\nb\nc\n")
	}
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, laptop, "laptop", proto.ReadWrite)
	connectHost(t, h, srv.URL, desk, "desk", proto.ReadOnly)
	ctx := context.Background()
	call := func(host string, req client.TextEditorRequest) *client.TextEditorResult {
		t.Helper()
		res, _ := h.TextEditor(ctx, host, req)
		return res
	}
	read := func(path string) {
		t.Helper()
		if res := call("laptop", client.TextEditorRequest{Action: "read", Path: path}); !res.OK {
			t.Fatalf("read %s: %s", path, res.Output)
		}
	}
	edits := func(path string, e ...client.LineEdit) client.TextEditorRequest {
		return client.TextEditorRequest{Action: "patch", Path: path, Edits: e}
	}
	read("stale.txt")
	write("stale.txt", "a\nb\nc\nd\n")
	read("m.txt")
	write("m.txt", "a\nb\nc\nyy\n")
	read("p.txt")
	write("p.txt", "a\nb\nc\nyy\n")
	read("nofrom.txt")
	write("hdr.txt", "a\nb\n")

	tests := []struct {
		name, host string
		req        client.TextEditorRequest
		ok         bool
		output     string // exact, or the prefix when it ends with "…"
	}{
		{"unknown action as Python prints it", "laptop", client.TextEditorRequest{Action: "FOO-bar", Path: "f.txt"}, false,
			"Unknown action: 'foo_bar'. Use read, write, or patch."},
		{"a path with a quote", "laptop", client.TextEditorRequest{Action: "read", Path: "it's.txt"}, false,
			`Error (read "it's.txt"): …`},
		{"edits before a read", "laptop", edits("fresh.txt", client.LineEdit{From: 1, To: client.Int(1), Content: client.String("X\n")}), false,
			"error patching fresh.txt: read file before patching - line numbers unknown"},
		{"edits after an outside change", "laptop", edits("stale.txt", client.LineEdit{From: 1, To: client.Int(1), Content: client.String("X\n")}), false,
			"error patching stale.txt: file changed since last read - re-read to get current line numbers"},
		{"replace after an outside change", "laptop", client.TextEditorRequest{Action: "patch", Path: "m.txt", OldText: client.String("c"), NewText: client.String("C")}, true,
			"m.txt patched successfully\n[…"},
		{"patch_text after an outside change", "laptop", client.TextEditorRequest{Action: "patch", Path: "p.txt", PatchText: client.String("@@ a\n+a2")}, true,
			"p.txt patched successfully\n[…"},
		{"patch_text's path wins over its header, as Agent Zero's", "laptop", client.TextEditorRequest{Action: "patch", Path: "hdr.txt",
			PatchText: client.String("*** Begin Patch\n*** Update File: other.txt\n@@ a\n+a2\n*** End Patch")}, true,
			"hdr.txt patched successfully…"},
		{"a missing from is line 1", "laptop", edits("nofrom.txt", client.LineEdit{To: client.Int(1), Content: client.String("X\n")}), true,
			"nofrom.txt patched successfully"},
		{"a read-only host named while another allows writes", "desk", client.TextEditorRequest{Action: "write", Path: "w.txt", Content: client.String("x")}, false,
			"text_editor_remote: the CLI 'desk' does not allow remote file writes. Press F3 to switch the CLI to Read&Write."},
		{"a page names the host's download route", "laptop", client.TextEditorRequest{Action: "read", Path: "long.txt"}, true,
			"long.txt 2100 lines\n>>>\n…"},
	}
	for _, tt := range tests {
		res := call(tt.host, tt.req)
		prefix, isPrefix := strings.CutSuffix(tt.output, "…")
		if res.OK != tt.ok || (isPrefix && !strings.HasPrefix(res.Output, prefix)) || (!isPrefix && res.Output != tt.output) {
			t.Errorf("%s: ok %v output %q; want ok %v output %q", tt.name, res.OK, res.Output, tt.ok, tt.output)
		}
		if strings.Contains(tt.name, "outside change") && tt.ok && (res.Notice == "" || !strings.Contains(res.Output, res.Notice)) {
			t.Errorf("%s: notice %q not in the output %q", tt.name, res.Notice, res.Output)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(laptop, "hdr.txt")); string(got) != "a\na2\nb\n" {
		t.Errorf("hdr.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(laptop, "nofrom.txt")); string(got) != "X\nb\nc\n" {
		t.Errorf("nofrom.txt = %q", got)
	}
	if res := call("laptop", client.TextEditorRequest{Action: "read", Path: "long.txt"}); !strings.Contains(res.Output, "Use GET /v2/hosts/laptop/fs/download?path=long.txt for the complete") {
		t.Errorf("the page's note does not name the host's download route: ...%q", res.Output[len(res.Output)-200:])
	}
}

// TestTextEditorLineNumbersAfterOwnChanges: the answer to a patch is Agent
// Zero's fixed "patched successfully", which cannot say how lines moved,
// so a patch that moves lines leaves the context's line numbers stale, as
// Agent Zero marks the file stale: the next line edit is refused in its
// wording, not applied to whatever line now has the number (the host
// applies that rule: the option crosses the connection). A patch in place
// and a whole-file write keep the context fresh, and a read refreshes it.
func TestTextEditorLineNumbersAfterOwnChanges(t *testing.T) {
	t.Parallel()
	const stale = "error patching s.txt: file changed since last read - re-read to get current line numbers"
	lineEdit := func(from, to int, content string) client.TextEditorRequest {
		return client.TextEditorRequest{Action: "patch", Edits: []client.LineEdit{{From: from, To: client.Int(to), Content: client.String(content)}}}
	}
	replace := func(old, new string) client.TextEditorRequest {
		return client.TextEditorRequest{Action: "patch", OldText: client.String(old), NewText: client.String(new)}
	}
	patchText := func(text string) client.TextEditorRequest {
		return client.TextEditorRequest{Action: "patch", PatchText: client.String(text)}
	}
	read := client.TextEditorRequest{Action: "read"}
	tests := []struct {
		name  string
		steps []client.TextEditorRequest // after a read, each must succeed
		then  client.TextEditorRequest   // a line edit of line 3
		ok    bool
		file  string
	}{
		{"replace adding lines, then edits", []client.TextEditorRequest{replace("one", "x\ny\nz")},
			lineEdit(3, 3, "THREE\n"), false, "x\ny\nz\ntwo\nthree\n"},
		{"edits adding lines, then edits", []client.TextEditorRequest{lineEdit(1, 1, "x\ny\nz\n")},
			lineEdit(3, 3, "THREE\n"), false, "x\ny\nz\ntwo\nthree\n"},
		{"patch_text adding a line, then edits", []client.TextEditorRequest{patchText("@@ one\n+x")},
			lineEdit(3, 3, "THREE\n"), false, "one\nx\ntwo\nthree\n"},
		{"after a re-read, the new numbers", []client.TextEditorRequest{replace("one", "x\ny\nz"), read},
			lineEdit(5, 5, "THREE\n"), true, "x\ny\nz\ntwo\nTHREE\n"},
		{"replace in place, then edits", []client.TextEditorRequest{replace("one", "ONE")},
			lineEdit(3, 3, "THREE\n"), true, "ONE\ntwo\nTHREE\n"},
		{"edits in place, then edits", []client.TextEditorRequest{lineEdit(1, 1, "ONE\n")},
			lineEdit(3, 3, "THREE\n"), true, "ONE\ntwo\nTHREE\n"},
		{"a whole-file write, then edits", []client.TextEditorRequest{replace("one", "x\ny\nz"),
			{Action: "write", Content: client.String("a\nb\nc\n")}}, lineEdit(3, 3, "C\n"), true, "a\nb\nC\n"},
	}
	root := t.TempDir()
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, root, "laptop", proto.ReadWrite)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("s%d.txt", i)
			if err := os.WriteFile(filepath.Join(root, name), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The reviewer's sequence: one context (context_id D) per file.
			call := func(req client.TextEditorRequest) *client.TextEditorResult {
				req.Path, req.ContextID = name, "D"
				res, _ := h.TextEditor(context.Background(), "laptop", req)
				return res
			}
			for j, req := range append([]client.TextEditorRequest{read}, tt.steps...) {
				if res := call(req); !res.OK || res.Notice != "" {
					t.Fatalf("step %d: ok %v notice %q output %q", j, res.OK, res.Notice, res.Output)
				}
			}
			res := call(tt.then)
			want := strings.ReplaceAll(stale, "s.txt", name)
			if tt.ok {
				want = name + " patched successfully"
			}
			if res.OK != tt.ok || res.Output != want {
				t.Errorf("line edit: ok %v output %q; want ok %v output %q", res.OK, res.Output, tt.ok, want)
			}
			if !tt.ok && res.Code != "stale_version" {
				t.Errorf("line edit: error_type %q, want stale_version", res.Code)
			}
			if got, _ := os.ReadFile(filepath.Join(root, name)); string(got) != tt.file {
				t.Errorf("%s = %q, want %q", name, got, tt.file)
			}
		})
	}
}
