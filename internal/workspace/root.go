package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Options configures Open.
type Options struct {
	// Roots are the directories the workspace may touch; the first is the
	// base for relative paths. At least one is required. A relative root
	// is made absolute once, at Open, against the working directory.
	Roots []string
	// StateDir holds the transaction journal and the undo journal. "" means
	// DefaultStateDir(); a relative path is made absolute like a root. Processes that edit the same roots should share it:
	// it is what serialises them and what recovers their transactions.
	StateDir string
	// Undo bounds the undo journal; zero fields take the defaults.
	Undo UndoLimits
}

// UndoLimits bounds the undo journal. Zero fields take the defaults below;
// negative values are rejected by Open.
type UndoLimits struct {
	// PerFile is how many entries are kept per file, newest first.
	// Default 20.
	PerFile int
	// TotalBytes bounds the recorded previous contents across all files;
	// the oldest entries are evicted first. Default 256 MiB.
	TotalBytes int64
	// MaxEntryBytes: a previous state larger than this is not recorded
	// (FileResult.UndoRecorded is false). Default 32 MiB.
	MaxEntryBytes int64
	// MaxEntries bounds the number of entries across all files, because
	// entries for created files carry no content and so escape TotalBytes.
	// Default 10,000.
	MaxEntries int
}

// Default undo limits.
const (
	DefaultUndoPerFile       = 20
	DefaultUndoTotalBytes    = 256 << 20
	DefaultUndoMaxEntryBytes = 32 << 20
	DefaultUndoMaxEntries    = 10000
)

func (l UndoLimits) withDefaults() (UndoLimits, error) {
	if l.PerFile < 0 || l.TotalBytes < 0 || l.MaxEntryBytes < 0 || l.MaxEntries < 0 {
		return l, fserr.New(fserr.BadRequest, "open", "", "undo limits must not be negative")
	}
	if l.PerFile == 0 {
		l.PerFile = DefaultUndoPerFile
	}
	if l.TotalBytes == 0 {
		l.TotalBytes = DefaultUndoTotalBytes
	}
	if l.MaxEntryBytes == 0 {
		l.MaxEntryBytes = DefaultUndoMaxEntryBytes
	}
	if l.MaxEntries == 0 {
		l.MaxEntries = DefaultUndoMaxEntries
	}
	return l, nil
}

// Workspace is a set of roots and the state directory that journals their
// changes. It is safe for concurrent use; see the package doc.
type Workspace struct {
	roots     []*wsRoot
	stateDir  string
	stateReal string   // stateDir with symlinks evaluated
	state     *os.Root // the state directory
	// stateID identifies the state directory (device and inode) for
	// os.SameFile. Path strings cannot tell that a directory is the
	// state directory when it is spelled differently: in another case on
	// a case-insensitive file system (macOS), through a bind mount, or
	// after a parent was renamed. See inStateByPath.
	stateID  fs.FileInfo
	lockFile *os.File // StateDir/lock; flocked around every mutation
	temps    *tempLog // the temps this workspace creates (see temps.go)
	limits   UndoLimits

	mu      sync.Mutex // serialises Commit and Undo within the process
	journal *undoJournal
	// inflight holds the Seqs of the pending undo entries of the change
	// this workspace is making (prepareUndo to finishUndo), which
	// settlePending leaves alone.
	inflight map[int64]bool
	// dirLocks are the directories the running mutation holds (lock.go),
	// released when it ends; under mu.
	dirLocks []dirLock
	// blocked maps the canonical keys of files named by interrupted
	// transactions this workspace cannot settle to the manifest's ID.
	blocked map[string]string
	closed  atomic.Bool

	hooks testHooks
}

