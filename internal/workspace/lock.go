package workspace

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// State directory layout.
const (
	lockName = "lock" // flocked around every mutation
	txDir    = "tx"   // transaction manifests, <txid>.json
	undoDir  = "undo" // the undo log
	blobDir  = "undo/blobs"
)

// lock takes the state directory's exclusive flock. Every mutation
// (Commit, Undo, recovery) holds it from validation to cleanup, which is
// why recovery in Open may treat every manifest it finds as abandoned: a
// live transaction would still hold the lock. The kernel drops the lock
// when its holder dies, however it dies.
func (w *Workspace) lock(op string) (unlock func(), err error) {
	fd := int(w.lockFile.Fd())
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, stateErr(op, filepath.Join(w.stateDir, lockName), err)
	}
	return func() { _ = unix.Flock(fd, unix.LOCK_UN) }, nil
}
