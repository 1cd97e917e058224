package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Mkdir creates the directory p (mode 0755 before the umask), given to
// owner when set. With parents it is mkdir -p: missing parents are
// created too (and given to owner), and an existing directory is no error
// (created is false). Without parents an existing directory is
// already_exists and a missing parent not_found. Something other than a
// directory at p is already_exists; a file where a parent should be is
// invalid_target.
func (w *Workspace) Mkdir(p string, parents bool, owner *Owner) (created bool, err error) {
	const op = "mkdir"
	if err := w.checkOpen(op, p); err != nil {
		return false, err
	}
	if err := checkOwner(op, p, owner); err != nil {
		return false, err
	}
	r, err := w.resolve(op, p)
	if err != nil {
		return false, err
	}
	// Under the locks every mutation takes, so that what recovery still
	// has to settle is settled (or refused) first.
	err = w.locked(op, p, func() error {
		if err := w.refuseBlocked(op, r); err != nil {
			return err
		}
		if err := w.lockDirs(op, p, targetOf(r)); err != nil {
			return err
		}
		var err error
		created, err = mkdirLocked(op, p, r, parents, owner)
		return err
	})
	return created, err
}

// mkdirLocked is Mkdir with the locks held.
func mkdirLocked(op, p string, r *resolved, parents bool, owner *Owner) (created bool, err error) {
	fi, err := lstatEntry(r)
	switch {
	case err != nil:
		return false, osErr(op, p, err)
	case fi != nil && fi.IsDir():
		if parents {
			return false, nil
		}
		return false, fserr.New(fserr.AlreadyExists, op, p, "directory %s already exists", p).
			WithHint("pass parents to accept an existing directory")
	case fi != nil:
		return false, fserr.New(fserr.AlreadyExists, op, p, "%s already exists and is not a directory", p)
	}
	missing, err := missingParents(op, p, r.r, r.Rel)
	if err != nil {
		return false, err
	}
	if len(missing) > 0 && !parents {
		return false, fserr.New(fserr.NotFound, op, p, "cannot create %s: parent directory %s does not exist", p, path.Dir(r.Abs)).
			WithHint("pass parents to create missing parent directories")
	}
	root := r.r.root
	// A parent made by someone else meanwhile is fine, p itself is not.
	made, err := mkdirChain(root, append(missing, r.Rel), owner, func(d string) bool { return d != r.Rel })
	if err != nil {
		if errors.Is(err, fs.ErrExist) && parents {
			if fi, serr := root.Lstat(r.Rel); serr == nil && fi.IsDir() {
				return false, nil
			}
		}
		removeDirs(root, made)
		return false, osErr(op, p, err)
	}
	if err := syncDirs(root, dirsOf(r.Rel, made)); err != nil {
		return true, osErr(op, p, err)
	}
	return true, nil
}

// mkdirChain makes dirs, each the parent of the next, outermost first (as
// missingParents returns them), with mode 0755, each given to owner, and
// returns those it made. One that exists already stops it with Mkdir's
// error unless goOn(it). It holds each parent open and makes the
// next directory in it: n directories cost O(n) system calls, where
// making each through the root walks down from the root again, quadratic
// in the depth (a path of PATH_MAX bytes may have 2,000 missing parents).
func mkdirChain(root *os.Root, dirs []string, owner *Owner, goOn func(d string) bool) (made []string, err error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	dw := dirWalk{root: root}
	defer dw.close()
	comps := splitRel(dirs[len(dirs)-1])
	base := len(comps) - len(dirs) // components of the first one's parent
	for i, d := range dirs {
		parent, err := dw.reach(comps[:base+i])
		if err != nil {
			return made, err
		}
		name := comps[base+i]
		err = parent.Mkdir(name, 0o755)
		switch {
		case err == nil:
			made = append(made, d)
			err = chownNew(parent, name, owner)
		case errors.Is(err, fs.ErrExist) && goOn(d):
			err = nil
		}
		if err != nil {
			return made, err
		}
	}
	return made, nil
}

