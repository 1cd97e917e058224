package search

import (
	"bytes"
	"sort"

	"github.com/fsplane/fsplane/edit"
)

// binPolicy is how a file's NUL bytes are dealt with (see "Binary files"
// in the package documentation). The ripgrep policies are named after
// rg's two ways with a binary file, quit (a file met while walking) and
// convert (a file named), and its two ways of searching one: reading it
// line by line through a buffer, or searching it whole as one slice (a
// file it maps into memory, and every file in multiline mode when the
// pattern can match a line break, see matcher.whole).
type binPolicy uint8

const (
	binSkip          binPolicy = iota // NUL in the first 8 KiB: skipped; a later one ends the search
	binLineBreaks                     // SearchBinaryStart alone: NULs read as line breaks
	binQuitReader                     // rg, a file met while walking
	binConvertReader                  // rg, a file named, read
	binQuitSlice                      // rg, a file met while walking, multiline
	binConvertSlice                   // rg, a file named, mapped or multiline
)

const (
	binaryProbe = 8 << 10 // binSkip: NUL in this prefix: binary, skipped
	// rgBuffer is the size of ripgrep's line buffer, which a file is read
	// into; a slice is looked at for NUL bytes in its first rgBuffer bytes
	// (grep-searcher's DEFAULT_BUFFER_CAPACITY).
	rgBuffer = 64 << 10
)

// stopKind is what ripgrep was about to show when it stopped at a NUL
// byte.
type stopKind uint8

const (
	stopAfter  stopKind = iota + 1 // a line of context after a match
	stopBefore                     // a line of context before a match
	stopMatch                      // a match
)

// binState is what a searchState knows of the NUL bytes of the file it
// searches. Offsets are in the file's text, after a byte order mark.
type binState struct {
	pol binPolicy
	bom bool // the file begins with a byte order mark
	// binAt is the offset of the first NUL byte of a file that is binary
	// from the start (binLineBreaks, binConvertReader, binConvertSlice)
	// and searched all the same; -1 for none.
	binAt int64
	// nul is, for the reader policies, the offset of the file's first
	// NUL byte; -1 for none. When it was found in the first chunk, the
	// replay without context is done at once (replayed, replay).
	nul      int64
	replayed bool
	replay   rgRead
	base     int64 // the offset of s.buf[0]
	// track says to note the lines shown that have a NUL byte (noteNUL):
	// the slice policies, for a file not binary from the start. nulLine
	// is the first such line (0 for none), nulKind what it is, nulOff
	// the offset of its first NUL byte.
	track   bool
	nulLine int
	nulKind stopKind
	nulOff  int64
	// What ripgrep shows (see settleBinary): the lines before stop (0:
	// all), the first shown hits and their context; then its "--" when
	// sep; then, when stopped, its warning that it stopped at a NUL byte,
	// or when binary its "binary file matches", naming binOff.
	stop, shown          int
	sep, stopped, binary bool
	binOff               int64
	// cutAt is, for binSkip and binLineBreaks, the offset of the NUL byte
	// after the first 8 KiB that ends the search of the file before its
	// line; -1 for none. cutLine and cutNUL are what noteCut made of it
	// (see BinaryCut); cutLine is 0 while the search did not get there.
	cutAt   int64
	cutLine int
	cutNUL  int64
}

// policy is the binary policy for a file; start says it is the search's
// start, bom that it begins with a byte order mark (rg then reads it
// through its decoder, never from a map).
func (s *searchState) policy(start, bom bool) binPolicy {
	o := &s.q.opts
	convert := start && o.SearchBinaryStart
	switch {
	case !o.RipgrepBinary && convert:
		return binLineBreaks
	case !o.RipgrepBinary:
		return binSkip
	case s.m.whole && !convert:
		return binQuitSlice
	case s.m.whole || convert && o.RipgrepMapped && !bom:
		return binConvertSlice
	case convert:
		return binConvertReader
	}
	return binQuitReader
}

