package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// TestMoveAcrossKeepsReplacedDestination: a move across roots (copy, then
// remove the source) that replaces a destination puts it back when the
// source cannot be removed, also where no hard link can back it up.
func TestMoveAcrossKeepsReplacedDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		dst         string // "" (absent), "-> target" (a link) or content
		linkFails   bool
		removeFails bool
		wantR1      map[string]string
		wantR2      map[string]string
	}{
		{name: "no hard link, source stays", dst: "old", linkFails: true, removeFails: true,
			wantR1: map[string]string{"f": "-rw-r--r-- source"}, wantR2: map[string]string{"f": "-rw-r--r-- old"}},
		{name: "hard link, source stays", dst: "old", removeFails: true,
			wantR1: map[string]string{"f": "-rw-r--r-- source"}, wantR2: map[string]string{"f": "-rw-r--r-- old"}},
		{name: "no hard link, source stays, link replaced", dst: "-> elsewhere", linkFails: true, removeFails: true,
			wantR1: map[string]string{"f": "-rw-r--r-- source"}, wantR2: map[string]string{"f": "link->elsewhere"}},
		{name: "no destination, source stays", removeFails: true,
			wantR1: map[string]string{"f": "-rw-r--r-- source"}, wantR2: map[string]string{}},
		{name: "no hard link, moved", dst: "old", linkFails: true,
			wantR1: map[string]string{}, wantR2: map[string]string{"f": "-rw-r--r-- source"}},
		{name: "hard link, moved", dst: "old",
			wantR1: map[string]string{}, wantR2: map[string]string{"f": "-rw-r--r-- source"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r1, r2 := t.TempDir(), t.TempDir()
			w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: t.TempDir()})
			makeTree(t, r1, map[string]string{"f": "source"})
			if tc.dst != "" {
				makeTree(t, r2, map[string]string{"f": tc.dst})
			}
			var dstIno uint64
			if tc.dst == "old" {
				dstIno = inode(t, filepath.Join(r2, "f"))
			}
			if tc.linkFails {
				w.hooks.moveLink = func(*os.Root, string, string) error { return syscall.EPERM }
			}
			if tc.removeFails {
				w.hooks.moveRemove = func(*os.Root, string) error { return syscall.EACCES }
			}

			res, err := w.Move("f", filepath.Join(r2, "f"), true, "")
			if tc.removeFails {
				wantCode(t, err, fserr.PermissionDenied)
			} else if err != nil || !res.Copied {
				t.Fatalf("Move: %+v, %v", res, err)
			}
			if diff := cmp.Diff(tc.wantR1, withoutTop(snapshot(t, r1))); diff != "" {
				t.Errorf("source root (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantR2, withoutTop(snapshot(t, r2))); diff != "" {
				t.Errorf("destination root (-want +got):\n%s", diff)
			}
			if tc.removeFails && dstIno != 0 && inode(t, filepath.Join(r2, "f")) != dstIno {
				t.Error("the destination was put back as another file")
			}
			assertNoStrays(t, r1, r2)
		})
	}
}
