package ops

import (
	"context"
	"fmt"
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
	// Notice says the write replaced content the caller never saw: the
	// file changed since the caller last read it, and it named no
	// ExpectedVersion (as edits and patches say; the write goes ahead).
	Notice string
}

// AppendLimit bounds the size of a file appended to: an append rewrites
// the whole file atomically.
const AppendLimit = 256 << 20

// Write writes a file atomically (see workspace.Commit). An append reads
// the file, adds Content and commits the whole, guarded by the version it
// read (or the file's absence): concurrent appends apply one after
// another, and one that finds the file changed at its commit reads it
// again (see replan); only a caller's own ExpectedVersion or CreateOnly
// can make it fail for a change made in between. A whole-file write holds
// the file's lock too, so that callers' views are recorded in the order
// of the commits.
func (e *Engine) Write(ctx context.Context, req WriteRequest) (*WriteResult, error) {
	const op = "write"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, req.Path, req.User)
	if err != nil {
		return nil, err
	}
	var (
		r      workspace.FileResult
		notice string
	)
	err = e.replan(ctx, op, req.Path, e.lockKeys(true, req.Path), func() (err error) {
		if req.Append {
			r, err = e.appendOnce(op, req, owner)
		} else {
			r, notice, err = e.writeOnce(op, req, owner)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	e.log.Info("Write", "path", r.Path.Abs, "bytes", len(req.Content), "created", r.Created, "append", req.Append)
	return &WriteResult{Path: r.Path.Abs, Version: r.Version, PrevVersion: r.PrevVersion,
		Created: r.Created, Bytes: len(req.Content), UndoRecorded: r.UndoRecorded, Notice: notice}, nil
}

// writeOnce replaces the whole file. Its only expectations are the
// caller's, so a refusal is the caller's to see: it is not planned again.
// The notice says when it replaced content the caller had not seen.
func (e *Engine) writeOnce(op string, req WriteRequest, owner *workspace.Owner) (workspace.FileResult, string, error) {
	// A create-only write is checked once, by the commit under the
	// workspace lock (ExpectAbsent): a Stat before it could not see a file
	// created in between.
	res, err := e.ws.Commit([]workspace.Change{{
		Path: req.Path, Content: req.Content, ExpectedVersion: req.ExpectedVersion,
		ExpectAbsent: req.CreateOnly, Mode: req.Mode, Owner: owner,
	}}, workspace.CommitOptions{Op: op})
	if err != nil {
		if req.CreateOnly && fserr.Is(err, fserr.StaleVersion) {
			// The only version a create-only change states is "absent".
			return workspace.FileResult{}, "", alreadyExists(op, req.Path, err)
		}
		return workspace.FileResult{}, "", fserr.From(op, req.Path, err)
	}
	r := res[0]
	notice := ""
	// A caller that named the version it replaced had seen it.
	if seen, ok := e.fresh.Seen(req.Caller, r.Path.Abs); ok && req.ExpectedVersion == "" && r.PrevVersion != "" && seen != r.PrevVersion {
		notice = fmt.Sprintf("%s changed since you last read it; the write replaced its current content", req.Path)
		if r.UndoRecorded {
			notice += ", which undo brings back"
		}
	}
	e.fresh.Saw(req.Caller, r.Path.Abs, r.Version)
	return r, notice, nil
}

// appendOnce is one attempt of an append: read, check, commit guarded by
// the version read, or by the file's absence when it creates the file.
func (e *Engine) appendOnce(op string, req WriteRequest, owner *workspace.Owner) (workspace.FileResult, error) {
	ch := workspace.Change{Path: req.Path, Content: req.Content, Mode: req.Mode, Owner: owner}
	old, v, err := e.ws.ReadBytes(req.Path, AppendLimit)
	switch {
	case fserr.Is(err, fserr.NotFound):
		if req.ExpectedVersion != "" {
			if err := workspace.CheckVersionFormat(op, req.Path, req.ExpectedVersion); err != nil {
				return workspace.FileResult{}, err
			}
			return workspace.FileResult{}, workspace.MissingExpected(op, req.Path, req.ExpectedVersion)
		}
		// Created unless someone else creates it first; then this
		// append is planned again, after their content.
		ch.ExpectAbsent = true
	case err != nil:
		return workspace.FileResult{}, fserr.From(op, req.Path, err)
	default:
		if req.CreateOnly {
			return workspace.FileResult{}, alreadyExists(op, req.Path, nil)
		}
		if err := checkVersion(op, req.Path, req.ExpectedVersion, v); err != nil {
			return workspace.FileResult{}, err
		}
		ch.Content = append(old[:len(old):len(old)], req.Content...)
		ch.ExpectedVersion = v
	}
	res, err := e.commit(op, req.Path, []workspace.Change{ch})
	if err != nil {
		if req.CreateOnly && fserr.Is(err, fserr.StaleVersion) {
			return workspace.FileResult{}, alreadyExists(op, req.Path, err)
		}
		return workspace.FileResult{}, err
	}
	if r := res[0]; r.PrevVersion != "" {
		// The caller wrote only the end: it knows the file if it knew
		// what it appended to (had seen it, or named its version).
		e.fresh.Changed(req.Caller, r.Path.Abs, r.PrevVersion, r.Version, req.ExpectedVersion != "", false)
	} else {
		e.fresh.Saw(req.Caller, r.Path.Abs, r.Version)
	}
	return res[0], nil
}

// alreadyExists is a create-only write's refusal of an existing file.
func alreadyExists(op, path string, cause error) *fserr.Error {
	e := fserr.New(fserr.AlreadyExists, op, path, "file already exists at: %s", path).
		WithHint("read it and pass its version as the expected version to overwrite it, or choose another path")
	e.Err = cause
	return e
}
