package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// CopyResult reports a Copy.
type CopyResult struct {
	Source, Destination Path
	IsDir               bool
	FilesCopied         int
	BytesCopied         int64
	LinksCopied         int
	// LinksSkipped counts symbolic links in a copied tree that were not
	// copied because their target leaves the root (at the source, or
	// where the copy would put them).
	LinksSkipped int
	// OtherSkipped counts sockets, FIFOs and devices in a copied tree,
	// which are not copied.
	OtherSkipped int
	Version      string // a single file's copy: its version
	UndoRecorded bool   // a single file's copy: Undo of the destination reverts it
}

// Copy copies the file or directory tree src to dst; both may lie in
// different roots. A symbolic link given as src is followed (its target
// is copied), as with dst: copying onto a link writes its target.
//
// A file is copied atomically like a Commit (a temp file beside dst,
// fsync, rename); a created dst gets src's permission bits and owner
// (when set); a file it overwrites keeps its permission bits, owner and
// extended attributes, as cp onto an existing file does (a private file
// stays private; other hard links to it keep the old content). The
// copy is recorded in undo: Undo of dst deletes a created copy or
// restores the content it overwrote.
//
// A tree is copied into a temp directory beside dst and renamed into
// place once complete, so dst appears whole or not at all. Directories
// keep src's permission bits; everything created is given to owner.
// Symbolic links inside are copied as links when their target stays
// inside the root, else skipped and counted; sockets, FIFOs and devices
// are skipped and counted; hard links become separate files; the state
// directory is never copied. With overwrite and an existing directory dst,
// the tree is merged into it instead: files are replaced one by one
// (each atomically, keeping its permission bits, owner and extended
// attributes as above, the content of each replaced regular file recorded
// in undo), other entries kept; a failure then leaves what was copied so far.
// A merge that would write into fsplane's state directory (when it lies
// below dst) is outside_root before anything is written.
//
// Missing parents of dst are created (and given to owner). Errors: src
// missing is not_found; dst existing without overwrite is already_exists;
// a directory into itself, a directory over a file or a file over a
// directory is invalid_target; src and dst the same file is bad_request.
func (w *Workspace) Copy(src, dst string, overwrite bool, owner *Owner) (CopyResult, error) {
	const op = "copy"
	if err := w.checkOpen(op, src); err != nil {
		return CopyResult{}, err
	}
	if err := checkOwner(op, dst, owner); err != nil {
		return CopyResult{}, err
	}
	s, err := w.resolve(op, src)
	if err != nil {
		return CopyResult{}, err
	}
	d, err := w.resolve(op, dst)
	if err != nil {
		return CopyResult{}, err
	}
	res := CopyResult{Source: s.Path, Destination: d.Path}
	sfi, err := lstatEntry(s)
	switch {
	case err != nil:
		return res, osErr(op, src, err)
	case sfi == nil:
		return res, notFound(op, src)
	case s.canonKey == d.canonKey:
		return res, fserr.New(fserr.BadRequest, op, src, "%s and %s are the same file", src, dst)
	case sfi.Mode().IsRegular():
		if err := refuseDirOnly(op, d); err != nil {
			return res, err
		}
		err = w.copyFile(op, s, d, overwrite, owner, &res)
	case sfi.IsDir():
		res.IsDir = true
		if _, in := within(d.canonKey, s.canonKey); in || destInside(d, sfi, true) {
			return res, fserr.New(fserr.InvalidTarget, op, src, "cannot copy the directory %s into itself (%s)", src, dst)
		}
		err = w.copyTree(op, s, d, sfi, overwrite, owner, &res)
	default:
		return res, fserr.New(fserr.InvalidTarget, op, src, "%s is not a regular file or a directory", src)
	}
	return res, err
}

