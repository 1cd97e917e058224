package workspace

import (
	"errors"
	"os"
	"path"

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

// renameNoReplace renames oldRel to newRel inside root like root.Rename,
// but fails with errAppeared when newRel exists: a create planned while
// it was absent must not replace what another writer made meanwhile (see
// the directory locks in lock.go). On a file system without
// RENAME_NOREPLACE it is a plain rename.
func renameNoReplace(root *os.Root, oldRel, newRel string) error {
	od, err := root.Open(path.Dir(oldRel))
	if err != nil {
		return err
	}
	defer od.Close()
	nd := od
	if path.Dir(newRel) != path.Dir(oldRel) {
		if nd, err = root.Open(path.Dir(newRel)); err != nil {
			return err
		}
		defer nd.Close()
	}
	err = osfd.With(od, func(ofd int) error {
		return osfd.With(nd, func(nfd int) error {
			return unix.Renameat2(ofd, path.Base(oldRel), nfd, path.Base(newRel), unix.RENAME_NOREPLACE)
		})
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return errAppeared
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return root.Rename(oldRel, newRel)
	}
	return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
}
