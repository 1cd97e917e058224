package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// MoveResult reports a Move.
type MoveResult struct {
	Source, Destination Path
	IsDir               bool
	// Version is a moved regular file's version when it was computed:
	// always for files up to the undo entry limit (32 MiB by default),
	// and for larger ones when an expected version was given.
	Version      string
	UndoRecorded bool // Undo of either path reverts the move
	// Copied: the move crossed roots or file systems, so the source was
	// copied and then removed.
	Copied bool
}

// opMove is the undo journal's name for moves; Undo reverts both files of
// a move together.
const opMove = "move"

// Move renames src to dst; either may be a file, a directory or a
// symbolic link (moved as the link itself). dst names the new path
// exactly: an existing directory there is not moved into. Missing parents
// of dst are created.
//
// Within one root and file system the move is one rename(2). Across roots
// or file systems (EXDEV) the source is copied beside dst, renamed into
// place, and then removed; a file that cannot be removed is put back and
// dst restored, so the move happens or not. A directory is copied
// completely first (owners, modes and modification times kept, links as
// they are; a socket, FIFO or device in it fails the move before anything
// changes); if removing the source then fails the copy stays and the
// error says so. A crash in between leaves both. A replaced destination
// is kept until the source is gone, as a hard link beside it or, where the
// file system has none, renamed aside (".<name>.fsplane-<id>.bak"; absent
// meanwhile), and put back if the move fails; a record in the state
// directory (see moveRecord) lets the next recovery put it back, or drop
// it, after a crash.
//
// An existing dst is already_exists unless overwrite. With overwrite, a
// directory replaces only an empty directory, a non-directory only a
// non-directory (else already_exists or invalid_target); a dst that is
// another hard link to the source is bad_request, as mv refuses it.
// expectedVersion guards a regular file source (stale_version); on
// anything else it is bad_request.
//
// Moving a regular file onto a regular file or a new path is recorded in
// undo as one change of both paths: Undo of either brings the source back
// and removes (or restores) the destination, refusing when either changed
// since. Moves of directories and links are not recorded.
func (w *Workspace) Move(src, dst string, overwrite bool, expectedVersion string) (MoveResult, error) {
	const op = opMove
	if err := w.checkOpen(op, src); err != nil {
		return MoveResult{}, err
	}
	if expectedVersion != "" && !isVersion(expectedVersion) {
		return MoveResult{}, badVersion(op, src, expectedVersion)
	}
	s, err := w.resolveEntry(op, src)
	if err != nil {
		return MoveResult{}, err
	}
	d, err := w.resolveEntry(op, dst)
	if err != nil {
		return MoveResult{}, err
	}
	res := MoveResult{Source: s.Path, Destination: d.Path}
	switch {
	case s.Rel == ".":
		return res, fserr.New(fserr.InvalidTarget, op, src, "cannot move %s: it is a workspace root", src).
			WithHint("a root stays while fsplane serves it: move the entries inside it instead")
	case d.Rel == ".":
		return res, fserr.New(fserr.InvalidTarget, op, dst, "cannot move onto %s: it is a workspace root", dst).
			WithHint("move it into the root instead: name a path inside it")
	case s.canonKey == d.canonKey:
		return res, fserr.New(fserr.BadRequest, op, src, "%s and %s are the same file", src, dst)
	}
	err = w.locked(op, src, func() error {
		if err := errors.Join(w.refuseBlocked(op, s), w.refuseBlocked(op, d)); err != nil {
			return err
		}
		return w.move(op, s, d, overwrite, expectedVersion, &res)
	})
	return res, err
}