// copyFile copies the regular file s to d.
func (w *Workspace) copyFile(op string, s, d *resolved, overwrite bool, owner *Owner, res *CopyResult) error {
	dst := d.Given
	dfi, err := lstatEntry(d)
	if err != nil {
		return osErr(op, dst, err)
	}
	if err := checkFileDest(op, d, dfi, path.Base(s.Rel), overwrite); err != nil {
		return err
	}
	uid, gid := -1, -1
	if owner != nil {
		uid, gid = owner.UID, owner.GID
	}
	if dfi != nil {
		uid, gid, _ = fileOwner(dfi)
	}
	dirs, err := makeParents(op, d, owner)
	if err != nil {
		return err
	}
	root := d.r.root
	var kept *os.File // the overwritten file, whose mode and xattrs stay
	if dfi != nil && dfi.Mode().IsRegular() {
		if kept, err = root.Open(d.Rel); err != nil {
			removeDirs(root, dirs)
			return osErr(op, dst, err)
		}
		defer kept.Close()
	}
	st, err := stageCopy(s.r.root, s.Rel, root, d.Rel, func(_ *os.File, fi fs.FileInfo) fileMeta {
		if kept != nil {
			return fileMeta{mode: dfi.Mode() & permBits, uid: uid, gid: gid, xattrSrc: kept}
		}
		return fileMeta{mode: fi.Mode() & permBits, uid: uid, gid: gid}
	})
	if err != nil {
		removeDirs(root, dirs)
		return osErr(op, s.Given, err)
	}
	st.parents = len(dirs)
	var recorded bool
	err = w.locked(op, dst, func() error {
		var err error
		recorded, err = w.installFile(op, d, st, overwrite, true, "")
		return err
	})
	if err != nil {
		_ = removeIfExists(root, st.temp)
		removeDirs(root, dirs)
		return err
	}
	for _, dir := range dirsOf(d.Rel, dirs)[1:] {
		if err := syncDir(root, dir); err != nil {
			return osErr(op, dst, err)
		}
	}
	res.FilesCopied, res.BytesCopied, res.Version, res.UndoRecorded = 1, st.size, st.version, recorded
	return nil
}

// checkFileDest checks that a file may be put at d, which is described
// by dfi (nil when absent). srcName, when known, is the base name of the
// file, for the hint when d is a directory.
func checkFileDest(op string, d *resolved, dfi fs.FileInfo, srcName string, overwrite bool) error {
	switch {
	case dfi == nil:
		return nil
	case !overwrite:
		return fserr.New(fserr.AlreadyExists, op, d.Given, "destination %s already exists", d.Given).
			WithHint("%s", existsHint(d.Given, dfi, srcName, false))
	case dfi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, d.Given, "destination %s is a directory; cannot overwrite it with a file", d.Given).WithErrno(syscall.EISDIR)
	case !dfi.Mode().IsRegular() && dfi.Mode()&fs.ModeSymlink == 0:
		return fserr.New(fserr.InvalidTarget, op, d.Given, "destination %s is not a regular file", d.Given)
	}
	return nil
}

// staged is a copy written to a temp file, waiting to be installed.
type staged struct {
	temp    string
	version string
	size    int64
	// keepLinks rewrites a file with several hard links in place (from
	// temp, which is then removed), as Commit does, instead of renaming
	// temp over the one name.
	keepLinks bool
	// parents counts the destination's parent directories made for it
	// (makeParents), which undo of its creation removes again.
	parents int
}

// stageCopy copies the regular file srcRel into a new temp file beside
// dstRel (O_EXCL), with the metadata meta chooses, and fsyncs it. Errors
// are raw; on error nothing is left.
func stageCopy(srcRoot *os.Root, srcRel string, dstRoot *os.Root, dstRel string,
	meta func(*os.File, fs.FileInfo) fileMeta) (staged, error) {
	f, fi, err := openRegular(srcRoot, srcRel, "", srcRel)
	if err != nil {
		return staged{}, err
	}
	defer f.Close()
	t, name, err := createTemp(dstRoot, dstRel)
	if err != nil {
		return staged{}, err
	}
	h := NewVersionHash()
	n, err := io.Copy(io.MultiWriter(t, h), f)
	if err == nil {
		err = finishFile(t, meta(f, fi))
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = dstRoot.Remove(name)
		return staged{}, err
	}
	return staged{temp: name, version: h.Version(), size: n}, nil
}

