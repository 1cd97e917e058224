package transfer

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// asNonRoot is testenv.AsNobody.
func asNonRoot(t *testing.T, dirs ...string) bool {
	t.Helper()
	return testenv.AsNobody(t, dirs...)
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
	dirs := testenv.NobodyDirs()
	if !testenv.InNobodyChild(t) {
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
