package workspace

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Directory trees as streams: WalkTree reads one (for a tar), CreateTree
// writes one (from a tar). Both go through the root's *os.Root and never
// follow a symbolic link inside the tree.

// TreeEntry is one entry of a tree being read.
type TreeEntry struct {
	// Name is the slash-separated path below the tree's top; "." is the
	// top itself.
	Name string
	Info fs.FileInfo // from Lstat: links are described, not followed
	Link string      // a symbolic link's target
	// Unlisted, on a directory, is why its entries cannot be walked: its
	// listing, or the description of an entry in it, was refused (a
	// directory the server may not read, or not search). The walk goes
	// on past it when fn returns nil: the caller decides whether a tree
	// without those entries is still worth having.
	Unlisted error
}

// WalkTree calls fn for the directory p and everything below it, each
// directory before its entries, entries sorted by name. For a regular
// file, open opens it for reading (the caller closes it); for anything
// else open is nil. A directory whose entries cannot be walked comes with
// TreeEntry.Unlisted, and nothing below it. The state directory is
// skipped. An error from fn stops the walk and is returned as is. p
// missing is not_found, p not a directory is invalid_target.
func (w *Workspace) WalkTree(p string, fn func(e TreeEntry, open func() (*os.File, error)) error) (Path, error) {
	const op = "tree"
	if err := w.checkOpen(op, p); err != nil {
		return Path{}, err
	}
	r, err := w.resolve(op, p)
	if err != nil {
		return Path{}, err
	}
	fi, err := lstatEntry(r)
	switch {
	case err != nil:
		return r.Path, osErr(op, p, err)
	case fi == nil:
		return r.Path, notFound(op, p)
	case !fi.IsDir():
		return r.Path, fserr.New(fserr.InvalidTarget, op, p, "%s is not a directory", p).WithErrno(syscall.ENOTDIR).WithHint("use download for a single file")
	}
	root := r.r.root
	var walk func(rel, name string, fi fs.FileInfo) error
	walk = func(rel, name string, fi fs.FileInfo) error {
		e := TreeEntry{Name: name, Info: fi}
		var open func() (*os.File, error)
		switch {
		case fi.Mode().IsRegular():
			open = func() (*os.File, error) {
				f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					return nil, osErr(op, filepath.Join(r.r.path, rel), err)
				}
				return f, nil
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := root.Readlink(rel)
			if err != nil {
				return osErr(op, filepath.Join(r.r.path, rel), err)
			}
			e.Link = t
		}
		if !fi.IsDir() {
			return fn(e, open)
		}
		// The entries are listed and described before the directory is
		// passed on, so that one that cannot be walked comes with why.
		type child struct {
			rel, name string
			fi        fs.FileInfo
		}
		var children []child
		names, err := readNames(root, rel)
		switch {
		case gone(err):
			return nil // removed while we walked
		case err != nil:
			e.Unlisted = osErr(op, filepath.Join(r.r.path, rel), err)
		}
		slices.Sort(names)
		for _, n := range names {
			crel := path.Join(rel, n)
			cfi, err := root.Lstat(crel)
			if gone(err) {
				continue
			}
			if err != nil {
				e.Unlisted, children = osErr(op, filepath.Join(r.r.path, crel), err), nil
				break
			}
			if cfi.IsDir() && w.isStateDir(r.r, crel, cfi) {
				continue
			}
			children = append(children, child{crel, path.Join(name, n), cfi})
		}
		if err := fn(e, open); err != nil {
			return err
		}
		for _, c := range children {
			if err := walk(c.rel, c.name, c.fi); err != nil {
				return err
			}
		}
		return nil
	}
	return r.Path, walk(r.Rel, ".", fi)
}

// Tree extraction modes.
const (
	// TreeRename: the destination was absent; the staged tree was renamed
	// into place whole.
	TreeRename = "rename"
	// TreeMerge: the destination was a directory; the staged tree was
	// merged into it as one transaction.
	TreeMerge = "merge"
)