// installFile renames a staged copy to d and records the change in undo:
// the content it replaces (when small enough), or, with recordCreate, its
// creation. With expected set, the file at d must have that version
// (stale_version otherwise). The caller holds the state lock (locked);
// installFile takes d's directory lock. The caller removes the temp on
// error.
func (w *Workspace) installFile(op string, d *resolved, st staged, overwrite, recordCreate bool, expected string) (recorded bool, err error) {
	if err := w.refuseBlocked(op, d); err != nil {
		return false, err
	}
	if err := w.lockDirs(op, d.Given, targetOf(d)); err != nil {
		return false, err
	}
	root := d.r.root
	dfi, err := lstatEntry(d)
	if err != nil {
		return false, osErr(op, d.Given, err)
	}
	if err := checkFileDest(op, d, dfi, "", overwrite); err != nil {
		return false, err
	}
	if dfi != nil && dfi.Mode().IsRegular() {
		if err := checkWritable(op, d.Given, root, d.Rel, dfi); err != nil {
			return false, err
		}
	}
	if expected != "" && dfi == nil {
		return false, staleVersion(op, d.Given, expected, "")
	}
	p := &planned{res: d, kind: kindCreate, newVersion: st.version, madeParents: st.parents}
	if tfi, err := root.Lstat(st.temp); err == nil {
		// The mode the file will have, for undo to notice a chmod since.
		p.mode = tfi.Mode() & permBits
	}
	if dfi != nil && dfi.Mode().IsRegular() {
		var nlink uint64
		p.uid, p.gid, nlink = fileOwner(dfi)
		inPlace := st.keepLinks && nlink > 1
		prev, err := w.readPrev(root, d.Rel, expected != "" || inPlace)
		if err != nil {
			return false, osErr(op, d.Given, err)
		}
		if expected != "" && expected != prev.version {
			return false, staleVersion(op, d.Given, expected, prev.version)
		}
		p.kind, p.existed, p.kept, p.prev, p.prevMode, p.prevVersion = kindReplace, true, prev.kept, prev.content, prev.mode, prev.version
		if inPlace {
			p.mode = prev.mode // rewritten in place: its own mode stays
			return w.installInPlace(op, d, st, p)
		}
	}
	rename := root.Rename
	if dfi == nil {
		rename = func(o, n string) error { return renameNoReplace(root, o, n) }
	}
	install := func() error { return rename(st.temp, d.Rel) }
	if (dfi == nil && recordCreate) || (p.existed && p.kept) {
		var rec []bool
		if rec, err = w.executeRecorded(op, "", plan{p}, install); err == nil {
			recorded = rec[0]
		}
	} else {
		err = install()
	}
	if err != nil {
		return false, osErr(op, d.Given, err)
	}
	if err := syncDir(root, path.Dir(d.Rel)); err != nil {
		return false, osErr(op, d.Given, err)
	}
	return recorded, nil
}

// installInPlace is installFile for a file with several hard links
// (st.keepLinks): its content is rewritten in place from the staged temp,
// as a transaction (a verified backup first, restored on failure or by
// recovery after a crash), so every link keeps naming the file. The temp
// is removed whatever happens. p holds the file's previous state.
func (w *Workspace) installInPlace(op string, d *resolved, st staged, p *planned) (recorded bool, err error) {
	root := d.r.root
	defer func() { _ = removeIfExists(root, st.temp) }()
	orig, _, err := openRegular(root, d.Rel, op, d.Given)
	if err != nil {
		return false, osErr(op, d.Given, err)
	}
	defer orig.Close()
	src, err := root.Open(st.temp)
	if err != nil {
		return false, osErr(op, d.Given, err)
	}
	defer src.Close()
	p.kind, p.orig, p.src, p.srcSize = kindInPlace, orig, src, st.size
	p.req = &request{Change: Change{Path: d.Given}}
	txID := randomTag()
	rec, err := w.executeRecorded(op, txID, plan{p}, func() error { return w.executeTx(op, txID, plan{p}) })
	if err != nil {
		return false, osErr(op, d.Given, err)
	}
	return rec[0], nil
}

