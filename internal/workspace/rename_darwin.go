package workspace

import "golang.org/x/sys/unix"

// renameExcl is renameatx_np with RENAME_EXCL.
func renameExcl(ofd int, oldName string, nfd int, newName string) error {
	return unix.RenameatxNp(ofd, oldName, nfd, newName, unix.RENAME_EXCL)
}
