package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// recoverTx settles every transaction a crashed process left in
// StateDir/tx. The caller holds the state lock, so none of them is live.
//
// A manifest is acted on only through this workspace's own roots: the
// state directory is trusted no further than the roots are, so a manifest
// naming another root is left for a workspace that has it (or dropped when
// that root no longer exists).
//
// The files of a manifest left alone that lie in this workspace's roots
// are blocked (see refuseBlocked): committing to them now would be undone
// by that workspace's recovery later, and their half-applied change would
// look final meanwhile.
func (w *Workspace) recoverTx() error {
	w.blocked = nil
	names, err := sortedNames(w.state, txDir)
	if err != nil {
		return stateErr("open", path.Join(w.stateDir, txDir), err)
	}
	if err := w.recoverMoves(names); err != nil {
		e := fserr.FromOS("open", "", err)
		e.Message = "cannot settle an interrupted move: " + e.Message
		e.Hint = "fix the cause and retry; until then a moved-over destination may be kept only as its .fsplane-….bak file"
		return e
	}
	for _, name := range names {
		full := path.Join(txDir, name)
		if strings.HasSuffix(name, ".json.tmp") {
			// A manifest write that never reached its rename: the
			// transaction wrote nothing else yet.
			_ = w.state.Remove(full)
			continue
		}
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := w.state.ReadFile(full)
		if err != nil {
			return stateErr("open", path.Join(w.stateDir, full), err)
		}
		var m manifest
		if err := json.Unmarshal(data, &m); err != nil || m.ID+".json" != name {
			return fserr.New(fserr.IOError, "open", "", "transaction journal %s is unreadable", path.Join(w.stateDir, full)).
				WithHint("move it aside and check the files it names")
		}
		var settleErr error
		if m.State == stateCommitted {
			settleErr = w.finish(&m)
		} else {
			settleErr = w.rollback(&m)
		}
		if errors.Is(settleErr, errForeign) {
			w.block(&m, m.ID)
			continue
		}
		if settleErr != nil {
			// Its files stay blocked, with the cause (an edit in their
			// place, a permission, a full disk); the rest of the
			// workspace works, and the next mutation tries again.
			w.block(&m, fmt.Sprintf("%s, whose recovery failed: %v", m.ID, settleErr))
		}
	}
	return nil
}

// errForeign: a manifest names a root this workspace does not have.
var errForeign = errors.New("transaction in another workspace's root")

// block records the files of manifest m that lie in w's roots: m names a
// root w lacks, or could not be settled (why says which).
func (w *Workspace) block(m *manifest, why string) {
	for _, f := range m.Files {
		w.blockPath(f.Root, f.Rel, why)
	}
}

// blockPath blocks rel in the (other workspace's) root at rootPath when
// it lies in one of w's roots, which may be that root, or one nested in it
// or holding it: the key is the file's real path, as canonKey is.
func (w *Workspace) blockPath(rootPath, rel, id string) {
	real := rootPath
	if p, err := filepath.EvalSymlinks(rootPath); err == nil {
		real = p
	}
	key := filepath.Join(real, rel)
	for _, r := range w.roots {
		if _, in := within(key, r.real); in {
			w.blockKey(key, id)
			return
		}
	}
}

func (w *Workspace) blockKey(key, id string) {
	if w.blocked == nil {
		w.blocked = map[string]string{}
	}
	w.blocked[key] = id
}

// refuseBlocked refuses a change to r — or, for a directory moved or
// removed whole, to anything below it — while an interrupted transaction
// or move that this workspace cannot settle names it (see recoverTx).
func (w *Workspace) refuseBlocked(op string, r *resolved) error {
	return w.refuseBlockedKey(op, r.Given, r.canonKey)
}

// refuseBlockedKey is refuseBlocked for the file whose canonical key is
// key, named given in messages.
func (w *Workspace) refuseBlockedKey(op, given, key string) error {
	id, ok := w.blocked[key]
	for k, kid := range w.blocked {
		if ok {
			break
		}
		if _, below := within(k, key); below {
			id, ok = kid, true
		}
	}
	if !ok {
		return nil
	}
	return fserr.New(fserr.Conflict, op, given,
		"%s is named by an interrupted change (%s) that this workspace cannot settle: it touched a root this workspace does not have, or its recovery failed; until it is settled, %s may be half changed and cannot be changed here", given, id, given).
		WithHint("open a workspace with all the roots that change touched (e.g. restart the fsplane that was running with them) so it recovers, or fix what stops its recovery; then retry")
}

