package workspace

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
)

// Read limits.
const (
	// TextLimit is the largest file ReadText buffers. Larger files are
	// for streaming routes (download).
	TextLimit = 16 << 20
	// sniffLen is how much of a file is searched for a NUL byte to call it
	// binary, as git and grep do.
	sniffLen = 8 << 10
)

// TextFile is a file read as UTF-8 text.
type TextFile struct {
	Path    Path
	Content []byte // the file's bytes exactly, including a BOM
	Version string // Version(Content)
	BOM     bool   // Content starts with a UTF-8 byte order mark
	Mode    fs.FileMode
	ModTime time.Time
}

// ReadText reads p as UTF-8 text. It fails with invalid_target for a
// directory or special file, too_large above TextLimit, and decode_error
// for binary content (a NUL byte in the first 8 KiB) or invalid UTF-8;
// those errors name the alternative (download).
func (w *Workspace) ReadText(p string) (*TextFile, error) {
	return w.ReadTextLimit(p, TextLimit)
}

// ReadTextLimit is ReadText with another size limit: edits and patches
// take whole files far larger than a read returns to a caller.
func (w *Workspace) ReadTextLimit(p string, limit int64) (*TextFile, error) {
	const op = "read"
	f, fi, r, err := w.openRead(op, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, textTooLarge(op, p, limit)
	}
	content, err := readLimited(f, fi.Size(), limit)
	if err != nil {
		return nil, osErr(op, p, err)
	}
	if int64(len(content)) > limit { // it grew while we read
		return nil, textTooLarge(op, p, limit)
	}
	if bytes.IndexByte(content[:min(len(content), sniffLen)], 0) >= 0 {
		return nil, fserr.New(fserr.DecodeError, op, p, "%s appears to be binary (it contains a NUL byte)", p).
			WithHint("download the file to get its bytes; reads return text only")
	}
	body, start := edit.StripBOM(content)
	if off := invalidUTF8(body); off >= 0 {
		return nil, fserr.New(fserr.DecodeError, op, p, "%s is not valid UTF-8: invalid byte at offset %d", p, start+off).
			WithHint("download the file to get its bytes; reads return text only")
	}
	return &TextFile{
		Path:    r.Path,
		Content: content,
		Version: Version(content),
		BOM:     start > 0,
		Mode:    fi.Mode(),
		ModTime: fi.ModTime(),
	}, nil
}

// ReadBytes reads p's raw bytes; above max bytes it fails with too_large
// and reads nothing. max must be positive.
func (w *Workspace) ReadBytes(p string, max int64) (content []byte, version string, err error) {
	const op = "read"
	if max <= 0 {
		return nil, "", fserr.New(fserr.BadRequest, op, p, "read limit must be positive, got %d", max)
	}
	f, fi, _, err := w.openRead(op, p)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, "", bytesTooLarge(op, p, fi.Size(), max)
	}
	content, err = readLimited(f, fi.Size(), max)
	if err != nil {
		return nil, "", osErr(op, p, err)
	}
	if int64(len(content)) > max {
		return nil, "", bytesTooLarge(op, p, int64(len(content)), max)
	}
	return content, Version(content), nil
}

func textTooLarge(op, p string, limit int64) *fserr.Error {
	if limit == TextLimit {
		return fserr.New(fserr.TooLarge, op, p, "file exceeds the 16 MiB buffered text limit").
			WithHint("read a range of its lines, or use download to fetch it whole")
	}
	return fserr.New(fserr.TooLarge, op, p, "file exceeds the %d MiB text limit of this operation", limit>>20).
		WithHint("use download and upload to move it")
}

func bytesTooLarge(op, p string, size, max int64) *fserr.Error {
	return fserr.New(fserr.TooLarge, op, p, "%s is %d bytes, above the limit of %d bytes", p, size, max).
		WithHint("use download to stream it")
}

// openRead opens p for reading and checks that it is a regular file.
// O_NONBLOCK keeps a FIFO from blocking the open; it has no effect on
// regular files.
func (w *Workspace) openRead(op, p string) (*os.File, fs.FileInfo, *resolved, error) {
	if err := w.checkOpen(op, p); err != nil {
		return nil, nil, nil, err
	}
	r, err := w.resolve(op, p)
	if err != nil {
		return nil, nil, nil, err
	}
	// A socket, FIFO or device is refused before any open: opening a
	// device can act on it (a tape rewinds, a watchdog starts), and a
	// socket cannot be opened (ENXIO). The walk saw what is there; only a
	// path it did not end on (a last "." or "..") needs a stat of its own.
	mode, known := r.mode, r.modeKnown
	if !known {
		if fi, err := r.r.root.Lstat(r.Rel); err == nil {
			mode, known = fi.Mode(), true
		}
	}
	if known && !mode.IsDir() && mode&fs.ModeSymlink == 0 && !mode.IsRegular() {
		return nil, nil, nil, fserr.New(fserr.InvalidTarget, op, p, "%s is not a regular file", p)
	}
	f, fi, err := openRegular(r.r.root, r.Rel, op, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, fi, r, nil
}

// openRegular opens the regular file rel for reading, without blocking on
// a FIFO, and refuses anything else (invalid_target); errors name given.
// Callers know rel was a regular file (openRead checks it from the walk):
// a device is opened before it is refused. The caller closes the file.
func openRegular(root *os.Root, rel, op, given string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, osErr(op, given, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, osErr(op, given, err)
	}
	if e := checkRegular(op, given, fi); e != nil {
		f.Close()
		return nil, nil, e
	}
	return f, fi, nil
}

func checkRegular(op, p string, fi fs.FileInfo) *fserr.Error {
	switch {
	case fi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, p, "%s is a directory", p).WithErrno(syscall.EISDIR).
			WithHint("name a file inside it (list the directory to see them)")
	case !fi.Mode().IsRegular():
		return fserr.New(fserr.InvalidTarget, op, p, "%s is not a regular file", p)
	}
	return nil
}

// readLimited reads r to its end but at most limit+1 bytes, so a file
// that grows while it is read is caught by the caller's limit check.
func readLimited(r io.Reader, sizeHint, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(sizeHint, limit)+512))
	_, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	return buf.Bytes(), err
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
