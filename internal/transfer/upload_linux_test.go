package transfer

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/testenv"
)

// TestReadUploadSpoolNoSpace spools a file sent before its path into a
// 64 KiB tmpfs: the upload fails with no_space_left, store is never
// called, and the file system's blocks are all free again once
// ReadUpload returns: the spool is closed, and nothing else holds it.
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
	// Other tests of this package start processes in parallel
	// (asNonRoot, TestExtractAppliesUmask); one forked while the spool is
	// open would hold it, and its 64 KiB, until it execs, after the
	// upload has closed it: "free blocks 0, were 16".
	var err error
	testenv.WithoutForks(func() {
		err = ReadUpload(r, "", dir, func(string, string, io.Reader) error {
			t.Error("store called")
			return nil
		})
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

// TestSpoolIsFreedAsItIsRead: a file sent before its path is held in the
// spool and then copied out by store; when both share a file system the
// spool's read part is freed as the copy goes, so the upload fits in
// about 1.5 times the file (the copy plus at most punchEvery of spool)
// rather than twice. Here 20 MiB into a 32 MiB tmpfs holding both.
func TestSpoolIsFreedAsItIsRead(t *testing.T) {
	t.Parallel()
	dir := testenv.TmpFS(t, "32m")
	const size = 20 << 20
	body, ct := uploadForm([2]string{"file", strings.Repeat("s", size)}, [2]string{"path", "a.bin"})
	r := httptest.NewRequest("POST", "/upload", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	err := ReadUpload(r, "", dir, func(_, _ string, src io.Reader) error {
		f, err := os.Create(filepath.Join(dir, "a.bin"))
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(f, src)
		if err == nil && n != size {
			err = fmt.Errorf("stored %d bytes, want %d", n, size)
		}
		return err
	})
	if err != nil {
		t.Fatalf("file-first upload of %d MiB into a 32 MiB file system: %v", size>>20, err)
	}
}
