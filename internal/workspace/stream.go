package workspace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Streamed writes (uploads) and the files of an extracted tree move
// through pooled buffers, so memory use does not depend on file size.

// streamBufSize is the copy buffer of streamed writes: large enough that
// a write(2) moves a megabyte, small enough to pool.
const streamBufSize = 1 << 20

// writebackEvery is how often a streamed write asks the kernel to start
// writing back what it has so far (sync_file_range), so the final fsync
// finds little left to flush and dirty pages stay bounded.
const writebackEvery = 32 << 20

var streamBufs = sync.Pool{New: func() any { b := make([]byte, streamBufSize); return &b }}

// UploadPartPrefix starts the name of the part file a streamed write
// spools to, beside its target: ".fsplane-upload-<id>.part". Watchers
// leave it out (IsStagingName) and see the target created when it is
// renamed into place.
const UploadPartPrefix = ".fsplane-upload-"

// StreamOptions qualify a WriteStream.
type StreamOptions struct {
	// Op names the operation in errors and the undo journal; "" is "upload".
	Op string
	// Owner owns the file when the write creates it (see Change.Owner).
	Owner *Owner
	// ExpectedVersion, when set, must be the version of the file the
	// upload replaces, checked under the lock just before the rename:
	// stale_version otherwise (also when the file is gone), and nothing is
	// written.
	ExpectedVersion string
}

// StreamResult reports a WriteStream.
type StreamResult struct {
	Path         Path
	Size         int64
	Version      string
	Created      bool
	UndoRecorded bool
}

// errSource marks a failure to read the caller's stream, as opposed to a
// failure to write the file.
type errSource struct{ err error }

func (e errSource) Error() string { return e.err.Error() }
func (e errSource) Unwrap() error { return e.err }

// WriteStream writes everything src yields to the file p, replacing it
// atomically: the bytes are spooled to ".fsplane-upload-<id>.part" beside
// p through a pooled buffer, fsynced, given the replaced file's mode,
// owner and extended attributes (a new file gets 0644 and opts.Owner),
// and renamed onto p; then the directory is fsynced. The replaced
// content is recorded in undo when it fits an undo entry. A p with
// several hard links is rewritten in place from the part instead, as
// Commit rewrites such a file (a verified backup first), so the links
// stay one file; the part is removed then.
//
// p's directory must exist (not_found otherwise: uploads do not create
// directories). When src fails, ctx ends or the disk fills up (no_space_left),
// the part file is removed and p is untouched; a crash can leave the part
// file behind (until the next Open sweeps it, see temps.go), never a torn p.
func (w *Workspace) WriteStream(ctx context.Context, p string, src io.Reader, opts StreamOptions) (StreamResult, error) {
	op := opts.Op
	if op == "" {
		op = "upload"
	}
	if err := w.checkOpen(op, p); err != nil {
		return StreamResult{}, err
	}
	if err := checkOwner(op, p, opts.Owner); err != nil {
		return StreamResult{}, err
	}
	if err := CheckVersionFormat(op, p, opts.ExpectedVersion); err != nil {
		return StreamResult{}, err
	}
	d, err := w.resolve(op, p)
	if err == nil {
		err = refuseDirOnly(op, d)
	}
	if err != nil {
		return StreamResult{}, err
	}
	if d.Rel == "." {
		return StreamResult{}, fserr.New(fserr.InvalidTarget, op, p, "%s is a workspace root (a directory); name a file inside it", p).WithErrno(syscall.EISDIR)
	}
	root := d.r.root
	dir := path.Dir(d.Rel)
	if err := checkParentDir(op, p, root, dir); err != nil {
		return StreamResult{}, err
	}
	meta := fileMeta{mode: 0o644, uid: -1, gid: -1}
	if opts.Owner != nil {
		meta.uid, meta.gid = opts.Owner.UID, opts.Owner.GID
	}
	fi, err := lstatEntry(d)
	if err != nil {
		return StreamResult{}, osErr(op, p, err)
	}
	if fi == nil && opts.ExpectedVersion != "" {
		// Refused before the body is spooled, not after (installFile
		// checks again under the lock, for a file removed meanwhile).
		return StreamResult{}, staleVersion(op, p, opts.ExpectedVersion, "")
	}
	if fi != nil {
		if err := checkFileDest(op, d, fi, "", true); err != nil {
			return StreamResult{}, err
		}
		if fi.Mode().IsRegular() {
			// Refused before the body is spooled too.
			if err := checkWritable(op, p, root, d.Rel, fi); err != nil {
				return StreamResult{}, err
			}
			meta.mode = fi.Mode() & permBits
			meta.uid, meta.gid, _ = fileOwner(fi)
			if orig, err := root.OpenFile(d.Rel, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				defer orig.Close()
				meta.xattrSrc = orig
			}
		}
	}
	// The part is made and, on failure, removed through a handle on its
	// directory: should the directory's path be swapped for a link
	// meanwhile (which the root refuses to follow), the part can still go.
	pdir, err := root.OpenRoot(dir)
	if err != nil {
		return StreamResult{}, osErr(op, p, err)
	}
	defer pdir.Close()
	part, size, version, err := spool(ctx, root, pdir, dir, src, meta)
	if err != nil {
		if se, ok := errors.AsType[errSource](err); ok {
			e := fserr.New(fserr.BadRequest, op, p, "upload of %s interrupted: the request body ended early or could not be read; nothing was written", p).
				WithHint("send the whole file again: the connection ended, or the client stopped sending, before the body was complete")
			e.Err = se.err
			return StreamResult{}, e
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			e := fserr.New(fserr.IOError, op, p, "upload of %s cancelled; nothing was written", p)
			e.Err, e.Retryable = err, true
			return StreamResult{}, e
		}
		return StreamResult{}, dirRefusal(osErr(op, p, err), root, d.r.path, d.Rel)
	}
	res := StreamResult{Path: d.Path, Size: size, Version: version}
	err = w.locked(op, p, func() error {
		if err := w.refuseBlocked(op, d); err != nil {
			return err
		}
		cur, err := lstatEntry(d)
		if err != nil {
			return osErr(op, p, err)
		}
		res.Created = cur == nil
		res.UndoRecorded, err = w.installFile(op, d, staged{temp: part, version: version, size: size, keepLinks: true}, true, true, opts.ExpectedVersion)
		return err
	})
	if err != nil {
		_ = removeIfExists(pdir, path.Base(part))
		return StreamResult{}, err
	}
	return res, nil
}

