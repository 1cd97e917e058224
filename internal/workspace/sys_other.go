//go:build !linux

package workspace

import "os"

// reserve is unsupported here; growFile writes the new tail instead.
func reserve(f *os.File, off, n int64) error { return errUnsupported }
