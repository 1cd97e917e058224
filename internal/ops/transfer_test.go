package ops

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestUploadWithoutPath: an upload that names no target goes by its
// file name's base name to /tmp when /tmp is inside a root (AIO's
// /tmp/<filename>), else to the top of the first root; it replaces a
// file there as an explicit path does.
func TestUploadWithoutPath(t *testing.T) {
	t.Parallel()
	unique := "fsplane-upload-test-" + rand.Text() + ".txt"
	tests := []struct {
		name     string
		withTmp  bool // /tmp is a second root
		filename string
		wantDir  string // "root" or "/tmp"; "" for an error
	}{
		{name: "confined", filename: "a.txt", wantDir: "root"},
		{name: "confined, directories dropped", filename: `C:\Users\me/dir\a.txt`, wantDir: "root"},
		{name: "tmp inside a root", withTmp: true, filename: "x/" + unique, wantDir: "/tmp"},
		{name: "no name", filename: "", wantDir: ""},
		{name: "dot dot", filename: "dir/..", wantDir: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			roots := []string{root}
			if tc.withTmp {
				roots = append(roots, "/tmp")
			}
			ws, err := workspace.Open(workspace.Options{Roots: roots, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close() })
			e := New(ws, Options{})
			up := func(content string) (*UploadResult, error) {
				return e.Upload(context.Background(), UploadRequest{FileName: tc.filename, Body: strings.NewReader(content)})
			}
			res, err := up("one")
			if tc.wantDir == "" {
				wantCode(t, err, fserr.BadRequest)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := root
			if tc.wantDir == "/tmp" {
				dir = "/tmp"
				t.Cleanup(func() { os.Remove(res.Path) })
			}
			base := tc.filename[strings.LastIndexAny(tc.filename, `/\`)+1:]
			if want := filepath.Join(dir, base); res.Path != want || !res.Created {
				t.Fatalf("placed at %s (created %v), want %s", res.Path, res.Created, want)
			}
			if res, err = up("two"); err != nil || res.Created {
				t.Fatalf("second upload: %v, created %v", err, res != nil && res.Created)
			}
			if b, err := os.ReadFile(res.Path); err != nil || string(b) != "two" {
				t.Fatalf("content %q %v", b, err)
			}
		})
	}
}
