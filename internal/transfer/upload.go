package transfer

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// FormError is a malformed upload form: AIO answers it with 422 and the
// field's location.
type FormError struct {
	Field   string // "file", "path" or "" for the body as a whole
	Message string
	Missing bool // the field is absent (value_error.missing)
}

func (e *FormError) Error() string { return e.Message }

var bodyBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

// spoolBufs are the copy buffers of spooled file parts: a megabyte, like
// the workspace's streamed writes, so a write(2) moves that much.
var spoolBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// maxPathField bounds the path form field.
const maxPathField = 8 << 10

// Store places an upload: it reads file to its end and writes it to path.
// filename is the file part's name, possibly empty. path is "" when the
// form names no target; filename then has a usable BaseName, and the
// store chooses where the file goes by it (AIO's /tmp/<filename>).
type Store func(path, filename string, file io.Reader) error

// BaseName is the last component of an upload's file name, with both /
// and \ taken as separators (a browser on Windows may send a whole path),
// or "" when that leaves no name a file can have: empty, "." or "..".
func BaseName(filename string) string {
	name := filename[strings.LastIndexAny(filename, "/\\")+1:]
	if name == "." || name == ".." {
		return ""
	}
	return name
}

// ReadUpload reads a multipart/form-data upload as a stream and hands its
// first file part to store with the target path and the part's file name.
// It reads the whole form before store sees the end of the file, so store
// commits nothing the rest of the form contradicts.
//
// The target is the path field or queryPath (?path=, fsplane's extension
// to AIO's form); both may be given when they name the same path (compared
// as written, cleaned). Two different targets, from the query and the form
// or from two path fields, are a conflict (fserr.BadRequest): no source
// silently wins, and nothing is written.
//
// When the target is known before the file part, store reads the part
// itself: no copy is made. AIO's form does not order its fields, and the
// TypeScript SDK sends the file first, so a file part that comes before
// any path is spooled to an unnamed file in spoolDir (the state directory,
// on disk: uploads are bounded by disk, not memory) and handed to store
// from there once the form's end shows the path. The spool never has a
// name anyone can see (O_TMPFILE, or unlinked as soon as created), so no
// failure, crash included, leaves it behind. With spoolDir "" such a form
// is refused.
//
// A form that names no target at all (AIO's schema makes path optional)
// is handed to store with path "" once its end shows that no path field
// follows; when the file part's name has no BaseName, or spoolDir is ""
// (the file cannot be held until the end), it is a FormError naming
// path. A form without a file part is a FormError naming file, so is a
// body that is not multipart/form-data. Errors from store are returned
// as they are.
func ReadUpload(r *http.Request, queryPath, spoolDir string, store Store) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return &FormError{Message: "expected a multipart/form-data body with the fields path and file"}
	}
	// multipart reads through a 4 KiB buffer of its own; a large one
	// under it turns 4 KiB read(2)s of the socket into 1 MiB ones.
	br := bodyBufs.Get().(*bufio.Reader)
	br.Reset(r.Body)
	defer func() {
		br.Reset(nil)
		bodyBufs.Put(br)
	}()
	f := &form{mr: multipart.NewReader(br, params["boundary"]), query: strings.TrimSpace(queryPath)}
	for {
		part, err := f.mr.NextPart()
		if err == io.EOF {
			return &FormError{Field: "file", Missing: true, Message: "missing field `file`"}
		}
		if err != nil {
			return malformed(err)
		}
		switch part.FormName() {
		case "path":
			if err := f.readPath(part); err != nil {
				return err
			}
		case "file":
			if t := f.target(); t != "" {
				return f.stream(t, part, store)
			}
			return f.spool(r.Context(), part, spoolDir, store)
		}
		if err := drain(part); err != nil {
			return malformed(err)
		}
	}
}

// form is the state of an upload form being read.
type form struct {
	mr    *multipart.Reader
	query string // ?path=, trimmed
	path  string // the first non-empty path field, trimmed
	// trailing is a syntax error met reading the parts after the file.
	trailing error
}

// target is the upload's target as far as the form has been read.
func (f *form) target() string {
	if f.path != "" {
		return f.path
	}
	return f.query
}

