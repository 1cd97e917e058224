package workspace

import (
	"bytes"
	"errors"
	"os"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// copyXattrs copies every extended attribute of src to dst. Attributes the
// destination refuses (unsupported, or a namespace only root may write)
// are skipped: losing one is better than failing the write. Running out of
// space is not skipped, because it would fail the write anyway.
func copyXattrs(src, dst *os.File) error {
	var names []byte
	err := osfd.With(src, func(fd int) error {
		for {
			n, err := unix.Flistxattr(fd, nil)
			if err != nil || n == 0 {
				return err
			}
			names = make([]byte, n)
			n, err = unix.Flistxattr(fd, names)
			if errors.Is(err, unix.ERANGE) {
				continue // the list grew meanwhile
			}
			names = names[:max(n, 0)]
			return err
		}
	})
	if err != nil {
		if skippableXattrErr(err) {
			return nil
		}
		return &os.PathError{Op: "listxattr", Path: src.Name(), Err: err}
	}
	for name := range bytes.SplitSeq(names, []byte{0}) {
		if len(name) == 0 {
			continue
		}
		attr := string(name)
		var val []byte
		err := osfd.With(src, func(fd int) error {
			for {
				n, err := unix.Fgetxattr(fd, attr, nil)
				if err != nil {
					return err
				}
				val = make([]byte, n)
				n, err = unix.Fgetxattr(fd, attr, val)
				if errors.Is(err, unix.ERANGE) {
					continue
				}
				val = val[:max(n, 0)]
				return err
			}
		})
		if err == nil {
			err = osfd.With(dst, func(fd int) error { return unix.Fsetxattr(fd, attr, val, 0) })
		}
		if err != nil && !skippableXattrErr(err) {
			return &os.PathError{Op: "setxattr", Path: dst.Name(), Err: err}
		}
	}
	return nil
}

func skippableXattrErr(err error) bool {
	return !errors.Is(err, unix.ENOSPC) && !errors.Is(err, unix.EDQUOT) && !errors.Is(err, unix.EIO)
}
