package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// checkWritable refuses (permission_denied) to replace or delete the
// existing regular file rel, described by fi, when this process could
// not open it for writing.
//
// A replacement is a rename over the file, which needs write permission
// on the directory only, so without this check a file a person made
// read-only (chmod a-w) would be replaced all the same, while one with
// several hard links, rewritten in place, is refused by open(2): the
// protection would hold only sometimes. So every operation that replaces
// or deletes an existing file's content asks the kernel first, as an
// open for writing would: write, edit, patch (also a patch's delete and
// the source of its Move to, which it deletes), upload, copy and move
// onto the file, Remove of the file, a tree's merge over it, and Undo
// of a change to it (restoring or deleting it). Root passes, as the
// kernel lets it. Not checked: a move of the file itself (its content
// goes along, as mv does), a symbolic link (it has no permission of its
// own), and the files inside a tree that Remove or Move takes whole
// (a directory operation; read-only files there, such as Git's objects,
// are as ordinary as rm -r removing them).
//
// The check is faccessat(W_OK, AT_EACCESS) on the file's name in its
// directory, opened through the root.
func checkWritable(op, given string, root *os.Root, rel string, fi fs.FileInfo) error {
	d, err := root.Open(path.Dir(rel))
	if err != nil {
		return osErr(op, given, err)
	}
	defer d.Close()
	err = osfd.With(d, func(fd int) error {
		return unix.Faccessat(fd, path.Base(rel), unix.W_OK, unix.AT_EACCESS)
	})
	switch {
	case err == nil, errors.Is(err, unix.ETXTBSY):
		// A running program is replaced by a rename, not written.
		return nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fserr.New(fserr.PermissionDenied, op, given,
			"%s is read-only for fsplane (%s): it does not replace or delete a file it could not open for writing", given, fi.Mode().Perm()).
			WithHint("make the file writable first (chmod u+w %s, or give this process write access), then retry", given).
			WithErrno(syscall.EACCES)
	}
	return osErr(op, given, &os.PathError{Op: "faccessat", Path: rel, Err: err})
}