// readPath reads a path field. An empty one names nothing (the target
// stays ?path=, as before); one that contradicts the query or an earlier
// field is a conflict.
func (f *form) readPath(part io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(part, maxPathField+1))
	if err != nil {
		return &FormError{Field: "path", Message: "could not read the path field"}
	}
	if len(b) > maxPathField {
		return &FormError{Field: "path", Message: fmt.Sprintf("the path field exceeds %d bytes", maxPathField)}
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return nil
	}
	for _, prev := range []struct{ p, src string }{{f.path, "an earlier path field"}, {f.query, "?path="}} {
		if prev.p != "" && path.Clean(prev.p) != path.Clean(p) {
			return fserr.New(fserr.BadRequest, "upload", p, "conflicting upload targets: the path field says %q but %s says %q", p, prev.src, prev.p).
				WithHint("name the target once (the path form field or ?path=), or give the same path in both")
		}
	}
	if f.path == "" {
		f.path = p
	}
	return nil
}

// rest reads the parts after the file to the form's end, checking each
// path field against the target. A path field error (a conflict, an
// oversized field) is returned; a syntax error ends the reading and is
// kept in f.trailing, for the caller to judge: once the file part is
// whole and its target known, a damaged end of the form does not matter.
// A second file part is a conflict, as two targets are: which one was
// meant is a guess (AIO's Python server keeps the last, this kept the
// first), and nothing is written.
func (f *form) rest() error {
	for {
		part, err := f.mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			f.trailing = err
			return nil
		}
		switch part.FormName() {
		case "path":
			if err := f.readPath(part); err != nil {
				return err
			}
		case "file":
			return fserr.New(fserr.BadRequest, "upload", f.target(), "the form holds more than one file part; nothing was written").
				WithHint("upload one file per request")
		}
		if err := drain(part); err != nil {
			f.trailing = err
			return nil
		}
	}
}

// stream hands the file part to store as it arrives: the target is
// known, so the bytes go straight into store's file, with no copy.
func (f *form) stream(target string, part *multipart.Part, store Store) error {
	t := &tail{part: part, f: f}
	err := store(target, part.FileName(), t)
	if t.end != nil && t.end != io.EOF {
		// The rest of the form contradicted the target: store saw a
		// read error instead of the end and placed nothing.
		return t.end
	}
	if err != nil {
		return err
	}
	if t.end == nil { // store stopped short of the end
		_ = drain(t)
	}
	return nil
}

// tail reads a file part and, when the part ends, reads the rest of the
// form before reporting the end, so a path field after the file that
// contradicts the target turns into a read error: store then abandons its
// part file and the target is untouched.
type tail struct {
	part *multipart.Part
	f    *form
	end  error // nil while the part lasts; then io.EOF or the form's error
}

func (t *tail) Read(p []byte) (int, error) {
	if t.end != nil {
		return 0, t.end
	}
	n, err := t.part.Read(p)
	if err == io.EOF {
		t.end = io.EOF
		if ferr := t.f.rest(); ferr != nil {
			t.end = ferr
		}
		err = t.end
	}
	return n, err
}

// spool holds a file part that came before its path in an unnamed file in
// dir, reads the rest of the form for the path, then hands the spool to
// store (with path "" when none came). Placing it is a second copy (store spools it again beside the
// target, fsyncs and renames, exactly as for a path-first upload), during
// which the spool is freed as it is read (drainSpool), so the two together
// take about the file's size plus punchEvery on disk; the spool itself is
// not fsynced, it is scratch that dies with its descriptor.
func (f *form) spool(ctx context.Context, part *multipart.Part, dir string, store Store) error {
	if dir == "" {
		return &FormError{Field: "path", Missing: true,
			Message: "missing field `path`: send it before the `file` part, or pass ?path="}
	}
	sp, err := openSpool(dir, oTmpfile)
	if err != nil {
		e := fserr.FromOS("upload", "", err)
		e.Message = "cannot hold the uploaded file in the state directory: " + e.Message
		return e
	}
	defer sp.Close()
	if err := copyPart(ctx, sp, part); err != nil {
		return err
	}
	filename := part.FileName()
	if err := f.rest(); err != nil {
		return err
	}
	if f.path == "" {
		if f.trailing != nil {
			return malformed(f.trailing)
		}
		if BaseName(filename) == "" {
			return &FormError{Field: "path", Missing: true,
				Message: fmt.Sprintf("missing field `path`: the `file` part's filename %q gives no file name to place it by; pass `path` (before or after `file`) or ?path=", filename)}
		}
	}
	if _, err := sp.Seek(0, io.SeekStart); err != nil {
		return fserr.FromOS("upload", f.path, err)
	}
	return store(f.path, filename, &drainSpool{f: sp})
}

