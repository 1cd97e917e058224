package proto

import (
	"fmt"
	"time"
)

// RangeRequest is one HTTP byte range (RFC 9110 §14.1.2), bytes=First-Last,
// asked of a download. The hub passes it as the client wrote it and the
// host resolves it against the file it opened: only the host knows the
// size, and resolving there keeps the size and the bytes one file's.
type RangeRequest struct {
	// First is the first byte; nil for a suffix range (bytes=-Last): the
	// last Last bytes of the file.
	First *int64 `json:",omitempty"`
	// Last is the last byte, inclusive; nil for up to the end of the file.
	Last *int64 `json:",omitempty"`
	// IfVersion and IfModTime make the range conditional, as HTTP's
	// If-Range does: the host sends the range only while the file has this
	// version, or a modification time within this second, and otherwise
	// the whole file. A client resuming a download thus never gets bytes
	// of another version spliced onto those it has.
	IfVersion string     `json:",omitempty"`
	IfModTime *time.Time `json:",omitempty"`
}

// ByteRange is a part of a file: Length bytes from Offset.
type ByteRange struct {
	Offset int64
	Length int64
}

// Check reports a range no file can satisfy the syntax of: neither end,
// a negative one, or a last byte before the first.
func (r *RangeRequest) Check() error {
	switch {
	case r.First == nil && r.Last == nil:
		return fmt.Errorf("a range needs a first or a last byte")
	case r.First != nil && *r.First < 0, r.Last != nil && *r.Last < 0:
		return fmt.Errorf("a range cannot have a negative byte position")
	case r.First != nil && r.Last != nil && *r.Last < *r.First:
		return fmt.Errorf("a range cannot end (%d) before it starts (%d)", *r.Last, *r.First)
	}
	return nil
}

// Part is what a download of a file with this size, version and
// modification time sends for r (which passed Check). ok false means the
// whole file, as though no range had been asked: an If-Range condition
// that does not hold, or an empty file (net/http serves an empty file
// whole to a Range too, as clients that add a Range to every request
// expect). Otherwise part is the range, clipped to the file; its Length is
// 0 when the range starts at or past the end (or is an empty suffix), and
// no bytes are sent. Host and hub both call it: the host to serve, the
// hub to check that what the host says it served is what was asked.
func (r *RangeRequest) Part(size int64, version string, modTime time.Time) (part ByteRange, ok bool) {
	if size <= 0 || !r.holds(version, modTime) {
		return ByteRange{}, false
	}
	if r.First == nil {
		n := min(*r.Last, size)
		return ByteRange{Offset: size - n, Length: n}, true
	}
	first := *r.First
	if first >= size {
		return ByteRange{}, true
	}
	last := size - 1
	if r.Last != nil {
		last = min(*r.Last, last)
	}
	return ByteRange{Offset: first, Length: last - first + 1}, true
}

// holds reports whether r's If-Range condition, if any, holds for a file
// with this version and modification time. A file without a version (it
// changed while it was hashed) matches no version, as a response without
// an ETag matches no If-Range tag; the time matches to the second, as
// HTTP dates go.
func (r *RangeRequest) holds(version string, modTime time.Time) bool {
	if r.IfVersion != "" && r.IfVersion != version {
		return false
	}
	if r.IfModTime != nil && (modTime.IsZero() || r.IfModTime.Unix() != modTime.Unix()) {
		return false
	}
	return true
}