func (w *Workspace) move(op string, s, d *resolved, overwrite bool, expectedVersion string, res *MoveResult) error {
	src, dst := s.Given, d.Given
	if err := w.lockDirs(op, src, targetOf(s), targetOf(d)); err != nil {
		return err
	}
	sfi, err := lstatEntry(s)
	switch {
	case err != nil:
		return osErr(op, src, err)
	case sfi == nil:
		return notFound(op, src)
	case expectedVersion != "" && !sfi.Mode().IsRegular():
		return versionOnNonFile(op, src, sfi)
	case !sfi.IsDir() && d.dirOnly:
		return refuseDirOnly(op, d)
	case sfi.IsDir():
		res.IsDir = true
		if err := w.checkHolds(op, "move", s); err != nil {
			return err
		}
		// d itself may be s under another spelling: a case-only rename.
		if _, in := within(d.canonKey, s.canonKey); in || destInside(d, sfi, false) {
			return fserr.New(fserr.InvalidTarget, op, src, "cannot move the directory %s into itself (%s)", src, dst)
		}
		// A move to another root copies the tree and then deletes it:
		// refuse now, before anything changes, when that would delete
		// the state directory or a root. A move within a root renames
		// the tree, which keeps them whole, unless it crosses a file
		// system; moveAcross checks then.
		if s.r != d.r {
			if err := w.checkRemovable(op, "move", src, s.r.root, s.Rel); err != nil {
				return err
			}
		}
	}
	dfi, err := lstatEntry(d)
	if err != nil {
		return osErr(op, dst, err)
	}
	if dfi != nil {
		if err := checkMoveDest(op, d, sfi, dfi, overwrite); err != nil {
			return err
		}
		if os.SameFile(sfi, dfi) {
			// Hard links to one file: rename(2) leaves both names and
			// succeeds, so the source would stay while reported moved.
			return fserr.New(fserr.BadRequest, op, src, "%s and %s are the same file (hard links to it)", src, dst).
				WithHint("delete %s to keep the file only as %s", src, dst)
		}
		if dfi.Mode().IsRegular() {
			if err := checkWritable(op, dst, d.r.root, d.Rel, dfi); err != nil {
				return err
			}
		}
	}
	if err := refuseEscapingLinks(op, s, d, sfi); err != nil {
		return err
	}
	dirs, err := missingParents(op, dst, d.r, d.Rel)
	if err != nil {
		return err
	}

	// What undo needs, read before anything changes.
	var sp, dp prevState
	if sfi.Mode().IsRegular() {
		if sp, err = w.readPrev(s.r.root, s.Rel, expectedVersion != ""); err != nil {
			return osErr(op, src, err)
		}
		if expectedVersion != "" && expectedVersion != sp.version {
			return staleVersion(op, src, expectedVersion, sp.version)
		}
		res.Version = sp.version
		if dfi != nil && dfi.Mode().IsRegular() {
			if dp, err = w.readPrev(d.r.root, d.Rel, false); err != nil {
				return osErr(op, dst, err)
			}
		}
	}

	// The undo record of a file's move is written, pending, before the
	// move (see prepareUndo).
	var upl plan
	if sfi.Mode().IsRegular() && sp.kept && (dfi == nil || dp.kept) {
		upl = plan{
			{res: s, kind: kindDelete, existed: true, kept: true, prev: sp.content, prevMode: sp.mode, prevVersion: sp.version},
			{res: d, kind: kindCreate, newVersion: sp.version, mode: sp.mode, madeParents: len(dirs)},
		}
		upl[0].uid, upl[0].gid, _ = fileOwner(sfi)
		if dfi != nil {
			upl[1].kind, upl[1].existed, upl[1].kept, upl[1].prev, upl[1].prevMode, upl[1].prevVersion =
				kindReplace, true, true, dp.content, dp.mode, dp.version
			upl[1].uid, upl[1].gid, _ = fileOwner(dfi)
		}
	}
	doMove := func() error {
		droot := d.r.root
		if err := makeChain(droot, dirs, nil); err != nil {
			removeDirs(droot, dirs)
			return osErr(op, dst, err)
		}
		// rename(2) would replace an empty directory, but the os package
		// refuses to: remove it first, and put it back if the move fails.
		replacedDir := dfi != nil && dfi.IsDir()
		if replacedDir {
			if err := droot.Remove(d.Rel); err != nil {
				return osErr(op, dst, err)
			}
		}
		var err error = syscall.EXDEV
		switch {
		case s.r != d.r:
		case dfi == nil:
			err = renameNoReplace(s.r.root, s.Rel, d.Rel)
		default:
			err = s.r.root.Rename(s.Rel, d.Rel)
		}
		if errors.Is(err, syscall.EXDEV) {
			res.Copied = true
			err = w.moveAcross(op, s, d, sfi, dfi)
		}
		if err != nil {
			if replacedDir {
				if droot.Mkdir(d.Rel, dfi.Mode()&permBits) == nil {
					uid, gid, _ := fileOwner(dfi)
					_ = droot.Lchown(d.Rel, uid, gid)
					_ = droot.Chmod(d.Rel, dfi.Mode()&permBits)
				}
			}
			removeDirs(droot, dirs)
			if _, ok := fserr.As(err); ok {
				return err
			}
			if errors.Is(err, errAppeared) {
				e := fserr.New(fserr.AlreadyExists, op, dst, "destination %s was created by another writer while %s was moved there; nothing was moved", dst, src).
					WithHint("look at %s; pass overwrite to replace it", dst)
				e.Retryable = true
				return e
			}
			return osErr(op, src, err)
		}
		if err := syncDirs(droot, dirsOf(d.Rel, dirs)); err != nil {
			return osErr(op, dst, err)
		}
		if err := syncDir(s.r.root, path.Dir(s.Rel)); err != nil {
			return osErr(op, src, err)
		}

		return nil
	}
	if upl == nil {
		return doMove()
	}
	recorded, err := w.executeRecorded(op, randomTag(), upl, doMove)
	if err != nil {
		return err
	}
	res.UndoRecorded = recorded[0] && recorded[1]
	return nil
}

