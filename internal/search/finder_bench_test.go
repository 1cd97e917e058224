package search

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
)

// corpus is the Go source tree's .go files concatenated (about 100 MB),
// for finder throughput.
var corpus = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	filepath.WalkDir(filepath.Join(testenv.GOROOT(), "src"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" {
			c, _ := os.ReadFile(p)
			b.Write(c)
		}
		return nil
	})
	return b.Bytes()
})

func benchFinder(b *testing.B, s *litSet) {
	gorootSrc(b)
	buf := corpus()
	f := newFinder(s)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		f.reset()
		n := 0
		for pos := 0; ; {
			c := f.find(buf, pos)
			if c < 0 {
				break
			}
			n++
			pos = c + 1
		}
		if n == 0 {
			b.Fatal("no hit")
		}
	}
}

func BenchmarkFinderLiteral(b *testing.B) {
	benchFinder(b, &litSet{lits: []string{"ErrNotExist"}})
}

func BenchmarkFinderFold(b *testing.B) {
	benchFinder(b, &litSet{lits: []string{"errnotexist"}, fold: true})
}

func BenchmarkFinderFoldSet(b *testing.B) {
	benchFinder(b, &litSet{lits: []string{"errnotexist", "errnotexi\u017ft"}, fold: true})
}

func BenchmarkFinderFoldNonASCII(b *testing.B) {
	f := newFoldFinder("errnotexi\u017ft")
	b.Logf("pair at %d: %q", f.p, f.lit[f.p:f.p+2])
	benchFinderMust(b, f)
}

func benchFinderMust(b *testing.B, f finder) {
	gorootSrc(b)
	buf := corpus()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		f.reset()
		for pos := 0; ; {
			c := f.find(buf, pos)
			if c < 0 {
				break
			}
			pos = c + 1
		}
	}
}
