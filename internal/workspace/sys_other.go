//go:build !linux

package workspace

import "os"

// reserve is unsupported here; growFile writes the new tail instead.
func reserve(f *os.File, off, n int64) error { return errUnsupported }

// inodeFlag is "" here: Linux's immutable and append-only flags are not
// looked at (BSD's chflags would need fstatat's st_flags).
func inodeFlag(dfd int, name string) string { return "" }
