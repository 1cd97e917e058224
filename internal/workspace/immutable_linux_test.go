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
// skipped otherwise. The flag is set once the commit is planned, as a
// person might meanwhile: one set before is refused by the plan
// (TestFlaggedFileRefusedWithHint).
func TestCommitOverImmutableFileRollsBack(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a1", 0o644)
	writeFile(t, filepath.Join(root, "b.txt"), "b1", 0o644)
	b := filepath.Join(root, "b.txt")
	if out, err := exec.Command("chattr", "+i", b).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	if out, err := exec.Command("chattr", "-i", b).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", b).Run() })
	w.hooks.afterPlan = func() {
		if out, err := exec.Command("chattr", "+i", b).CombinedOutput(); err != nil {
			t.Errorf("chattr +i: %v %s", err, out)
		}
	}
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
	w.hooks.afterPlan = nil
	if _, err := w.Commit([]Change{{Path: "a.txt", Content: []byte("a3")}}, CommitOptions{}); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}

// TestFlaggedFileRefusedWithHint: a file that is immutable (chattr +i)
// or append-only (chattr +a) is refused as permission_denied with the
// flag named and a hint that clears it. An append-only file answered a
// bare "permission denied" with no hint (a move onto it named the
// source), and an immutable one the advice to chmod u+w it, which
// changes nothing: neither flag is a permission.
func TestFlaggedFileRefusedWithHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, word string }{{"i", "immutable"}, {"a", "append-only"}} {
		t.Run(tc.word, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			f := filepath.Join(root, "f.txt")
			writeFile(t, f, "f1", 0o644)
			writeFile(t, filepath.Join(root, "src.txt"), "s", 0o644)
			if out, err := exec.Command("chattr", "+"+tc.flag, f).CombinedOutput(); err != nil {
				t.Skipf("chattr +%s: %v %s", tc.flag, err, out)
			}
			t.Cleanup(func() { exec.Command("chattr", "-"+tc.flag, f).Run() })
			before := snapshot(t, root)
			for name, err := range map[string]error{
				"write": func() error {
					_, err := w.Commit([]Change{{Path: "f.txt", Content: []byte("f2")}}, CommitOptions{})
					return err
				}(),
				"remove":    func() error { _, err := w.Remove("f.txt", false, ""); return err }(),
				"move onto": func() error { _, err := w.Move("src.txt", "f.txt", true, ""); return err }(),
				"copy onto": func() error { _, err := w.Copy("src.txt", "f.txt", true, nil); return err }(),
			} {
				e, ok := fserr.As(err)
				if !ok || e.Code != fserr.PermissionDenied || !strings.Contains(e.Message, tc.word) ||
					!strings.Contains(e.Message, "f.txt") || !strings.Contains(e.Hint, "chattr -"+tc.flag) {
					t.Errorf("%s: %v (hint %q), want permission_denied naming f.txt %s, hinting chattr -%s", name, err, e.Hint, tc.word, tc.flag)
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