// TreeWriter builds a directory tree in a staging directory and then
// installs it (Commit) or discards it (Abort). Entry names are
// slash-separated paths below the tree's top, without "..", absolute
// parts or NUL bytes; every parent of an entry must be a directory of the
// tree (never a link). A TreeWriter is not safe for concurrent use.
//
// A new tree (TreeRename) appears whole or not at all: one rename. It is
// not recorded in undo, which reverts changes of files, not directories;
// nothing existed there before, so deleting the directory reverts it.
//
// A merge (TreeMerge) is one transaction of Commit's journaled protocol:
// every file and link it adds or replaces and every directory it creates
// lands, or none does, also across a crash, which the next recovery rolls
// back (or finishes, past the commit point) like a patch. The transaction
// has no limit of its own: its manifest holds names only, the content is
// the staged tree and hard-link backups on the same file system, and it
// needs a few hundred bytes of memory per entry plus the previous contents
// kept for undo; the archive's limits bound it (transfer.Limits, 100,000
// entries and 4 GiB by default). Each regular file it adds or replaces is
// recorded in undo like a patch's (Undo restores the previous file or
// removes the added one) within UndoLimits: the first MaxEntries files in
// path order, each with the permission bits the merge gave it (a chmod
// since is a conflict, as after a write), previous contents up to
// MaxEntryBytes each and TotalBytes in all, evicting older records as any
// change does. Not recorded: links it puts in place (Undo resolves a path
// through its link) and replaced special files (no content to keep). The
// directories it creates are not recorded of their own: the record of each
// file it adds counts those that hold it, and undoing the file removes the
// ones left empty, so undoing every file removes them all (unless a
// directory was an empty member of the archive or holds a link of it). A
// replaced file is replaced by rename, as tar extracts over it: other hard
// links to it keep the old content (Commit and WriteStream rewrite such a
// file in place; a merge stages its files whole before the transaction,
// and hard-link members of the archive make their own links).
type TreeWriter struct {
	w     *Workspace
	op    string
	d     *resolved
	root  *os.Root
	stage string // staging directory, relative to the root
	mode  string
	owner *Owner
	kinds map[string]fs.FileMode // staged entries: name → type bits (0 for regular files)
	perms map[string]fs.FileMode // directory permissions, applied at Commit
	// versions holds a merge's staged files' versions, which its
	// transaction journals and undo records; fileModes their permission
	// bits, which undo records too (undoEntry.AfterMode), so that a chmod
	// made since is a conflict rather than silently reverted.
	versions  map[string]string
	fileModes map[string]fs.FileMode
	entries   int
	closed    bool
}

// TreeResult reports a committed tree.
type TreeResult struct {
	Path    Path
	Entries int    // entries written (directories, files and links; the top not counted)
	Mode    string // TreeRename or TreeMerge
	// UndoRecorded counts the merged files whose change Undo can revert
	// (see TreeWriter), of MergedFiles, the files a merge added or
	// replaced: the journal's limits may keep it under that.
	UndoRecorded, MergedFiles int
}

// CreateTree starts writing a tree at p. When p does not exist the tree
// is staged beside it (".<name>.fsplane-<id>.tmp") and Commit renames it
// into place (TreeRename); p's parent must exist (not_found). When p is a
// directory the tree is staged inside it (".fsplane-tree-<id>.tmp") and
// Commit merges it (TreeMerge). Anything else at p is invalid_target.
// Everything created is given to owner (nil: the process's account).
// Permissions pass through the process's umask (see processUmask).
// When fsplane's state directory lies below p, an entry naming it or
// anything in it is outside_root (resolve refuses p itself inside it).
func (w *Workspace) CreateTree(p string, owner *Owner) (*TreeWriter, error) {
	const op = "tree"
	if err := w.checkOpen(op, p); err != nil {
		return nil, err
	}
	if err := checkOwner(op, p, owner); err != nil {
		return nil, err
	}
	d, err := w.resolve(op, p)
	if err != nil {
		return nil, err
	}
	fi, err := lstatEntry(d)
	if err != nil {
		return nil, osErr(op, p, err)
	}
	t := &TreeWriter{w: w, op: op, d: d, root: d.r.root, owner: owner,
		kinds: map[string]fs.FileMode{".": fs.ModeDir}, perms: map[string]fs.FileMode{}, versions: map[string]string{},
		fileModes: map[string]fs.FileMode{}}
	switch {
	case fi == nil:
		if err := checkParentDir(op, p, t.root, path.Dir(d.Rel)); err != nil {
			return nil, err
		}
		t.mode, t.stage = TreeRename, siblingName(d.Rel, randomTag(), "tmp")
	case fi.IsDir():
		t.mode, t.stage = TreeMerge, path.Join(d.Rel, ".fsplane-tree-"+randomTag()+".tmp")
	default:
		return nil, fserr.New(fserr.InvalidTarget, op, p, "%s exists and is not a directory", p).WithErrno(syscall.ENOTDIR).
			WithHint("name a new path or an existing directory")
	}
	noteTemp(t.root, t.stage) // first: a crash right after the mkdir leaves no unlogged stage
	if err := t.root.Mkdir(t.stage, 0o700); err != nil {
		return nil, osErr(op, p, err)
	}
	return t, nil
}

