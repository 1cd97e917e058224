package transfer

import (
	"os"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// pseudoFS reports whether f lies on procfs or sysfs, whose files are
// generated when read: the size stat gives is 0 (procfs) or a page
// (sysfs) whatever the content, and procfs files may not seek to their
// end. A failed statfs is not taken for a pseudo file system.
func pseudoFS(f *os.File) bool {
	var st unix.Statfs_t
	err := osfd.With(f, func(fd int) error { return unix.Fstatfs(fd, &st) })
	if err != nil {
		return false
	}
	switch int64(st.Type) {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC:
		return true
	}
	return false
}
