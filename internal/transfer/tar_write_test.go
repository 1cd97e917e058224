package transfer

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileNotRegularAnyMore: the walk saw a regular file, but what
// is opened under its name is not one any more (replaced meanwhile by a
// directory, or by a link to a FIFO): it is left out, like a file removed
// meanwhile, instead of cutting the stream on a read error or archiving
// a FIFO as an empty file.
func TestWriteFileNotRegularAnyMore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{{"directory", dir}, {"fifo", fifo}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			tw := tar.NewWriter(&b)
			open := func() (*os.File, error) { return os.OpenFile(tc.path, os.O_RDONLY|syscall.O_NONBLOCK, 0) }
			err := writeFile(tw, &tar.Header{Name: "f", Mode: 0o644}, open, make([]byte, 4096), newLinkSet(linkMemory))
			if err != nil || b.Len() != 0 {
				t.Fatalf("err %v, %d bytes archived", err, b.Len())
			}
		})
	}
}
