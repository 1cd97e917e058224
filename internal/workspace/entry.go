package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// resolveEntry resolves p like resolve but leaves its last component
// alone, so that when it is a symbolic link the result names the link
// itself (to delete, move or describe it), wherever the link points. The
// directories above it are resolved, links inside the root followed, as
// always. A path naming a root itself resolves as resolve does. The state
// directory is refused as by resolve, but a link to it is not: the entry
// is the link, which is no part of the state directory.
func (w *Workspace) resolveEntry(op, p string) (*resolved, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return w.resolve(op, p) // the same errors
	}
	idx, rel, err := w.lexical(op, p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return w.resolve(op, p)
	}
	root := w.roots[idx]
	dir, _, inState, err := w.follow(op, p, root, path.Dir(rel))
	if err != nil {
		return nil, err
	}
	rel = path.Join(dir, path.Base(rel))
	r := &resolved{
		Path:     Path{Given: p, Root: idx, Rel: rel, Abs: filepath.Join(root.path, rel)},
		r:        root,
		canonKey: filepath.Join(root.real, rel),
	}
	if fi, err := root.root.Lstat(rel); err == nil {
		r.viaLink = fi.Mode()&fs.ModeSymlink != 0
		inState = inState || w.isState(fi)
	}
	if inState || w.inStateByPath(root, rel) {
		return nil, w.inStateErr(op, p)
	}
	return r, checkSlash(op, r)
}

// locked runs fn holding the locks every mutation holds (see Commit): the
// state lock here, and the directory locks fn takes (lockDirs), which are
// released when it returns.
func (w *Workspace) locked(op, p string, fn func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkOpen(op, p); err != nil {
		return err
	}
	unlock, err := w.lock(op)
	if err != nil {
		return err
	}
	defer unlock()
	defer w.releaseDirs(0)
	// Recover what interrupted transactions and moves the state directory
	// holds first: this workspace's own failed rollbacks, and those of
	// another process sharing the state directory that crashed meanwhile
	// (one readdir when there are none). The files of one that cannot be
	// settled are refused (refuseBlocked): a change made to them now
	// would be overwritten by that recovery later.
	if err := w.recoverTx(); err != nil {
		return err
	}
	return fn()
}

// checkHolds refuses to remove or move away a directory that holds a
// workspace root or the state directory. It checks path strings and
// identities, so another spelling of the directory (another case, a bind
// mount) is refused too. It finds the state directory and the roots by
// their configured paths, which a rename of one of their parents
// defeats; a removal walks the tree too (see removeAll).
func (w *Workspace) checkHolds(op, verb string, r *resolved) error {
	fi, err := r.r.root.Lstat(r.Rel)
	if err != nil || !fi.IsDir() {
		fi = nil // holds nothing; the operation reports the error
	}
	for _, s := range []string{w.stateReal, w.stateDir} {
		if _, in := within(s, r.canonKey); in || holds(fi, s) {
			return fserr.New(fserr.InvalidTarget, op, r.Given,
				"cannot %s %s: it contains fsplane's state directory %s", verb, r.Given, w.stateDir).
				WithHint("%s the entries inside it instead, one by one", verb)
		}
	}
	for _, root := range w.roots {
		for _, s := range []string{root.real, root.path} {
			if _, in := within(s, r.canonKey); in || holds(fi, s) {
				return fserr.New(fserr.InvalidTarget, op, r.Given,
					"cannot %s %s: it is or contains the workspace root %s", verb, r.Given, root.path).
					WithHint("a root stays while fsplane serves it: %s the entries inside it instead", verb)
			}
		}
	}
	return nil
}

