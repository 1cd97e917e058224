package ops

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// MkdirRequest creates a directory.
type MkdirRequest struct {
	Path    string
	Parents bool   // mkdir -p: create missing parents; an existing directory is no error
	User    string // owns what is created; "" means the engine's DefaultUser
}

// MkdirResult describes a Mkdir.
type MkdirResult struct {
	Path    string // absolute
	Created bool   // false when Parents and the directory existed
}

// Mkdir creates a directory (workspace.Mkdir): already_exists when it
// exists (without Parents), not_found when its parent is missing (without
// Parents).
func (e *Engine) Mkdir(_ context.Context, req MkdirRequest) (*MkdirResult, error) {
	const op = "mkdir"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, req.Path, req.User)
	if err != nil {
		return nil, err
	}
	created, err := e.ws.Mkdir(req.Path, req.Parents, owner)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	p, err := e.ws.Resolve(req.Path)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	e.log.Info("Mkdir", "path", p.Abs, "created", created, "parents", req.Parents)
	return &MkdirResult{Path: p.Abs, Created: created}, nil
}

// CopyRequest copies a file or a directory tree.
type CopyRequest struct {
	Source, Destination string
	// Overwrite replaces an existing destination file, or merges a tree
	// into an existing destination directory.
	Overwrite bool
	User      string // owns what is created; "" means the engine's DefaultUser
	Caller    string
}

// CopyResult describes a Copy.
type CopyResult struct {
	Source, Destination string // absolute
	IsDirectory         bool
	FilesCopied         int
	BytesCopied         int64
	LinksCopied         int
	LinksSkipped        int    // links whose target would leave the root
	OtherSkipped        int    // sockets, FIFOs, devices
	Version             string // a single file's copy: its version
	UndoRecorded        bool   // a single file's copy: undo of the destination reverts it
}