// prevState is a regular file's state before a change, for undo.
type prevState struct {
	content []byte // when kept
	kept    bool   // content is complete (within the undo entry limit)
	version string // known when kept or asked for
	mode    fs.FileMode
	uid     int
	gid     int
}

// readPrev reads the regular file rel for the undo journal: its content
// when it fits one undo entry, and its version then or when needVersion.
func (w *Workspace) readPrev(root *os.Root, rel string, needVersion bool) (prevState, error) {
	f, fi, err := openRegular(root, rel, "", rel)
	if err != nil {
		return prevState{}, err
	}
	defer f.Close()
	ps := prevState{mode: fi.Mode() & permBits}
	ps.uid, ps.gid, _ = fileOwner(fi)
	limit := min(w.limits.MaxEntryBytes, w.limits.TotalBytes)
	if fi.Size() > limit {
		if needVersion {
			ps.version, _, err = versionOf(f)
		}
		return ps, err
	}
	buf, err := readLimited(f, fi.Size(), limit)
	if err != nil {
		return prevState{}, err
	}
	if int64(len(buf)) <= limit {
		ps.content, ps.kept, ps.version = buf, true, Version(buf)
	} else if needVersion {
		ps.version, _, err = versionOf(io.MultiReader(bytes.NewReader(buf), f))
	}
	return ps, err
}

