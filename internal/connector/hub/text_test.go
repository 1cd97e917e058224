package hub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
	sj "github.com/segmentio/encoding/json"
)

func TestReadResultDecodesContent(t *testing.T) {
	t.Parallel()
	var r readResult
	if err := json.Unmarshal([]byte(`{"Path":"/a","Content":"x\ny\n","TotalLines":2}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Content != "x\ny\n" || r.Path != "/a" || r.TotalLines != 2 || r.ReadResult.Content != "" {
		t.Fatalf("decoded %+v", r)
	}
}

// BenchmarkDecodeReadResult decodes a 4 KiB read result as the hub does
// (sj: segmentio/encoding, the connector's decoder) into ops.ReadResult
// directly and into readResult.
func BenchmarkDecodeReadResult(b *testing.B) {
	// Encoded as the host does (no HTML escaping).
	raw, _ := sj.Append(nil, ops.ReadResult{Path: "/a.go", Content: strings.Repeat("\tif err != nil { return \"<x>\" }\n", 128), TotalLines: 128}, sj.SortMapKeys)
	b.Run("ops.ReadResult", func(b *testing.B) {
		for b.Loop() {
			var r ops.ReadResult
			if err := sj.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("readResult", func(b *testing.B) {
		for b.Loop() {
			var r readResult
			if err := sj.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
