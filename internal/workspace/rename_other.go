//go:build !linux && !darwin

package workspace

import "os"

// renameNoReplace is a plain rename here: the refusal of a create that
// another writer beat (errAppeared) needs an exclusive rename, which
// only Linux and macOS builds use (rename_unix.go).
func renameNoReplace(root *os.Root, oldRel, newRel string) error {
	return root.Rename(oldRel, newRel)
}
