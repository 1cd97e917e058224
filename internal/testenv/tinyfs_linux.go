package testenv

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TinyFS mounts a 64 KiB tmpfs on a temp dir and returns the dir, so a
// test can hit a real ENOSPC after a few writes instead of filling the
// machine's disk. The mount is detached at cleanup. It skips t when
// mounting is not permitted (no CAP_SYS_ADMIN, as in most unprivileged
// runs).
func TinyFS(t testing.TB) string { return TmpFS(t, "64k") }

// TmpFS is TinyFS with the tmpfs size given as mount(8) takes it ("3m").
func TmpFS(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
