package mcpserver

import (
	"context"

	"github.com/fsplane/fsplane/internal/ops"
)

// placeEngine is what searches, listings and undo need from an engine: the
// local *ops.Engine, or a connected host (hub.Remote).
type placeEngine interface {
	Grep(context.Context, ops.GrepRequest) (*ops.GrepResult, error)
	List(context.Context, ops.ListRequest) (*ops.ListResult, error)
	Undo(context.Context, ops.UndoRequest) (*ops.UndoResult, error)
}

// place is where a search or listing runs and how its paths read: the
// local workspace through the session's roots, or a connected host
// (whose own roots confine it).
type place struct {
	eng     placeEngine
	path    func(op, p string) (string, error) // checks and resolves a path argument
	display func(abs string) string            // how a result path is shown
	base    string                             // the directory when none is given
}

// local is the session's own workspace.
func (c *Call) local() place {
	return place{eng: c.srv.eng, path: c.Path, display: c.display, base: c.base()}
}