func (t *TreeWriter) badEntry(name, format string, args ...any) *fserr.Error {
	return fserr.New(fserr.BadRequest, t.op, t.d.Given, "invalid tree entry %q: "+format, append([]any{name}, args...)...)
}

// check validates an entry name and makes its parent directories.
func (t *TreeWriter) check(name string) (string, error) {
	if t.closed {
		return "", fserr.New(fserr.BadRequest, t.op, t.d.Given, "the tree is already committed or aborted")
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 || path.IsAbs(name) || path.Clean(name) != name ||
		name == ".." || strings.HasPrefix(name, "../") {
		return "", t.badEntry(name, "names must be relative, clean and stay inside the tree")
	}
	var missing []string
	for _, dir := range parentDirs(name) {
		switch k, ok := t.kinds[dir]; {
		case !ok:
			missing = append(missing, dir)
		case k != fs.ModeDir:
			return "", t.badEntry(name, "its parent %s is not a directory in the tree", dir)
		}
	}
	// The parents new to the tree, outermost first, then the entry:
	// checkState compares only the path it is given, its parents being
	// checked already. All before anything is staged.
	for _, sub := range append(missing, name) {
		if err := t.checkState(name, sub); err != nil {
			return "", err
		}
	}
	for _, dir := range missing {
		if err := t.mkdir(dir, treePerm(0o755)); err != nil {
			return "", err
		}
	}
	return path.Join(t.stage, name), nil
}

// checkState refuses the entry name when sub (name itself or one of its
// parents in the tree) would land in the state directory: the journals
// steer recovery and undo, so a tree must not write them.
//
// It compares sub alone (inStateBelow): the tree's top was checked by
// resolve, and every directory of the tree is checked as it is added,
// parents first. In a merge, sub is compared by the identity of what is
// at its destination now, without following a link there; a new tree's
// destination is missing, so nothing in it can be the state directory.
// check refuses early, while the tree is staged; merge's plan checks
// again right before anything moves, and it descends only through
// directories that exist at the destination, never a link.
func (t *TreeWriter) checkState(name, sub string) error {
	dst := path.Join(t.d.Rel, sub)
	var fi fs.FileInfo
	if t.mode == TreeMerge {
		fi = existing(t.root.Lstat(dst))
	}
	if !t.w.inStateBelow(t.d.r, dst, fi) {
		return nil
	}
	return t.stateErr(name)
}

func (t *TreeWriter) stateErr(name string) error {
	return fserr.New(fserr.OutsideRoot, t.op, t.d.Given,
		"tree entry %q would be written to %s, inside fsplane's state directory (%s), which is not part of the workspace",
		name, filepath.Join(t.d.r.path, path.Join(t.d.Rel, name)), t.w.stateDir).
		WithHint("leave it out of the archive, or extract the archive into a directory that does not hold the state directory")
}

func (t *TreeWriter) mkdir(name string, perm fs.FileMode) error {
	rel := path.Join(t.stage, name)
	if err := t.root.Mkdir(rel, 0o700); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	if err := chownNew(t.root, rel, t.owner); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	t.kinds[name] = fs.ModeDir
	t.perms[name] = perm
	t.entries++
	return nil
}

// replace removes a staged entry that a later entry of the same name
// overrides (as tar does); a directory cannot be overridden.
func (t *TreeWriter) replace(name, rel string) error {
	k, ok := t.kinds[name]
	switch {
	case !ok:
		return nil
	case k == fs.ModeDir:
		return t.badEntry(name, "it names a directory already in the tree")
	}
	if err := t.root.Remove(rel); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	delete(t.kinds, name)
	delete(t.versions, name)
	delete(t.fileModes, name)
	t.entries--
	return nil
}

// Dir adds a directory with permission perm (applied at Commit, so a
// read-only directory can still be filled). "." sets the top's
// permission. A directory that is already in the tree just takes perm.
func (t *TreeWriter) Dir(name string, perm fs.FileMode) error {
	if name == "." {
		t.perms["."] = treePerm(perm)
		return nil
	}
	if _, err := t.check(name); err != nil {
		return err
	}
	switch k, ok := t.kinds[name]; {
	case ok && k == fs.ModeDir:
		t.perms[name] = treePerm(perm)
		return nil
	case ok:
		return t.badEntry(name, "it names a file already in the tree")
	}
	return t.mkdir(name, treePerm(perm))
}

// File adds a regular file with permission perm and the content src
// yields, and returns its size.
func (t *TreeWriter) File(name string, perm fs.FileMode, src io.Reader) (int64, error) {
	rel, err := t.check(name)
	if err != nil {
		return 0, err
	}
	if err := t.replace(name, rel); err != nil {
		return 0, err
	}
	f, err := t.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, osErr(t.op, t.d.Given, err)
	}
	var dst io.Writer = onlyWriter{f}
	var h *VersionHash
	if t.mode == TreeMerge {
		h = NewVersionHash()
		dst = io.MultiWriter(f, h)
	}
	bp := streamBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(dst, src, *bp)
	streamBufs.Put(bp)
	if err == nil && t.owner != nil {
		err = f.Chown(t.owner.UID, t.owner.GID)
	}
	mode := treePerm(perm)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = t.root.Remove(rel)
		return 0, osErr(t.op, t.d.Given, err)
	}
	t.kinds[name] = 0
	if h != nil {
		t.versions[name], t.fileModes[name] = h.Version(), mode
	}
	t.entries++
	return n, nil
}

