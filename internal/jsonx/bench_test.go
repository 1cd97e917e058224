package jsonx

import (
	"strings"
	"testing"

	segjson "github.com/segmentio/encoding/json"
)

// benchText is what read results carry most: lines of source text.
var benchText = strings.Repeat("\tif err := run(ctx); err != nil { return \"x\" }\n", 100)[:4096]

// BenchmarkString encodes and decodes 4 KiB of source text: ours against
// segmentio/encoding/json, the connector's JSON library.
func BenchmarkString(b *testing.B) {
	lit := AppendString(nil, benchText)
	b.Run("append", func(b *testing.B) {
		buf := make([]byte, 0, 8<<10)
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			buf = AppendString(buf[:0], benchText)
		}
	})
	b.Run("append-segmentio", func(b *testing.B) {
		buf := make([]byte, 0, 8<<10)
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			buf, _ = segjson.Append(buf[:0], benchText, 0)
		}
	})
	b.Run("scan-decode", func(b *testing.B) {
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			if _, _, ok := ScanString(lit, 0); !ok {
				b.Fatal("invalid")
			}
			if s, ok := String(lit); !ok || len(s) != len(benchText) {
				b.Fatal("bad decode")
			}
		}
	})
	b.Run("decode-segmentio", func(b *testing.B) {
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			var s string
			if err := segjson.Unmarshal(lit, &s); err != nil || len(s) != len(benchText) {
				b.Fatal("bad decode")
			}
		}
	})
}
