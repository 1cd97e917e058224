//go:build !linux

package workspace

import "os"

// reserve is unsupported here; growFile writes the new tail instead.
func reserve(f *os.File, off, n int64) error { return errUnsupported }

// renameNoReplace is a plain rename here: the refusal of a create that
// another writer beat (errAppeared) is Linux's (RENAME_NOREPLACE).
func renameNoReplace(root *os.Root, oldRel, newRel string) error {
	return root.Rename(oldRel, newRel)
}
