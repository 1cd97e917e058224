package proto

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLimitsIgnoreTheUnobeyable: a peer's negative limits count as
// absent (no side can obey them: a negative chunk crashed a host's
// download), and a chunk_bytes under MinChunkBytes counts as that.
func TestLimitsIgnoreTheUnobeyable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		peer Limits
		want Limits
	}{
		{"negative chunk", Limits{ChunkBytes: -100, WindowBytes: 2 << 20}, DefaultLimits},
		{"negative sizes", Limits{MaxMessageBytes: -1, MaxTransferBytes: -1, MaxConcurrentTransfers: -4, WindowBytes: 2 << 20}, DefaultLimits},
		{"tiny chunk", Limits{ChunkBytes: 1, WindowBytes: 2 << 20}, func() Limits { l := DefaultLimits; l.ChunkBytes = MinChunkBytes; return l }()},
		{"small chunk kept", Limits{ChunkBytes: 4 << 10, WindowBytes: 2 << 20}, func() Limits { l := DefaultLimits; l.ChunkBytes = 4 << 10; return l }()},
	} {
		if diff := cmp.Diff(tt.want, DefaultLimits.Negotiate(tt.peer)); diff != "" {
			t.Errorf("%s: Negotiate (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := (Limits{ChunkBytes: -5}).Merge(Limits{}); got.ChunkBytes != 0 {
		t.Errorf("Merge of a negative chunk with none = %d, want 0 (unset)", got.ChunkBytes)
	}
}
