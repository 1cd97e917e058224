package transfer

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/workspace"
)

// Reader returns a reader of the pinned file's bytes, from the start to
// the size it had when opened. It reads through the Source's descriptor;
// the Source must stay open while it is used.
//
// Whoever reads it has announced the pinned version with the bytes (a
// host download's result carries it, and the hub serves it as the
// ETag), so the bytes must be that version's: when the file has one, the
// reader fails (conflict, as change_policy=abort does) as soon as the file
// is seen to change, and at its end unless what it read hashes to the
// version. A replacement of the path does not matter here: the pinned
// file's bytes are still whole. Without a version (the file changed while
// it was hashed) nothing was promised, and the bytes are read as they are.
func (s *Source) Reader() io.Reader { return s.Section(0, s.Size()) }

// Section is Reader for n bytes from off (a download of a byte range),
// which must lie within the pinned size. A part of the file cannot be
// checked against the version, a hash of the whole: the reader relies on
// the check after each read, which sees any write (it changes the ctime),
// and still hashes when the section is the whole file.
func (s *Source) Section(off, n int64) io.Reader {
	if s.mem != nil {
		return bytes.NewReader(s.mem[off : off+n])
	}
	if !s.stable || s.version == "" {
		return io.NewSectionReader(s.file, off, n)
	}
	pinned := *s
	pinned.same = nil
	whole := off == 0 && n == s.info.Size()
	g := &guard{src: &pinned, off: off, h: workspace.NewVersionHash(), hashing: whole}
	if off+n == s.info.Size() {
		return g
	}
	return io.LimitReader(g, n)
}

// ModTime returns the modification time the file had when opened.
func (s *Source) ModTime() time.Time { return s.info.ModTime() }

// Span is a part of a file: Length bytes from Offset.
type Span struct{ Offset, Length int64 }

// Sections reads parts of the pinned file one after the other, each
// within the pinned size (a download of several byte ranges, sent as one
// stream); one part is Section, none an empty reader.
//
// The parts make one answer, so they must be one state of the file's:
// after every read the file is checked against that state, and a change
// fails the reader with a conflict rather than let the parts mix
// versions. The state is the one pinned at open when the file has a
// version. Without one (it changed while it was hashed) it is the state
// found now, provided the size, which the parts were resolved against,
// is the pinned one.
func (s *Source) Sections(parts []Span) io.Reader {
	switch len(parts) {
	case 0:
		return strings.NewReader("")
	case 1:
		return s.Section(parts[0].Offset, parts[0].Length)
	}
	rs := make([]io.Reader, len(parts))
	if s.mem != nil {
		for i, p := range parts {
			rs[i] = s.Section(p.Offset, p.Length)
		}
		return io.MultiReader(rs...)
	}
	pinned := *s
	pinned.same = nil
	if s.version == "" {
		if fi, err := s.file.Stat(); err == nil && fi.Size() == s.key.size {
			pinned.key = keyOf(fi)
		}
	}
	for i, p := range parts {
		rs[i] = io.LimitReader(&guard{src: &pinned, off: p.Offset, h: workspace.NewVersionHash()}, p.Length)
	}
	return io.MultiReader(rs...)
}
