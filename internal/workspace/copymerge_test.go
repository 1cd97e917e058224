package workspace

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestCopyMergeKeepsReplacedFilesPrivate: a tree copied with overwrite
// into an existing directory gave each file it replaced the source's
// mode, so a 0600 file came out world-readable holding the new content;
// as a single file's copy does, it keeps its mode and extended
// attributes. A file the merge creates takes the source's mode.
func TestCopyMergeKeepsReplacedFilesPrivate(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "src/secret.txt"), "new secret\n", 0o644)
	writeFile(t, filepath.Join(root, "src/sub/key"), "new key\n", 0o644)
	writeFile(t, filepath.Join(root, "src/new.txt"), "new\n", 0o640)
	writeFile(t, filepath.Join(root, "dst/secret.txt"), "secret\n", 0o600)
	writeFile(t, filepath.Join(root, "dst/sub/key"), "key\n", 0o400)
	xattr := unix.Setxattr(filepath.Join(root, "dst/secret.txt"), "user.tag", []byte("keep"), 0) == nil
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir()})
	if _, err := w.Copy("src", "dst", true, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".":          "dir -rwxr-xr-x",
		"secret.txt": "-rw------- new secret\n",
		"sub":        "dir -rwxr-xr-x",
		"sub/key":    "-r-------- new key\n",
		"new.txt":    "-rw-r----- new\n",
	}
	if diff := cmp.Diff(want, snapshot(t, filepath.Join(root, "dst"))); diff != "" {
		t.Errorf("dst after the merge (-want +got):\n%s", diff)
	}
	if xattr {
		buf := make([]byte, 16)
		if n, err := unix.Getxattr(filepath.Join(root, "dst/secret.txt"), "user.tag", buf); err != nil || string(buf[:n]) != "keep" {
			t.Errorf("user.tag after the merge: %q %v", buf[:max(n, 0)], err)
		}
	}
}