// testHooks let tests act between the steps of a commit (swap a directory
// for a link, inject a failure). They are nil outside tests.
type testHooks struct {
	afterPlan   func()            // validated, nothing written yet
	beforeApply func(i int) error // before the i-th change is applied
	// crashAt, when it returns true at a step of a transaction, makes the
	// transaction stop there as if the process died: no rollback, no
	// cleanup. Steps: "manifest", "prepare/<i>", "apply/<i>", "synced",
	// "committed"; "undone", after Undo restored the files and before
	// it drops their records; "undo-pending", after a change's undo
	// records are written and before the change, and "undo-unconfirmed",
	// after the change and before they are confirmed; "move-installed",
	// after a move across file systems installed the copy and before it
	// removed the source.
	crashAt func(step string) bool
	// moveLink and moveRemove, when set, stand in for the hard link a
	// move across file systems keeps the replaced destination by and for
	// the removal of its source, to make them fail.
	moveLink   func(r *os.Root, oldname, newname string) error
	moveRemove func(r *os.Root, name string) error
}

// errCrashed is returned by a transaction stopped by testHooks.crashAt.
var errCrashed = errors.New("simulated crash")

// wsRoot is one opened root.
type wsRoot struct {
	path string // absolute, cleaned, as configured
	real string // path with symlinks evaluated (== path when it has none)
	root *os.Root
	// id identifies the opened root directory (see Workspace.stateID).
	id fs.FileInfo
	// isState: the root is the state directory itself, by identity, so
	// nothing in it is part of the workspace. Fixed at Open: neither
	// directory changes while both are held open.
	isState bool
}

// DefaultStateDir returns $XDG_STATE_HOME/fsplane, or ~/.local/state/fsplane
// when XDG_STATE_HOME is unset or not absolute (as the XDG spec requires).
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fsplane"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fserr.New(fserr.InvalidPath, "open", "", "cannot find the state directory: no home directory").
			WithHint("set XDG_STATE_HOME or pass a state directory")
	}
	return filepath.Join(home, ".local", "state", "fsplane"), nil
}

// Open opens every root and the state directory, then recovers the
// transactions that a crashed process left unfinished (see Commit), so the
// roots are consistent before Open returns. Recovery of a transaction in
// one of these roots that fails makes Open fail: the files would otherwise
// stay half changed.
func Open(opts Options) (*Workspace, error) {
	if len(opts.Roots) == 0 {
		return nil, fserr.New(fserr.BadRequest, "open", "", "a workspace needs at least one root")
	}
	limits, err := opts.Undo.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Workspace{limits: limits}
	ok := false
	defer func() {
		if !ok {
			w.closeAll()
		}
	}()
	for _, r := range opts.Roots {
		if r == "" || strings.IndexByte(r, 0) >= 0 {
			return nil, fserr.New(fserr.InvalidPath, "open", r, "a root must be a directory path (got %q)", r).
				WithHint("name a directory (. is the current one)")
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fserr.FromOS("open", r, err)
		}
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return nil, fserr.New(fserr.InvalidTarget, "open", r, "root %s is not a directory", abs)
		}
		root, err := os.OpenRoot(abs)
		if err != nil {
			e := fserr.FromOS("open", r, err)
			e.Message = "cannot open root " + abs + ": " + e.Message
			return nil, e
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		w.roots = append(w.roots, &wsRoot{path: abs, real: filepath.Clean(real), root: root})
	}

	stateDir := opts.StateDir
	if stateDir == "" {
		if stateDir, err = DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	if strings.IndexByte(stateDir, 0) >= 0 {
		return nil, fserr.New(fserr.InvalidPath, "open", "", "invalid state directory %q", stateDir)
	}
	if stateDir, err = filepath.Abs(stateDir); err != nil {
		return nil, fserr.FromOS("open", "", err)
	}
	w.stateDir, w.stateReal = stateDir, stateDir
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, stateErr("open", stateDir, err)
	}
	if real, err := filepath.EvalSymlinks(stateDir); err == nil {
		w.stateReal = real
	}
	if w.state, err = os.OpenRoot(stateDir); err != nil {
		return nil, stateErr("open", stateDir, err)
	}
	// Stat the opened directory, not the path: it is the directory the
	// journals go to even if the path is swapped meanwhile.
	if w.stateID, err = w.state.Stat("."); err != nil {
		return nil, stateErr("open", stateDir, err)
	}
	for _, r := range w.roots {
		if r.id, err = r.root.Stat("."); err != nil {
			return nil, fserr.FromOS("open", r.path, err)
		}
		r.isState = w.isState(r.id)
	}
	for _, d := range []string{txDir, undoDir, blobDir} {
		if err := w.state.MkdirAll(d, 0o700); err != nil {
			return nil, stateErr("open", filepath.Join(stateDir, d), err)
		}
	}
	if w.lockFile, err = w.state.OpenFile(lockName, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, stateErr("open", filepath.Join(stateDir, lockName), err)
	}
	w.journal = newUndoJournal(w.state, limits)
	w.inflight = map[int64]bool{}

	unlock, err := w.lock("open")
	if err != nil {
		return nil, err
	}
	err = w.recoverTx()
	if err == nil {
		err = w.journal.tidy()
	}
	if err == nil {
		w.settlePending()
	}
	if err == nil {
		sweepTemps(w.state, w.roots, w.kept)
		// Without a log (an unwritable temps directory) writes still
		// work; only their strays after a crash go unswept.
		if w.temps, _ = openTempLog(w.state); w.temps != nil {
			for _, r := range w.roots {
				tempLogs.Store(r.root, w.temps)
			}
		}
	}
	unlock()
	if err != nil {
		return nil, err
	}
	ok = true
	return w, nil
}