// checkParentDir requires dir (a path inside root) to be an existing
// directory.
func checkParentDir(op, p string, root *os.Root, dir string) error {
	pfi, err := root.Stat(dir)
	switch {
	case err == nil && pfi.IsDir():
		return nil
	case err == nil:
		return fserr.New(fserr.InvalidTarget, op, p, "cannot write %s: its parent is not a directory", p).WithErrno(syscall.ENOTDIR)
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return fserr.New(fserr.NotFound, op, p, "cannot write %s: the destination directory does not exist", p).
			WithHint("create it first (mkdir with parents), then send the %s again", op)
	}
	return osErr(op, p, err)
}

// spool copies src into a new part file in dir (pdir, a handle on dir
// inside root) and fsyncs it. It returns the part's name inside root; on
// error nothing is left.
func spool(ctx context.Context, root, pdir *os.Root, dir string, src io.Reader, meta fileMeta) (name string, size int64, version string, err error) {
	var f *os.File
	var base string
	for range 4 {
		base = UploadPartPrefix + randomTag() + ".part"
		name = path.Join(dir, base)
		noteTemp(root, name) // first: a crash right after the create leaves no unlogged temp
		f, err = pdir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", 0, "", err
	}
	h := NewVersionHash()
	size, err = copyStream(ctx, f, src, h)
	if err == nil {
		err = finishFile(f, meta)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = pdir.Remove(base)
		return "", 0, "", err
	}
	return name, size, h.Version(), nil
}

// fill reads from r until buf is full or r fails. Unlike io.ReadFull it
// passes r's own error through: only io.EOF is the end of the stream, an
// io.ErrUnexpectedEOF from r is a truncated stream.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// copyStream copies src to f in buffer-sized writes, hashing what it
// writes, and starts writeback every writebackEvery bytes. A read error is
// wrapped in errSource.
func copyStream(ctx context.Context, f *os.File, src io.Reader, h io.Writer) (int64, error) {
	bp := streamBufs.Get().(*[]byte)
	defer streamBufs.Put(bp)
	buf := *bp
	var total, flushed int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, rerr := fill(src, buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return total, err
			}
			_, _ = h.Write(buf[:n])
			total += int64(n)
			if total-flushed >= writebackEvery {
				startWriteback(f, flushed, total-flushed)
				flushed = total
			}
		}
		switch {
		case rerr == nil:
		case rerr == io.EOF:
			return total, nil
		default:
			return total, errSource{rerr}
		}
	}
}
