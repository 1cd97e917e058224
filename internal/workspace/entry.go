package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fsplane/fsplane/internal/fserr"
)

// resolveEntry resolves p like resolve but leaves its last component
// alone, so that when it is a symbolic link the result names the link
// itself (to delete, move or describe it), wherever the link points. The
// directories above it are resolved, links inside the root followed, as
// always. A path naming a root itself resolves as resolve does.
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
	dir, _, err := w.follow(op, p, root, path.Dir(rel))
	if err != nil {
		return nil, err
	}
	rel = path.Join(dir, path.Base(rel))
	r := &resolved{
		Path:     Path{Given: p, Root: idx, Rel: rel, Abs: filepath.Join(root.path, rel)},
		r:        root,
		canonKey: filepath.Join(root.real, rel),
	}
	if fi, err := root.root.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		r.viaLink = true
	}
	if w.inState(r) {
		return nil, fserr.New(fserr.OutsideRoot, op, p,
			"path %s is inside fsplane's state directory (%s), which is not part of the workspace", p, w.stateDir)
	}
	return r, nil
}

// locked runs fn holding the locks every mutation holds (see Commit).
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
	w.settle()
	return fn()
}

// checkHolds refuses to remove or move away a directory that holds a
// workspace root or the state directory. Like inStateAt it checks path
// strings and identities, so another spelling of the directory (another
// case, a bind mount) is refused too.
func (w *Workspace) checkHolds(op, verb string, r *resolved) error {
	fi, err := r.r.root.Lstat(r.Rel)
	if err != nil || !fi.IsDir() {
		fi = nil // holds nothing; the operation reports the error
	}
	for _, s := range []string{w.stateReal, w.stateDir} {
		if _, in := within(s, r.canonKey); in || holds(fi, s) {
			return fserr.New(fserr.InvalidTarget, op, r.Given,
				"cannot %s %s: it contains fsplane's state directory %s", verb, r.Given, w.stateDir)
		}
	}
	for _, root := range w.roots {
		for _, s := range []string{root.real, root.path} {
			if _, in := within(s, r.canonKey); in || holds(fi, s) {
				return fserr.New(fserr.InvalidTarget, op, r.Given,
					"cannot %s %s: it is or contains the workspace root %s", verb, r.Given, root.path)
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

// isStateDir reports whether rel in root, described by fi (from Lstat),
// is the state directory: by path, or by identity when it is reached by
// another spelling (see inStateAt).
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
func missingParents(op, given string, root *wsRoot, rel string) ([]string, error) {
	dirs := parentDirs(rel)
	for i, d := range dirs {
		fi, err := root.root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return dirs[i:], nil
		}
		if err != nil {
			return nil, osErr(op, given, err)
		}
		if !fi.IsDir() {
			return nil, fserr.New(fserr.InvalidTarget, op, given,
				"cannot create %s: %s is not a directory", given, filepath.Join(root.path, d))
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
	if err := makeDirs(d.r.root, dirs, owner); err != nil {
		removeDirs(d.r.root, dirs)
		return nil, osErr(op, d.Given, err)
	}
	return dirs, nil
}

// Lstat describes p like Stat, except that when p's last component is a
// symbolic link it describes the link itself (Mode has fs.ModeSymlink,
// Size is the length of its target), wherever the link points. A missing
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
	return info, nil
}