// checkMoveDest checks that s (described by sfi) may replace the existing
// d (dfi), as rename(2) allows.
func checkMoveDest(op string, d *resolved, sfi, dfi fs.FileInfo, overwrite bool) error {
	dst := d.Given
	switch {
	case !overwrite:
		return fserr.New(fserr.AlreadyExists, op, dst, "destination %s already exists", dst).
			WithHint("%s", existsHint(dst, dfi, sfi.Name(), sfi.IsDir()))
	case sfi.IsDir() && dfi.IsDir():
		names, err := readNames(d.r.root, d.Rel)
		if err != nil {
			return osErr(op, dst, err)
		}
		if len(names) > 0 {
			e := fserr.New(fserr.AlreadyExists, op, dst, "destination directory %s is not empty; overwrite replaces only an empty directory", dst)
			e.Errno = syscall.ENOTEMPTY
			return e.WithHint("delete it first, or choose another destination")
		}
	case sfi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, dst, "cannot overwrite %s, which is not a directory, with a directory", dst).WithErrno(syscall.ENOTDIR)
	case dfi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, dst, "cannot overwrite the directory %s with something that is not a directory", dst).WithErrno(syscall.EISDIR)
	}
	return nil
}

// moveAcross moves s to d by copying and then removing s (see Move).
func (w *Workspace) moveAcross(op string, s, d *resolved, sfi, dfi fs.FileInfo) error {
	sroot, droot := s.r.root, d.r.root
	if sfi.IsDir() {
		// Checked before the copy, so that a refused move leaves nothing
		// behind (move checked a move to another root already), and
		// again when deleting.
		if s.r == d.r {
			if err := w.checkRemovable(op, "move", s.Given, sroot, s.Rel); err != nil {
				return err
			}
		}
		tmp := siblingName(d.Rel, randomTag(), "tmp")
		noteTemp(droot, tmp)
		tc := &treeCopy{w: w, op: op, src: s.r, dst: d.r, dstBase: d.Rel, move: true, res: &CopyResult{}}
		err := tc.dir(s.Rel, tmp, "", sfi)
		if err == nil {
			err = droot.Rename(tmp, d.Rel)
		}
		if err == nil {
			// The two file systems journal independently: the rename
			// must be durable before the source goes, or a power cut
			// could keep the removal and lose the rename.
			err = syncDir(droot, path.Dir(d.Rel))
		}
		if err != nil {
			_ = w.removeOwn(op, tmp, droot, tmp)
			return err
		}
		if err := w.removeAll(op, "move", s.Given, sroot, s.Rel); err != nil {
			e := osErr(op, s.Given, err)
			e.Message = "the copy at " + d.Abs + " is complete, but the source could not be removed entirely: " + e.Message
			e.Hint = "remove what is left of " + s.Abs + " once the cause is fixed"
			return e
		}
		return nil
	}

	// A file, link or special file: stage the copy beside d.
	var tmp, version, link string
	switch {
	case sfi.Mode().IsRegular():
		st, err := stageCopy(sroot, s.Rel, droot, d.Rel, func(f *os.File, fi fs.FileInfo) fileMeta {
			uid, gid, _ := fileOwner(fi)
			return fileMeta{mode: fi.Mode() & permBits, uid: uid, gid: gid, xattrSrc: f}
		})
		if err != nil {
			return err
		}
		tmp, version = st.temp, st.version
		if err := droot.Chtimes(tmp, sfi.ModTime(), sfi.ModTime()); err != nil {
			_ = droot.Remove(tmp)
			return err
		}
	case sfi.Mode()&fs.ModeSymlink != 0:
		target, err := sroot.Readlink(s.Rel)
		if err != nil {
			return err
		}
		link = target
		tmp = siblingName(d.Rel, randomTag(), "tmp")
		noteTemp(droot, tmp)
		if err := droot.Symlink(target, tmp); err != nil {
			return err
		}
		uid, gid, _ := fileOwner(sfi)
		if err := droot.Lchown(tmp, uid, gid); err != nil && !errors.Is(err, syscall.EPERM) {
			_ = droot.Remove(tmp)
			return err
		}
	default:
		return fserr.New(fserr.InvalidTarget, op, s.Given,
			"cannot move %s to another root or file system: it is a socket, FIFO or device", s.Given)
	}
	// Keep the replaced destination until the source is gone, to put it
	// back if that fails: as a hard link, or, where the file system has
	// none, by renaming it aside (it is then briefly absent). Installing
	// the copy without either would lose it when the source stays.
	backup, aside := "", false
	var rec *moveRecord
	if dfi != nil {
		backup = siblingName(d.Rel, randomTag(), "bak")
		rec = &moveRecord{ID: randomTag(), SrcRoot: s.r.path, SrcRel: s.Rel, DstRoot: d.r.path, DstRel: d.Rel, Backup: backup}
		rec.SrcDev, rec.SrcIno = fileKey(sfi)
		rec.SrcVersion, rec.SrcLink = version, link
		if err := w.writeMoveRecord(rec); err != nil {
			_ = droot.Remove(tmp)
			return stateErr(op, w.stateDir, err)
		}
		if err := w.backupLink(droot, d.Rel, backup); err != nil {
			if err := droot.Rename(d.Rel, backup); err != nil {
				_ = droot.Remove(tmp)
				w.dropMoveRecord(rec)
				return err
			}
			aside = true
		}
	}
	// settled drops the record once the move is done or wholly undone;
	// a failure that leaves the old destination only as its backup keeps
	// it, so the next recovery puts the backup back.
	settled := func() {
		if rec != nil {
			w.dropMoveRecord(rec)
		}
	}
	if err := droot.Rename(tmp, d.Rel); err != nil {
		_ = droot.Remove(tmp)
		if !aside {
			_ = removeIfExists(droot, backup)
		} else if rerr := droot.Rename(backup, d.Rel); rerr != nil {
			return w.notRestored(op, s, d, backup, err)
		}
		settled()
		return err
	}
	// Durable before the source goes (see the directory case above).
	err := syncDir(droot, path.Dir(d.Rel))
	if err == nil && w.hooks.crashAt != nil && w.hooks.crashAt("move-installed") {
		return errCrashed
	}
	if err == nil {
		err = w.removeSource(sroot, s.Rel)
	}
	if err != nil {
		// Undo the install: the source stays where it was.
		if backup == "" {
			_ = droot.Remove(d.Rel)
		} else if rerr := droot.Rename(backup, d.Rel); rerr != nil {
			return w.notRestored(op, s, d, backup, err)
		}
		settled()
		return err
	}
	_ = removeIfExists(droot, backup)
	settled()
	return nil
}

