package workspace

import (
	"io"
	"os"
)

// Open opens the regular file p for reading, following links that stay
// inside the root, and describes the opened file (not the path, which may
// change afterwards). The caller closes the file. A directory or special
// file is invalid_target, a missing one not_found.
func (w *Workspace) Open(p string) (*os.File, Info, error) {
	f, fi, r, err := w.openRead("read", p)
	if err != nil {
		return nil, Info{}, err
	}
	info := Info{Path: r.Path, IsSymlink: r.viaLink}
	fillInfo(&info, fi)
	return f, info, nil
}

// VersionOf hashes r to its end without buffering it; the result equals
// Version of the same bytes. It returns the number of bytes hashed.
func VersionOf(r io.Reader) (string, int64, error) { return versionOf(r) }
