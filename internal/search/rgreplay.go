package search

import (
	"bytes"
	"sort"
)

// rgRead is where ripgrep's reading of a file stopped (see rgReplay).
type rgRead struct {
	// end is where the text ripgrep searched ends, a line start: 0 when
	// it met the NUL byte in its buffer's first fill; line is the number
	// of the line starting there, as grep numbers lines (a lone CR ends
	// one, see liftCRs; ripgrep's own numbers count LFs only).
	end  int64
	line int
	// bufLine is the number of the first line of its buffer, which the
	// read that brought the NUL byte was to fill, numbered as line.
	bufLine int
}

// rgReplay replays how ripgrep 13 reads a file into its line buffer, up
// to the read that brings the file's first NUL byte, at nul (an offset in
// the text, which starts after a byte order mark). readAt reads the text
// at an offset, as it is in the file (ripgrep's fills end at LFs only, not
// at the lone CRs that grep's search reads as line breaks); keep is how
// many lines ripgrep keeps for context, max(before, after) (later
// versions keep the context before only); lastShown(n) is the last line
// before line n that a match or its context after shows, 0 if none. Line
// numbers, lastShown's included, are grep's (see rgRead).
//
// ripgrep fills its buffer with reads until one brings a line break
// (growing the buffer to three times its size when it is full), searches
// the whole lines, and keeps the last keep lines, or those after the last
// line shown if fewer, before the next fill. In a file without a byte
// order mark the first read is of 3 bytes: its decoder looks for a mark
// there and hands them on alone. ripgrep's buffer keeps its growth from
// one file to the next (it has one per thread), which cannot be
// replayed: this replays a fresh one.
func rgReplay(readAt func(p []byte, off int64) error, nul int64, bom bool, keep int,
	lastShown func(line int) int) (rgRead, error) {
	var buf []byte          // the buffer: the text from cons to read
	size := int64(rgBuffer) // its capacity
	var cons, read int64
	r := rgRead{line: 1, bufLine: 1}
	first := !bom
	for {
		nl := -1 // the fill's last line break, in buf
		for nl < 0 {
			free := size - (read - cons)
			if free == 0 {
				size *= 3
				free = size - (read - cons)
			}
			if first {
				free, first = min(free, 3), false
			}
			if nul < read+free {
				return r, nil
			}
			k := len(buf)
			buf = append(buf, make([]byte, free)...)
			if err := readAt(buf[k:], read); err != nil {
				return rgRead{}, err
			}
			read += free
			if i := bytes.LastIndexByte(buf[k:], '\n'); i >= 0 {
				nl = k + i
			}
		}
		searched := buf[:nl+1]
		r.end, r.line = cons+int64(len(searched)), r.bufLine+textLines(searched)
		consumed := len(searched)
		if keep > 0 {
			// ripgrep keeps keep+1 of its lines, but none it showed.
			consumed = lineBack(searched, keep+1)
			if v := lastShown(r.line); v > 0 {
				consumed = max(consumed, shownEnd(searched, r.line-(v+1)))
			}
		}
		r.bufLine += textLines(buf[:consumed])
		buf = buf[:copy(buf, buf[consumed:])]
		cons += int64(consumed)
	}
}

// rgContext is how many lines ripgrep 13 keeps in its buffer for context
// when it reads on.
func (s *searchState) rgContext() int {
	return max(s.q.opts.ContextBefore, s.q.opts.ContextAfter)
}

// lineBack is where the k-th line before the end of b starts (b ends
// with a line break; k = 1 is its last line), 0 if b has fewer lines.
func lineBack(b []byte, k int) int {
	if k == 0 {
		return len(b)
	}
	pos := len(b) - 1
	for ; k > 0; k-- {
		i := bytes.LastIndexByte(b[:pos], '\n')
		if i < 0 {
			return 0
		}
		pos = i
	}
	return pos + 1
}

// textLines is the number of lines grep counts in b, which is empty or
// ends with an LF: its LFs and its lone CRs (see liftCRs).
func textLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	for i := bytes.IndexByte(b, '\r'); i >= 0 && i+1 < len(b); {
		if b[i+1] != '\n' {
			n++
		}
		k := bytes.IndexByte(b[i+1:], '\r')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return n
}

// shownEnd is where ripgrep's last line shown ends in b (which ends with
// an LF) when the last k of grep's lines of b were not shown (see
// textLines): the start of the k-th of grep's lines before the end of b,
// or, when a lone CR starts it, the end of ripgrep's line holding that
// CR; 0 if b has fewer lines.
func shownEnd(b []byte, k int) int {
	pos := len(b) - 1 // the end of the line being stepped over
	for k > 0 {
		i := bytes.LastIndexAny(b[:pos], "\r\n")
		if i < 0 {
			return 0
		}
		pos = i
		if b[i] == '\r' && b[i+1] == '\n' {
			continue // a CRLF's CR: the LF after it ended a line
		}
		k--
	}
	if pos == len(b)-1 {
		return len(b)
	}
	if b[pos] == '\r' {
		pos += bytes.IndexByte(b[pos:], '\n')
	}
	return pos + 1
}

// lastShown is the last line before line n that a hit or its context
// after shows (single-line hits), 0 if none: where ripgrep's search of a
// buffer ending before line n last showed a line.
func (s *searchState) lastShown(n int) int {
	i := sort.Search(len(s.hits), func(i int) bool { return s.hits[i].line >= n }) - 1
	if i < 0 {
		return 0
	}
	h := &s.hits[i]
	return min(h.line+int(h.aHi-h.aLo), n-1)
}

// readerStop is the first line ripgrep would not show of a file it read
// up to line n before it met a NUL byte, and what it is: the first line
// it would show from line n on, a hit's context before included (it
// finds the hit, and shows that context, from the next buffer on). kind
// is 0 when it would show no line more.
func (s *searchState) readerStop(n int) (int, stopKind) {
	i := sort.Search(len(s.hits), func(i int) bool { return s.hits[i].line >= n })
	last := 0 // the last line shown before n
	if i > 0 {
		h := &s.hits[i-1]
		if last = h.line + int(h.aHi-h.aLo); last >= n {
			return n, stopAfter
		}
	}
	if i == len(s.hits) {
		return 0, 0
	}
	h := &s.hits[i]
	if first := max(h.line-int(h.bHi-h.bLo), last+1); first < h.line {
		return first, stopBefore
	}
	return h.line, stopMatch
}
