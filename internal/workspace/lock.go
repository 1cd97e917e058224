package workspace

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/fsplane/fsplane/internal/fserr"
	"golang.org/x/sys/unix"
)

// State directory layout.
const (
	lockName = "lock" // flocked around every mutation
	txDir    = "tx"   // transaction manifests, <txid>.json
	undoDir  = "undo" // the undo log
	blobDir  = "undo/blobs"
	tempsDir = "temps" // one log per open workspace of the temps it made (temps.go)
)

// lock takes the state directory's exclusive flock. Every mutation
// (Commit, Undo, recovery) holds it from validation to cleanup, which is
// why recovery in Open may treat every manifest it finds as abandoned: a
// live transaction would still hold the lock. The kernel drops the lock
// when its holder dies, however it dies.
func (w *Workspace) lock(op string) (unlock func(), err error) {
	if err := flock(w.lockFile, unix.LOCK_EX); err != nil {
		return nil, stateErr(op, filepath.Join(w.stateDir, lockName), err)
	}
	return func() { _ = flock(w.lockFile, unix.LOCK_UN) }, nil
}

// flock applies how (unix.LOCK_EX, LOCK_UN, optionally LOCK_NB) to f,
// retrying when a signal interrupts the wait.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Directory locks.
//
// The state lock serialises only the processes that share a state
// directory. Two processes on the same files with different state
// directories (another --state-dir or user, or nested roots: serve on
// /srv and mcp on /srv/proj) must still not interleave one's version
// check and the other's rename, or an acknowledged write is lost. So a
// mutation also holds an exclusive flock on the directory of every file
// it changes, from before it looks at the files to after its rename and
// journal: whatever the state directory, two fsplane processes changing
// one file lock the same directory (by identity, not path), and a check
// and the write it guards are atomic with respect to each other.
//
// Order, so that processes never deadlock: the state lock first, then
// the directories in ascending (device, inode). A mutation that needs
// another directory later, below one it holds, takes it with LOCK_NB and
// fails retryably rather than wait out of order.
//
// A file whose directory does not exist yet is covered by the nearest
// existing ancestor, the directory the commit's first mkdir changes; the
// directories it then creates are not locked, so a create there renames
// with RENAME_NOREPLACE (renameNoReplace) and is refused, not applied,
// when another writer created the file meanwhile.
//
// A directory is opened through the root (its path is a resolved one,
// link-free), locked, and then its path is looked up again: if it no
// longer leads to the locked directory (renamed or replaced meanwhile),
// the lock is dropped and taken again.
//
// Where the file system refuses flock (EOPNOTSUPP, ENOLCK, or EBADF: NFS
// emulates flock with byte-range locks, which need a descriptor open for
// writing, and a directory cannot be), or the directory cannot be
// opened for reading (EACCES), the directory is not locked: the
// mutation goes on, serialised only by the state lock, as before these
// locks existed. Refusing every write there would make such file
// systems unusable for a guarantee they never offered.

// dirLock is a directory a running mutation holds (see above).
type dirLock struct {
	id     fileID
	f      *os.File
	locked bool // false: flock is not supported there, f only held open
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) fileID {
	d, i := fileKey(fi)
	return fileID{d, i}
}

func (a fileID) cmp(b fileID) int {
	return cmp.Or(cmp.Compare(a.dev, b.dev), cmp.Compare(a.ino, b.ino))
}

// lockTarget is a path whose directory a mutation locks.
type lockTarget struct {
	r   *wsRoot
	rel string
}

func targetOf(r *resolved) lockTarget { return lockTarget{r.r, r.Rel} }

// lockDirAttempts bounds how often lockDirs takes a directory that keeps
// being renamed or replaced under it.
const lockDirAttempts = 8

// lockDirs locks the directories of ts (see above) for the rest of the
// running mutation; locked releases them. Directories already held are
// not locked again. The caller holds w.mu.
func (w *Workspace) lockDirs(op, given string, ts ...lockTarget) error {
	ts = oneADir(ts)
	for range lockDirAttempts {
		held := len(w.dirLocks)
		if err := w.takeDirs(op, given, ts); err != nil {
			return err
		}
		ok, err := w.holdsDirs(ts)
		if err != nil {
			w.releaseDirs(held)
			return osErr(op, given, err)
		}
		if ok {
			return nil
		}
		w.releaseDirs(held)
	}
	e := fserr.New(fserr.Conflict, op, given, "the directory of %s kept being renamed or replaced while fsplane locked it; nothing was changed", given)
	e.Retryable = true
	return e
}

