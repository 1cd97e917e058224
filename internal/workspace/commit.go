package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// Change is one file's part of a Commit.
type Change struct {
	Path    string // as the caller gave it
	Delete  bool
	Content []byte // the new content when !Delete
	// ExpectedVersion, when set, must equal the version of the file's
	// current content (and the file must exist); else stale_version and
	// nothing is written.
	ExpectedVersion string
	// ExpectAbsent requires that the file does not exist now: the caller
	// planned a create.
	ExpectAbsent bool
	// Mode is the permission of a new file; 0 means 0644. An existing
	// file keeps its own mode.
	Mode fs.FileMode
	// Owner, when set, owns a file this change creates and every parent
	// directory it creates (see LookupOwner). An existing file keeps its
	// owner. Only a process running as root may name another account.
	Owner *Owner
	// Group, when set, ties this change to the others of the same Commit
	// with the same Group: one undo reverts them all (the two sides of a
	// move a patch makes, so undoing the destination brings the source
	// back), and refuses when one of them was not recorded.
	Group string
	// Entry makes the change act on the directory entry at Path itself
	// when that is a symbolic link, rather than on the file the link
	// leads to (which is what every change without Entry edits): a Delete
	// removes the link, new content replaces the link with a regular file
	// (Mode, or 0644; the link's owner). The file the link pointed to, if
	// any, is left alone, wherever it is: the link may dangle or lead out
	// of the root. This is how Codex's apply_patch deletes or moves away a
	// path that is a link. Undo puts the link back. On anything but a
	// link, Entry changes nothing.
	Entry bool
	// ExpectLink, with Entry, requires that Path is now a symbolic link
	// to exactly this target: the caller planned against that link.
	ExpectLink string
}

// CommitOptions qualifies a Commit.
type CommitOptions struct {
	Op     string // "write", "edit", "patch", "delete"…: recorded in undo and errors
	NoUndo bool   // record nothing in the undo journal
}

// FileResult reports one committed change, in the order of the changes.
type FileResult struct {
	Path         Path
	Version      string // the new content's version; "" when deleted
	PrevVersion  string // "" when the file did not exist
	Created      bool
	Deleted      bool
	UndoRecorded bool
}

// kind is how a change is applied.
type kind string

const (
	kindReplace kind = "replace" // temp file renamed over the target
	kindCreate  kind = "create"  // temp file renamed into place
	kindDelete  kind = "delete"  // unlink
	kindInPlace kind = "inplace" // rewritten in place (several hard links)
)

// request is a Change plus what only this package may ask for.
type request struct {
	Change
	forceMode bool   // Undo: give an existing file Mode, even 0
	fileOwner *Owner // Undo: the re-created file's owner (not its parents')
	// link, when set, makes Path a symbolic link to this target instead
	// of a file with Content (Undo of a change that removed a link). It
	// implies Entry.
	link string
}

// entry reports whether rq acts on a link at its path rather than
// through it.
func (rq *request) entry() bool { return rq.Entry || rq.link != "" }

// planned is a validated change and what applying it needs.
type planned struct {
	req         *request
	res         *resolved
	kind        kind
	existed     bool
	orig        *os.File // the current file, open for reading; nil if absent
	uid, gid    int
	prevMode    fs.FileMode
	prevVersion string
	prev        []byte // previous content, when kept for undo
	kept        bool   // prev holds the whole previous content
	mode        fs.FileMode
	newVersion  string
	dirs        []string // missing parent directories, outermost first
	owner       *Owner   // of created files and directories; nil: the process's
	temp        string
	backup      string
	prevLink    string // the entry is a symbolic link to this target (req.entry())
	newLink     string // the change puts a symbolic link to this target in place (req.link)
	// src, when set, holds a kindInPlace file's new content (srcSize
	// bytes: a staged upload) instead of req.Content.
	src     io.ReaderAt
	srcSize int64
	// madeParents counts the innermost parent directories of the file
	// that the change creates (len(dirs), or the directories a copy, a
	// move or a tree merge makes outside the plan), for undo of the
	// create to remove them (undoEntry.Dirs).
	madeParents int
}

type plan []*planned

func (pl plan) close() {
	for _, p := range pl {
		if p.orig != nil {
			p.orig.Close()
			p.orig = nil
		}
	}
}

