package transfer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/workspace"
)

// TestCacheable: a version is cached only when the file's ctime is older
// than the start of hashing by more than the timestamps' tick: 50 ms for
// fine timestamps, 2 s for whole-second ones (HFS+, FAT, many FUSE and
// SMB mounts), where a same-size rewrite in the same second keeps the
// whole key.
func TestCacheable(t *testing.T) {
	t.Parallel()
	whole := time.Unix(1_700_000_000, 0)
	fine := whole.Add(123_456_789)
	tests := []struct {
		name         string
		ctime, mtime time.Time
		age          time.Duration // start of hashing minus ctime
		want         bool
	}{
		{name: "fine: just changed", ctime: fine, mtime: fine, age: 0},
		{name: "fine: within the margin", ctime: fine, mtime: fine, age: racyMargin - time.Millisecond},
		{name: "fine: at the margin", ctime: fine, mtime: fine, age: racyMargin},
		{name: "fine: past the margin", ctime: fine, mtime: fine, age: racyMargin + time.Millisecond, want: true},
		{name: "fine: old", ctime: fine, mtime: fine, age: time.Hour, want: true},
		{name: "fine: ctime in the future", ctime: fine, mtime: fine, age: -time.Second},
		// Extracted or touched files often have whole-second mtimes on
		// fine file systems; the kernel-set ctime decides.
		{name: "fine ctime, whole mtime: past the margin", ctime: fine, mtime: whole, age: racyMargin + time.Millisecond, want: true},
		{name: "coarse: past the fine margin", ctime: whole, mtime: whole, age: racyMargin + time.Millisecond},
		{name: "coarse: same second", ctime: whole, mtime: whole, age: 999 * time.Millisecond},
		{name: "coarse: next second", ctime: whole, mtime: whole, age: 1500 * time.Millisecond},
		{name: "coarse: within a FAT tick", ctime: whole, mtime: whole, age: coarseMargin - time.Millisecond},
		{name: "coarse: at the margin", ctime: whole, mtime: whole, age: coarseMargin},
		{name: "coarse: past the margin", ctime: whole, mtime: whole, age: coarseMargin + time.Millisecond, want: true},
		{name: "coarse: old", ctime: whole, mtime: whole, age: time.Hour, want: true},
		{name: "whole ctime, fine mtime: past the fine margin", ctime: whole, mtime: fine, age: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := fileKey{dev: 1, ino: 2, size: 3, mtime: tc.mtime.UnixNano(), ctime: tc.ctime.UnixNano()}
			if got := cacheable(k, tc.ctime.Add(tc.age)); got != tc.want {
				t.Errorf("cacheable(age %v) = %v, want %v", tc.age, got, tc.want)
			}
		})
	}
}

// TestVersionCacheFileGrows: a file that grows after its key was taken is
// neither cached nor given a version, and is never read past the size of
// that key: not at all when the growth is seen before hashing, up to the
// old size when it happens during the hash.
func TestVersionCacheFileGrows(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<10)
	size := int64(len(content))
	grow := func(t *testing.T, p string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.Write(bytes.Repeat([]byte("+"), 1<<20)); err != nil {
			t.Error(err)
		}
	}
	tests := []struct {
		name       string
		afterKey   bool // grow after the key is taken
		whileHash  bool // grow at the first read of the hash
		wantHashed int64
		wantCached bool
	}{
		{name: "unchanged", wantHashed: size, wantCached: true},
		{name: "grows before the hash", afterKey: true, wantHashed: 0},
		{name: "grows while hashed", whileHash: true, wantHashed: size},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
			waitCacheable(t, p)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()

			cache := NewVersionCache(4)
			var hashed int64
			if tc.afterKey {
				cache.hooks.afterKey = func() { grow(t, p) }
			}
			cache.hooks.hashing = func(r io.Reader) io.Reader {
				return readFunc(func(b []byte) (int, error) {
					if tc.whileHash && hashed == 0 {
						grow(t, p)
					}
					n, err := r.Read(b)
					hashed += int64(n)
					return n, err
				})
			}
			v, fi, err := cache.FileVersion(f)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != size {
				t.Fatalf("pinned size %d, want %d", fi.Size(), size)
			}
			wantVersion := ""
			if tc.wantCached {
				wantVersion = workspace.Version(content)
			}
			if v != wantVersion {
				t.Errorf("version %q, want %q", v, wantVersion)
			}
			if hashed != tc.wantHashed {
				t.Errorf("hashed %d bytes, want %d (the pinned size is %d)", hashed, tc.wantHashed, size)
			}
			if cached := len(cache.m) == 1; cached != tc.wantCached {
				t.Errorf("cached %v, want %v", cached, tc.wantCached)
			}
		})
	}
}

// waitCacheable waits until p's ctime is old enough for its version to
// be cached, at most a few seconds (coarse timestamps need 2 s).
func waitCacheable(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if cacheable(keyOf(fi), time.Now()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ctime of %s never became old enough to cache", p)
		}
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(b []byte) (int, error) { return f(b) }
