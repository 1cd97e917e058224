package ops

import (
	"context"

	"github.com/fsplane/fsplane/internal/fserr"
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
	if r.Deleted {
		e.fresh.Forget(req.Caller, r.Path.Abs)
	} else {
		e.fresh.Saw(req.Caller, r.Path.Abs, r.Version)
	}
	e.log.Info("Undo", "path", r.Path.Abs, "undone", r.Op)
	return &UndoResult{Path: r.Path.Abs, Op: r.Op, Deleted: r.Deleted, Version: r.Version}, nil
}