// Commit applies changes all or nothing and returns one result per change.
//
// Everything is validated first (paths, kinds, versions) and nothing is
// written when validation fails. One change that replaces, creates or
// deletes a file is a single atomic durable step (see the package doc).
// Several changes, or a file rewritten in place, form a transaction:
//
//  1. The manifest StateDir/tx/<id>.json (state "pending") names, per file,
//     its root, path, kind, temp and backup names, prior existence and
//     versions, and the directories it will create; it is written with
//     write, fsync, rename and a directory fsync before anything else.
//  2. New content goes to a temp file beside each target (fsync). Each
//     existing target gets a backup ".<name>.fsplane-<tag>.bak" beside it: a
//     hard link when the file will be replaced by rename or deleted, a
//     verified copy when it will be rewritten in place.
//  3. The changes are applied (renames, unlinks, in-place rewrites) and
//     the directories fsynced.
//  4. The manifest is rewritten with state "committed": the commit point.
//  5. Backups are removed, then the manifest.
//
// A failure before step 4 rolls back in process; a crash is settled by the
// next recovery, which runs at Open and before every mutation of any
// workspace sharing the state directory (see locked): a committed
// transaction is finished (step 5), any other is
// rolled back: originals restored from their backups (renamed back, or
// rewritten in place so hard links survive), files it created removed when
// they hold its content, temps removed, directories it created removed if
// empty; then the manifest goes.
//
// Errors are *fserr.Error: stale_version when ExpectedVersion or
// ExpectAbsent does not hold, not_found when deleting a missing file,
// invalid_target for directories, no_space_left when the disk is full
// (nothing changed), outside_root and invalid_path from resolution.
func (w *Workspace) Commit(changes []Change, opts CommitOptions) ([]FileResult, error) {
	op := opts.Op
	if op == "" {
		op = "commit"
	}
	if len(changes) == 0 {
		return nil, fserr.New(fserr.BadRequest, op, "", "nothing to commit")
	}
	reqs := make([]*request, len(changes))
	for i, c := range changes {
		if err := checkChange(op, c); err != nil {
			return nil, err
		}
		reqs[i] = &request{Change: c}
	}
	var results []FileResult
	err := w.locked(op, "", func() error {
		var err error
		results, err = w.commitLocked(op, reqs, opts)
		return err
	})
	return results, err
}

// commitLocked is Commit for a caller that holds the locks.
func (w *Workspace) commitLocked(op string, reqs []*request, opts CommitOptions) ([]FileResult, error) {
	pl, err := w.plan(op, reqs, !opts.NoUndo)
	defer pl.close()
	if err != nil {
		return nil, err
	}
	txID := ""
	if pl.transactional() {
		txID = randomTag()
	}
	recorded := make([]bool, len(pl))
	if opts.NoUndo {
		err = w.execute(op, txID, pl)
	} else {
		recorded, err = w.executeRecorded(op, txID, pl, func() error { return w.execute(op, txID, pl) })
	}
	if err != nil {
		return nil, err
	}
	results := make([]FileResult, len(pl))
	for i, p := range pl {
		results[i] = FileResult{
			Path:         p.res.Path,
			Version:      p.newVersion,
			PrevVersion:  p.prevVersion,
			Created:      p.kind == kindCreate,
			Deleted:      p.kind == kindDelete,
			UndoRecorded: recorded[i],
		}
	}
	return results, nil
}

func checkChange(op string, c Change) error {
	switch {
	case c.Delete && c.ExpectAbsent:
		return fserr.New(fserr.BadRequest, op, c.Path, "a delete of %s cannot expect the file to be absent", c.Path)
	case c.ExpectAbsent && c.ExpectedVersion != "":
		return fserr.New(fserr.BadRequest, op, c.Path, "a change of %s cannot both expect a version and expect the file to be absent", c.Path)
	case c.ExpectedVersion != "" && !isVersion(c.ExpectedVersion):
		return badVersion(op, c.Path, c.ExpectedVersion)
	case c.Mode&^permBits != 0:
		return fserr.New(fserr.BadRequest, op, c.Path, "mode %v is not a file permission", c.Mode)
	case c.ExpectLink != "" && !c.Entry:
		return fserr.New(fserr.BadRequest, op, c.Path, "a change of %s can expect a link only when it acts on the link (Entry)", c.Path)
	}
	return checkOwner(op, c.Path, c.Owner)
}

