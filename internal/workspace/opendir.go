package workspace

import (
	"os"
	"path"
)

// OpenDir opens the directory p for reading, for callers that act on a
// directory through its descriptor rather than its path (the file
// watcher adds its inotify watches that way), and returns it with p
// resolved. The directories above p are resolved like every path, links
// that stay inside the root followed, and opened through the root's
// *os.Root; p's last component is opened relative to its parent's
// descriptor with O_DIRECTORY|O_NOFOLLOW, so a symbolic link there is
// refused (invalid_path, ELOOP) as is anything but a directory
// (invalid_target, ENOTDIR); a missing one is not_found. The state
// directory is refused (outside_root), also when it is what was opened.
// The descriptor is the directory itself, whatever becomes of the path
// afterwards. It is a plain descriptor, not one of the *os.Root's files,
// so reading its entries costs no stat per entry. The caller closes it.
func (w *Workspace) OpenDir(p string) (*os.File, Path, error) {
	const op = "open"
	if err := w.checkOpen(op, p); err != nil {
		return nil, Path{}, err
	}
	r, err := w.resolveEntry(op, p)
	if err != nil {
		return nil, Path{}, err
	}
	parent, name := path.Dir(r.Rel), path.Base(r.Rel)
	if r.Rel == "." {
		parent, name = ".", "."
	}
	pd, err := r.r.root.Open(parent)
	if err != nil {
		return nil, Path{}, osErr(op, p, err)
	}
	f, err := openDirAt(pd, name)
	pd.Close()
	if err != nil {
		return nil, Path{}, osErr(op, p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Path{}, osErr(op, p, err)
	}
	if w.isState(fi) {
		f.Close()
		return nil, Path{}, w.inStateErr(op, p)
	}
	return f, r.Path, nil
}
