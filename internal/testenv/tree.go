package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteTree writes files (slash-separated path → content) under dir: a
// path ending in "/" is an empty directory, content starting with "->" a
// symbolic link to the rest; parents are made as needed.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// PadLines is n lines of 10 bytes, "pad 00000\n" on, to move what
// follows them (a NUL byte, a match) a known distance into a file:
// line k+1 starts at byte 10k.
func PadLines(n int) string {
	var b strings.Builder
	b.Grow(10 * n)
	for i := range n {
		fmt.Fprintf(&b, "pad %05d\n", i)
	}
	return b.String()
}
