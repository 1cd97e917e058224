//go:build linux || darwin

package workspace

import (
	"errors"
	"os"
	"path"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// renameNoReplace renames oldRel to newRel inside root like root.Rename,
// but fails with errAppeared when newRel exists: a create planned while
// it was absent must not replace what another writer made meanwhile (see
// the directory locks in lock.go). On a file system without an
// exclusive rename (Linux's RENAME_NOREPLACE, macOS's RENAME_EXCL) it is a
// plain rename.
func renameNoReplace(root *os.Root, oldRel, newRel string) error {
	od, err := openDir(root, path.Dir(oldRel))
	if err != nil {
		return err
	}
	defer od.Close()
	nd := od
	if path.Dir(newRel) != path.Dir(oldRel) {
		if nd, err = openDir(root, path.Dir(newRel)); err != nil {
			return err
		}
		defer nd.Close()
	}
	err = osfd.With(od, func(ofd int) error {
		return osfd.With(nd, func(nfd int) error {
			return renameExcl(ofd, path.Base(oldRel), nfd, path.Base(newRel))
		})
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return errAppeared
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.ENOTSUP):
		return root.Rename(oldRel, newRel)
	}
	return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
}
