package fserr

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootEscapeIsOutsideRoot: an *os.Root's refusal of a link leading
// out — what an operation meets when a link is swapped in after its own
// check — is outside_root, not an anonymous io_error (500).
func TestRootEscapeIsOutsideRoot(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("out/x")
	if !IsRootEscape(err) {
		t.Fatalf("os.Root's escape error is not recognised (its text changed?): %v", err)
	}
	if e := FromOS("grep", "out/x", err); e.Code != OutsideRoot {
		t.Errorf("FromOS(%v) = %s %q, want outside_root", err, e.Code, e.Message)
	}
}
