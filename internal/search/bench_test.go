package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
)

// goroot is the tree the benchmarks search: the Go source tree.
func gorootSrc(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(testenv.GOROOT(), "src")
	if _, err := os.Stat(dir); err != nil {
		tb.Skip("GOROOT/src not found")
	}
	return dir
}

func benchStream(b *testing.B, opts Options) {
	root, err := os.OpenRoot(gorootSrc(b))
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	q, err := Compile(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		_, err := Stream(context.Background(), root, ".", q, func(fm *FileMatches) int { return fm.Len() },
			func(_ string, k int) error { n += k; return nil })
		if err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}

func BenchmarkStreamLiteral(b *testing.B) {
	benchStream(b, Options{Pattern: "ErrNotExist", Hidden: true})
}

func BenchmarkStreamRegexLiteral(b *testing.B) {
	benchStream(b, Options{Pattern: `\w+Handler\(`, Hidden: true})
}

func BenchmarkStreamFoldLiteral(b *testing.B) {
	benchStream(b, Options{Pattern: `errnotexist`, CaseInsensitive: true, Hidden: true})
}

func BenchmarkStreamNoLiteral(b *testing.B) {
	benchStream(b, Options{Pattern: `\w{5}\s+\w{5}\(`, Hidden: true})
}

func BenchmarkFiles(b *testing.B) {
	root, err := os.OpenRoot(gorootSrc(b))
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for b.Loop() {
		n := 0
		if _, err := Files(context.Background(), root, ".", Options{Hidden: true, Globs: []string{"**/*.go"}}, func(string) error { n++; return nil }); err != nil || n == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamLiteralWorkers(b *testing.B) {
	for _, w := range []int{1, 2, 3, 4} {
		b.Run(itoa(w), func(b *testing.B) { benchStream(b, Options{Pattern: "ErrNotExist", Hidden: true, Workers: w}) })
	}
}

// BenchmarkLiftCRs measures the lone-CR pass every searched buffer gets:
// one IndexByte sweep when the text has no CR, a step per CR with CRLF.
func BenchmarkLiftCRs(b *testing.B) {
	line := "\tif err := s.search(ctx, root, start); err != nil { return err }"
	for _, eol := range []string{"\n", "\r\n"} {
		buf := []byte(strings.Repeat(line+eol, (1<<20)/(len(line)+len(eol))))
		b.Run(fmt.Sprintf("eol=%q", eol), func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				liftCRs(buf, true)
			}
		})
	}
}