// onlyWriter hides *os.File's ReadFrom, which would copy through a small
// buffer of its own instead of ours.
type onlyWriter struct{ io.Writer }

// Symlink adds a symbolic link. Its target must stay inside the
// workspace root from where the link will end up (outside_root
// otherwise).
func (t *TreeWriter) Symlink(name, target string) error {
	rel, err := t.check(name)
	if err != nil {
		return err
	}
	if !linkStays(t.d.r, path.Join(t.d.Rel, name), target) {
		return fserr.New(fserr.OutsideRoot, t.op, t.d.Given,
			"tree entry %q is a symbolic link to %s, which leads outside the workspace root %s", name, target, t.d.r.path).
			WithHint("remove the link from the archive or make it relative inside the tree")
	}
	if err := t.replace(name, rel); err != nil {
		return err
	}
	if err := t.root.Symlink(target, rel); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	if err := chownNew(t.root, rel, t.owner); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	t.kinds[name] = fs.ModeSymlink
	t.entries++
	return nil
}

// Link adds a hard link to target, a regular file added earlier.
func (t *TreeWriter) Link(name, target string) error {
	rel, err := t.check(name)
	if err != nil {
		return err
	}
	if k, ok := t.kinds[target]; !ok || k != 0 || target == name {
		return t.badEntry(name, "it is a hard link to %q, which is not a regular file earlier in the tree", target).
			WithHint("put a hard link after the file it links to, inside the archive (tar does when the file is archived with it), or archive the file's content instead (tar --hard-dereference)")
	}
	if err := t.replace(name, rel); err != nil {
		return err
	}
	if err := t.root.Link(path.Join(t.stage, target), rel); err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	t.kinds[name] = 0
	if v, ok := t.versions[target]; ok {
		t.versions[name], t.fileModes[name] = v, t.fileModes[target]
	}
	t.entries++
	return nil
}

// Abort discards the staged tree. It is idempotent and safe after Commit.
func (t *TreeWriter) Abort() {
	if t.closed {
		return
	}
	t.closed = true
	_ = t.w.removeOwn(t.op, t.stage, t.root, t.stage)
}

