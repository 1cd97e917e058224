package search

import (
	"context"
	"os"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
)

// makeTree writes files (see testenv.WriteTree) under a new temporary
// directory.
func makeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.WriteTree(t, dir, files)
	return dir
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// listFiles returns what Files lists under start.
func listFiles(t *testing.T, dir, start string, opts Options) []string {
	t.Helper()
	out := []string{}
	if _, err := Files(context.Background(), openRoot(t, dir), start, opts, func(p string) error {
		out = append(out, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// grepLines runs Grep and renders the matches as "path:line:content".
func grepLines(t *testing.T, dir, start string, opts Options) ([]string, *Result) {
	t.Helper()
	q, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(context.Background(), openRoot(t, dir), start, q)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range res.Matches {
		out = append(out, m.Path+":"+itoa(m.LineNumber)+":"+m.LineContent)
	}
	return out, res
}

func itoa(n int) string {
	b := []byte{}
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