// rollback undoes a transaction that did not reach its commit point, from
// whatever step it reached; it is idempotent, so a crash during recovery
// is settled by the next recovery. Files are handled in reverse order.
func (w *Workspace) rollback(m *manifest) error {
	return w.settleFiles(m, rollbackFile)
}

// settleFiles runs fn on every file of m, last first, through the file's
// root, then fsyncs the directories fn reported touching, each once
// (per file, a transaction of 20,000 files in one directory cost 20,000
// fsyncs of it), then removes the manifest if all went well. It touches
// nothing when m names an existing root that is not one of w's
// (errForeign).
func (w *Workspace) settleFiles(m *manifest, fn func(root *os.Root, f txFile, touched func(dir string)) error) error {
	roots := make([]*os.Root, len(m.Files))
	var absent []txFile
	for i, f := range m.Files {
		if roots[i] = w.rootAt(f.Root); roots[i] == nil {
			if _, err := os.Lstat(f.Root); !errors.Is(err, fs.ErrNotExist) {
				return errForeign
			}
			// The root is gone for now (an unmounted disk, say): its
			// files are settled when it is back.
			absent = append(absent, f)
		}
	}
	if len(absent) == len(m.Files) {
		return nil
	}
	// A rollback checks each file before it restores it (writtenSince):
	// the directory locks keep a process with another state directory
	// from writing between the two, as they do for a commit. They are
	// released when the manifest is settled; taking them fails only in
	// ways that must not stop recovery (a directory renamed over and over),
	// which then goes on without them, serialised by the state lock alone.
	held := len(w.dirLocks)
	var ts []lockTarget
	for i, f := range m.Files {
		if roots[i] != nil {
			if r := w.wsRootAt(f.Root); r != nil {
				ts = append(ts, lockTarget{r, f.Rel})
			}
		}
	}
	_ = w.lockDirs("recover", m.ID, ts...) // on failure it holds none of ts; recovery goes on
	defer w.releaseDirs(held)
	var (
		errs []error
		dirs []dirKey
		seen = map[dirKey]bool{}
	)
	for i := len(m.Files) - 1; i >= 0; i-- {
		if roots[i] == nil {
			continue
		}
		touched := func(dir string) {
			if k := (dirKey{roots[i], dir}); !seen[k] {
				seen[k] = true
				dirs = append(dirs, k)
			}
		}
		if err := fn(roots[i], m.Files[i], touched); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range dirs {
		if err := syncDir(k.root, k.dir); err != nil && !gone(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(absent) > 0 {
		// Keep what is left to settle, for a workspace that has those
		// roots (dropping it left their files half changed for good).
		rest := *m
		rest.Files = absent
		_, err := w.writeManifest(&rest)
		return err
	}
	if err := w.state.Remove(manifestName(m.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// rootAt returns w's open root whose configured path is p, or nil. A
// root spelled another way (through a link, a bind mount) is the same
// root: a manifest written by a process that named it so is recovered
// here, not skipped.
func (w *Workspace) rootAt(p string) *os.Root {
	if r := w.wsRootAt(p); r != nil {
		return r.root
	}
	return nil
}

// wsRootAt is rootAt's wsRoot.
func (w *Workspace) wsRootAt(p string) *wsRoot {
	for _, r := range w.roots {
		if r.path == p {
			return r
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	for _, r := range w.roots {
		if r.id != nil && os.SameFile(fi, r.id) {
			return r
		}
	}
	return nil
}

// rollbackFile restores one file of an unfinished transaction. It must be
// right whatever step the transaction reached, so every action checks
// what is on disk:
//   - replace, delete: if the backup (a link to the original) exists,
//     rename it over the target. When the target still is the original the
//     rename is a no-op by POSIX rules, and the backup is then removed.
//     When the target was written by someone else since the crash, it is
//     kept (writtenSince).
//   - inplace: if the backup is complete (its version is PrevVersion) and
//     the target differs from it, rewrite the target in place from it. An
//     incomplete backup means apply never started: the target is intact.
//   - create: remove the target if it holds this transaction's content
//     (or is the link it made, pointing where it made it point).
//   - mkdir: nothing but its directories, below.
//
// Then the temp goes, and the directories the file's creation made, when
// empty. The directories whose entries it changed are reported to
// touched.
func rollbackFile(root *os.Root, f txFile, touched func(dir string)) error {
	var err error
	switch f.Kind {
	case kindReplace, kindDelete:
		err = restoreByRename(root, f)
	case kindInPlace:
		err = restoreInPlace(root, f)
	case kindCreate:
		err = removeCreated(root, f)
	case kindMkdir:
	}
	if err != nil {
		return err
	}
	if err := removeIfExists(root, f.Temp); err != nil {
		return err
	}
	removeDirs(root, f.Dirs)
	for _, d := range dirsOf(f.Rel, f.Dirs) {
		touched(d)
	}
	return nil
}

// restoreByRename puts the original (the backup) back at f.Rel, unless
// what is there was written after the crash, by someone else: it is then
// newer than the original and this transaction both, and is kept (the
// backup, superseded, goes). See writtenSince.
func restoreByRename(root *os.Root, f txFile) error {
	ok, err := exists(root, f.Backup)
	if err != nil || !ok {
		return err
	}
	st, err := relState(root, f)
	if err != nil {
		return err
	}
	if st == relChanged {
		if err := root.Rename(f.Backup, f.Rel); err != nil {
			return err
		}
	}
	return removeIfExists(root, f.Backup)
}

// What f.Rel holds when a transaction is rolled back (see relState).
const (
	relChanged  = iota // this transaction's content, or nothing: restore the backup
	relOriginal        // the original content: nothing to restore
	relLater           // a later write by someone else: keep it
)

// relState says what f.Rel holds. relLater is something neither the
// original (the backup's inode, or its content) nor this transaction's
// new content (its version, or the link it made): a write by another
// process on the same root, or a person's editor, between the crash and
// this recovery. Rolling back over it would silently lose that later,
// acknowledged write. relOriginal is a regular file with the original's
// content and not this transaction's: the transaction failed before it
// replaced it, and renaming the backup over it would gain nothing, lose
// the file's other hard links when the backup is a copy (a file that
// could not be linked), and fail for good on a file that cannot be
// replaced (chattr +i), blocking its paths. Nothing at f.Rel is
// relChanged: a delete's target is meant to be gone, and a replaced file
// someone removed is brought back.
func relState(root *os.Root, f txFile) (int, error) {
	fi, err := root.Lstat(f.Rel)
	if gone(err) {
		return relChanged, nil
	}
	if err != nil {
		return 0, err
	}
	bi, err := root.Lstat(f.Backup)
	if err != nil {
		return 0, err
	}
	if os.SameFile(fi, bi) {
		return relOriginal, nil
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(f.Rel)
		if err != nil {
			return 0, err
		}
		if f.Link != "" && target == f.Link {
			return relChanged, nil // the link this transaction made
		}
		if bi.Mode()&fs.ModeSymlink != 0 {
			orig, err := root.Readlink(f.Backup)
			if err != nil {
				return 0, err
			}
			if target == orig {
				return relChanged, nil // restoring it is harmless
			}
		}
		return relLater, nil
	case !fi.Mode().IsRegular():
		return relLater, nil
	}
	v, err := fileVersion(root, f.Rel)
	switch {
	case err != nil:
		return 0, err
	case v == f.NewVersion:
		return relChanged, nil
	case v == f.PrevVersion:
		return relOriginal, nil
	}
	return relLater, nil
}

func restoreInPlace(root *os.Root, f txFile) error {
	if f.Backup == "" {
		return nil
	}
	b, err := root.Open(f.Backup)
	if gone(err) {
		return nil // never made, or already restored
	}
	if err != nil {
		return err
	}
	defer b.Close()
	bv, size, err := versionOf(b)
	if err != nil {
		return err
	}
	if bv == f.PrevVersion {
		tv, err := fileVersion(root, f.Rel)
		if err != nil {
			return err
		}
		if tv == "" {
			// Removed by someone since: bring the content back; the other
			// links cannot be rejoined.
			return root.Rename(f.Backup, f.Rel)
		}
		if tv != f.PrevVersion {
			if err := rewriteInPlace(root, f.Rel, b, size); err != nil {
				return err
			}
		}
	}
	return removeIfExists(root, f.Backup)
}

func removeCreated(root *os.Root, f txFile) error {
	fi, err := root.Lstat(f.Rel)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if f.Link != "" {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return nil
		}
		if target, err := root.Readlink(f.Rel); err != nil || target != f.Link {
			return err // not ours, or unreadable
		}
		return removeIfExists(root, f.Rel)
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	v, err := fileVersion(root, f.Rel)
	if err != nil {
		return err
	}
	if v != f.NewVersion {
		return nil // not ours: someone else created it since
	}
	return removeIfExists(root, f.Rel)
}

// fileVersion hashes the regular file rel ("" when it does not exist).
// Anything else there is an error, found without blocking on a FIFO
// (O_NONBLOCK): recovery runs at Open and before every change, and a
// FIFO put where it looks would hold them all until a writer came.
func fileVersion(root *os.Root, rel string) (string, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if gone(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &os.PathError{Op: "open", Path: rel, Err: syscall.EINVAL}
	}
	v, _, err := versionOf(f)
	return v, err
}
