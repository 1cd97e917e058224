// Package osfd runs system calls on an *os.File's descriptor. It is the
// one copy of that idiom shared by the packages that need raw
// descriptors (workspace for xattrs, links and locks; watch for inotify
// on descriptors opened inside a root).
package osfd

import "os"

// With runs fn with f's descriptor. f stays open and alive until fn
// returns, so the number cannot be closed and reused under fn; fn must
// not keep it. The error is SyscallConn's or Control's, else fn's.
func With(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
