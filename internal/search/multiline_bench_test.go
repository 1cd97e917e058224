package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkMultilineManyMatches is a multiline search whose pattern has a
// Unicode spelling (\w) on non-ASCII text with a match per line: the work
// per match must not grow with the file.
func BenchmarkMultilineManyMatches(b *testing.B) {
	q, err := Compile(Options{Pattern: `o\w*\n`, Multiline: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, kib := range []int{160, 640} {
		b.Run(fmt.Sprintf("%dKiB", kib), func(b *testing.B) {
			dir := b.TempDir()
			text := strings.Repeat("foo\nbar\n", kib<<10/8) + "é\n"
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer root.Close()
			for b.Loop() {
				if _, err := Grep(context.Background(), root, "f.txt", q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
