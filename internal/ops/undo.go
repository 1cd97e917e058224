package ops

import (
	"context"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// UndoRequest restores a file to its state before its last recorded change.
type UndoRequest struct {
	Path   string
	Caller string
}

// UndoResult describes an undo.
type UndoResult struct {
	Path    string
	Op      string // the operation undone
	Deleted bool   // the undone change created the file, so it was removed
	Version string // the restored content's version ("" when deleted)
	// Also lists the other files the same undo reverted: undoing a move
	// brings its source back and removes (or restores) its destination.
	Also []UndoResult
	// AlreadyUndone: the file was already as undoing the change leaves it
	// (another writer, or an interrupted earlier undo, put it back); this
	// undo only consumed the record.
	AlreadyUndone bool
}

// Undo reverts the newest recorded change of a file (workspace.Undo): it
// refuses with conflict when the file changed since that change.
func (e *Engine) Undo(_ context.Context, req UndoRequest) (*UndoResult, error) {
	const op = "undo"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	r, err := e.ws.Undo(req.Path)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	out := &UndoResult{Path: r.Path.Abs, Op: r.Op, Deleted: r.Deleted, Version: r.Version, AlreadyUndone: r.AlreadyUndone}
	e.sawUndone(req.Caller, *r)
	for _, f := range r.Also {
		e.sawUndone(req.Caller, f)
		out.Also = append(out.Also, UndoResult{Path: f.Path.Abs, Op: f.Op, Deleted: f.Deleted, Version: f.Version, AlreadyUndone: f.AlreadyUndone})
	}
	e.log.Info("Undo", "path", r.Path.Abs, "undone", r.Op, "files", 1+len(r.Also))
	return out, nil
}

// sawUndone updates the caller's view of a file an undo reverted. The
// undo shows the caller nothing, so its view is current afterwards only if
// it was current before and it had seen the restored content
// (Tracker.Reverted); a stale view stays stale and a caller that never
// read the file still has to. A file the undo re-created (the undone
// change deleted it, or moved it away) is unread.
func (e *Engine) sawUndone(caller string, f workspace.UndoResult) {
	switch {
	case f.Deleted:
		e.fresh.Forget(caller, f.Path.Abs)
	case f.Replaced != "":
		e.fresh.Reverted(caller, f.Path.Abs, f.Replaced, f.Version)
	}
}
