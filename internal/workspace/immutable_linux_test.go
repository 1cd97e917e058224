package workspace

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestCommitOverImmutableFileRollsBack: a transaction that fails because
// one of its files is immutable (chattr +i: it can be neither linked nor
// replaced) rolls back whole, leaves nothing behind (no backup, no temp,
// no manifest), and its error does not claim that files are still to be
// restored. Needs root and a file system with inode flags (ext4, xfs...);
// skipped otherwise.
func TestCommitOverImmutableFileRollsBack(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "b1", 0o644)
	b := filepath.Join(root, "b.txt")
	if out, err := exec.Command("chattr", "+i", b).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", b).Run() })
	before := snapshot(t, root)
	_, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a2")}, {Path: "b.txt", Content: []byte("b2")}}, CommitOptions{})
	if err == nil {
		t.Fatal("commit over an immutable file succeeded")
	}
	if e := wantCode(t, err, fserr.PermissionDenied); strings.Contains(e.Hint, "restored") {
		t.Errorf("the hint says files remain to be restored: %q", e.Hint)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("not rolled back (-before +after):\n%s", diff)
	}
	assertNoStrays(t, root)
	assertNoManifests(t, w)
	if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a3")}}, CommitOptions{}); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}
