package workspace

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// Info describes a file. Stat follows symbolic links that stay inside the
// root, so the fields describe the target; IsSymlink says the given path
// itself is a link.
type Info struct {
	Path      Path
	Exists    bool
	IsDir     bool
	IsSymlink bool // the given path's last component is a symbolic link
	Size      int64
	Mode      fs.FileMode
	ModTime   time.Time
	Nlink     uint64
	UID, GID  int
	// LinkTarget is the target of the link Lstat describes (Lstat only;
	// Stat follows the link).
	LinkTarget string
}

// Stat describes p. A missing file is not an error: Exists is false.
func (w *Workspace) Stat(p string) (Info, error) {
	if err := w.checkOpen("stat", p); err != nil {
		return Info{}, err
	}
	r, err := w.resolve("stat", p)
	if err != nil {
		return Info{}, err
	}
	info := Info{Path: r.Path, IsSymlink: r.viaLink}
	fi, err := r.r.root.Lstat(r.Rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return info, nil
		}
		return Info{}, osErr("stat", p, err)
	}
	fillInfo(&info, fi)
	return info, nil
}

func fillInfo(info *Info, fi fs.FileInfo) {
	info.Exists = true
	info.IsDir = fi.IsDir()
	if fi.Mode()&fs.ModeSymlink != 0 {
		info.IsSymlink = true
	}
	info.Size = fi.Size()
	info.Mode = fi.Mode()
	info.ModTime = fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		info.Nlink = uint64(st.Nlink)
		info.UID = int(st.Uid)
		info.GID = int(st.Gid)
	}
}

// fileOwner returns the owner and link count of fi.
func fileOwner(fi fs.FileInfo) (uid, gid int, nlink uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid), uint64(st.Nlink)
	}
	return -1, -1, 1
}