// Skipped says what a tree copy left out, for a front's hint; "" when
// nothing was.
func (r *CopyResult) Skipped() string {
	var parts []string
	if n := r.LinksSkipped; n > 0 {
		parts = append(parts, plural(n, "symbolic link", "symbolic links")+" leading outside the workspace")
	}
	if n := r.OtherSkipped; n > 0 {
		parts = append(parts, plural(n, "socket, FIFO or device", "sockets, FIFOs or devices"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "not copied: " + strings.Join(parts, " and ") + "; copy their targets or recreate them separately if they are needed"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Copy copies a file or a tree (workspace.Copy): already_exists when the
// destination exists and Overwrite is not set, invalid_target for a
// directory copied into itself or a file/directory mismatch. A caller who
// had seen the source file's current version has seen its copy's.
func (e *Engine) Copy(_ context.Context, req CopyRequest) (*CopyResult, error) {
	const op = "copy"
	if err := e.writable(op, req.Destination); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, req.Destination, req.User)
	if err != nil {
		return nil, err
	}
	r, err := e.ws.Copy(req.Source, req.Destination, req.Overwrite, owner)
	if err != nil {
		return nil, fserr.From(op, req.Source, err)
	}
	if r.Version != "" {
		if seen, ok := e.fresh.Seen(req.Caller, r.Source.Abs); ok && seen == r.Version {
			e.fresh.Saw(req.Caller, r.Destination.Abs, r.Version)
		} else {
			e.fresh.Forget(req.Caller, r.Destination.Abs)
		}
	}
	e.log.Info("Copy", "source", r.Source.Abs, "destination", r.Destination.Abs, "dir", r.IsDir,
		"files", r.FilesCopied, "bytes", r.BytesCopied, "overwrite", req.Overwrite)
	return &CopyResult{
		Source: r.Source.Abs, Destination: r.Destination.Abs, IsDirectory: r.IsDir,
		FilesCopied: r.FilesCopied, BytesCopied: r.BytesCopied, LinksCopied: r.LinksCopied,
		LinksSkipped: r.LinksSkipped, OtherSkipped: r.OtherSkipped, Version: r.Version, UndoRecorded: r.UndoRecorded,
	}, nil
}

// MoveRequest renames a file, link or directory.
type MoveRequest struct {
	Source, Destination string
	// Overwrite replaces an existing destination: a file, a link, or an
	// empty directory when the source is a directory.
	Overwrite bool
	// ExpectedVersion, when set, must be the source file's current
	// version (stale_version otherwise); only for regular files.
	ExpectedVersion string
	Caller          string
}

// MoveResult describes a Move.
type MoveResult struct {
	Source, Destination string // absolute
	IsDirectory         bool
	Version             string // the moved file's version, when known
	UndoRecorded        bool   // undo of either path reverts the move
}

// Move renames a file, link or directory (workspace.Move), across roots
// and file systems too. The caller's view of the source moves with it.
func (e *Engine) Move(_ context.Context, req MoveRequest) (*MoveResult, error) {
	const op = "move"
	if err := e.writable(op, req.Source); err != nil {
		return nil, err
	}
	r, err := e.ws.Move(req.Source, req.Destination, req.Overwrite, req.ExpectedVersion)
	if err != nil {
		return nil, fserr.From(op, req.Source, err)
	}
	e.fresh.Moved(req.Caller, r.Source.Abs, r.Destination.Abs, r.Version)
	e.log.Info("Move", "source", r.Source.Abs, "destination", r.Destination.Abs, "dir", r.IsDir,
		"overwrite", req.Overwrite, "copied", r.Copied)
	return &MoveResult{
		Source: r.Source.Abs, Destination: r.Destination.Abs, IsDirectory: r.IsDir,
		Version: r.Version, UndoRecorded: r.UndoRecorded,
	}, nil
}

// DeleteRequest deletes a file, link or directory.
type DeleteRequest struct {
	Path      string
	Recursive bool // delete a directory and everything in it
	// ExpectedVersion, when set, must be the file's current version
	// (stale_version otherwise); only for regular files.
	ExpectedVersion string
	Caller          string
}

// DeleteResult describes a Delete.
type DeleteResult struct {
	Path         string // absolute; a link's own path, never its target's
	IsDirectory  bool
	UndoRecorded bool // Undo can bring it back (see workspace.RemoveResult)
}

// Delete deletes a file, a link (never its target) or an empty directory;
// with Recursive any directory (workspace.Remove). A deleted regular file
// can be brought back with Undo; a non-empty directory without Recursive
// is already_exists.
func (e *Engine) Delete(_ context.Context, req DeleteRequest) (*DeleteResult, error) {
	const op = "delete"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	rm, err := e.ws.Remove(req.Path, req.Recursive, req.ExpectedVersion)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	// Resolved after the removal, so errors above are the delete's; the
	// path names the removed entry itself.
	info, err := e.ws.Lstat(req.Path)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	e.fresh.Gone(req.Caller, info.Path.Abs)
	e.log.Info("Delete", "path", info.Path.Abs, "dir", rm.IsDir, "recursive", req.Recursive)
	return &DeleteResult{Path: info.Path.Abs, IsDirectory: rm.IsDir, UndoRecorded: rm.UndoRecorded}, nil
}

// UndoHistoryResult lists a file's recorded changes.
type UndoHistoryResult struct {
	Path    string // absolute; links resolved, as undo records them
	Entries []UndoHistoryEntry
}

// UndoHistoryEntry is one recorded change; Undo reverts them newest first.
type UndoHistoryEntry struct {
	Op           string
	Time         time.Time
	PrevExisted  bool
	PrevSize     int64
	PrevVersion  string
	AfterExists  bool
	AfterVersion string
}

// UndoHistory lists the recorded changes of a file, newest first: what
// repeated Undo calls would revert.
func (e *Engine) UndoHistory(_ context.Context, path string) (*UndoHistoryResult, error) {
	const op = "undo_history"
	h, err := e.ws.UndoHistory(path)
	if err != nil {
		return nil, fserr.From(op, path, err)
	}
	p, err := e.ws.Resolve(path)
	if err != nil {
		return nil, fserr.From(op, path, err)
	}
	res := &UndoHistoryResult{Path: p.Abs, Entries: make([]UndoHistoryEntry, len(h))}
	for i, u := range h {
		res.Entries[i] = UndoHistoryEntry{
			Op: u.Op, Time: u.Time, PrevExisted: u.PrevExisted, PrevSize: u.PrevSize, PrevVersion: u.PrevVersion,
			AfterExists: u.AfterExists, AfterVersion: u.AfterVersion,
		}
	}
	return res, nil
}
