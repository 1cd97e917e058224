package workspace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// setCapability gives name the file capability cap_net_raw+ep (a raw
// vfs_cap_data, revision 2) and returns the attribute's value; it skips
// t where that is not permitted (not root) or not supported.
func setCapability(t *testing.T, name string) []byte {
	t.Helper()
	val := make([]byte, 20)
	binary.LittleEndian.PutUint32(val[0:], 0x02000000|1) // revision 2, effective
	binary.LittleEndian.PutUint32(val[4:], 1<<13)        // permitted: CAP_NET_RAW
	if err := unix.Setxattr(name, "security.capability", val, 0); err != nil {
		t.Skipf("cannot set a file capability: %v", err)
	}
	return val
}

func capabilityOf(t *testing.T, name string) []byte {
	t.Helper()
	buf := make([]byte, 64)
	n, err := unix.Getxattr(name, "security.capability", buf)
	if errors.Is(err, unix.ENODATA) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// TestInPlaceRewriteKeepsCapability: a file with several hard links keeps
// its file capability (security.capability) when it is rewritten in
// place, as a file replaced by rename keeps it with its other extended
// attributes, and keeps it through a rollback of a transaction that
// rewrote it. The kernel removes the attribute on any write(2) to the
// file, so the in-place path dropped it, and a failed transaction left
// the original content without it.
func TestInPlaceRewriteKeepsCapability(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	h, r := filepath.Join(root, "h"), filepath.Join(root, "r")
	writeFile(t, h, "h1", 0o755)
	writeFile(t, r, "r1", 0o755)
	want := setCapability(t, h)
	setCapability(t, r)
	for _, n := range []string{"h", "r"} {
		if err := os.Link(filepath.Join(root, n), filepath.Join(root, n+"-link")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit([]Change{{Path: "h", Content: []byte("h2")}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := capabilityOf(t, h); !bytes.Equal(got, want) {
		t.Errorf("after an in-place write: capability %x, want %x", got, want)
	}
	// The second change fails after the first was applied: rolled back.
	w.hooks.beforeApply = func(i int) error {
		if i == 1 {
			return unix.EIO
		}
		return nil
	}
	if _, err := w.Commit([]Change{{Path: "r", Content: []byte("r2")}, {Path: "h", Content: []byte("h3")}}, CommitOptions{}); err == nil {
		t.Fatal("the commit did not fail")
	}
	if got := readFile(t, r); got != "r1" {
		t.Errorf("r is %q after the rollback, want r1", got)
	}
	if got := capabilityOf(t, r); !bytes.Equal(got, want) {
		t.Errorf("after a rollback: capability %x, want %x", got, want)
	}
	assertNoStrays(t, root)
}
