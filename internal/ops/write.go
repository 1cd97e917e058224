package ops

import (
	"context"
	"io/fs"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// WriteRequest replaces (or creates) a file's whole content.
type WriteRequest struct {
	Path            string
	Content         []byte
	ExpectedVersion string // when set, the file must currently have this version
	CreateOnly      bool   // fail with already_exists when the file exists
	// Append adds Content after the file's current bytes (creating the
	// file when absent). The whole file is still replaced atomically, so
	// appends are bounded by AppendLimit.
	Append bool
	Mode   fs.FileMode // for a new file; 0 means 0644
	// User owns the file when the write creates it, and the parent
	// directories it creates (see workspace.LookupOwner); "" means the
	// engine's DefaultUser. An existing file keeps its owner.
	User   string
	Caller string
}

// WriteResult describes a committed write.
type WriteResult struct {
	Path         string
	Version      string
	PrevVersion  string // "" when the file was created
	Created      bool
	Bytes        int
	UndoRecorded bool
}

// AppendLimit bounds the size of a file appended to: an append rewrites
// the whole file atomically.
const AppendLimit = 256 << 20

// Write writes a file atomically (see workspace.Commit).
func (e *Engine) Write(_ context.Context, req WriteRequest) (*WriteResult, error) {
	const op = "write"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, req.Path, req.User)
	if err != nil {
		return nil, err
	}
	content, expected := req.Content, req.ExpectedVersion
	if req.Append {
		old, v, err := e.ws.ReadBytes(req.Path, AppendLimit)
		switch {
		case fserr.Is(err, fserr.NotFound):
		case err != nil:
			return nil, fserr.From(op, req.Path, err)
		default:
			if expected != "" && expected != v {
				return nil, checkVersion(op, req.Path, expected, v)
			}
			content = append(old[:len(old):len(old)], content...)
			expected = v
		}
	}
	if req.CreateOnly {
		info, err := e.ws.Stat(req.Path)
		if err != nil {
			return nil, fserr.From(op, req.Path, err)
		}
		if info.Exists {
			return nil, fserr.New(fserr.AlreadyExists, op, req.Path, "file already exists at: %s", info.Path.Abs).
				WithHint("edit the file instead, or write without create-only to overwrite it")
		}
	}
	res, err := e.ws.Commit([]workspace.Change{{
		Path: req.Path, Content: content, ExpectedVersion: expected,
		ExpectAbsent: req.CreateOnly, Mode: req.Mode, Owner: owner,
	}}, workspace.CommitOptions{Op: op})
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	r := res[0]
	e.fresh.Saw(req.Caller, r.Path.Abs, r.Version)
	e.log.Info("Write", "path", r.Path.Abs, "bytes", len(req.Content), "created", r.Created, "append", req.Append)
	return &WriteResult{Path: r.Path.Abs, Version: r.Version, PrevVersion: r.PrevVersion,
		Created: r.Created, Bytes: len(req.Content), UndoRecorded: r.UndoRecorded}, nil
}
