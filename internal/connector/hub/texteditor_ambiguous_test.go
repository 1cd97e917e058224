package hub

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/google/go-cmp/cmp"
)

// TestTextEditorReplaceCountsMatches: an old_text that matches more than
// once is refused with Agent Zero's "old_text matched N times", N the
// matches (as str.count counts them), not the lines they are on: two on
// one line are two, and 150 lines are 150 though the error lists 100.
func TestTextEditorReplaceCountsMatches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"one-line.txt": "foo foo\nbar\n",
		"mixed.txt":    "foo foo foo\nfoo\nbar\n",
		"many.txt":     strings.Repeat("foo\n", 150),
		"more.txt":     strings.Repeat("foo\n", 1500),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := New(Options{Token: token})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	connectHost(t, h, srv.URL, root, "laptop", proto.ReadWrite)
	tests := []struct{ path, count string }{
		{"one-line.txt", "2"},
		{"mixed.txt", "4"},
		{"many.txt", "150"},
		{"more.txt", "more than 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			res, err := h.TextEditor(context.Background(), "", client.TextEditorRequest{Action: "patch", Path: tt.path, OldText: client.String("foo"), NewText: client.String("x")})
			if err == nil || res.OK {
				t.Fatalf("replaced: %q", res.Output)
			}
			want := "Error (patch '" + tt.path + "'): old_text matched " + tt.count + " times; provide a longer exact span"
			if diff := cmp.Diff(want, res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if res.Code != "ambiguous_match" {
				t.Errorf("error_type %q, want ambiguous_match", res.Code)
			}
			if got, _ := os.ReadFile(filepath.Join(root, tt.path)); string(got) != files[tt.path] {
				t.Errorf("%s changed: %.60q", tt.path, got)
			}
		})
	}
}