// copyTree copies the directory s to d (see Copy).
func (w *Workspace) copyTree(op string, s, d *resolved, sfi fs.FileInfo, overwrite bool, owner *Owner, res *CopyResult) error {
	dst := d.Given
	tc := &treeCopy{w: w, op: op, src: s.r, dst: d.r, dstBase: d.Rel, owner: owner, res: res}
	dfi, err := lstatEntry(d)
	switch {
	case err != nil:
		return osErr(op, dst, err)
	case dfi != nil && !overwrite:
		return fserr.New(fserr.AlreadyExists, op, dst, "destination %s already exists", dst).
			WithHint("pass overwrite to merge into it")
	case dfi != nil && !dfi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, dst, "destination %s is not a directory; cannot copy a directory over it", dst).WithErrno(syscall.ENOTDIR)
	case dfi != nil:
		tc.merge = true
		if err := tc.checkMerge(s.Rel, d.Rel); err != nil {
			return err
		}
		return tc.dir(s.Rel, d.Rel, "", sfi)
	}
	dirs, err := makeParents(op, d, owner)
	if err != nil {
		return err
	}
	root := d.r.root
	tmp := siblingName(d.Rel, randomTag(), "tmp")
	noteTemp(root, tmp)
	fail := func(err error) error {
		_ = w.removeOwn(op, tmp, root, tmp)
		removeDirs(root, dirs)
		return err
	}
	if err := tc.dir(s.Rel, tmp, "", sfi); err != nil {
		return fail(err)
	}
	err = w.locked(op, dst, func() error {
		if err := w.lockDirs(op, dst, targetOf(d)); err != nil {
			return err
		}
		if fi, err := lstatEntry(d); err != nil || fi != nil {
			if err != nil {
				return osErr(op, dst, err)
			}
			return fserr.New(fserr.AlreadyExists, op, dst, "destination %s already exists", dst).
				WithHint("it was created while the copy ran; pass overwrite to merge into it")
		}
		if err := root.Rename(tmp, d.Rel); err != nil {
			return osErr(op, dst, err)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	for _, dir := range dirsOf(d.Rel, dirs) {
		if err := syncDir(root, dir); err != nil {
			return osErr(op, dst, err)
		}
	}
	return nil
}

// treeCopy copies a directory tree between roots (or within one).
type treeCopy struct {
	w        *Workspace
	op       string
	src, dst *wsRoot
	dstBase  string // the tree's final place in dst (it may be built elsewhere)
	owner    *Owner // of everything created (Copy)
	// move keeps owners and modification times, copies every symbolic
	// link as it is and fails on special files: a move must not lose
	// anything.
	move  bool
	merge bool // dst exists: merge into it (Copy with overwrite)
	res   *CopyResult
}

func (tc *treeCopy) given(dstRel string) string {
	return filepath.Join(tc.dst.path, dstRel)
}

func (tc *treeCopy) fail(dstRel string, err error) error {
	if _, ok := fserr.As(err); ok {
		return err
	}
	return osErr(tc.op, tc.given(dstRel), err)
}

// dir copies the directory srcRel (described by fi) to dstRel; inner is
// its path below the tree's top, for link checks.
func (tc *treeCopy) dir(srcRel, dstRel, inner string, fi fs.FileInfo) error {
	sr, dr := tc.src.root, tc.dst.root
	created := true
	if tc.merge {
		dfi, err := dr.Lstat(dstRel)
		switch {
		case err == nil && tc.w.isState(dfi):
			return tc.stateErr(srcRel, dstRel) // checkMerge saw it first
		case err == nil && dfi.IsDir():
			created = false
		case err == nil:
			return fserr.New(fserr.InvalidTarget, tc.op, tc.given(dstRel),
				"cannot copy the directory %s over %s, which is not a directory", filepath.Join(tc.src.path, srcRel), tc.given(dstRel))
		case !gone(err):
			return tc.fail(dstRel, err)
		}
	}
	if created {
		if err := dr.Mkdir(dstRel, 0o700); err != nil {
			return tc.fail(dstRel, err)
		}
	}
	names, err := readNames(sr, srcRel)
	if err != nil {
		return osErr(tc.op, filepath.Join(tc.src.path, srcRel), err)
	}
	slices.Sort(names)
	for _, name := range names {
		cs, cd, ci := path.Join(srcRel, name), path.Join(dstRel, name), path.Join(inner, name)
		cfi, err := sr.Lstat(cs)
		if gone(err) {
			continue
		}
		if err != nil {
			return osErr(tc.op, filepath.Join(tc.src.path, cs), err)
		}
		if cfi.IsDir() && tc.w.isStateDir(tc.src, cs, cfi) {
			continue
		}
		// A directory is compared by identity where it is merged into
		// (above); a file or link replaces what is at cd, never writes
		// through it.
		if tc.merge && tc.w.inStateByPath(tc.dst, cd) {
			return tc.stateErr(cs, cd) // checkMerge saw it first
		}
		switch {
		case cfi.IsDir():
			err = tc.dir(cs, cd, ci, cfi)
		case cfi.Mode().IsRegular():
			err = tc.file(cs, cd, cfi)
		case cfi.Mode()&fs.ModeSymlink != 0:
			err = tc.link(cs, cd, ci, cfi)
		case tc.move:
			err = fserr.New(fserr.InvalidTarget, tc.op, filepath.Join(tc.src.path, cs),
				"cannot move %s to another file system: it is a socket, FIFO or device", filepath.Join(tc.src.path, cs))
		default:
			tc.res.OtherSkipped++
		}
		if err != nil {
			return err
		}
	}
	if created {
		if err := tc.finish(dstRel, fi, true); err != nil {
			return tc.fail(dstRel, err)
		}
	}
	if err := syncDir(dr, dstRel); err != nil {
		return tc.fail(dstRel, err)
	}
	return nil
}

// checkMerge refuses, before anything is written, to merge the directory
// srcRel into the existing directory dstRel when an entry would land in
// the state directory (outside_root): the journals steer recovery and
// undo. It descends only into directories that exist at the destination;
// nothing below a missing one can be the state directory, which exists.
// dstRel was checked (by resolve, or as an entry one level up), so each
// entry's own path and identity are all that is left to compare.
func (tc *treeCopy) checkMerge(srcRel, dstRel string) error {
	names, err := readNames(tc.src.root, srcRel)
	if err != nil {
		return osErr(tc.op, filepath.Join(tc.src.path, srcRel), err)
	}
	slices.Sort(names)
	for _, name := range names {
		cs, cd := path.Join(srcRel, name), path.Join(dstRel, name)
		cfi, err := tc.src.root.Lstat(cs)
		if gone(err) {
			continue
		}
		if err != nil {
			return osErr(tc.op, filepath.Join(tc.src.path, cs), err)
		}
		if cfi.IsDir() && tc.w.isStateDir(tc.src, cs, cfi) {
			continue // never copied
		}
		dfi, err := tc.dst.root.Lstat(cd)
		if err != nil && !gone(err) {
			return tc.fail(cd, err)
		}
		dfi = existing(dfi, err)
		if tc.w.inStateBelow(tc.dst, cd, dfi) {
			return tc.stateErr(cs, cd)
		}
		if cfi.IsDir() && dfi != nil && dfi.IsDir() {
			if err := tc.checkMerge(cs, cd); err != nil {
				return err
			}
		}
	}
	return nil
}

func (tc *treeCopy) stateErr(srcRel, dstRel string) error {
	return fserr.New(fserr.OutsideRoot, tc.op, tc.given(dstRel),
		"cannot copy %s to %s: it is inside fsplane's state directory (%s), which is not part of the workspace",
		filepath.Join(tc.src.path, srcRel), tc.given(dstRel), tc.w.stateDir).
		WithHint("copy to a destination that does not hold the state directory, or copy the entries you need one by one")
}

// finish gives a created directory or link its owner, mode and (moving)
// modification time.
func (tc *treeCopy) finish(dstRel string, fi fs.FileInfo, isDir bool) error {
	dr := tc.dst.root
	if tc.move {
		uid, gid, _ := fileOwner(fi)
		if err := dr.Lchown(dstRel, uid, gid); err != nil && !errors.Is(err, syscall.EPERM) {
			return err
		}
	} else if err := chownNew(dr, dstRel, tc.owner); err != nil {
		return err
	}
	if !isDir {
		return nil
	}
	if err := dr.Chmod(dstRel, fi.Mode()&permBits); err != nil {
		return err
	}
	if tc.move {
		return dr.Chtimes(dstRel, time.Time{}, fi.ModTime())
	}
	return nil
}

// meta is the metadata of a file copy.
func (tc *treeCopy) meta(src *os.File, fi fs.FileInfo) fileMeta {
	m := fileMeta{mode: fi.Mode() & permBits, uid: -1, gid: -1}
	switch {
	case tc.move:
		m.uid, m.gid, _ = fileOwner(fi)
		m.xattrSrc = src
	case tc.owner != nil:
		m.uid, m.gid = tc.owner.UID, tc.owner.GID
	}
	return m
}

func (tc *treeCopy) file(srcRel, dstRel string, fi fs.FileInfo) error {
	if tc.merge {
		return tc.mergeFile(srcRel, dstRel)
	}
	f, err := tc.src.root.OpenFile(srcRel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return osErr(tc.op, filepath.Join(tc.src.path, srcRel), err)
	}
	defer f.Close()
	out, err := tc.dst.root.OpenFile(dstRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return tc.fail(dstRel, err)
	}
	n, err := io.Copy(out, f)
	if err == nil {
		err = finishFile(out, tc.meta(f, fi))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && tc.move {
		err = tc.dst.root.Chtimes(dstRel, time.Time{}, fi.ModTime())
	}
	if err != nil {
		return tc.fail(dstRel, err)
	}
	tc.res.FilesCopied++
	tc.res.BytesCopied += n
	return nil
}

// mergeFile copies a file over an existing tree: staged beside the
// target, then installed under the locks, the replaced content recorded.
func (tc *treeCopy) mergeFile(srcRel, dstRel string) error {
	dr := tc.dst.root
	d := tc.dstResolved(dstRel)
	uid, gid := -1, -1
	if tc.owner != nil {
		uid, gid = tc.owner.UID, tc.owner.GID
	}
	// A replaced file keeps its mode, owner and extended attributes, as
	// Copy of a single file does: a private file stays private.
	var kept *os.File
	var keptMode fs.FileMode
	if dfi, err := dr.Lstat(dstRel); err == nil && dfi.Mode().IsRegular() {
		uid, gid, _ = fileOwner(dfi)
		if kept, err = dr.OpenFile(dstRel, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
			return tc.fail(dstRel, err)
		}
		defer kept.Close()
		keptMode = dfi.Mode() & permBits
	}
	st, err := stageCopy(tc.src.root, srcRel, dr, dstRel, func(_ *os.File, fi fs.FileInfo) fileMeta {
		if kept != nil {
			return fileMeta{mode: keptMode, uid: uid, gid: gid, xattrSrc: kept}
		}
		return fileMeta{mode: fi.Mode() & permBits, uid: uid, gid: gid}
	})
	if err != nil {
		return tc.fail(dstRel, err)
	}
	err = tc.w.locked(tc.op, d.Given, func() error {
		_, err := tc.w.installFile(tc.op, d, st, true, false, "")
		return err
	})
	if err != nil {
		_ = removeIfExists(dr, st.temp)
		return err
	}
	tc.res.FilesCopied++
	tc.res.BytesCopied += st.size
	return nil
}

func (tc *treeCopy) dstResolved(rel string) *resolved {
	abs := filepath.Join(tc.dst.path, rel)
	return &resolved{Path: Path{Given: abs, Rel: rel, Abs: abs}, r: tc.dst, canonKey: filepath.Join(tc.dst.real, rel)}
}

func (tc *treeCopy) link(srcRel, dstRel, inner string, fi fs.FileInfo) error {
	sr, dr := tc.src.root, tc.dst.root
	target, err := sr.Readlink(srcRel)
	if err != nil {
		return osErr(tc.op, filepath.Join(tc.src.path, srcRel), err)
	}
	if !tc.move && !tc.linkStays(srcRel, target, path.Join(tc.dstBase, inner)) {
		tc.res.LinksSkipped++
		return nil
	}
	if !tc.merge {
		if err := dr.Symlink(target, dstRel); err != nil {
			return tc.fail(dstRel, err)
		}
		if err := tc.finish(dstRel, fi, false); err != nil {
			return tc.fail(dstRel, err)
		}
		tc.res.LinksCopied++
		return nil
	}
	tmp := siblingName(dstRel, randomTag(), "tmp")
	noteTemp(dr, tmp)
	if err := dr.Symlink(target, tmp); err != nil {
		return tc.fail(dstRel, err)
	}
	err = tc.finish(tmp, fi, false)
	if err == nil {
		err = tc.w.locked(tc.op, tc.given(dstRel), func() error {
			if err := tc.w.refuseBlockedKey(tc.op, tc.given(dstRel), filepath.Join(tc.dst.real, dstRel)); err != nil {
				return err
			}
			if err := tc.w.lockDirs(tc.op, tc.given(dstRel), lockTarget{tc.dst, dstRel}); err != nil {
				return err
			}
			dfi, err := dr.Lstat(dstRel)
			switch {
			case err == nil && dfi.IsDir():
				return fserr.New(fserr.InvalidTarget, tc.op, tc.given(dstRel),
					"cannot copy the symbolic link %s over the directory %s", filepath.Join(tc.src.path, srcRel), tc.given(dstRel))
			case err == nil && dfi.Mode().IsRegular():
				if err := checkWritable(tc.op, tc.given(dstRel), dr, dstRel, dfi); err != nil {
					return err
				}
			}
			if err := dr.Rename(tmp, dstRel); err != nil {
				return err
			}
			return syncDir(dr, path.Dir(dstRel))
		})
	}
	if err != nil {
		_ = removeIfExists(dr, tmp)
		return tc.fail(dstRel, err)
	}
	tc.res.LinksCopied++
	return nil
}

// linkStays reports whether the link srcRel -> target leads inside the
// source root, and would lead inside the destination root from finalRel,
// where its copy ends up.
func (tc *treeCopy) linkStays(srcRel, target, finalRel string) bool {
	if _, _, _, err := tc.w.follow(tc.op, srcRel, tc.src, srcRel); err != nil {
		return false
	}
	return linkStays(tc.dst, finalRel, target)
}
