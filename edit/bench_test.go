package edit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/gosource"
)

var bigSource = gosource.Big

func BenchmarkReplace100MB(b *testing.B) {
	content := bigSource()
	cases := []struct {
		name, old, new string
		tier           Tier
	}{
		{"exact", "func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n\tfor _, it := range items {\n", "func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n\tfor _, item := range items {\n", TierExact},
		{"line_ending", "\tfor _, it := range items {\r\n\t\ttotal += it.Weight * 3  \r\n", "\tfor _, it := range items {\r\n\t\ttotal += it.Weight * 4\r\n", TierLineEnding},
		{"trailing_whitespace", "\tfor _, it := range items {\n\t\ttotal += it.Weight * 3\n\t}\n", "\tfor _, it := range items {\n\t\ttotal += it.Weight * 5\n\t}\n", TierTrailingSpace},
		{"trimmed", "\n\n   total += it.Weight * 3  \n\n", "total += it.Weight * 6", TierTrimmed},
		{"indentation", "for _, it := range items {\n\ttotal += it.Weight * 3\n}", "for _, it := range items {\n\ttotal += it.Weight * 7\n}", TierIndentation},
		{"punctuation", "log.Printf(\"total is %d\", total)", "log.Printf(\"sum is %d\", total)", TierPunctuation},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				r, err := Replace(content, c.old, c.new, ReplaceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if r.Tier != c.tier {
					b.Fatalf("tier %v, want %v", r.Tier, c.tier)
				}
			}
		})
	}
}

func BenchmarkLocateRareByte(b *testing.B) {
	content := bigSource()
	needle := strings.Repeat(" the ", 4) + "uniqueMarker("
	b.Run("indexAll", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			indexAll(content, []byte(needle), 0)
		}
	})
	b.Run("bytes.Index", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			bytes.Index(content, []byte(needle))
		}
	})
}
