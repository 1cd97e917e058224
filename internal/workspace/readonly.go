package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
// directory, opened through the root. A file that is immutable or
// append-only (chattr +i, +a; Linux) is refused the same way, even for
// root, with the flag named: neither can be replaced or deleted, and
// chmod does not help. A file of another account in a sticky directory
// is refused too (stickyRefusal).
func checkWritable(op, given string, root *os.Root, rel string, fi fs.FileInfo) error {
	flag, err := access(root, path.Dir(rel), path.Base(rel), unix.W_OK)
	var opened *openError
	switch {
	case errors.As(err, &opened):
		return osErr(op, given, opened.err)
	case flag != "":
		return fserr.New(fserr.PermissionDenied, op, given,
			"%s is %s (chattr +%s): fsplane cannot replace or delete it", given, flagName(flag), flag).
			WithHint("clear the flag first (chattr -%s %s, as root), then retry", flag, given).
			WithErrno(syscall.EPERM)
	case err == nil, errors.Is(err, unix.ETXTBSY):
		// A running program is replaced by a rename, not written.
		if _, _, nlink := fileOwner(fi); nlink > 1 {
			return nil // rewritten in place; a delete asks stickyRefusal itself
		}
		return stickyRefusal(op, given, root, rel, fi)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fserr.New(fserr.PermissionDenied, op, given,
			"%s is read-only for fsplane (%s): it does not replace or delete a file it could not open for writing", given, fi.Mode().Perm()).
			WithHint("make the file writable first (chmod u+w %s, or give this process write access), then retry", given).
			WithErrno(syscall.EACCES)
	}
	return osErr(op, given, &os.PathError{Op: "faccessat", Path: rel, Err: err})
}

// stickyRefusal refuses (permission_denied) to replace or delete rel,
// described by fi, when its directory is sticky (chmod +t, as /tmp) and
// neither the directory nor the file belongs to this process's user: the
// kernel then refuses the rename over the file and its unlink (EPERM),
// however writable both are. Found only at that step, the refusal came
// after a transaction had linked its backup beside the file, a link the
// process cannot remove either: the rollback failed, the backup stayed,
// and every path of the change stayed blocked. Root passes, as the kernel
// lets it (CAP_FOWNER). checkWritable asks it for a file with one link;
// a file with several is rewritten in place, which the sticky bit does
// not govern, unless it is deleted (planOne asks then). A symbolic link
// changed itself (Change.Entry) is asked about by planLink.
func stickyRefusal(op, given string, root *os.Root, rel string, fi fs.FileInfo) error {
	euid := os.Geteuid()
	uid, _, _ := fileOwner(fi)
	if euid == 0 || uid == euid || uid < 0 {
		return nil
	}
	d, err := openDir(root, path.Dir(rel))
	if err != nil {
		return osErr(op, given, err)
	}
	defer d.Close()
	di, err := d.Stat()
	if err != nil {
		return osErr(op, given, err)
	}
	if duid, _, _ := fileOwner(di); di.Mode()&fs.ModeSticky == 0 || duid == euid {
		return nil
	}
	return fserr.New(fserr.PermissionDenied, op, given,
		"%s belongs to uid %d and its directory is sticky (chmod +t, as /tmp) and not fsplane's (uid %d): the system lets only their owners replace or delete it", given, uid, euid).
		WithHint("have the file's owner make the change, or give the file to uid %d (chown), then retry", euid).
		WithErrno(syscall.EPERM)
}

// dirRefusal gives e, the error of a change of rel in root (configured
// as rootPath), a hint when it is permission_denied because rel's
// directory refuses: a write creates its new file beside the old one and
// renames it over it, and a delete unlinks, so the directory must be
// writable even where the file is, which "permission denied" on a
// writable file does not tell. Any other e is returned as it is.
func dirRefusal(e *fserr.Error, root *os.Root, rootPath, rel string) *fserr.Error {
	if e == nil || e.Code != fserr.PermissionDenied || e.Hint != "" {
		return e
	}
	flag, err := access(root, path.Dir(rel), ".", unix.W_OK|unix.X_OK)
	dir := filepath.Join(rootPath, path.Dir(rel))
	switch {
	case flag != "":
		return e.WithHint("its directory %s is %s (chattr +%s), so no file in it can be made, replaced or deleted: clear the flag first (chattr -%s %s, as root), then retry",
			dir, flagName(flag), flag, flag, dir)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return e.WithHint("fsplane writes a file by renaming a new one over it, and deletes by unlinking, so its directory %s must be writable for fsplane (uid %d), not only the file: make it writable, then retry",
			dir, os.Geteuid())
	}
	return e
}

// access reports whether this process may access name in directory dir
// of root as mode says (faccessat, AT_EACCESS): the inode flag that
// forbids a change whatever the permissions ("i" or "a", see inodeFlag),
// else faccessat's error. An *openError says dir itself could not be
// opened.
func access(root *os.Root, dir, name string, mode uint32) (flag string, err error) {
	d, err := openDir(root, dir)
	if err != nil {
		return "", &openError{err}
	}
	defer d.Close()
	err = osfd.With(d, func(fd int) error {
		if flag = inodeFlag(fd, name); flag != "" {
			return nil
		}
		return unix.Faccessat(fd, name, mode, unix.AT_EACCESS)
	})
	return flag, err
}

// openError is access's failure to open the directory.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }

// flagName names an inodeFlag as chattr(1) does.
func flagName(flag string) string {
	if flag == "a" {
		return "append-only"
	}
	return "immutable"
}