// syncDirs syncs dirs, which all lie on one path from the root (dirsOf's
// directories), in one walk down that path rather than a walk from the
// root for each.
func syncDirs(root *os.Root, dirs []string) error {
	// On one path, a directory is known by its depth.
	want := map[int]bool{}
	deepest := "."
	for _, d := range dirs {
		if d == "." {
			want[0] = true
			continue
		}
		want[strings.Count(d, "/")+1] = true
		if len(d) > len(deepest) || deepest == "." {
			deepest = d
		}
	}
	comps := splitRel(deepest)
	dw := dirWalk{root: root}
	defer dw.close()
	for i := 0; i <= len(comps); i++ {
		if !want[i] {
			continue
		}
		d, err := dw.reach(comps[:i])
		if err != nil {
			return err
		}
		if err := syncDir(d, "."); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes p: a file, a symbolic link (the link, never what it
// points to), a special file, or an empty directory; with recursive, a
// directory and everything in it.
//
// A regular file or a link is deleted through Commit, so it is atomic and
// journaled in undo (Undo brings it back, a link as a link); a regular
// file's deletion is guarded by expectedVersion (stale_version when the
// file changed), which on anything else is bad_request. Directory
// removals are not recorded in undo. A non-empty directory
// without recursive is invalid_target; a workspace root, or a directory
// holding one or the state directory, is invalid_target; a missing path is
// not_found.
func (w *Workspace) Remove(p string, recursive bool, expectedVersion string) (res RemoveResult, err error) {
	const op = "delete"
	if err := w.checkOpen(op, p); err != nil {
		return res, err
	}
	if expectedVersion != "" && !isVersion(expectedVersion) {
		return res, badVersion(op, p, expectedVersion)
	}
	r, err := w.resolveEntry(op, p)
	if err != nil {
		return res, err
	}
	if r.Rel == "." {
		return res, fserr.New(fserr.InvalidTarget, op, p, "cannot delete %s: it is a workspace root", p).
			WithHint("a root stays while fsplane serves it: delete the entries inside it instead")
	}
	root := r.r.root
	err = w.locked(op, p, func() error {
		if err := w.refuseBlocked(op, r); err != nil {
			return err
		}
		if err := w.lockDirs(op, p, targetOf(r)); err != nil {
			return err
		}
		fi, err := lstatEntry(r)
		switch {
		case err != nil:
			return osErr(op, p, err)
		case fi == nil:
			return notFound(op, p)
		case fi.Mode().IsRegular():
			done, err := w.commitLocked(op, []*request{{Change: Change{Path: p, Delete: true, ExpectedVersion: expectedVersion}}},
				CommitOptions{Op: op})
			if err == nil {
				res.UndoRecorded = done[0].UndoRecorded
			}
			return err
		case expectedVersion != "":
			return versionOnNonFile(op, p, fi)
		case fi.Mode()&fs.ModeSymlink != 0:
			// Through Commit as a patch's Delete of a link is, so Undo
			// brings the link back here too.
			done, err := w.commitLocked(op, []*request{{Change: Change{Path: p, Delete: true, Entry: true}}}, CommitOptions{Op: op})
			if err == nil {
				res.UndoRecorded = done[0].UndoRecorded
			}
			return err
		case fi.IsDir():
			res.IsDir = true
			if err := w.checkHolds(op, "delete", r); err != nil {
				return err
			}
			if recursive {
				err = w.removeAll(op, "delete", p, root, r.Rel)
			} else if err = root.Remove(r.Rel); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
				e := fserr.New(fserr.InvalidTarget, op, p, "directory %s is not empty; pass recursive to delete it and everything in it", p).
					WithHint("pass recursive to delete the directory with everything in it, or delete its entries first")
				e.Errno, e.Err = syscall.ENOTEMPTY, err
				return e
			}
		default:
			err = root.Remove(r.Rel)
		}
		if err == nil {
			err = syncDir(root, path.Dir(r.Rel))
		}
		if err != nil {
			return osErr(op, p, err)
		}
		return nil
	})
	if err != nil {
		return RemoveResult{}, err
	}
	return res, nil
}

// RemoveResult describes a Remove.
type RemoveResult struct {
	IsDir bool
	// UndoRecorded: Undo can bring the entry back (a regular file within
	// the undo journal's size limit, or a symbolic link; never a
	// directory or a special file).
	UndoRecorded bool
}

// CheckVersionFormat is bad_request when v is set but is not a version, so
// that a mistyped expected_version is reported as such rather than as a
// change of the file (stale_version).
func CheckVersionFormat(op, p, v string) error {
	if v != "" && !isVersion(v) {
		return badVersion(op, p, v)
	}
	return nil
}

// staleVersion is the error of a change planned against version expected
// of p, which now has version current ("": p does not exist, whether it
// was removed since or never was).
func staleVersion(op, p, expected, current string) *fserr.Error {
	if current == "" {
		return MissingExpected(op, p, expected)
	}
	return fserr.New(fserr.StaleVersion, op, p, "%s changed: expected version %s, current version %s", p, expected, current).
		WithHint("re-read the file")
}

func badVersion(op, p, v string) *fserr.Error {
	return fserr.New(fserr.BadRequest, op, p, "%q is not a version (32 lowercase hex characters)", v).
		WithHint("pass the version a read returned")
}

func versionOnNonFile(op, p string, fi fs.FileInfo) *fserr.Error {
	what := "not a regular file"
	switch {
	case fi.IsDir():
		what = "a directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		what = "a symbolic link"
	}
	return fserr.New(fserr.BadRequest, op, p, "%s is %s; expected_version applies to regular files", p, what).
		WithHint("omit expected_version")
}

// MissingExpected is the error of a change that expected version expected
// of p where there is no file: removed since, or never there.
func MissingExpected(op, p, expected string) *fserr.Error {
	return fserr.New(fserr.StaleVersion, op, p, "%s does not exist (expected version %s)", p, expected).
		WithHint("re-read the file, or list its directory; to create it, send no expected version")
}
