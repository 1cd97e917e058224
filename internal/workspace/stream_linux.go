package workspace

import (
	"os"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) of f back
// to disk without waiting for it; a failure only loses the head start.
func startWriteback(f *os.File, off, n int64) {
	_ = osfd.With(f, func(fd int) error {
		return unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// syncFS flushes the file system holding f: one call makes a whole
// extracted tree durable, instead of one fsync per file.
func syncFS(f *os.File) error {
	return osfd.With(f, func(fd int) error { return unix.Syncfs(fd) })
}