// plan resolves and validates every change; it writes nothing but takes
// the directory locks (lockDirs) that the rest of the mutation holds.
// keepPrev keeps previous contents small enough for the undo journal.
func (w *Workspace) plan(op string, reqs []*request, keepPrev bool) (plan, error) {
	pl := make(plan, 0, len(reqs))
	seen := make(map[string]string, len(reqs))
	for _, rq := range reqs {
		resolve := w.resolve
		if rq.entry() {
			resolve = w.resolveEntry
		}
		res, err := resolve(op, rq.Path)
		if err == nil && !rq.Delete {
			err = refuseDirOnly(op, res)
		}
		if err == nil {
			err = w.refuseBlocked(op, res)
		}
		if err != nil {
			return pl, err
		}
		if other, dup := seen[res.canonKey]; dup {
			return pl, fserr.New(fserr.BadRequest, op, rq.Path, "%s and %s name the same file in one commit", other, rq.Path)
		}
		seen[res.canonKey] = rq.Path
		pl = append(pl, &planned{req: rq, res: res, uid: -1, gid: -1})
	}
	// What is on disk is read, and the expectations checked, under the
	// directory locks, which execute still holds.
	ts := make([]lockTarget, len(pl))
	for i, p := range pl {
		ts[i] = targetOf(p.res)
	}
	if err := w.lockDirs(op, reqs[0].Path, ts...); err != nil {
		return pl, err
	}
	for _, p := range pl {
		if err := w.planOne(op, p, keepPrev); err != nil {
			return pl, err
		}
	}
	// A path that is a file in one change and a directory of another
	// cannot be both.
	for _, p := range pl {
		for _, d := range parentDirs(p.res.Rel) {
			if other, ok := seen[path.Join(p.res.r.real, d)]; ok {
				return pl, fserr.New(fserr.BadRequest, op, p.req.Path,
					"%s is a file in this commit and a directory of %s", other, p.req.Path)
			}
		}
	}
	return pl, nil
}

func (w *Workspace) planOne(op string, p *planned, keepPrev bool) error {
	rq, root, rel, given := p.req, p.res.r.root, p.res.Rel, p.req.Path
	fi, err := root.Lstat(rel)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return w.planAbsent(op, p)
	default:
		return osErr(op, given, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if rq.entry() {
			return planLink(op, p, fi)
		}
		// resolve left no link here; one was swapped in since.
		e := fserr.New(fserr.IOError, op, given, "%s changed while it was being resolved", given)
		e.Retryable = true
		return e
	}
	if rq.ExpectLink != "" {
		return fserr.New(fserr.StaleVersion, op, given, "%s is no longer a symbolic link to %s", given, rq.ExpectLink).
			WithHint("look at the path again (stat) and rebuild the change")
	}
	if fi.IsDir() {
		if rq.Delete {
			return fserr.New(fserr.InvalidTarget, op, given, "%s is a directory; this operation deletes files", given).WithErrno(syscall.EISDIR)
		}
		return fserr.New(fserr.InvalidTarget, op, given, "%s is a directory; cannot write file content onto it", given).WithErrno(syscall.EISDIR)
	}
	if !fi.Mode().IsRegular() {
		return fserr.New(fserr.InvalidTarget, op, given, "%s is not a regular file", given)
	}
	if rq.ExpectAbsent {
		return fserr.New(fserr.StaleVersion, op, given, "%s exists now but was absent when the change was planned", given).
			WithHint("re-read the file")
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return osErr(op, given, err)
	}
	p.orig = f
	if fi, err = f.Stat(); err != nil {
		return osErr(op, given, err)
	}
	if err := checkRegular(op, given, fi); err != nil {
		return err
	}
	if err := checkWritable(op, given, root, rel, fi); err != nil {
		return err
	}
	p.existed = true
	uid, gid, nlink := fileOwner(fi)
	p.uid, p.gid = uid, gid
	if rq.fileOwner != nil {
		p.uid, p.gid = rq.fileOwner.UID, rq.fileOwner.GID
	}
	p.prevMode = fi.Mode() & permBits
	limit := min(w.limits.MaxEntryBytes, w.limits.TotalBytes)
	if keepPrev && fi.Size() <= limit {
		buf, err := readLimited(f, fi.Size(), limit)
		if err != nil {
			return osErr(op, given, err)
		}
		if int64(len(buf)) <= limit {
			p.prev, p.kept = buf, true
			p.prevVersion = Version(buf)
		} else if p.prevVersion, _, err = versionOf(io.MultiReader(bytes.NewReader(buf), f)); err != nil {
			return osErr(op, given, err)
		}
	} else if p.prevVersion, _, err = versionOf(f); err != nil {
		return osErr(op, given, err)
	}
	if rq.ExpectedVersion != "" && rq.ExpectedVersion != p.prevVersion {
		return staleVersion(op, given, rq.ExpectedVersion, p.prevVersion)
	}
	switch {
	case rq.Delete:
		if err := stickyRefusal(op, given, root, rel, fi); err != nil {
			return err
		}
		p.kind = kindDelete
	case nlink > 1 && rq.link == "":
		p.kind = kindInPlace
	default:
		p.kind = kindReplace
	}
	p.mode = p.prevMode
	if rq.forceMode {
		p.mode = rq.Mode
	}
	switch {
	case rq.link != "":
		p.newLink = rq.link
	case !rq.Delete:
		p.newVersion = Version(rq.Content)
	}
	return nil
}

