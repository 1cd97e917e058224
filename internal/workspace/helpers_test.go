package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// newTestWorkspace opens a workspace on a fresh root and state directory.
func newTestWorkspace(t testing.TB) (w *Workspace, root string) {
	t.Helper()
	root = t.TempDir()
	return openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()}), root
}

func openTestWorkspace(t testing.TB, opts Options) *Workspace {
	t.Helper()
	w, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func writeFile(t testing.TB, name, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot describes every entry under dir: content for files, the target
// for links, "dir" for directories, with the permission bits.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link->" + target
		case d.IsDir():
			out[rel] = "dir " + fi.Mode().Perm().String()
		case !fi.Mode().IsRegular():
			out[rel] = fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fi.Mode().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertNoStrays fails if a temp or backup file is left under any dir.
func assertNoStrays(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".fsplane-") {
				t.Errorf("stray file left: %s", p)
			}
			return nil
		})
	}
}

func assertNoManifests(t *testing.T, w *Workspace) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(w.StateDir(), txDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("manifest left: %s", e.Name())
	}
}

func wantCode(t *testing.T, err error, code fserr.Code) *fserr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	e, ok := fserr.As(err)
	if !ok {
		t.Fatalf("got %T %v, want *fserr.Error %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %s (%v), want %s", e.Code, err, code)
	}
	return e
}

func inode(t *testing.T, name string) uint64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
