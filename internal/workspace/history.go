package workspace

import (
	"slices"
	"time"
)

// UndoEntry describes one recorded change of a file, as UndoHistory
// lists it.
type UndoEntry struct {
	Op           string    // the operation recorded ("write", "edit", "patch", "delete", "move", "copy"…)
	Time         time.Time // when it was committed (UTC)
	PrevExisted  bool      // the file existed before the change
	PrevSize     int64     // the size of the content before the change
	PrevVersion  string    // the version before the change ("" when it did not exist)
	AfterExists  bool      // the change left the file in place (false: deleted or moved away)
	AfterVersion string    // the version the change left ("" when none)
	// PrevLink: the path was a symbolic link the change removed or
	// replaced; PrevVersion and PrevSize are then those of its target
	// text, and Undo makes the link again.
	PrevLink bool
}

// UndoHistory lists the recorded changes of p, newest first: what Undo
// would revert, one call each. Changes of a file's content are recorded
// under the file a link points to, so a link and its target share that
// history; a change that removed or replaced the link itself is recorded
// under the link's own path (PrevLink).
func (w *Workspace) UndoHistory(p string) ([]UndoEntry, error) {
	const op = "undo_history"
	if err := w.checkOpen(op, p); err != nil {
		return nil, err
	}
	res, err := w.resolve(op, p)
	if err != nil {
		return nil, err
	}
	var out []UndoEntry
	err = w.locked(op, p, func() error {
		if err := w.freshJournal(); err != nil {
			return stateErr(op, w.stateDir, err)
		}
		for _, e := range w.journal.forKey(res.canonKey) {
			out = append(out, UndoEntry{
				Op: e.Op, Time: e.Time, PrevExisted: e.Existed, PrevSize: e.Size, PrevVersion: e.PrevVersion,
				AfterExists: e.AfterExists, AfterVersion: e.AfterVersion, PrevLink: e.Link,
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}