// Close releases the roots and the state directory. Operations after Close
// fail; Close is idempotent.
func (w *Workspace) Close() error {
	if w.closed.Swap(true) {
		return nil
	}
	w.mu.Lock() // wait for a running Commit or Undo
	defer w.mu.Unlock()
	return w.closeAll()
}

func (w *Workspace) closeAll() error {
	var first error
	if w.temps != nil {
		for _, r := range w.roots {
			tempLogs.Delete(r.root)
		}
		first = w.temps.close()
	}
	for _, r := range w.roots {
		if err := r.root.Close(); err != nil && first == nil {
			first = err
		}
	}
	if w.lockFile != nil {
		if err := w.lockFile.Close(); err != nil && first == nil {
			first = err
		}
	}
	if w.state != nil {
		if err := w.state.Close(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return fserr.FromOS("close", "", first)
	}
	return nil
}

// Roots returns the roots, absolute and cleaned, in configured order.
func (w *Workspace) Roots() []string {
	out := make([]string, len(w.roots))
	for i, r := range w.roots {
		out[i] = r.path
	}
	return out
}

// StateDir returns the absolute state directory.
func (w *Workspace) StateDir() string { return w.stateDir }

func (w *Workspace) checkOpen(op, path string) error {
	if w.closed.Load() {
		return fserr.New(fserr.IOError, op, path, "the workspace is closed")
	}
	return nil
}

func (w *Workspace) rootList() string {
	return strings.Join(w.Roots(), ", ")
}

// stateErr reports a failure in the state directory, which is not the
// caller's path, so the message names it, and so does the hint of a full
// disk: freeing space beside the files, which may have plenty, would not
// help. Every caller fails before it changes a file (or says otherwise in
// a hint of its own).
func stateErr(op, path string, err error) *fserr.Error {
	e := fserr.FromOS(op, "", err)
	e.Message = "state directory " + path + ": " + e.Message
	switch {
	case errors.Is(err, fs.ErrPermission):
		e.Hint = "choose a writable state directory"
	case e.Code == fserr.NoSpaceLeft:
		e.Hint = "free space on the state directory's device (it holds the transaction journals and undo records), or choose a state directory on another one; nothing was changed"
	}
	return e
}
