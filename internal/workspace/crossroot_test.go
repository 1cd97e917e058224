package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestOutsideMessagesAreTrueWithSeveralRoots: a relative path resolves in
// the first root and may not leave it with ".."; a symbolic link may lead
// only within its own root (each root is confined by its own os.Root).
// Both are refused even when they land inside another root, and the
// message says what happened instead of calling that file outside the
// roots, with the absolute path to use in the hint. A file of the other
// root named by its absolute path is fine.
func TestOutsideMessagesAreTrueWithSeveralRoots(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root1, extra := filepath.Join(base, "root1"), filepath.Join(base, "extra")
	for _, d := range []string{root1, extra} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"toextra": extra, "relextra": "../extra", "toetc": "/etc"} {
		if err := os.Symlink(target, filepath.Join(root1, link)); err != nil {
			t.Fatal(err)
		}
	}
	w := openTestWorkspace(t, Options{Roots: []string{root1, extra}, StateDir: t.TempDir()})
	single := openTestWorkspace(t, Options{Roots: []string{root1}, StateDir: t.TempDir()})
	inside := "use a path inside one of the roots (" + root1 + ", " + extra + "); relative paths start at " + root1
	for _, tt := range []struct {
		name      string
		w         *Workspace
		path      string
		msg, hint string
	}{
		{"relative .. into another root", w, "../extra/z.txt",
			"path ../extra/z.txt leads outside the first root (" + root1 + ") with ..: relative paths resolve inside the first root",
			"to reach a file in another root, name it by its absolute path: " + filepath.Join(extra, "z.txt")},
		{"relative .. out of every root", w, "../elsewhere/z.txt",
			"path ../elsewhere/z.txt leads outside the first root (" + root1 + ") with ..: relative paths resolve inside the first root", inside},
		{"relative .. with one root", single, "../z.txt",
			"path ../z.txt leads outside the workspace root (" + root1 + ") with ..", "use a path inside one of the roots; relative paths start at " + root1},
		{"absolute link into another root", w, "toextra/z.txt",
			"path toextra/z.txt leads through the symbolic link toextra -> " + extra + " into another root; a symbolic link may not lead from one root into another",
			"name the file by its absolute path in that root: " + filepath.Join(extra, "z.txt")},
		{"relative link into another root", w, "relextra/z.txt",
			"path relextra/z.txt leads through the symbolic link relextra -> ../extra into another root; a symbolic link may not lead from one root into another",
			"name the file by its absolute path in that root: " + filepath.Join(extra, "z.txt")},
		{"link out of every root", w, "toetc/passwd",
			"path toetc/passwd leads outside the workspace roots (" + root1 + ", " + extra + ") through the symbolic link toetc -> /etc", inside},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.w.Resolve(tt.path)
			e := wantCode(t, err, fserr.OutsideRoot)
			if e.Message != tt.msg {
				t.Errorf("message = %q\nwant      %q", e.Message, tt.msg)
			}
			if e.Hint != tt.hint {
				t.Errorf("hint = %q\nwant   %q", e.Hint, tt.hint)
			}
		})
	}
	p, err := w.Resolve(filepath.Join(extra, "z.txt"))
	if err != nil || p.Root != 1 || p.Rel != "z.txt" {
		t.Errorf("the other root's file by its absolute path: %+v, %v", p, err)
	}
}