// planLink plans a change of the symbolic link at p's path itself (see
// Change.Entry). The link's target is its previous state, kept for undo
// like a file's content; its owner is what a file written in its place
// gets. A link has no version: ExpectedVersion cannot hold.
func planLink(op string, p *planned, fi fs.FileInfo) error {
	rq, given := p.req, p.req.Path
	target, err := p.res.r.root.Readlink(p.res.Rel)
	if err != nil {
		return osErr(op, given, err)
	}
	switch {
	case rq.ExpectAbsent:
		return fserr.New(fserr.StaleVersion, op, given, "%s exists now (a symbolic link) but was absent when the change was planned", given).
			WithHint("look at the path again (stat) and rebuild the change")
	case rq.ExpectedVersion != "":
		return fserr.New(fserr.StaleVersion, op, given, "%s is now a symbolic link, not the file of version %s", given, rq.ExpectedVersion).
			WithHint("look at the path again (stat) and rebuild the change")
	case rq.ExpectLink != "" && rq.ExpectLink != target:
		return fserr.New(fserr.StaleVersion, op, given, "%s now points to %s, not to %s", given, target, rq.ExpectLink).
			WithHint("look at the path again (stat) and rebuild the change")
	}
	// Deleted or replaced, the link itself is unlinked or renamed over.
	if err := stickyRefusal(op, given, p.res.r.root, p.res.Rel, fi); err != nil {
		return err
	}
	p.existed = true
	p.prevLink = target
	p.prev, p.kept = []byte(target), true
	p.uid, p.gid, _ = fileOwner(fi)
	if rq.fileOwner != nil {
		p.uid, p.gid = rq.fileOwner.UID, rq.fileOwner.GID
	}
	switch {
	case rq.Delete:
		p.kind = kindDelete
		return nil
	case rq.link != "":
		p.newLink = rq.link
	default:
		p.newVersion = Version(rq.Content)
	}
	p.kind = kindReplace
	p.mode = rq.Mode
	if p.mode == 0 && !rq.forceMode {
		p.mode = 0o644
	}
	return nil
}

func (w *Workspace) planAbsent(op string, p *planned) error {
	rq, root, given := p.req, p.res.r.root, p.req.Path
	if rq.Delete {
		return fserr.New(fserr.NotFound, op, given, "%s does not exist", given).
			WithHint("check the path; list the parent directory")
	}
	if rq.ExpectedVersion != "" {
		return staleVersion(op, given, rq.ExpectedVersion, "")
	}
	if rq.ExpectLink != "" {
		return fserr.New(fserr.StaleVersion, op, given, "%s is no longer a symbolic link to %s: it was removed", given, rq.ExpectLink).
			WithHint("look at the path again (stat) and rebuild the change")
	}
	dirs := parentDirs(p.res.Rel)
	for i, d := range dirs {
		fi, err := root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			p.dirs = dirs[i:]
			p.madeParents = len(p.dirs)
			break
		}
		if err != nil {
			return osErr(op, given, err)
		}
		if !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
			return fserr.New(fserr.InvalidTarget, op, given, "cannot create %s: %s is not a directory", given, d).WithErrno(syscall.ENOTDIR)
		}
	}
	p.kind = kindCreate
	if rq.Owner != nil {
		p.owner = rq.Owner
		p.uid, p.gid = rq.Owner.UID, rq.Owner.GID
	}
	if rq.fileOwner != nil {
		p.uid, p.gid = rq.fileOwner.UID, rq.fileOwner.GID
	}
	p.mode = rq.Mode
	if p.mode == 0 && !rq.forceMode {
		p.mode = 0o644
	}
	if rq.link != "" {
		p.newLink = rq.link
	} else {
		p.newVersion = Version(rq.Content)
	}
	return nil
}

// meta is what p's new content inherits.
func (p *planned) meta() fileMeta {
	return fileMeta{mode: p.mode, uid: p.uid, gid: p.gid, xattrSrc: p.orig}
}

