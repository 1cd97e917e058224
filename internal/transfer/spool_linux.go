package transfer

import (
	"os"

	"golang.org/x/sys/unix"
)

// oTmpfile makes openSpool's file nameless from the start.
const oTmpfile = unix.O_TMPFILE

// punchHole frees the blocks of f's range [off, off+n), which has been
// read: the spool then holds only what store has not taken yet, so a
// file-first upload needs about the file's size on disk once, not twice,
// when the spool and the target share a file system. A file system
// without hole punching keeps the blocks until the spool is closed.
func punchHole(f *os.File, off, n int64) {
	_ = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}
