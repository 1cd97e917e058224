package hub

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// TestTextEditorArgumentsAsAgentZero: the arguments are read as Agent
// Zero's text_editor_remote reads them: the path stripped as Python's
// str.strip() strips (a model's trailing newline must not name, or
// create, another file), a blank one is "path is required", and an empty
// old_text is "old_text is required for exact replace", unwrapped, as
// parse_patch_request says it.
func TestTextEditorArgumentsAsAgentZero(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, root, "laptop", proto.ReadWrite)
	tests := []struct {
		name   string
		req    client.TextEditorRequest
		ok     bool
		output string
		path   string // the result's path
	}{
		{"a trailing newline", client.TextEditorRequest{Action: "write", Path: "w.txt\n", Content: client.String("x\n")}, true,
			"w.txt written successfully", "w.txt"},
		{"spaces and tabs around", client.TextEditorRequest{Action: "read", Path: " \ta.txt  "}, true,
			"a.txt 2 lines\n>>>\n   1 | one\n   2 | two\n\n<<<", "a.txt"},
		{"Python's whitespace (\\x1c..\\x1f, U+3000)", client.TextEditorRequest{Action: "read", Path: "\x1c\u3000a.txt\x1f"}, true,
			"a.txt 2 lines\n>>>\n   1 | one\n   2 | two\n\n<<<", "a.txt"},
		{"a blank path", client.TextEditorRequest{Action: "write", Path: " \n\t", Content: client.String("x")}, false,
			"path is required", ""},
		{"an empty old_text", client.TextEditorRequest{Action: "patch", Path: "a.txt", OldText: client.String(""), NewText: client.String("x")}, false,
			"old_text is required for exact replace", "a.txt"},
		{"an empty old_text, no new_text", client.TextEditorRequest{Action: "patch", Path: "a.txt", OldText: client.String("")}, false,
			"old_text is required for exact replace", "a.txt"},
	}
	for _, tt := range tests {
		res, err := h.TextEditor(context.Background(), "", tt.req)
		if res.OK != tt.ok || (err == nil) != tt.ok {
			t.Errorf("%s: ok %v err %v; want ok %v", tt.name, res.OK, err, tt.ok)
		}
		if diff := cmp.Diff(tt.output, res.Output); diff != "" {
			t.Errorf("%s: output (-want +got):\n%s", tt.name, diff)
		}
		if res.Path != tt.path {
			t.Errorf("%s: path %q, want %q", tt.name, res.Path, tt.path)
		}
		if !tt.ok && res.Code != "bad_request" {
			t.Errorf("%s: error_type %q, want bad_request", tt.name, res.Code)
		}
	}
	names, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if diff := cmp.Diff([]string{"a.txt", "w.txt"}, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("a.txt = %q", b)
	}
}

// TestTextEditorMustReadHint: the hint of a line edit before any read
// names what text_editor_remote has (a read), not the expected_version
// of the routes that take one: a model told to pass it would send a field
// this tool refuses.
func TestTextEditorMustReadHint(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, root, "laptop", proto.ReadWrite)
	res, err := h.TextEditor(context.Background(), "", client.TextEditorRequest{Action: "patch", Path: "a.txt",
		Edits: []client.LineEdit{{From: 1, To: client.Int(1), Content: client.String("ONE\n")}}})
	if res.OK || res.Code != "must_read" {
		t.Fatalf("ok %v error_type %q: %q", res.OK, res.Code, res.Output)
	}
	want := "error patching a.txt: read file before patching - line numbers unknown"
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	e, ok := fserr.As(err)
	if !ok {
		t.Fatalf("error %T %v is no *fserr.Error", err, err)
	}
	if diff := cmp.Diff(`read the file first (action "read"), then edit by line numbers`, e.Hint); diff != "" {
		t.Errorf("hint (-want +got):\n%s", diff)
	}
}
