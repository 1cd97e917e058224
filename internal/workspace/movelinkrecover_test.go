package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecoveryKeepsALinkMovedAcrossRoots: a process killed after moving a
// symbolic link over a file in another root, and removing the source,
// but before it dropped its move record. Recovery used to read the moved
// link as a file: a dangling one looked like a missing destination, so
// the old file went back over it and the link was lost; one to a
// directory failed to read, leaving both paths blocked and the backup
// beside the link. The link is the move's result, and stays.
func TestRecoveryKeepsALinkMovedAcrossRoots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, target string }{
		{"dangling", "missing"},
		{"to a directory", "sub"},
		{"to a file", "sub/file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r1, r2, state := t.TempDir(), t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(r2, "sub/file"), "file\n", 0o644)
			writeFile(t, filepath.Join(r2, "l"), "old destination\n", 0o644)
			if err := os.Symlink(tc.target, filepath.Join(r1, "l")); err != nil {
				t.Fatal(err)
			}
			w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
			// Killed once the copy is installed; the source's removal,
			// the next step, is the last thing it did.
			w.hooks.crashAt = func(step string) bool { return step == "move-installed" }
			if _, err := w.Move(filepath.Join(r1, "l"), filepath.Join(r2, "l"), true, ""); !errors.Is(err, errCrashed) {
				t.Fatalf("move: %v, want the simulated crash", err)
			}
			w.Close()
			if err := os.Remove(filepath.Join(r1, "l")); err != nil {
				t.Fatal(err)
			}

			w = openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: state})
			want := map[string]string{
				".":        "dir -rwxr-xr-x",
				"l":        "link->" + tc.target,
				"sub":      "dir -rwxr-xr-x",
				"sub/file": "-rw-r--r-- file\n",
			}
			if diff := cmp.Diff(want, snapshot(t, r2)); diff != "" {
				t.Errorf("destination root after recovery (-want +got):\n%s", diff)
			}
			if _, err := w.Remove(filepath.Join(r2, "l"), false, ""); err != nil {
				t.Errorf("the destination is still blocked after recovery: %v", err)
			}
			if names, _ := os.ReadDir(filepath.Join(state, txDir)); len(names) > 0 {
				t.Errorf("left in %s: %v", txDir, names)
			}
		})
	}
}