// holds reports whether the directory dir (nil: none) is the absolute
// path p or one of its ancestors, compared by identity. It stats p's
// ancestors by their own path, which is fsplane's configuration (a root
// or the state directory), not the caller's.
func holds(dir fs.FileInfo, p string) bool {
	if dir == nil {
		return false
	}
	for {
		if fi, err := os.Stat(p); err == nil && os.SameFile(dir, fi) {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

// removeAll is r.RemoveAll(rel) for the directory tree rel, which the
// caller named given, refused (invalid_target) when the tree holds a
// directory that must not be deleted: the state directory or a workspace
// root (see checkRemovable).
func (w *Workspace) removeAll(op, verb, given string, r *os.Root, rel string) error {
	if err := w.checkRemovable(op, verb, given, r, rel); err != nil {
		return err
	}
	return r.RemoveAll(rel)
}

// removeOwn removes rel, a temporary tree fsplane made (a staged tree,
// the copy of a cross-device move), like removeAll, and also when
// directories in it took a read-only mode (see removeOwnTree).
func (w *Workspace) removeOwn(op, given string, r *os.Root, rel string) error {
	if err := w.checkRemovable(op, "remove", given, r, rel); err != nil {
		return err
	}
	return removeOwnTree(r, rel)
}

// removeOwnTree is r.RemoveAll(rel) for a tree fsplane made, whose
// directories may have been given a read-only mode (an archive's 0555, a
// copy of a read-only directory): a directory without write permission
// cannot be emptied, so when removal is refused its directories are made
// writable to their owner, outermost first, and removal is tried again.
// Never for the caller's own files: rm -r stops there too.
func removeOwnTree(r *os.Root, rel string) error {
	err := r.RemoveAll(rel)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	var openUp func(rel string)
	openUp = func(rel string) {
		fi, err := r.Lstat(rel)
		if err != nil || !fi.IsDir() {
			return
		}
		if perm := fi.Mode().Perm(); perm&0o700 != 0o700 {
			_ = r.Chmod(rel, perm|0o700)
		}
		names, _ := readNames(r, rel)
		for _, n := range names {
			openUp(path.Join(rel, n))
		}
	}
	openUp(rel)
	return r.RemoveAll(rel)
}

// checkRemovable refuses (invalid_target) to delete the directory tree
// rel, which the caller named given, when a directory in it is the state
// directory or a workspace root, by identity. checkHolds cannot see them
// there when no path names them: after a parent of the state directory
// was renamed behind fsplane's back, or where a bind mount shows it
// inside the tree. Deleting the tree would then delete the journals and
// the lock. It walks the whole tree before anything is removed, so a
// refused removal removes nothing.
func (w *Workspace) checkRemovable(op, verb, given string, r *os.Root, rel string) error {
	sub, what, err := keptIn(r, rel, w.kept)
	if err != nil {
		return osErr(op, given, err)
	}
	if what == "" {
		return nil
	}
	return fserr.New(fserr.InvalidTarget, op, given, "cannot %s %s: it contains %s (as %s)",
		verb, given, what, filepath.Join(given, sub)).
		WithHint("delete or move the other entries one by one; fsplane's own directories must stay")
}

// kept describes fi when it is a directory no removal may take: the
// state directory or a workspace root; else "".
func (w *Workspace) kept(fi fs.FileInfo) string {
	if w.isState(fi) {
		return "fsplane's state directory " + w.stateDir
	}
	for _, r := range w.roots {
		if r.id != nil && fi.IsDir() && os.SameFile(fi, r.id) {
			return "the workspace root " + r.path
		}
	}
	return ""
}

// keptIn walks the directory tree rel in r and returns the first
// directory in it (rel included) that kept describes: its path relative
// to rel and the description. The walk holds each directory open and
// opens the next one relative to it, never following a link (O_NOFOLLOW,
// as RemoveAll does not follow one), and compares the opened directory
// itself: a mount point compares as the directory mounted there, which is
// what RemoveAll would empty. Directories it may not read are skipped,
// as RemoveAll cannot empty them either; a missing rel holds nothing.
func keptIn(r *os.Root, rel string, kept func(fs.FileInfo) string) (sub, what string, err error) {
	d, err := r.Open(rel)
	if err == nil {
		// Reopened outside the root's bookkeeping: a directory opened
		// through an *os.Root stats every entry it lists, where the walk
		// needs only the directories', which it stats itself.
		var top *os.File
		top, err = openDirAt(d, ".")
		d.Close()
		d = top
	}
	if err != nil {
		if gone(err) || errors.Is(err, fs.ErrPermission) {
			return "", "", nil
		}
		return "", "", err
	}
	defer d.Close()
	return keptInDir(d, ".", kept)
}

func keptInDir(d *os.File, sub string, kept func(fs.FileInfo) string) (string, string, error) {
	fi, err := d.Stat()
	if err != nil || !fi.IsDir() {
		return "", "", err
	}
	if what := kept(fi); what != "" {
		return sub, what, nil
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return "", "", err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c, err := openDirAt(d, e.Name())
		switch {
		case errors.Is(err, fs.ErrNotExist) || isNotDir(err) || errors.Is(err, syscall.ELOOP) ||
			errors.Is(err, fs.ErrPermission):
			continue // gone, replaced by a file or link, or unreadable
		case err != nil:
			return "", "", err
		}
		s, what, err := keptInDir(c, path.Join(sub, e.Name()), kept)
		c.Close()
		if what != "" || err != nil {
			return s, what, err
		}
	}
	return "", "", nil
}

// openDirAt opens the directory name in d, refusing a symbolic link.
func openDirAt(d *os.File, name string) (*os.File, error) {
	var fd int
	err := osfd.With(d, func(dfd int) error {
		var err error
		for {
			fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if !errors.Is(err, unix.EINTR) {
				return err
			}
		}
	})
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: path.Join(d.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), path.Join(d.Name(), name)), nil
}

// isStateDir reports whether rel in root, described by fi (from Lstat),
// is the state directory: by path, or by identity when it is reached by
// another spelling (see inStateByPath).
func (w *Workspace) isStateDir(root *wsRoot, rel string, fi fs.FileInfo) bool {
	return filepath.Join(root.real, rel) == w.stateReal || filepath.Join(root.path, rel) == w.stateDir || w.isState(fi)
}

// lstatEntry is Lstat through r's root, with a missing file (or one
// under a non-directory) reported as nil, nil.
func lstatEntry(r *resolved) (fs.FileInfo, error) {
	fi, err := r.r.root.Lstat(r.Rel)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil, nil
	}
	return fi, err
}

func notFound(op, given string) *fserr.Error {
	return fserr.New(fserr.NotFound, op, given, "%s does not exist", given).
		WithHint("check the path; list the parent directory")
}

// missingParents returns the parent directories of rel that do not exist
// yet, outermost first. A parent that is not a directory is invalid_target.
// Each is looked up in the one above it, held open (dirWalk).
func missingParents(op, given string, root *wsRoot, rel string) ([]string, error) {
	dirs := parentDirs(rel)
	comps := splitRel(rel)
	dw := dirWalk{root: root.root}
	defer dw.close()
	for i, d := range dirs {
		fi, err := dw.lstat(comps[:i], comps[i])
		if errors.Is(err, fs.ErrNotExist) {
			return dirs[i:], nil
		}
		if err != nil {
			return nil, osErr(op, given, err)
		}
		if !fi.IsDir() {
			return nil, fserr.New(fserr.InvalidTarget, op, given,
				"cannot create %s: %s is not a directory", given, filepath.Join(root.path, d)).WithErrno(syscall.ENOTDIR)
		}
	}
	return nil, nil
}

// makeParents creates the parent directories of d that do not exist yet,
// each given to owner when set, and returns them, outermost first. When
// one cannot be created, those made are removed again.
func makeParents(op string, d *resolved, owner *Owner) ([]string, error) {
	dirs, err := missingParents(op, d.Given, d.r, d.Rel)
	if err != nil {
		return nil, err
	}
	if err := makeChain(d.r.root, dirs, owner); err != nil {
		removeDirs(d.r.root, dirs)
		return nil, osErr(op, d.Given, err)
	}
	return dirs, nil
}

// Lstat describes p like Stat, except that when p's last component is a
// symbolic link it describes the link itself (Mode has fs.ModeSymlink,
// Size is the length of its target, LinkTarget the target), wherever the
// link points. A missing
// file is not an error: Exists is false.
func (w *Workspace) Lstat(p string) (Info, error) {
	const op = "stat"
	if err := w.checkOpen(op, p); err != nil {
		return Info{}, err
	}
	r, err := w.resolveEntry(op, p)
	if err != nil {
		return Info{}, err
	}
	info := Info{Path: r.Path}
	fi, err := lstatEntry(r)
	if err != nil {
		return Info{}, osErr(op, p, err)
	}
	if fi != nil {
		fillInfo(&info, fi)
	}
	if info.IsSymlink {
		if info.LinkTarget, err = r.r.root.Readlink(r.Rel); err != nil {
			return Info{}, osErr(op, p, err)
		}
	}
	return info, nil
}