// origMeta is the current file's own metadata, for its backup copy.
func (p *planned) origMeta() fileMeta {
	return fileMeta{mode: p.prevMode, uid: p.uid, gid: p.gid, xattrSrc: p.orig}
}

// transactional reports whether pl is applied as a transaction (with
// a manifest) rather than as one atomic step.
func (pl plan) transactional() bool { return len(pl) != 1 || pl[0].kind == kindInPlace }

// execute applies pl; id names its transaction when it is one.
func (w *Workspace) execute(op, id string, pl plan) error {
	if w.hooks.afterPlan != nil {
		w.hooks.afterPlan()
	}
	if !pl.transactional() {
		return w.executeOne(op, pl[0])
	}
	return w.executeTx(op, id, pl)
}

// executeOne is the single atomic durable step: temp, rename, directory
// fsync (or unlink, directory fsync). On failure nothing is left behind.
func (w *Workspace) executeOne(op string, p *planned) error {
	root, rel, given := p.res.r.root, p.res.Rel, p.req.Path
	fail := func(err error) error {
		_ = removeIfExists(root, p.temp)
		removeDirs(root, p.dirs)
		return dirRefusal(osErr(op, given, err), root, p.res.r.path, rel)
	}
	if p.kind != kindDelete {
		if err := makeChain(root, p.dirs, p.owner); err != nil {
			return fail(err)
		}
		var tmp string
		var err error
		if p.newLink != "" {
			tmp, err = linkTemp(root, rel, p.newLink, p.uid, p.gid)
		} else {
			tmp, err = writeTemp(root, rel, p.req.Content, p.meta())
		}
		if err != nil {
			return fail(err)
		}
		p.temp = tmp
	}
	if w.hooks.beforeApply != nil {
		if err := w.hooks.beforeApply(0); err != nil {
			return fail(err)
		}
	}
	if err := applyOne(root, p); err != nil {
		return fail(err)
	}
	p.temp = ""
	if err := syncDirs(root, touchedDirs(p)); err != nil {
		// The change is made and visible; only its durability is in
		// doubt, which a retry cannot fix. Report it.
		return osErr(op, given, err)
	}
	return nil
}

func applyOne(root *os.Root, p *planned) error {
	switch p.kind {
	case kindDelete:
		return root.Remove(p.res.Rel)
	case kindInPlace:
		if p.src != nil {
			return rewriteInPlace(root, p.res.Rel, p.src, p.srcSize)
		}
		c := p.req.Content
		return rewriteInPlace(root, p.res.Rel, bytes.NewReader(c), int64(len(c)))
	case kindCreate:
		return renameNoReplace(root, p.temp, p.res.Rel)
	default:
		return root.Rename(p.temp, p.res.Rel)
	}
}

// makeDirs creates dirs (outermost first), each given to owner when set;
// one that exists by now is fine (and keeps its owner).
func makeDirs(root *os.Root, dirs []string, owner *Owner) error {
	for _, d := range dirs {
		err := root.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			if fi, lerr := root.Lstat(d); lerr == nil && fi.IsDir() {
				continue
			}
			return err // not a directory: a file or link someone put there
		}
		if err == nil {
			err = chownNew(root, d, owner)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// makeChain is makeDirs for the missing parents of one file (each the
// parent of the next): one walk down holding each parent open, linear in
// the depth where makeDirs walks from the root for each.
func makeChain(root *os.Root, dirs []string, owner *Owner) error {
	_, err := mkdirChain(root, dirs, owner, func(string) bool { return true })
	return err
}

// removeDirs removes the directories a change created, innermost first,
// where they are still empty directories. It removes with rmdir, never
// unlink: a rollback at recovery runs on names a manifest recorded before
// they were made, and a file someone put at one since must stay.
func removeDirs(root *os.Root, dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = rmdir(root, dirs[i]) // fails harmlessly when not empty or not a directory
	}
}

// rmdir removes d if it is an empty directory.
func rmdir(root *os.Root, d string) error {
	parent, err := openDir(root, path.Dir(d))
	if err != nil {
		return err
	}
	defer parent.Close()
	return osfd.With(parent, func(fd int) error { return unix.Unlinkat(fd, path.Base(d), unix.AT_REMOVEDIR) })
}

// touchedDirs are the directories whose entries a change alters.
func touchedDirs(p *planned) []string {
	return dirsOf(p.res.Rel, p.dirs)
}

func dirsOf(rel string, created []string) []string {
	out := []string{path.Dir(rel)}
	for _, d := range created {
		out = append(out, path.Dir(d))
	}
	return out
}
