package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// UndoRequest restores a file to its state before its last recorded change.
type UndoRequest struct {
	Path   string
	Caller string
	// ExpectedVersion, when set, is the version the file must have: the
	// one the newest change left, which undo reverts. For a caller that
	// keeps no view of the file (HTTP), it is what holds the undo to
	// what the caller saw; "" reverts the newest change, whoever made it.
	ExpectedVersion string
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
// refuses with conflict when the file changed since that change, and with
// stale_version when the caller's view of the file is outdated by a
// change it neither saw nor made, or the file's version is not the one
// expected (see undoHeld). The file's lock is
// held from that check to the undo, so that no change of this engine's
// comes in between.
func (e *Engine) Undo(ctx context.Context, req UndoRequest) (*UndoResult, error) {
	const op = "undo"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	unlock, err := e.locks.lock(ctx, e.lockKeys(true, req.Path))
	if err != nil {
		return nil, cancelled(op, req.Path, err)
	}
	defer unlock()
	if err := e.undoHeld(op, req.Path, req.Caller, req.ExpectedVersion); err != nil {
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

// undoHeld refuses with stale_version an undo of a change the caller did
// not see, and leaves every other refusal to workspace.Undo. The change
// undo reverts is the file's newest, whoever made it; a caller that keeps
// a view of the file (see Tracker.MayUndo) is held to it, and any caller
// to expected, the version that change must have left (a deleted file has
// none). workspace.Undo itself refuses when the file is no longer as that
// change left it, under its own locks. The history is read only when
// there is something to hold the undo to. Undoing a delete re-creates the
// file and so loses no one's work: it is not held to a view.
func (e *Engine) undoHeld(op, path, caller, expected string) error {
	if expected != "" {
		if err := workspace.CheckVersionFormat(op, path, expected); err != nil {
			return err
		}
	}
	viewed := ""
	if caller != "" {
		if p, err := e.ws.Resolve(path); err == nil {
			if _, ok := e.fresh.Seen(caller, p.Abs); ok {
				viewed = p.Abs
			}
		}
	}
	if expected == "" && viewed == "" {
		return nil
	}
	h, err := e.ws.UndoHistory(path)
	if err != nil || len(h) == 0 {
		return nil // workspace.Undo says why there is nothing to undo
	}
	last := h[0]
	var since, hint string
	switch {
	case expected != "" && (!last.AfterExists || last.AfterVersion != expected):
		now := "none: the file does not exist"
		if last.AfterExists {
			now = last.AfterVersion
		}
		since = fmt.Sprintf("version %s (now %s)", expected, now)
		hint = "re-read the file, then undo with its current version if you mean to revert that change"
	case viewed != "" && last.AfterExists && !e.fresh.MayUndo(caller, viewed, last.AfterVersion):
		since, hint = "you last read it", "read the file to see that change, then undo again if you mean to revert it"
	default:
		return nil
	}
	return fserr.New(fserr.StaleVersion, op, path, "%s changed since %s: undo reverts its last change (%s at %s), which came after it, whoever made it; nothing was undone",
		path, since, last.Op, last.Time.UTC().Format(time.TimeOnly)).WithHint("%s", hint)
}

// sawUndone updates the caller's view of a file an undo reverted. The
// undo shows the caller nothing, so its view is current afterwards only if
// it was current before and it had seen the restored content
// (Tracker.Reverted); a stale view stays stale and a caller that never
// read the file still has to. A file the undo re-created (the undone
// change deleted it, or moved it away) is seen again as the caller last
// saw it, if that is the content it comes back with (Tracker.Returned).
func (e *Engine) sawUndone(caller string, f workspace.UndoResult) {
	switch {
	case f.Deleted:
		e.fresh.Forget(caller, f.Path.Abs)
	case f.Replaced != "":
		e.fresh.Reverted(caller, f.Path.Abs, f.Replaced, f.Version)
	default:
		e.fresh.Returned(caller, f.Path.Abs, f.Version)
	}
}
