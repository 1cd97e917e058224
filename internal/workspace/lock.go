package workspace

import (
	"errors"
	"os"
	"path/filepath"

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
