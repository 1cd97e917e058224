package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestTextEditorReadLongLines: a file over 16 MiB whose lines are long,
// so that a page of 2000 lines is over the 16 MiB a host's read returns,
// still reads page by page (the page is cut by its 256 KiB as for any
// file), and a line over 16 MiB alone is refused naming the next line and
// the download route, not with "read fewer lines", which cannot help.
func TestTextEditorReadLongLines(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	line := strings.Repeat("x", 100_000)
	var wide strings.Builder // 200 lines of 100 KB: 20 MB
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&wide, "%d %s\n", i, line)
	}
	files := map[string]string{
		"wide.txt": wide.String(),
		"huge.txt": "short\n" + strings.Repeat("h", workspace.TextLimit+1) + "\nafter\n",
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
		ok             bool
		from, to, next int
		output         string // the output holds this
	}{
		{"first page", client.TextEditorRequest{Path: "wide.txt"}, true, 1, 2, 3,
			"Remote text read truncated by max_bytes. Continue with line_from=3."},
		{"a later page", client.TextEditorRequest{Path: "wide.txt", LineFrom: client.Int(150)}, true, 150, 151, 152,
			"\n 150 | 150 xxx"},
		{"a range over 16 MiB", client.TextEditorRequest{Path: "wide.txt", LineFrom: client.Int(10), LineTo: client.Int(190)}, true, 10, 11, 12,
			"Continue with line_from=12."},
		{"the short line before a huge one", client.TextEditorRequest{Path: "huge.txt"}, true, 1, 1, 2,
			"huge.txt 3 lines\n>>>\n   1 | short\n\n<<<\n[Remote text read truncated by max_bytes. Continue with line_from=2."},
		{"a line over 16 MiB alone", client.TextEditorRequest{Path: "huge.txt", LineFrom: client.Int(2)}, false, 0, 0, 0,
			"Error (read 'huge.txt'): line 2 alone is over the 16 MiB a read returns. Continue with line_from=3 to skip it, or use GET /v2/hosts/laptop/fs/download?path=huge.txt for the complete file."},
		{"the line after it", client.TextEditorRequest{Path: "huge.txt", LineFrom: client.Int(3)}, true, 3, 3, 0,
			"huge.txt 3 lines\n>>>\n   3 | after\n\n<<<"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.Action = "read"
			res, err := h.TextEditor(context.Background(), "", tt.req)
			if res.OK != tt.ok || (err == nil) != tt.ok {
				t.Fatalf("ok %v err %v; want ok %v (%.300q)", res.OK, err, tt.ok, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output %.300q ... %.300q lacks %q", res.Output, res.Output[max(0, len(res.Output)-300):], tt.output)
			}
			if !tt.ok {
				if res.Code != "too_large" {
					t.Errorf("error_type %q, want too_large", res.Code)
				}
				return
			}
			if res.LineFrom != tt.from || res.LineTo != tt.to || res.NextLine != tt.next || res.Truncated != (tt.next != 0) {
				t.Errorf("lines %d-%d next %d truncated %v; want %d-%d next %d", res.LineFrom, res.LineTo, res.NextLine, res.Truncated, tt.from, tt.to, tt.next)
			}
			if len(res.Output) > teMaxBytes+1024 {
				t.Errorf("output is %d bytes, over the page's %d", len(res.Output), teMaxBytes)
			}
		})
	}
}