// probeBinary looks for NUL bytes in the first n bytes of the file, in
// s.buf, as its policy has it: statusBinary when the file is skipped,
// statusNone otherwise.
func (s *searchState) probeBinary(n int) fileStatus {
	switch s.pol {
	case binSkip, binLineBreaks:
		if i := bytes.IndexByte(s.buf[:min(n, binaryProbe)], 0); i >= 0 {
			if s.pol == binSkip {
				return statusBinary
			}
			s.binAt = int64(i)
		}
	case binQuitSlice, binConvertSlice:
		if i := bytes.IndexByte(s.buf[:min(n, rgBuffer)], 0); i >= 0 {
			if s.pol == binQuitSlice {
				return statusBinary
			}
			s.binAt = int64(i)
			return statusNone
		}
		s.track = true
	case binQuitReader, binConvertReader:
		i := bytes.IndexByte(s.buf[:n], 0)
		if i < 0 {
			return statusNone
		}
		s.nul = int64(i)
		s.replay, _ = rgReplay(func(p []byte, off int64) error {
			copy(p, s.buf[off:])
			return nil
		}, s.nul, s.bom, 0, nil)
		s.replayed = true
		if s.replay.end == 0 {
			// In ripgrep's first fill of its buffer.
			if s.pol == binQuitReader {
				return statusBinary
			}
			s.binAt = s.nul
		}
	}
	return statusNone
}

// probeRest looks, for the reader policies, for the first NUL byte in
// s.buf[from:n], the rest of a file read whole after its first chunk
// went through probeBinary.
func (s *searchState) probeRest(from, n int) {
	if (s.pol == binQuitReader || s.pol == binConvertReader) && s.nul < 0 {
		if i := bytes.IndexByte(s.buf[from:n], 0); i >= 0 {
			s.nul = int64(from + i)
		}
	}
}

// chunkNULs deals with the NUL bytes of s.buf[scanned:n], freshly read
// into the buffer of a file searched in chunks, and returns the end of
// the text to search and whether the search ends there.
func (s *searchState) chunkNULs(scanned, n int, eof bool) (int, bool) {
	switch s.pol {
	case binSkip, binQuitReader:
		// Stop at a NUL, before its line (binSkip: after the first 8
		// KiB, which were checked; binQuitReader: settleBinary says how
		// far before).
		if i := bytes.IndexByte(s.buf[scanned:n], 0); i >= 0 {
			if s.pol == binQuitReader && s.nul < 0 {
				s.nul = s.base + int64(scanned+i)
			} else if s.pol == binSkip {
				s.cutAt = s.base + int64(scanned+i)
			}
			return bytes.LastIndexByte(s.buf[:scanned+i], '\n') + 1, true
		}
	case binLineBreaks:
		if s.binAt >= 0 {
			nulToLF(s.buf[scanned:n])
		} else if i := bytes.IndexByte(s.buf[scanned:n], 0); i >= 0 {
			s.cutAt = s.base + int64(scanned+i)
			return bytes.LastIndexByte(s.buf[:scanned+i], '\n') + 1, true
		}
	case binConvertReader:
		if s.nul < 0 {
			if i := bytes.IndexByte(s.buf[scanned:n], 0); i >= 0 {
				s.nul = s.base + int64(scanned+i)
			}
		}
		if s.nul >= 0 {
			nulToLF(s.buf[scanned:n])
		}
	}
	return n, eof
}

// noteCut records, once the search of a file cut at a NUL byte (cutAt)
// is over, where it stopped: before the line starting at buf[end], the
// end of the text searched. A search that the per-file match limit ended
// first was not stopped by the NUL byte, and is not recorded.
func (s *searchState) noteCut(buf []byte, end int) {
	if s.cutAt < 0 || s.truncated {
		return
	}
	s.cutLine, s.cutNUL = s.lineAt(buf, end), s.cutAt
	if s.bom {
		s.cutNUL += int64(len(edit.BOM))
	}
}

// noteNUL records, for the slice policies, a line about to be shown (a
// hit's lines or a context line, kind), seg at offset at of the buffer:
// the first shown line with a NUL byte is where ripgrep stops. A line
// shown as context after a hit is recorded before it is as context
// before the next, as ripgrep shows it. A match's seg may be a later
// part of ripgrep's block of matches that starts at line: ripgrep names
// the block's first NUL byte.
func (s *searchState) noteNUL(seg []byte, at, line int, kind stopKind) {
	i := bytes.IndexByte(seg, 0)
	if i < 0 {
		return
	}
	off := s.base + int64(at+i)
	switch {
	case s.nulLine == 0 || line < s.nulLine:
		s.nulLine, s.nulKind, s.nulOff = line, kind, off
	case line == s.nulLine && kind == stopMatch:
		s.nulKind, s.nulOff = kind, min(s.nulOff, off)
	}
}