// Commit installs the tree: it flushes the file system once (syncfs),
// then renames the staged tree into place with the directories'
// permissions applied (TreeRename, failing with already_exists if the
// destination appeared meanwhile) or merges it (TreeMerge): every entry
// is checked against the destination first (a directory cannot replace a
// file or the reverse: invalid_target, nothing changed; an entry in the
// state directory: outside_root, nothing changed), then the files and
// links are committed as one transaction (see TreeWriter): the
// directories the merge creates are made, each replaced entry gets a
// backup, and each staged file is renamed over its destination. The
// directories it created take the archive's modes after the commit
// point (one without write permission could not be filled or rolled
// back); a crash in between leaves them with the default mode. Existing
// directories keep theirs. On error the staging directory is removed.
func (t *TreeWriter) Commit() (TreeResult, error) {
	if t.closed {
		return TreeResult{}, fserr.New(fserr.BadRequest, t.op, t.d.Given, "the tree is already committed or aborted")
	}
	defer t.Abort()
	res := TreeResult{Path: t.d.Path, Entries: t.entries, Mode: t.mode}
	if t.mode == TreeRename {
		// The staged top is renamed within its parent, which a read-only
		// directory allows; a merge fills the directories it creates, so
		// it gives them their modes after its commit.
		if err := t.applyPerms(t.stage, nil); err != nil {
			return res, err
		}
		if _, ok := t.perms["."]; !ok {
			if err := t.root.Chmod(t.stage, treePerm(0o755)); err != nil {
				return res, osErr(t.op, t.d.Given, err)
			}
		}
		if err := chownNew(t.root, t.stage, t.owner); err != nil {
			return res, osErr(t.op, t.d.Given, err)
		}
	}
	if err := t.flush(); err != nil {
		return res, err
	}
	given := t.d.Given
	err := t.w.locked(t.op, given, func() error {
		if err := t.w.refuseBlocked(t.op, t.d); err != nil {
			return err
		}
		if t.mode == TreeRename {
			if err := t.w.lockDirs(t.op, given, targetOf(t.d)); err != nil {
				return err
			}
			fi, err := lstatEntry(t.d)
			if err != nil {
				return osErr(t.op, given, err)
			}
			if fi != nil {
				return fserr.New(fserr.AlreadyExists, t.op, given, "%s was created while the tree was extracted", given).
					WithHint("send the archive again to merge it into the directory")
			}
			if err := t.root.Rename(t.stage, t.d.Rel); err != nil {
				return osErr(t.op, given, err)
			}
			t.closed = true
			return syncDir(t.root, path.Dir(t.d.Rel))
		}
		var err error
		res.UndoRecorded, res.MergedFiles, err = t.merge()
		return err
	})
	if err != nil {
		return res, fserr.From(t.op, given, err)
	}
	return res, nil
}

// applyPerms gives the tree's directories their permissions, below base
// (the staging directory, or the destination after a merge), deepest
// first so a read-only parent is changed last. With only set, just the
// directories it accepts (a merge passes the directories it created,
// never its top, which keeps the destination's own mode).
func (t *TreeWriter) applyPerms(base string, only func(name string) bool) error {
	names := make([]string, 0, len(t.perms))
	for n := range t.perms {
		if only != nil && !only(n) {
			continue
		}
		names = append(names, n)
	}
	depth := func(n string) int {
		if n == "." {
			return -1
		}
		return strings.Count(n, "/")
	}
	sort.Slice(names, func(i, j int) bool { return depth(names[i]) > depth(names[j]) })
	for _, n := range names {
		if err := t.root.Chmod(path.Join(base, n), t.perms[n]); err != nil {
			return osErr(t.op, t.d.Given, err)
		}
	}
	return nil
}

func (t *TreeWriter) flush() error {
	d, err := t.root.Open(t.stage)
	if err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	err = syncFS(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return osErr(t.op, t.d.Given, err)
	}
	return nil
}

// kindMkdir is the first change of a merge's transaction when it
// creates directories: its dirs (txFile.Dirs, parents first) are made in
// prepare and, on rollback, removed where empty. Rolled back last, after
// the files put in them.
const kindMkdir kind = "mkdir"

// mergePlan is a validated merge.
type mergePlan struct {
	pl      plan            // the transaction: the kindMkdir change (if any), then the files in path order
	undo    plan            // the files whose change is recorded in undo
	files   int             // the files (not links) added or replaced, recorded or not
	created map[string]bool // the tree's directories the merge creates
}

