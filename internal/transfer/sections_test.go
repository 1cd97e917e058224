package transfer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestSourceSectionsOneState: the parts of a several-range download are
// one state of the file's. A file rewritten in place before the parts are
// read, or between two of them, fails the reader with a conflict, and
// every byte it released is the pinned content's; an unchanged one reads
// exactly its parts. Without a version (the file changed while it was
// hashed) the state is the one found when the reader is made, as long as
// it has the pinned size the parts were resolved against.
func TestSourceSectionsOneState(t *testing.T) {
	t.Parallel()
	const size = 256 << 10
	pattern := func(seed byte) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i%251) + seed
		}
		return b
	}
	old, rewritten := pattern(0), pattern(1)
	parts := []Span{{0, 4096}, {128 << 10, 4096}, {200 << 10, 1000}}
	// Each write also sets another mtime: a rewrite of the same size in
	// the ctime's tick would otherwise look like no change at all.
	var writes atomic.Int64
	rewrite := func(t *testing.T, p string, b []byte) {
		t.Helper()
		mtime := time.Unix(1e9+writes.Add(1), 0)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range []struct {
		name      string
		unhashed  []byte // rewrite the file with this while it is hashed: no version
		before    []byte // rewrite it with this before the reader is made
		between   bool   // rewrite it after the first part is read
		want      []byte // the content the parts come from; nil: a conflict
		firstPart bool   // the conflict comes after the first part
	}{
		{name: "unchanged", want: old},
		{name: "rewritten before", before: rewritten},
		{name: "rewritten between parts", between: true, firstPart: true},
		{name: "no version, then unchanged", unhashed: rewritten, want: rewritten},
		{name: "no version, rewritten between parts", unhashed: rewritten, between: true, firstPart: true},
		{name: "no version, another size", unhashed: rewritten[:size-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "f")
			rewrite(t, p, old)
			cache := NewVersionCache(8)
			if tc.unhashed != nil {
				cache.hooks.afterKey = func() { rewrite(t, p, tc.unhashed) }
			}
			s := openSource(t, p, cache)
			if (s.Version() == "") != (tc.unhashed != nil) {
				t.Fatalf("version %q", s.Version())
			}
			if tc.before != nil {
				rewrite(t, p, tc.before)
			}
			pinned := old
			if tc.unhashed != nil {
				pinned = tc.unhashed
			}
			r := s.Sections(parts)
			first := make([]byte, parts[0].Length)
			_, err := io.ReadFull(r, first)
			var got []byte
			if err == nil {
				got = first
				if tc.between {
					rewrite(t, p, bytes.Repeat([]byte("n"), len(pinned)))
				}
				var rest []byte
				rest, err = io.ReadAll(r)
				got = append(got, rest...)
			}
			var want []byte
			for _, part := range parts {
				want = append(want, pinned[part.Offset:part.Offset+part.Length]...)
			}
			switch {
			case tc.want != nil && (err != nil || !bytes.Equal(got, want)):
				t.Fatalf("err %v, %d bytes, want %d", err, len(got), len(want))
			case tc.want == nil && fserr.CodeOf(err) != fserr.Conflict:
				t.Fatalf("err %v after %d bytes, want a conflict", err, len(got))
			case tc.want == nil && !bytes.HasPrefix(want, got):
				t.Fatalf("%d bytes released before the conflict, not all of the pinned content", len(got))
			case tc.want == nil && tc.firstPart != (len(got) == len(first)):
				t.Fatalf("%d bytes released before the conflict", len(got))
			}
		})
	}
}