// settleBinary decides, under RipgrepBinary, what ripgrep shows of a file
// searched whole (its hits in s) and what it says of its NUL bytes (see
// binState). readAt reads the file's text as it is in the file (its lone
// CRs and NUL bytes not turned into line breaks).
func (s *searchState) settleBinary(readAt func(p []byte, off int64) error) (fileStatus, error) {
	var stop int
	var kind stopKind
	switch s.pol {
	case binQuitReader, binConvertReader:
		if s.nul < 0 || len(s.hits) == 0 {
			// Without hits nothing is shown either way (a NUL byte in
			// ripgrep's first fill was dealt with by probeBinary): no
			// second read of the file to replay ripgrep's buffer.
			return statusSearched, nil
		}
		r := s.replay
		if keep := s.rgContext(); !s.replayed || keep > 0 && r.end > 0 {
			// With context, where ripgrep's buffer ends depends on the
			// lines it showed.
			var err error
			if r, err = rgReplay(readAt, s.nul, s.bom, keep, s.lastShown); err != nil {
				return statusFailed, err
			}
		}
		s.binOff = s.nul
		if s.pol == binQuitReader {
			// ripgrep never searches the buffer that has the NUL.
			s.stopped = true
			if r.end == 0 {
				s.hits = s.hits[:0]
				return statusBinary, nil
			}
		}
		if stop, kind = s.readerStop(r.line); kind == 0 {
			s.binary = s.pol == binConvertReader
			return statusSearched, nil
		}
		s.setStop(stop)
		// ripgrep's buffer starts at line bufLine: a line after it is
		// apart from the last one shown, to its reckoning.
		s.sep = s.pol == binConvertReader && kind != stopAfter && stop > r.bufLine
	case binQuitSlice, binConvertSlice:
		stop, kind, s.binOff = s.nulLine, s.nulKind, s.nulOff
		if s.binAt >= 0 && len(s.hits) > 0 {
			// Binary from the start: ripgrep stops at the first line
			// it would show.
			h := &s.hits[0]
			stop, kind, s.binOff = h.line-int(h.bHi-h.bLo), stopBefore, s.binAt
			if stop == h.line {
				kind = stopMatch
			}
		}
		if stop == 0 {
			return statusSearched, nil
		}
		s.setStop(stop)
		s.stopped = s.pol == binQuitSlice
		// ripgrep prints its separator before a line of context before
		// a match and then looks for a NUL byte in it; in a match it
		// looks first when it quits, and prints the separator first
		// when it converts.
		s.sep = (kind == stopBefore || kind == stopMatch && !s.stopped) && stop > s.lastPrinted()+1
	}
	s.binary = s.pol == binConvertReader || s.pol == binConvertSlice
	s.binary = s.binary && (s.shown > 0 || kind == stopMatch)
	s.sep = s.sep && s.shown > 0 && s.q.opts.ContextBefore+s.q.opts.ContextAfter > 0
	return statusSearched, nil
}

// setStop shows the lines before line n only.
func (s *searchState) setStop(n int) {
	s.stop = n
	s.shown = sort.Search(len(s.hits), func(i int) bool { return s.hits[i].line >= n })
}

// lastPrinted is the last line shown before the stop, 0 if none.
func (s *searchState) lastPrinted() int {
	if s.shown < len(s.hits) {
		h := &s.hits[s.shown]
		if h.line-int(h.bHi-h.bLo) < s.stop {
			return min(h.line, s.stop) - 1 // the context before it shown
		}
	}
	if s.shown == 0 {
		return 0
	}
	h := &s.hits[s.shown-1]
	last := h.line + bytes.Count(s.text()[h.off:h.end], []byte{'\n'})
	return min(last+int(h.aHi-h.aLo), s.stop-1)
}
