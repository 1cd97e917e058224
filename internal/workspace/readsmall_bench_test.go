package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadTextSmall reads a 4 KiB file two directories down, the
// read the connector benchmark times.
func BenchmarkReadTextSmall(b *testing.B) {
	w, root := newTestWorkspace(b)
	writeFile(b, filepath.Join(root, "a", "b", "small.txt"), strings.Repeat("x", 4096), 0o644)
	for b.Loop() {
		if _, err := w.ReadText("a/b/small.txt"); err != nil {
			b.Fatal(err)
		}
	}
}
