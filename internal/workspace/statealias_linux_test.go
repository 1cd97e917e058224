package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// openBindMountedState opens a workspace with the state directory at
// root/real/st and bind-mounts root/real on root/alias, so the state
// directory is also root/alias/st while it stays where it was opened: the
// same directory under two live names, as another case of the name is on
// a case-insensitive file system. It needs CAP_SYS_ADMIN and skips
// without it.
func openBindMountedState(t *testing.T) stateAlias {
	t.Helper()
	root, other := t.TempDir(), t.TempDir()
	real, alias := filepath.Join(root, "real"), filepath.Join(root, "alias")
	for _, d := range []string{real, alias} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bindMount(t, real, alias)
	w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: filepath.Join(real, "st")})
	return stateAlias{w: w, root: root, other: other, state: filepath.Join(real, "st"), alias: "alias/st"}
}

// TestStateDirRefusedThroughBindMount is TestStateDirRefusedThroughAnotherSpelling
// with both spellings live, which also exercises removing a directory that
// holds the state directory under its other name.
func TestStateDirRefusedThroughBindMount(t *testing.T) {
	t.Parallel()
	runStateAliasTests(t, openBindMountedState)
}

// TestStateDirHiddenThroughBindMount is TestStateDirHiddenThroughAnotherSpelling
// with both spellings live.
func TestStateDirHiddenThroughBindMount(t *testing.T) {
	t.Parallel()
	runStateAliasHidden(t, openBindMountedState)
}

// TestRemoveRefusesStateDirMountedInside: a directory that shows the state
// directory through a bind mount somewhere inside it cannot be deleted:
// no path names the state directory there, and deleting the tree would
// empty the mount, journals and lock included. Nothing is deleted.
func TestRemoveRefusesStateDirMountedInside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	state := filepath.Join(t.TempDir(), "st")
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state})
	makeTree(t, root, map[string]string{"x/a.txt": "a", "x/m/mnt/": "", "x/z.txt": "z"})
	mnt := filepath.Join(root, "x", "m", "mnt")
	bindMount(t, state, mnt)
	stateBefore := stateNames(t, state)

	_, err := w.Remove("x", true, "")
	wantMessage(t, err, fserr.InvalidTarget, "state directory")
	for _, name := range []string{"x/a.txt", "x/z.txt"} {
		if _, err := os.Lstat(filepath.Join(root, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if diff := cmp.Diff(stateBefore, stateNames(t, state)); diff != "" {
		t.Errorf("state directory changed (-before +after):\n%s", diff)
	}
}

// bindMount mounts dir on mnt for the test, or skips it without the
// privilege. The unmount is registered after the callers' TempDirs, so it
// runs before their removal (which would fail on a live mount point).
func bindMount(t *testing.T, dir, mnt string) {
	t.Helper()
	if err := syscall.Mount(dir, mnt, "", syscall.MS_BIND, ""); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("cannot bind-mount (needs CAP_SYS_ADMIN): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
}