// drainSpool reads a spool from its start, freeing what has been read
// every punchEvery bytes (see punchHole).
type drainSpool struct {
	f         *os.File
	off, hole int64 // read so far; freed so far
}

// punchEvery is how much read spool is freed at a time: large enough that
// the system call is rare, small enough that the spool and its copy
// overlap by little.
const punchEvery = 8 << 20

func (d *drainSpool) Read(p []byte) (int, error) {
	n, err := d.f.Read(p)
	d.off += int64(n)
	if d.off-d.hole >= punchEvery {
		punchHole(d.f, d.hole, d.off-d.hole)
		d.hole = d.off
	}
	return n, err
}

// copyPart copies a file part into the spool. A failure to read the part
// (the client went away, the body is cut) is a bad request, like an
// interrupted path-first upload; a failure to write is classified by its
// errno (a full disk is no_space_left).
func copyPart(ctx context.Context, sp *os.File, part io.Reader) error {
	bp := spoolBufs.Get().(*[]byte)
	defer spoolBufs.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			e := fserr.New(fserr.IOError, "upload", "", "upload cancelled; nothing was written")
			e.Err, e.Retryable = err, true
			return e
		}
		n, rerr := part.Read(buf)
		if n > 0 {
			if _, err := sp.Write(buf[:n]); err != nil {
				e := fserr.FromOS("upload", "", err)
				e.Message = "cannot hold the uploaded file in the state directory: " + e.Message
				return e
			}
		}
		switch {
		case rerr == nil:
		case rerr == io.EOF:
			return nil
		default:
			e := fserr.New(fserr.BadRequest, "upload", "", "upload interrupted: the request body ended early or could not be read; nothing was written").
				WithHint("send the whole file again: the connection ended, or the client stopped sending, before the body was complete")
			e.Err = rerr
			return e
		}
	}
}

// spoolPrefix names a spool in the moment between its creation and its
// unlinking, where O_TMPFILE is not available.
const spoolPrefix = ".fsplane-upload-spool-"

// staleSpool is the age past which a named spool is a crash's leftover:
// a live one has its name for the instant between two system calls.
const staleSpool = time.Minute

// openSpool opens a new read-write file in dir that has no name: with the
// tmpfile flag (O_TMPFILE on Linux, 0 elsewhere) the kernel never gives it
// one; otherwise it is created under a random name and unlinked at once.
// Either way it is gone when its descriptor closes, whatever happens to
// the process. dir is reached through an os.Root, like every write.
func openSpool(dir string, tmpfile int) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if tmpfile != 0 {
		if sp, err := root.OpenFile(".", os.O_RDWR|tmpfile, 0o600); err == nil {
			return sp, nil
		}
		// The file system does not do O_TMPFILE: fall back to a name.
	}
	if _, done := sweptDirs.LoadOrStore(dir, true); !done {
		sweepSpools(root)
	}
	for range 4 {
		name := spoolPrefix + rand.Text() + ".part"
		sp, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := root.Remove(name); err != nil {
			sp.Close()
			_ = root.Remove(name)
			return nil, err
		}
		return sp, nil
	}
	return nil, fs.ErrExist
}

// sweptDirs holds the spool directories this process swept. Once is
// enough: a spool of this process has its name for an instant only, so
// what a crash left there was left before this process started (a fresh
// one another process is creating is spared by its age).
var sweptDirs sync.Map

// sweepSpools removes the named spools a crash left in root between
// their creation and their unlinking (openSpool's fallback): nothing
// else would, for they are not in the workspace's temp log. Only regular
// files with spoolPrefix's shape older than staleSpool are removed.
func sweepSpools(root *os.Root) {
	d, err := root.Open(".")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if !strings.HasPrefix(n, spoolPrefix) || !strings.HasSuffix(n, ".part") {
			continue
		}
		if fi, err := root.Lstat(n); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleSpool {
			_ = root.Remove(n)
		}
	}
}

func malformed(err error) *FormError {
	return &FormError{Message: fmt.Sprintf("malformed multipart body: %v", err)}
}

func drain(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
