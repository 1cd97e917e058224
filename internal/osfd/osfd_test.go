package osfd

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWith(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := With(f, func(fd int) error { return unix.Fstat(fd, &st) }); err != nil || st.Size != 5 {
		t.Fatalf("fstat through With: size %d, %v", st.Size, err)
	}
	sentinel := errors.New("from fn")
	if err := With(f, func(int) error { return sentinel }); err != sentinel {
		t.Errorf("fn's error: got %v", err)
	}
	f.Close()
	called := false
	if err := With(f, func(int) error { called = true; return nil }); err == nil || called {
		t.Errorf("a closed file: err %v, fn called %v", err, called)
	}
}
