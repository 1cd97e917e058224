package workspace

import (
	"io/fs"
	"syscall"
)

// processUmask is the file mode creation mask the process started with.
// A tree's permissions pass through it (see TreeWriter), as tar applies
// the umask for an unprivileged user: an archive cannot make a file or
// directory group- or world-writable that the process's own files could
// not be. It is read once, at package initialisation, while no other
// goroutine creates files: reading it means setting it.
var processUmask = func() fs.FileMode {
	u := syscall.Umask(0)
	syscall.Umask(u)
	return fs.FileMode(u) & fs.ModePerm
}()

// treePerm is the permission a tree entry declaring perm is given.
func treePerm(perm fs.FileMode) fs.FileMode { return perm & fs.ModePerm &^ processUmask }
