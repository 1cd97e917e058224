package workspace

import (
	"bytes"
	"testing"
)

// TestVersionHashEqualsVersion: however content is split, the incremental
// hash gives the token Version gives (downloads and copies compare them).
func TestVersionHashEqualsVersion(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("line of text\n"), 10_000)
	for _, piece := range []int{1, 7, 4096, len(content)} {
		h := NewVersionHash()
		for rest := content; len(rest) > 0; {
			n := min(piece, len(rest))
			h.Write(rest[:n])
			rest = rest[n:]
		}
		if got, want := h.Version(), Version(content); got != want {
			t.Errorf("pieces of %d: %s, want %s", piece, got, want)
		}
		h.Reset()
		if got, want := h.Version(), Version(nil); got != want {
			t.Errorf("after Reset: %s, want the empty version %s", got, want)
		}
	}
}
