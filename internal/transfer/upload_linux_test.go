package transfer

import (
	"bytes"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestReadUploadSpoolNoSpace spools a file sent before its path into a
// 64 KiB tmpfs: the upload fails with no_space_left, store is never
// called, and the file system's blocks are all free again.
func TestReadUploadSpoolNoSpace(t *testing.T) {
	t.Parallel()
	dir := testenv.TinyFS(t)
	var before unix.Statfs_t
	if err := unix.Statfs(dir, &before); err != nil {
		t.Fatal(err)
	}
	body, ct := uploadForm([2]string{"file", strings.Repeat("n", 256<<10)}, [2]string{"path", "a.bin"})
	r := httptest.NewRequest("POST", "/upload", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	err := ReadUpload(r, "", dir, func(string, string, io.Reader) error {
		t.Error("store called")
		return nil
	})
	if !fserr.Is(err, fserr.NoSpaceLeft) {
		t.Fatalf("err %v, want no_space_left", err)
	}
	var after unix.Statfs_t
	if err := unix.Statfs(dir, &after); err != nil {
		t.Fatal(err)
	}
	if after.Bfree != before.Bfree {
		t.Errorf("free blocks %d, were %d: the spool is still held", after.Bfree, before.Bfree)
	}
}
