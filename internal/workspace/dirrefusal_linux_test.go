package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestWriteInRefusingDirectoryHints: a change that fails because the
// file's directory refuses it says so. A write to a writable file in a
// read-only directory answered a bare "permission denied": the file
// itself is writable, and only the rename over it needs the directory.
// Read-only directories refuse only accounts other than root (skipped
// as root); an immutable directory (chattr +i) refuses root too.
func TestWriteInRefusingDirectoryHints(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"read-only", "immutable"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			dir := filepath.Join(root, "d")
			writeFile(t, filepath.Join(dir, "f.txt"), "f1", 0o644)
			writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o644)
			want := "must be writable"
			switch kind {
			case "read-only":
				if os.Geteuid() == 0 {
					t.Skip("root writes in a read-only directory")
				}
				if err := os.Chmod(dir, 0o555); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Chmod(dir, 0o755) })
			case "immutable":
				if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
					t.Skipf("chattr +i: %v %s", err, out)
				}
				t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
				want = "chattr -i " + dir
			}
			before := snapshot(t, root)
			for name, err := range map[string]error{
				"write": func() error {
					_, err := w.Commit([]Change{{Path: "d/f.txt", Content: []byte("f2")}}, CommitOptions{})
					return err
				}(),
				"create": func() error {
					_, err := w.Commit([]Change{{Path: "d/new.txt", Content: []byte("n")}}, CommitOptions{})
					return err
				}(),
				"delete": func() error { _, err := w.Remove("d/f.txt", false, ""); return err }(),
				"transaction": func() error {
					_, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a2")}, {Path: "d/f.txt", Content: []byte("f2")}}, CommitOptions{})
					return err
				}(),
				"upload": func() error {
					_, err := w.WriteStream(context.Background(), "d/f.txt", strings.NewReader("f2"), StreamOptions{})
					return err
				}(),
			} {
				e, ok := fserr.As(err)
				if !ok || e.Code != fserr.PermissionDenied || !strings.Contains(e.Hint, want) {
					t.Errorf("%s: %v (hint %q), want permission_denied with a hint containing %q", name, err, e.Hint, want)
				}
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("changed (-before +after):\n%s", diff)
			}
			assertNoStrays(t, root)
			assertNoManifests(t, w)
		})
	}
}
