package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestIntoItselfThroughAnotherSpelling: a directory copied or moved into
// itself under another spelling (here a bind mount; on macOS a different
// case) is refused like the same spelling. The copy used to recurse into
// its own staging directory without end.
func TestIntoItselfThroughAnotherSpelling(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real, alias := filepath.Join(root, "real"), filepath.Join(root, "alias")
	for _, d := range []string{filepath.Join(real, "dir", "deep"), alias} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(real, "dir", "deep", "f.txt"), "x", 0o644)
	bindMount(t, real, alias)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	tests := []struct {
		name string
		op   func() error
	}{
		{"copy into a subdirectory", func() error { _, err := w.Copy("real/dir", "alias/dir/sub", false, nil); return err }},
		{"copy onto itself", func() error { _, err := w.Copy("real/dir", "alias/dir", true, nil); return err }},
		{"move into a subdirectory", func() error { _, err := w.Move("real/dir", "alias/dir/deep/sub", false, ""); return err }},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() { done <- tt.op() }()
		select {
		case err := <-done:
			var fe *fserr.Error
			if !errors.As(err, &fe) || fe.Code != fserr.InvalidTarget {
				t.Errorf("%s: %v, want invalid_target", tt.name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still running after 20 s: it is copying into its own copy", tt.name)
		}
	}
	var got []string
	filepath.WalkDir(real, func(p string, _ os.DirEntry, err error) error {
		if err == nil {
			got = append(got, p[len(real):])
		}
		return nil
	})
	if want := []string{"", "/dir", "/dir/deep", "/dir/deep/f.txt"}; !slices.Equal(got, want) {
		t.Errorf("tree after the refused operations: %q, want %q", got, want)
	}
}
