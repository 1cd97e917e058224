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
			if req.CreateOnly {
				return nil, alreadyExists(op, req.Path, nil)
			}
			if expected != "" && expected != v {
				return nil, checkVersion(op, req.Path, expected, v)
			}
			content = append(old[:len(old):len(old)], content...)
			expected = v
		}
	}
	// A create-only write is checked once, by the commit under the
	// workspace lock (ExpectAbsent): a Stat before it could not see a file
	// created in between.
	res, err := e.ws.Commit([]workspace.Change{{
		Path: req.Path, Content: content, ExpectedVersion: expected,
		ExpectAbsent: req.CreateOnly, Mode: req.Mode, Owner: owner,
	}}, workspace.CommitOptions{Op: op})
	if err != nil {
		if req.CreateOnly && fserr.Is(err, fserr.StaleVersion) {
			// The only version a create-only change states is "absent".
			return nil, alreadyExists(op, req.Path, err)
		}
		return nil, fserr.From(op, req.Path, err)
	}
	r := res[0]
	if req.Append && r.PrevVersion != "" {
		// The caller wrote only the end: it knows the file if it knew
		// what it appended to.
		e.fresh.Advance(req.Caller, r.Path.Abs, r.PrevVersion, r.Version)
	} else {
		e.fresh.Saw(req.Caller, r.Path.Abs, r.Version)
	}
	e.log.Info("Write", "path", r.Path.Abs, "bytes", len(req.Content), "created", r.Created, "append", req.Append)
	return &WriteResult{Path: r.Path.Abs, Version: r.Version, PrevVersion: r.PrevVersion,
		Created: r.Created, Bytes: len(req.Content), UndoRecorded: r.UndoRecorded}, nil
}

// alreadyExists is a create-only write's refusal of an existing file.
func alreadyExists(op, path string, cause error) *fserr.Error {
	e := fserr.New(fserr.AlreadyExists, op, path, "file already exists at: %s", path).
		WithHint("read it and pass its version as the expected version to overwrite it, or choose another path")
	e.Err = cause
	return e
}