// merge commits the staged tree into the destination as one transaction
// (see TreeWriter) and returns how many files' changes undo recorded, of
// how many files it added or replaced. The caller holds the locks.
func (t *TreeWriter) merge() (recorded, files int, err error) {
	// The directories the merge changes are locked (lockDirs) before it is
	// planned, found from the staged names; a plan that then needs another
	// lock (a directory made meanwhile) is made again under it.
	ts := make([]lockTarget, 0, len(t.kinds))
	for name := range t.kinds {
		ts = append(ts, lockTarget{t.d.r, path.Join(t.d.Rel, name)})
	}
	var m *mergePlan
	for i := 0; ; i++ {
		held := len(t.w.dirLocks)
		if err := t.w.lockDirs(t.op, t.d.Given, ts...); err != nil {
			return 0, 0, err
		}
		if m != nil && len(t.w.dirLocks) == held {
			break
		}
		if i == lockDirAttempts {
			e := fserr.New(fserr.Conflict, t.op, t.d.Given, "the destination's directories kept changing while fsplane locked them; nothing was changed")
			e.Retryable = true
			return 0, 0, e
		}
		var err error
		if m, err = t.planMerge(); err != nil {
			return 0, 0, err
		}
		ts = ts[:0]
		for _, p := range m.pl {
			ts = append(ts, targetOf(p.res))
		}
	}
	if len(m.pl) == 0 {
		return 0, 0, nil
	}
	// The undo records go in pending before the transaction (see
	// prepareUndo).
	txID := randomTag()
	rec, err := t.w.executeRecorded(t.op, txID, m.undo, func() error { return t.w.executeTxWith(t.op, txID, m.pl, t.prepare) })
	if err != nil {
		return 0, 0, err
	}
	for _, ok := range rec {
		if ok {
			recorded++
		}
	}
	if err := t.applyPerms(t.d.Rel, func(n string) bool { return m.created[n] }); err != nil {
		e := fserr.From(t.op, t.d.Given, err)
		e.Message = "the archive was merged, but its new directories could not all be given their modes: " + e.Message
		return recorded, m.files, e
	}
	return recorded, m.files, nil
}

