package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
	"unicode/utf8"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
)

// TextLines is a range of lines of a text file read without holding the
// file (see ReadTextLines).
type TextLines struct {
	Path       Path
	Content    []byte // lines From..To with their terminators
	TotalLines int
	Version    string // the whole file's, as Version
	BOM        bool
	EOL        edit.EOL // the whole file's dominant line ending
	Size       int64    // bytes read
	Mode       fs.FileMode
	ModTime    time.Time
}

// ReadTextLines reads lines from..to (1-based, inclusive; to < 0: to the
// end) of p, a file of any size, in one pass with a fixed buffer: the whole
// file is hashed (Version), validated (the same decode_error as ReadText)
// and counted, and only the lines asked for are kept. Those may be at
// most TextLimit bytes (too_large otherwise: ask for fewer lines). It is
// how a line range of a file over TextLimit is read; for smaller files
// ReadText is faster.
func (w *Workspace) ReadTextLines(p string, from, to int) (*TextLines, error) {
	const op = "read"
	f, fi, r, err := w.openRead(op, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := &edit.LineScanner{From: max(from, 1), To: to, Max: TextLimit}
	h := NewVersionHash()
	buf := make([]byte, 256<<10)
	var off int64 // file offset of buf[0]
	k := 0        // bytes of an unfinished character carried at buf[:k]
	for {
		n, rerr := f.Read(buf[k:])
		data := buf[:k+n]
		eof := errors.Is(rerr, io.EOF)
		if rerr != nil && !eof {
			return nil, osErr(op, p, rerr)
		}
		if off < sniffLen && bytes.IndexByte(data[:min(len(data), sniffLen-int(off))], 0) >= 0 {
			return nil, fserr.New(fserr.DecodeError, op, p, "%s appears to be binary (it contains a NUL byte)", p).
				WithHint("download the file to get its bytes; reads return text only")
		}
		cut := len(data)
		if !eof {
			cut = wholeRunes(data)
		}
		chunk := data[:cut]
		if bad := invalidUTF8(chunk); bad >= 0 || (eof && cut < len(data)) {
			if bad < 0 {
				bad = cut
			}
			return nil, fserr.New(fserr.DecodeError, op, p, "%s is not valid UTF-8: invalid byte at offset %d", p, off+int64(bad)).
				WithHint("download the file to get its bytes; reads return text only")
		}
		_, _ = h.Write(chunk)
		_, _ = sc.Write(chunk)
		off += int64(cut)
		k = copy(buf, data[cut:])
		if eof {
			break
		}
	}
	sc.Close()
	if sc.Overflow() {
		span := fmt.Sprintf("%d..%d", max(from, 1), to)
		if to <= 0 {
			span = fmt.Sprintf("%d to the end", max(from, 1))
		}
		return nil, fserr.New(fserr.TooLarge, op, p, "lines %s of %s are over the 16 MiB a read returns", span, p).
			WithHint("read fewer lines at a time")
	}
	return &TextLines{
		Path: r.Path, Content: sc.Lines(), TotalLines: sc.Total(), Version: h.Version(),
		BOM: sc.BOM(), EOL: sc.EOL(), Size: off, Mode: fi.Mode(), ModTime: fi.ModTime(),
	}, nil
}

// wholeRunes returns the length of b's longest prefix that does not end
// in the middle of a character (invalid bytes count as whole: validation
// reports them).
func wholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
