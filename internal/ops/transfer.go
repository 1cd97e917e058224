package ops

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/transfer"
	"github.com/fsplane/fsplane/internal/workspace"
)

// versionCacheSize bounds the download ETag cache (entries).
const versionCacheSize = 4096

// UploadRequest streams a file's whole content (upload).
type UploadRequest struct {
	// Path is the target file. When it names an existing directory, the
	// file goes into it under FileName. "" places the file by FileName's
	// base name (transfer.BaseName), as AIO does when its form has no
	// path: in /tmp when /tmp lies inside a root (AIO runs with the whole
	// file system), else at the top of the first root, the directory
	// relative paths start from.
	Path     string
	FileName string // the client's file name (multipart filename); may be empty
	Body     io.Reader
	// User owns the file when the upload creates it; "" means the
	// engine's DefaultUser.
	User   string
	Caller string
	// ExpectedVersion, when set, is the version the replaced file must
	// have (stale_version otherwise, nothing written).
	ExpectedVersion string
}

// UploadResult describes a stored upload.
type UploadResult struct {
	Path         string // absolute
	Size         int64
	Version      string
	Created      bool
	UndoRecorded bool
}

// Upload streams req.Body into a file atomically (workspace.WriteStream):
// memory use does not depend on the size, and a failed or cancelled upload
// leaves neither a part file nor a changed target. The target's directory
// must exist (not_found); a full disk is no_space_left.
func (e *Engine) Upload(ctx context.Context, req UploadRequest) (*UploadResult, error) {
	const op = "upload"
	dir := req.Path
	if dir == "" {
		var err error
		if dir, err = e.defaultUploadDir(req.FileName); err != nil {
			return nil, err
		}
	}
	if err := e.writable(op, dir); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, dir, req.User)
	if err != nil {
		return nil, err
	}
	target := dir
	if req.Path == "" {
		target = filepath.Join(dir, transfer.BaseName(req.FileName))
	} else if name := transfer.BaseName(req.FileName); name != "" {
		if info, err := e.ws.Stat(target); err == nil && info.IsDir {
			target = filepath.Join(target, name)
		}
	}
	res, err := e.ws.WriteStream(ctx, target, req.Body, workspace.StreamOptions{Op: op, Owner: owner, ExpectedVersion: req.ExpectedVersion})
	if err != nil {
		return nil, fserr.From(op, target, err)
	}
	e.fresh.Saw(req.Caller, res.Path.Abs, res.Version)
	e.log.Info("Upload", "path", res.Path.Abs, "bytes", res.Size, "created", res.Created)
	return &UploadResult{Path: res.Path.Abs, Size: res.Size, Version: res.Version, Created: res.Created, UndoRecorded: res.UndoRecorded}, nil
}

// defaultUploadDir is the directory of an upload that names no target
// (see UploadRequest.Path): /tmp when it lies inside a root, else the
// first root. A file name with no base name is bad_request.
func (e *Engine) defaultUploadDir(filename string) (string, error) {
	if transfer.BaseName(filename) == "" {
		return "", fserr.New(fserr.BadRequest, "upload", "", "the upload names no target and its file name %q gives none", filename).
			WithHint("pass path, the file to write")
	}
	if _, err := e.ws.LexicalKey("/tmp"); err == nil {
		return "/tmp", nil
	}
	return e.ws.Roots()[0], nil
}

// OpenDownload opens a regular file for a download and pins its state:
// the returned Source serves it (transfer.Source.Serve) with its version
// as the ETag, and the caller closes it. Versions of unchanged files are
// cached, so a large file is hashed once.
func (e *Engine) OpenDownload(_ context.Context, p string) (*transfer.Source, error) {
	const op = "download"
	f, info, err := e.ws.Open(p)
	if err != nil {
		fe := fserr.From(op, p, err)
		if fe.Errno == syscall.EISDIR {
			return nil, fserr.New(fserr.InvalidTarget, op, p, "%s is a directory; a download is one file", p).WithErrno(syscall.EISDIR).
				WithHint("list the directory and download its files one by one; a directory of the daemon's own roots can also be fetched whole as a tar archive: GET /v2/fs/tree?path=…")
		}
		fe.Op = op // the workspace's Open reports a read; this one is ours
		return nil, fe
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fserr.FromOS(op, p, err)
	}
	// same reopens the path through the workspace (so through its root)
	// and compares identities: an atomic replacement is a change.
	same := func() bool {
		g, _, err := e.ws.Open(p)
		if err != nil {
			return false
		}
		defer g.Close()
		gi, err := g.Stat()
		return err == nil && os.SameFile(gi, fi)
	}
	return transfer.Open(f, info.Path.Abs, e.versions, same)
}

// TreeRequest extracts a tar archive into a directory.
type TreeRequest struct {
	Path   string // the destination: absent (created whole) or a directory (merged into)
	Body   io.Reader
	User   string          // owns what is created; "" means the engine's DefaultUser
	Limits transfer.Limits // zero: transfer.DefaultLimits
}

// TreeResult describes an extracted archive.
type TreeResult struct {
	Path         string // absolute
	Entries      int
	Mode         string // workspace.TreeRename or workspace.TreeMerge
	UndoRecorded int    // merged files whose change Undo can revert
	MergedFiles  int    // files a merge added or replaced
}

// PutTree extracts the tar archive req.Body at req.Path: staged beside
// (or inside) the destination, checked member by member (no "..",
// absolute names, links out of the root or device nodes; within the
// limits), then renamed into place or merged as one transaction, recorded
// in undo per file (see workspace.TreeWriter). On any error nothing of
// the archive remains.
func (e *Engine) PutTree(_ context.Context, req TreeRequest) (*TreeResult, error) {
	const op = "tree"
	if err := e.writable(op, req.Path); err != nil {
		return nil, err
	}
	owner, err := e.owner(op, req.Path, req.User)
	if err != nil {
		return nil, err
	}
	lim := req.Limits
	if lim == (transfer.Limits{}) {
		lim = transfer.DefaultLimits
	}
	tw, err := e.ws.CreateTree(req.Path, owner)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	defer tw.Abort()
	if _, err := transfer.Extract(req.Body, tw, lim); err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	res, err := tw.Commit()
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	e.log.Info("PutTree", "path", res.Path.Abs, "entries", res.Entries, "mode", res.Mode, "undo_recorded", res.UndoRecorded)
	return &TreeResult{Path: res.Path.Abs, Entries: res.Entries, Mode: res.Mode, UndoRecorded: res.UndoRecorded, MergedFiles: res.MergedFiles}, nil
}

// GetTree writes the directory p to w as a tar archive and returns the
// bytes written; an error with nothing written can still be reported to
// the client (see transfer.WriteTree).
func (e *Engine) GetTree(_ context.Context, p string, w io.Writer) (int64, error) {
	n, err := transfer.WriteTree(w, e.ws, p)
	if err != nil {
		return n, fserr.From("tree", p, err)
	}
	return n, nil
}
