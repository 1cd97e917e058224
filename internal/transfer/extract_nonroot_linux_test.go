package transfer

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// nobody is the account the non-root tests run as when the tests run as
// root: permission bits bind only other accounts.
const nobody = 65534

// asNonRoot runs the calling test in a child process as nobody when the
// tests run as root, and reports whether the caller is that child (or
// already not root) and should go on. dirs are given to nobody first.
func asNonRoot(t *testing.T, dirs ...string) bool {
	t.Helper()
	if os.Getuid() != 0 || os.Getenv("FSPLANE_TEST_NONROOT") == t.Name() {
		return true
	}
	for _, d := range dirs {
		if err := filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
		// Its parents (t.TempDir's) must let nobody through.
		for p := filepath.Dir(d); p != "/" && strings.HasPrefix(p, os.TempDir()); p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil {
				os.Chmod(p, fi.Mode().Perm()|0o011)
			}
		}
	}
	// The test binary's own directory is private to root: run a copy.
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "transfer.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(exe), 0o755)
	for p := filepath.Dir(filepath.Dir(exe)); p != "/" && strings.HasPrefix(p, os.TempDir()); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
	cmd := exec.Command(exe, "-test.run=^"+strings.ReplaceAll(t.Name(), "/", "$/^")+"$", "-test.v")
	cmd.Env = append(os.Environ(), "FSPLANE_TEST_NONROOT="+t.Name(), "FSPLANE_TEST_DIRS="+strings.Join(dirs, string(os.PathListSeparator)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if _, failed := errors.AsType[*exec.ExitError](err); failed {
		t.Errorf("as uid %d: %v\n%s", nobody, err, out)
	} else if err != nil {
		t.Skipf("cannot run as uid %d: %v", nobody, err)
	}
	return false
}

// TestExtractReadOnlyDirNonRoot: an archive of a read-only directory
// (mode 0555, as Go's module cache or a packaged tree has them) extracted
// by an fsplane that is not root. Merged over a directory of the same
// name, its files must still be moved out of the staged copy, and a new
// read-only directory must still be moved in whole; when the commit
// fails, the staged copy must still be removed.
//
// It failed while Commit chmodded the staged directories to the
// archive's modes before merging: rename(2) out of a 0555 directory, or of
// a 0555 directory to another parent (its ".." changes), is EACCES, and
// Abort's RemoveAll could not empty them, so the staging directory stayed
// behind. Now a merge applies the modes after its moves, and staged trees
// are removed even when read-only.
func TestExtractReadOnlyDirNonRoot(t *testing.T) {
	t.Parallel()
	dirs := filepath.SplitList(os.Getenv("FSPLANE_TEST_DIRS"))
	if os.Getenv("FSPLANE_TEST_NONROOT") != t.Name() {
		dirs = []string{t.TempDir(), t.TempDir()}
		if err := os.MkdirAll(filepath.Join(dirs[0], "merge", "ro"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !asNonRoot(t, dirs...) {
		return
	}
	root, state := dirs[0], dirs[1]
	t.Cleanup(func() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	archive := tarOf(t, &tar.Header{Name: "ro/", Typeflag: tar.TypeDir, Mode: 0o555}, &tar.Header{Name: "ro/f", Typeflag: tar.TypeReg, Mode: 0o444},
		&tar.Header{Name: "new-ro/", Typeflag: tar.TypeDir, Mode: 0o555}, &tar.Header{Name: "new-ro/g", Typeflag: tar.TypeReg, Mode: 0o444})

	// Merged over ro/, which exists.
	tw, err := ws.CreateTree(filepath.Join(root, "merge"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(bytes.NewReader(archive), tw, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Commit(); err != nil {
		t.Errorf("merge: %v", err)
	} else {
		for _, f := range []string{"ro/f", "new-ro/g"} {
			if b, err := os.ReadFile(filepath.Join(root, "merge", f)); err != nil || string(b) != f {
				t.Errorf("merged %s: %q %v", f, b, err)
			}
		}
		// The new directory has the archive's mode; the existing one
		// keeps its own.
		for dir, want := range map[string]fs.FileMode{"new-ro": 0o555, "ro": 0o755} {
			if fi, err := os.Stat(filepath.Join(root, "merge", dir)); err != nil || fi.Mode().Perm() != want {
				t.Errorf("merged %s: mode %v %v, want %v", dir, fi.Mode().Perm(), err, want)
			}
		}
	}

	// A new tree whose destination appears before the commit: refused,
	// and the staged copy goes.
	dest := filepath.Join(root, "new")
	tw, err = ws.CreateTree(dest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(bytes.NewReader(archive), tw, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Commit(); fserr.CodeOf(err) != fserr.AlreadyExists {
		t.Errorf("commit onto an appeared destination: %v", err)
	}

	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".fsplane-") {
			t.Errorf("left behind: %s", p)
			return fs.SkipDir
		}
		return nil
	})
}