// oneADir keeps one target per directory (a merge passes one per file):
// the rest would open and look up the same directory again.
func oneADir(ts []lockTarget) []lockTarget {
	if len(ts) < 2 {
		return ts
	}
	type dir struct {
		r   *wsRoot
		rel string
	}
	seen := make(map[dir]bool, len(ts))
	out := ts[:0:0]
	for _, t := range ts {
		k := dir{t.r, path.Dir(t.rel)}
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// takeDirs opens and locks the directories of ts that are not held yet.
func (w *Workspace) takeDirs(op, given string, ts []lockTarget) error {
	var fresh []dirLock
	closeFresh := func() {
		for _, d := range fresh {
			d.f.Close()
		}
	}
	for _, t := range ts {
		f, fi, err := openLockDir(t)
		if errors.Is(err, fs.ErrPermission) {
			continue // not lockable; see above
		}
		if err != nil {
			closeFresh()
			return osErr(op, given, err)
		}
		id := idOf(fi)
		if w.holdsID(id) || slices.ContainsFunc(fresh, func(d dirLock) bool { return d.id == id }) {
			f.Close()
			continue
		}
		fresh = append(fresh, dirLock{id: id, f: f})
	}
	slices.SortFunc(fresh, func(a, b dirLock) int { return a.id.cmp(b.id) })
	held := len(w.dirLocks)
	for i, d := range fresh {
		how := unix.LOCK_EX
		if len(w.dirLocks) > 0 && w.maxHeld().cmp(d.id) > 0 {
			how |= unix.LOCK_NB // out of order: never wait
		}
		err := flock(d.f, how)
		switch {
		case err == nil:
			d.locked = true
		case flockUnsupported(err):
		default:
			fresh = fresh[i:]
			closeFresh()
			w.releaseDirs(held)
			if errors.Is(err, unix.EWOULDBLOCK) {
				e := fserr.New(fserr.Conflict, op, given, "another fsplane process is changing files in the directory of %s; nothing was changed", given)
				e.Retryable = true
				return e
			}
			return osErr(op, given, &os.PathError{Op: "flock", Path: d.f.Name(), Err: err})
		}
		w.dirLocks = append(w.dirLocks, d)
	}
	return nil
}

func flockUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EBADF)
}

func (w *Workspace) holdsID(id fileID) bool {
	return slices.ContainsFunc(w.dirLocks, func(d dirLock) bool { return d.id == id })
}

func (w *Workspace) maxHeld() fileID {
	var m fileID
	for _, d := range w.dirLocks {
		if d.id.cmp(m) > 0 {
			m = d.id
		}
	}
	return m
}

// holdsDirs reports whether the directory of every target, looked up by
// path now, is one this mutation holds (or one that cannot be locked).
func (w *Workspace) holdsDirs(ts []lockTarget) (bool, error) {
	for _, t := range ts {
		fi, err := statLockDir(t)
		if errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err != nil {
			return false, err
		}
		if !w.holdsID(idOf(fi)) {
			return false, nil
		}
	}
	return true, nil
}

// releaseDirs unlocks and closes the directories taken after the first
// keep.
func (w *Workspace) releaseDirs(keep int) {
	for _, d := range w.dirLocks[keep:] {
		if d.locked {
			_ = flock(d.f, unix.LOCK_UN)
		}
		d.f.Close()
	}
	clear(w.dirLocks[keep:])
	w.dirLocks = w.dirLocks[:keep]
}

// lockDir is the directory that stands for t: its parent, or the
// nearest existing ancestor of a missing one.
func lockDir(t lockTarget, try func(dir string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	d := path.Dir(t.rel)
	for {
		fi, err := try(d)
		switch {
		case err == nil && fi.IsDir():
			return fi, nil
		case err != nil && !gone(err):
			return nil, err
		case d == ".":
			return nil, &os.PathError{Op: "open", Path: t.r.path, Err: unix.ENOENT}
		}
		d = path.Dir(d)
	}
}

// openLockDir opens t's lock directory.
func openLockDir(t lockTarget) (*os.File, fs.FileInfo, error) {
	var f *os.File
	fi, err := lockDir(t, func(d string) (fs.FileInfo, error) {
		df, err := openDir(t.r.root, d)
		if err != nil {
			return nil, err
		}
		fi, err := df.Stat()
		if err != nil || !fi.IsDir() {
			df.Close()
			return fi, err
		}
		f = df
		return fi, nil
	})
	return f, fi, err
}

// statLockDir describes t's lock directory as its path now leads.
func statLockDir(t lockTarget) (fs.FileInfo, error) {
	return lockDir(t, t.r.root.Stat)
}
