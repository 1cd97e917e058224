package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
	if err := syscall.Mount(real, alias, "", syscall.MS_BIND, ""); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("cannot bind-mount (needs CAP_SYS_ADMIN): %v", err)
		}
		t.Fatal(err)
	}
	// Registered after TempDir's removal, so it runs before it: removing
	// the tree through a live mount would fail on the mount point.
	t.Cleanup(func() {
		if err := syscall.Unmount(alias, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", alias, err)
		}
	})
	w := openTestWorkspace(t, Options{Roots: []string{root, other}, StateDir: filepath.Join(real, "st")})
	return stateAlias{w: w, root: root, other: other, state: filepath.Join(real, "st"), alias: "alias/st"}
}

// TestStateDirRefusedThroughBindMount is TestStateDirRefusedThroughAnotherSpelling
// with both spellings live, which also exercises removing a directory that
// holds the state directory under its other name.
func TestStateDirRefusedThroughBindMount(t *testing.T) {
	t.Parallel()
	runStateAliasTests(t, openBindMountedState, true)
}

// TestStateDirHiddenThroughBindMount is TestStateDirHiddenThroughAnotherSpelling
// with both spellings live.
func TestStateDirHiddenThroughBindMount(t *testing.T) {
	t.Parallel()
	runStateAliasHidden(t, openBindMountedState)
}
