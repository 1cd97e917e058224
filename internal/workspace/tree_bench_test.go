package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkTreeMerge merges a tree of 20,000 small files into a
// directory, over 20,000 existing ones (overwrite) or into an empty one
// (add): staging, then Commit. ns/op includes the disk.
func BenchmarkTreeMerge(b *testing.B) {
	const n = 20000
	for _, overwrite := range []bool{true, false} {
		b.Run(map[bool]string{true: "overwrite", false: "add"}[overwrite], func(b *testing.B) {
			root := b.TempDir()
			w, err := Open(Options{Roots: []string{root}, StateDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			dir := filepath.Join(root, "d")
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if overwrite {
					for i := range n {
						if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), []byte("old\n"), 0o644); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StartTimer()
				tw, err := w.CreateTree("d", nil)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if _, err := tw.File(fmt.Sprintf("f%05d.txt", i), 0o644, strings.NewReader("new\n")); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := tw.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