// notRestored reports a move across file systems that failed with err
// and could not put the destination it replaced back from backup.
func (w *Workspace) notRestored(op string, s, d *resolved, backup string, err error) *fserr.Error {
	e := osErr(op, s.Given, err)
	kept := filepath.Join(d.r.path, backup)
	e.Message += "; the replaced " + d.Abs + " could not be put back and is kept as " + kept
	e.Hint = "rename " + kept + " back to " + d.Abs
	return e
}

// backupLink and removeSource are the steps of a move across file systems
// that tests make fail (see testHooks).
func (w *Workspace) backupLink(r *os.Root, oldname, newname string) error {
	if w.hooks.moveLink != nil {
		return w.hooks.moveLink(r, oldname, newname)
	}
	return r.Link(oldname, newname)
}

func (w *Workspace) removeSource(r *os.Root, name string) error {
	if w.hooks.moveRemove != nil {
		return w.hooks.moveRemove(r, name)
	}
	return r.Remove(name)
}

// refuseEscapingLinks refuses a move that would make a symbolic link lead
// out of the workspace: the source itself, or any link in a moved tree,
// that leads inside its root from where it is but, read from where the
// move puts it, would lead outside the destination's root (a relative
// target reads from the link's place: "../../x" climbs out of a shallower
// directory). fsplane never follows such a link, but other tools would,
// and copy and tar extraction do not create them either. A move within
// one directory of one root keeps every relative target reading as
// before and is not checked; a tree moved elsewhere is walked for its
// links first, which costs a directory walk.
func refuseEscapingLinks(op string, s, d *resolved, sfi fs.FileInfo) error {
	if s.r == d.r && path.Dir(s.Rel) == path.Dir(d.Rel) {
		return nil
	}
	root := s.r.root
	check := func(inner string) error {
		from, to := path.Join(s.Rel, inner), path.Join(d.Rel, inner)
		target, err := root.Readlink(from)
		if err != nil {
			return osErr(op, s.Given, err)
		}
		if linkStays(s.r, from, target) && !linkStays(d.r, to, target) {
			return fserr.New(fserr.OutsideRoot, op, s.Given, "moving %s to %s would make the link %s -> %s lead outside the workspace",
				s.Given, d.Given, path.Join(s.Given, inner), target).
				WithHint("move it within its directory, or change the link's target first (a relative target is read from the link's new place)")
		}
		return nil
	}
	if sfi.Mode()&fs.ModeSymlink != 0 {
		return check("")
	}
	if !sfi.IsDir() {
		return nil
	}
	var walk func(inner string) error
	walk = func(inner string) error {
		names, err := readNames(root, path.Join(s.Rel, inner))
		if err != nil {
			return osErr(op, s.Given, err)
		}
		for _, n := range names {
			child := path.Join(inner, n)
			fi, err := root.Lstat(path.Join(s.Rel, child))
			switch {
			case gone(err):
				continue
			case err != nil:
				return osErr(op, s.Given, err)
			case fi.Mode()&fs.ModeSymlink != 0:
				err = check(child)
			case fi.IsDir():
				err = walk(child)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk("")
}

// existsHint says what to do about the destination dst (dfi) that exists
// when overwrite was not given: overwrite cannot put a file in place of a
// directory, nor a directory in place of a file, and a caller naming a
// directory often meant to put srcName (when known) inside it.
func existsHint(dst string, dfi fs.FileInfo, srcName string, srcDir bool) string {
	into := ""
	if srcName != "" && srcName != "." && srcName != "/" {
		into = path.Join(dst, srcName)
	}
	switch {
	case dfi.IsDir() && !srcDir && into != "":
		return fmt.Sprintf("%s is a directory; to put the file in it, give %s as the destination", dst, into)
	case dfi.IsDir() && !srcDir:
		return fmt.Sprintf("%s is a directory; name a file inside it as the destination", dst)
	case dfi.IsDir() && into != "":
		return fmt.Sprintf("give %s as the destination to put it inside; overwrite replaces %s only when it is empty", into, dst)
	case srcDir:
		return "choose another destination: a directory cannot replace a file"
	}
	return "pass overwrite to replace it"
}
