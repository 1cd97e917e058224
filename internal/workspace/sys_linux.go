package workspace

import (
	"errors"
	"os"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// reserve allocates n bytes from off so later writes there cannot fail
// with ENOSPC.
func reserve(f *os.File, off, n int64) error {
	return osfd.With(f, func(fd int) error {
		for {
			err := unix.Fallocate(fd, 0, off, n)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
				return errUnsupported
			}
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
	})
}

// renameExcl is renameat2 with RENAME_NOREPLACE.
func renameExcl(ofd int, oldName string, nfd int, newName string) error {
	return unix.Renameat2(ofd, oldName, nfd, newName, unix.RENAME_NOREPLACE)
}

// inodeFlag is the inode flag ("i": immutable, "a": append-only, as
// chattr(1) names them) that keeps the file name in directory dfd from
// being replaced or deleted, even by root; "" when neither is set or the
// file system does not say.
func inodeFlag(dfd int, name string) string {
	var st unix.Statx_t
	if unix.Statx(dfd, name, unix.AT_SYMLINK_NOFOLLOW, 0, &st) != nil {
		return ""
	}
	switch a := st.Attributes & st.Attributes_mask; {
	case a&unix.STATX_ATTR_IMMUTABLE != 0:
		return "i"
	case a&unix.STATX_ATTR_APPEND != 0:
		return "a"
	}
	return ""
}