// planMerge walks the staged tree against the destination and plans the
// transaction; it changes nothing. A directory absent at the destination
// is created, and nothing below it is looked up there.
func (t *TreeWriter) planMerge() (*mergePlan, error) {
	m := &mergePlan{created: map[string]bool{}}
	var mkdirs, mkNames []string // created: root-relative and tree names, parents first
	b := newUndoBudget(t.w.limits)
	var walk func(dir string, fresh bool) error
	walk = func(dir string, fresh bool) error {
		names, err := readNames(t.root, path.Join(t.stage, dir))
		if err != nil {
			return osErr(t.op, t.d.Given, err)
		}
		slices.Sort(names)
		for _, n := range names {
			name := path.Join(dir, n)
			dst := path.Join(t.d.Rel, name)
			var fi fs.FileInfo
			if !fresh {
				fi, err = t.root.Lstat(dst)
				switch {
				case gone(err):
					fi = nil
				case err != nil:
					return osErr(t.op, filepath.Join(t.d.r.path, dst), err)
				}
			}
			// check refused these already; the plan is the last word
			// before anything changes.
			if t.w.inStateBelow(t.d.r, dst, fi) {
				return t.stateErr(name)
			}
			isDir := t.kinds[name] == fs.ModeDir
			switch {
			case isDir && fi == nil:
				mkdirs, mkNames = append(mkdirs, dst), append(mkNames, name)
				m.created[name] = true
				err = walk(name, true)
			case isDir && fi.IsDir():
				err = walk(name, false)
			case isDir:
				return fserr.New(fserr.InvalidTarget, t.op, t.d.Given,
					"cannot merge the directory %s over %s, which is not a directory", name, filepath.Join(t.d.r.path, dst)).
					WithHint("a merge never replaces a file by a directory: delete or move %s first, or extract the tree to a new path", filepath.Join(t.d.r.path, dst))
			case fi != nil && fi.IsDir():
				return fserr.New(fserr.InvalidTarget, t.op, t.d.Given,
					"cannot merge %s over the directory %s", name, filepath.Join(t.d.r.path, dst)).
					WithHint("a merge never replaces a directory by a file: delete or move the directory %s first, or extract the tree to a new path", filepath.Join(t.d.r.path, dst))
			case fi != nil && fi.Mode().IsRegular():
				if err := checkWritable(t.op, filepath.Join(t.d.r.path, dst), t.root, dst, fi); err != nil {
					return err
				}
				fallthrough
			default:
				err = t.planFile(m, b, name, fi)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(".", false); err != nil {
		return nil, err
	}
	if len(mkdirs) > 0 {
		mk := &planned{res: t.target(mkNames[0]), kind: kindMkdir, dirs: mkdirs, owner: t.owner, uid: -1, gid: -1}
		mk.req = &request{Change: Change{Path: mk.res.Given}}
		m.pl = append(plan{mk}, m.pl...)
	}
	return m, nil
}

// target is the resolved destination of the tree entry name: below the
// resolved destination, through directories only (planMerge descends no
// link), so its key is the one resolve gives the same path.
func (t *TreeWriter) target(name string) *resolved {
	rel := path.Join(t.d.Rel, name)
	return &resolved{
		Path:     Path{Given: filepath.Join(t.d.Given, name), Root: t.d.Root, Rel: rel, Abs: filepath.Join(t.d.r.path, rel)},
		r:        t.d.r,
		canonKey: filepath.Join(t.d.r.real, rel),
	}
}

// planFile plans the staged file or link name over fi (nil: absent).
func (t *TreeWriter) planFile(m *mergePlan, b *undoBudget, name string, fi fs.FileInfo) error {
	res := t.target(name)
	p := &planned{
		req:  &request{Change: Change{Path: res.Given}},
		res:  res,
		kind: kindCreate, temp: path.Join(t.stage, name), newVersion: t.versions[name],
		mode: t.fileModes[name], // the staged file's, which it keeps
		uid:  -1, gid: -1,
	}
	if t.kinds[name] == fs.ModeSymlink {
		target, err := t.root.Readlink(p.temp)
		if err != nil {
			return osErr(t.op, t.d.Given, err)
		}
		p.newLink, p.newVersion = target, ""
	}
	// Undo resolves a link at its path, so a link put in place is not
	// recorded.
	record := p.newLink == ""
	if record {
		m.files++
	}
	if fi != nil {
		p.kind, p.existed, p.prevMode = kindReplace, true, fi.Mode()&permBits
		p.uid, p.gid, _ = fileOwner(fi)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := t.root.Readlink(res.Rel)
			if err != nil {
				return osErr(t.op, res.Given, err)
			}
			p.prevLink, p.prev, p.kept = target, []byte(target), true
		case fi.Mode().IsRegular() && record && b.fits(fi.Size()):
			ps, err := t.w.readPrev(t.root, res.Rel, false)
			if err != nil {
				return osErr(t.op, res.Given, err)
			}
			p.prev, p.kept, p.prevVersion = ps.content, ps.kept, ps.version
		}
		record = record && p.kept
	}
	if !p.existed {
		// The merge's new directories that hold the file, which undo of
		// its creation removes once they are empty: below the first
		// created one, every one is created (planMerge descends no
		// further at the destination).
		for _, d := range parentDirs(name) {
			if m.created[d] {
				p.madeParents++
			}
		}
	}
	m.pl = append(m.pl, p)
	if record && b.take(len(p.prev)) {
		m.undo = append(m.undo, p)
	}
	return nil
}

// prepare is step 2 of the merge's transaction: the new content is
// staged already, so it makes the new directories (kindMkdir) and the
// backups of replaced entries.
func (t *TreeWriter) prepare(p *planned) error {
	if p.kind == kindMkdir {
		return makeDirs(p.res.r.root, p.dirs, p.owner)
	}
	return backupTx(p)
}

// undoBudget picks the files of a merge that the undo journal can keep
// (UndoLimits): the journal would evict the others as soon as it
// recorded them, and picking them before their previous contents are
// read keeps a large merge's old files out of memory.
type undoBudget struct {
	entries  int
	bytes    int64
	entryMax int64
}

func newUndoBudget(l UndoLimits) *undoBudget {
	return &undoBudget{entries: l.MaxEntries, bytes: l.TotalBytes, entryMax: min(l.MaxEntryBytes, l.TotalBytes)}
}

// fits reports whether a previous content of size bytes can be recorded.
func (b *undoBudget) fits(size int64) bool {
	return b.entries > 0 && size <= b.entryMax && size <= b.bytes
}

// take spends one record of n bytes, if one is left.
func (b *undoBudget) take(n int) bool {
	if b.entries == 0 || int64(n) > b.bytes {
		return false
	}
	b.entries--
	b.bytes -= int64(n)
	return true
}
