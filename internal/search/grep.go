package search

import (
	"bytes"
	"context"
	"errors"
	"os"

	"github.com/fsplane/fsplane/edit"
)

// FileMatches is the matches of one file, handed to Stream's collect
// function. The lines it gives alias buffers that are reused once collect
// returns: copy what must outlive the call.
type FileMatches struct {
	// Path is relative to the search start, slash-separated; "" when the
	// start itself is the file.
	Path string
	// Truncated is set when the file had more matches than the per-file
	// limit (Options.Offset + Options.MaxResults + 1) and the rest were
	// not looked for.
	Truncated bool
	// Binary says, without Options.RipgrepBinary, that the file is
	// binary (a NUL byte in its first 8 KiB) and was searched all the
	// same, its NUL bytes read as line breaks (Options.SearchBinaryStart):
	// its lines are not text to show. With RipgrepBinary, it says that
	// ripgrep, having shown the Len() matches (none, for a file binary
	// from the start), would say "binary file matches (found "\0" byte
	// around offset N)" of the file, N being BinaryOffset.
	Binary bool
	// Stopped says, with Options.RipgrepBinary, that ripgrep stopped
	// searching the file, met while walking, at a NUL byte after the
	// Len() matches, and would say so when there were some ("WARNING:
	// stopped searching binary file after match (found "\0" byte around
	// offset N)"), N being BinaryOffset; rg -c leaves such a file out.
	Stopped bool
	// BinaryOffset is, when Binary or Stopped, the offset of a NUL byte
	// in the file's text after a byte order mark, with RipgrepBinary or
	// without (unlike BinaryCut.Offset, which counts the mark): the
	// first NUL byte of a file binary from the start, otherwise the one
	// ripgrep names.
	BinaryOffset int64
	// Separated says, with Options.RipgrepBinary, that ripgrep printed
	// its context separator ("--") for lines it then did not show, after
	// the lines it showed and before what it says of the file (Binary,
	// Stopped).
	Separated bool
	s         *searchState
}

// Len is the number of matches to show: all of them, except that with
// Options.RipgrepBinary, those ripgrep would not show of a binary file
// are left out (see Count and Partial).
func (fm *FileMatches) Len() int {
	if fm.s.stop > 0 {
		return fm.s.shown
	}
	return len(fm.s.hits)
}

// Partial returns, with Options.RipgrepBinary, what ripgrep would show
// of the first match it does not show of a binary file, when that is
// some of the context before it (it stopped at the match itself, or at a
// line of that context): a LineMatch whose Before are those lines and
// whose Number is the line after them, where ripgrep stopped; and true.
func (fm *FileMatches) Partial() (LineMatch, bool) {
	s := fm.s
	if s.stop == 0 || s.shown == len(s.hits) {
		return LineMatch{}, false
	}
	h := &s.hits[s.shown]
	n := min(int(h.bHi-h.bLo), s.stop-h.line+int(h.bHi-h.bLo))
	if n <= 0 {
		return LineMatch{}, false
	}
	return LineMatch{Number: s.stop, Before: s.ctxLines(s.text(), h.bLo, h.bLo+int32(n))}, true
}

// Count is what rg -c reports for the file: the number of lines that
// match; but in multiline mode, when the pattern can match a line break,
// the number of matches (several may share a line, which Len counts
// once). Matches Len leaves out are counted, as rg -c counts them in a
// file named on its command line; one it leaves out when Stopped.
func (fm *FileMatches) Count() int {
	if fm.s.m.multiline && fm.s.m.breaks {
		return fm.s.nmatch
	}
	return len(fm.s.hits)
}

// Line returns match i (0 <= i < Len()), in line order. Matches are not
// materialised as a slice: a file can have millions.
func (fm *FileMatches) Line(i int) LineMatch {
	s := fm.s
	h := &s.hits[i]
	text := s.text()
	lm := LineMatch{Number: h.line, Text: text[h.off:h.end:h.end]}
	if h.bHi > h.bLo {
		lm.Before = s.ctxLines(text, h.bLo, h.bHi)
	}
	if h.aHi > h.aLo {
		lm.After = s.ctxLines(text, h.aLo, h.aHi)
		if s.stop > 0 {
			last := h.line + bytes.Count(lm.Text, []byte{'\n'})
			lm.After = lm.After[:min(len(lm.After), max(s.stop-last-1, 0))]
		}
	}
	return lm
}

// LineMatch is one matching line (or, in multiline mode, one match and
// the lines it touches).
type LineMatch struct {
	Number int    // 1-based line number of the (first) line
	Text   []byte // the line(s), without the final line terminator
	Before [][]byte
	After  [][]byte
}

// Stats count what a search looked at, over the files up to the point the
// search stopped (all files, unless MaxResults cut it short), so they are
// deterministic.
type Stats struct {
	FilesSearched      int // text files searched
	FilesMatched       int // files with at least one match
	FilesSkippedSize   int // larger than MaxFileSize
	FilesSkippedBinary int // a NUL byte in the first 8 KiB (see Options.RipgrepBinary)
	// FilesCutBinary counts the files, counted in FilesSearched, whose
	// first NUL byte comes after their first 8 KiB: their search ended at
	// the line before it, so matches further on were not looked for (see
	// BinaryCut); CutBinary are the first 10 of them, in path order. A
	// file whose search ended before the NUL, at the per-file match limit
	// (Grep's Offset + MaxResults + 1 matches, FileMatches.Truncated), is
	// not counted: the NUL byte did not stop it. One that reached the NUL
	// is, even when Grep's MaxResults then truncates the answer within
	// it, as it counts in FilesSearched. RipgrepBinary's searches never
	// count here: the CLI reports such a file as ripgrep does
	// (FileMatches.Stopped).
	FilesCutBinary int
	CutBinary      []BinaryCut
	// Errors are the first problems with single paths (unreadable files,
	// directories); ErrorCount counts them all. They do not stop a search.
	Errors     []PathError
	ErrorCount int
}

// BinaryCut is where the search of a file stopped at a NUL byte (see
// Stats.FilesCutBinary). The lines before Line were searched; Line and
// those after it were not. Such a file is text up to there, often all
// but a stray NUL (a log), so a caller can read it from Line on.
type BinaryCut struct {
	Path string // relative to the start, as Match.Path
	// Line is the 1-based number of the line holding the NUL byte,
	// counting lines as Match.LineNumber does.
	Line int
	// Offset is the NUL byte's offset in the file, a byte order mark
	// included (unlike FileMatches.BinaryOffset): where a byte range
	// download of the rest starts.
	Offset int64
}

// maxBinaryCuts bounds Stats.CutBinary: the first few are enough to
// name, the count says how many more.
const maxBinaryCuts = 10

// PathError is a problem with one path of a search.
type PathError struct {
	Path string // relative to the start
	Err  error
}

func (e PathError) Error() string { return e.Path + ": " + e.Err.Error() }

// ErrStop can be returned by an emit function to end a search early
// without an error.
var ErrStop = errors.New("search stopped")

const (
	chunkSize = 1 << 20   // files are searched in chunks of this size
	multiMax  = 256 << 20 // multiline search reads the whole file: its cap
)

type fileStatus uint8

const (
	statusNone fileStatus = iota
	statusSearched
	statusBinary
	statusTooLarge
	statusFailed
)

type fileOutcome[T any] struct {
	status    fileStatus
	matches   int
	truncated bool
	cut       BinaryCut // Line > 0: the search stopped at a NUL byte
	err       error
	v         T
	held      int64 // approximate memory of v: the matched text
}

// Stream searches the tree at start (a directory or a file, relative to
// root; "." is the root) with q. collect runs concurrently on worker
// goroutines, once for each file with a match, and turns its matches into
// a T; emit runs once per such file, one call at a time (never
// concurrently), in path order (see walkTree), with the file's path
// relative to start. An error
// returned by emit ends the search; ErrStop ends it without an error.
// Nothing outside root is read, and no symbolic link met while walking
// is followed unless q's FollowLinks is set (see Options.FollowLinks).
func Stream[T any](ctx context.Context, root *os.Root, start string, q *Query,
	collect func(*FileMatches) T, emit func(path string, v T) error) (Stats, error) {
	return stream(ctx, root, start, q, 0, collect, emit)
}

// stream is Stream with a per-file match limit (0: none).
func stream[T any](ctx context.Context, root *os.Root, start string, q *Query, limit int,
	collect func(*FileMatches) T, emit func(path string, v T) error) (Stats, error) {
	var st Stats
	wo := q.walkOptions()
	wo.heldBytes = func(r any) int64 { return r.(*fileOutcome[T]).held }
	process := func(f *fileRef, local *any) fileOutcome[T] {
		s, _ := (*local).(*searchState)
		if s == nil {
			s = newSearchState(q)
			s.call = ctx
			*local = s
		}
		var out fileOutcome[T]
		fh, err := f.open()
		if err != nil {
			if !isVanished(err) {
				out.status, out.err = statusFailed, err
			}
			return out
		}
		if f.file == nil {
			defer fh.close()
		}
		out.status, out.err = s.searchFile(fh, limit, f.file != nil)
		if out.status == statusSearched && s.cutLine > 0 {
			out.cut = BinaryCut{Line: s.cutLine, Offset: s.cutNUL}
		}
		if len(s.hits) > 0 {
			fm := s.matches(f.Rel)
			out.matches, out.truncated = len(s.hits), fm.Truncated
			out.v = collect(fm)
			for _, h := range s.hits {
				out.held += int64(h.end-h.off+len(f.Rel)) + 48
			}
		}
		return out
	}
	errs, nErr, err := walkTree(ctx, root, start, wo, process, func(n *node[fileOutcome[T]]) error {
		o := &n.res
		switch o.status {
		case statusSearched:
			st.FilesSearched++
			if o.cut.Line > 0 {
				st.FilesCutBinary++
				if len(st.CutBinary) < maxBinaryCuts {
					o.cut.Path = n.rel
					st.CutBinary = append(st.CutBinary, o.cut)
				}
			}
		case statusBinary:
			st.FilesSkippedBinary++
		case statusTooLarge:
			st.FilesSkippedSize++
		case statusFailed:
			st.ErrorCount++
			if len(st.Errors) < maxWalkErrors {
				st.Errors = append(st.Errors, PathError{Path: n.rel, Err: o.err})
			}
		}
		if o.matches == 0 {
			return nil
		}
		st.FilesMatched++
		return emit(n.rel, o.v)
	})
	for _, e := range errs {
		if len(st.Errors) < maxWalkErrors {
			st.Errors = append(st.Errors, PathError{Path: e.Rel, Err: e.Err})
		}
	}
	st.ErrorCount += nErr
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return st, err
}

// span is a byte range of the text store (the file buffer, or the arena
// for chunked files).
type span struct{ off, end int }

// hitRec is one match: its first line's number and its text in the
// store. Kept small: a file can have millions.
type hitRec struct {
	line     int
	off, end int
	bLo, bHi int32 // context before: ctx[bLo:bHi]
	aLo, aHi int32 // context after
}

// searchState is one worker's reusable buffers. Not safe for concurrent
// use; Stream keeps them in a sync.Pool.
type searchState struct {
	call      context.Context // the search's; checked between chunks of large files
	q         *Query
	m         *matcher
	find      finder
	buf       []byte
	arena     []byte
	copy      bool // hits are copied to the arena (chunked files)
	hits      []hitRec
	ctx       []span
	starts    []int
	truncated bool
	nmatch    int // multiline mode: the matches taken, several per hit at times
	binState

	// line counting: the line number of the line that starts at cntPos
	cntPos, cntLine int
}

func newSearchState(q *Query) *searchState {
	s := &searchState{q: q, m: q.m}
	if q.m.lits != nil {
		s.find = newFinder(q.m.lits)
	}
	return s
}

// searchFile reads and searches one open file, leaving the hits in s;
// start says it is the search's start.
//
// Small files are read whole with one read(2): the file is not fstat'ed
// and a read that returns less than asked for is taken as the end of the
// file, as it is for regular files on local file systems (a file that
// grows meanwhile is searched as it was). Files larger than the buffer
// are searched in chunks; in multiline mode they are read whole. What a
// NUL byte does is the file's binPolicy's.
func (s *searchState) searchFile(fh fileHandle, limit int, start bool) (fileStatus, error) {
	s.hits, s.ctx, s.arena, s.truncated, s.nmatch = s.hits[:0], s.ctx[:0], s.arena[:0], false, 0
	// Do not keep the buffer of an unusually large file in the pool.
	if cap(s.buf) > 4*chunkSize {
		s.buf = nil
	}
	if cap(s.arena) > 4*chunkSize {
		s.arena = nil
	}
	s.grow(chunkSize)
	n, eof, err := fill(fh, s.buf, 0)
	if err != nil {
		return statusFailed, err
	}
	bom := 0 // bytes dropped from the start of the file
	if edit.HasBOM(s.buf[:n]) {
		// A UTF-8 byte order mark is no part of line 1, as ripgrep and
		// read see it: drop it here, once, so no line scan has to know.
		// Every path below (whole, chunked, multiline) starts from this
		// buffer, and whatever is read next is appended after n. The
		// copy is at most one chunk, and only for files with a BOM.
		bom = len(edit.BOM)
		n = copy(s.buf, s.buf[bom:n])
	}
	s.binState = binState{pol: s.policy(start, bom > 0), bom: bom > 0, binAt: -1, nul: -1, cutAt: -1}
	if st := s.probeBinary(n); st != statusNone {
		return st, nil
	}
	maxSize := s.q.opts.MaxFileSize
	if s.m.multiline && !eof {
		// Multiline matches may span any distance: read it all.
		probed := n
		for !eof {
			if int64(n) > multiMax || (maxSize > 0 && int64(n+bom) > maxSize) {
				return statusTooLarge, nil
			}
			nb := make([]byte, 2*len(s.buf))
			copy(nb, s.buf[:n])
			s.buf = nb
			if n, eof, err = fill(fh, s.buf, n); err != nil {
				return statusFailed, err
			}
		}
		s.probeRest(probed, n)
	}
	if maxSize > 0 && int64(n+bom) > maxSize {
		return statusTooLarge, nil
	}
	if !eof {
		if maxSize > 0 {
			// Large file: ask its size rather than find out by reading
			// (a search that stops early would never find out).
			if size, _, _, err := fh.stat(); err == nil && size > maxSize {
				return statusTooLarge, nil
			}
		}
		st, err := s.searchChunked(fh, n, bom, limit)
		if st != statusSearched || !s.q.opts.RipgrepBinary {
			return st, err
		}
		return s.settleBinary(func(p []byte, off int64) error { return fh.readAt(p, off+int64(bom)) })
	}
	buf := s.buf[:n]
	if s.pol == binLineBreaks && s.binAt >= 0 || s.pol == binConvertReader && s.nul >= 0 {
		nulToLF(buf)
	}
	lifted := liftCRs(buf, true)
	switch {
	case (s.pol == binSkip || s.pol == binLineBreaks) && n > binaryProbe:
		// A NUL further on: stop before its line, as ripgrep stops
		// searching a file at the first NUL.
		if i := bytes.IndexByte(buf[binaryProbe:], 0); i >= 0 {
			s.cutAt = int64(binaryProbe + i)
			buf = buf[:bytes.LastIndexByte(buf[:binaryProbe+i], '\n')+1]
		}
	case s.pol == binQuitReader && s.nul >= 0:
		// ripgrep stops before; settleBinary says where.
		buf = buf[:bytes.LastIndexByte(buf[:s.nul], '\n')+1]
	}
	s.copy = false
	s.cntPos, s.cntLine = 0, 1
	if s.find != nil {
		s.find.reset()
	}
	if s.m.multiline {
		s.scanMulti(buf, limit)
	} else {
		s.scanLines(buf, 0, len(buf), len(buf), limit)
	}
	s.noteCut(buf, len(buf))
	if !s.q.opts.RipgrepBinary {
		return statusSearched, nil
	}
	if lifted {
		// ripgrep's fills do not end at the lone CRs s.buf now has as
		// line breaks: the replay reads the file again.
		return s.settleBinary(func(p []byte, off int64) error { return fh.readAt(p, off+int64(bom)) })
	}
	return s.settleBinary(func(p []byte, off int64) error {
		copy(p, s.buf[off:])
		return nil
	})
}

// nulToLF turns each NUL byte in b into LF, in place.
func nulToLF(b []byte) {
	for i := bytes.IndexByte(b, 0); i >= 0; {
		b[i] = '\n'
		k := bytes.IndexByte(b[i+1:], 0)
		if k < 0 {
			return
		}
		i += 1 + k
	}
}

// liftCRs turns each lone CR in b into LF, in place: a CR not followed by
// LF ends a line (old Mac text), as edit and read count lines, so the line
// numbers grep reports are the ones line edits take. CRLF stays. A CR that
// ends b is left unless final: the next read may bring its LF. Files
// without CR cost one IndexByte pass. It reports whether it turned any.
func liftCRs(b []byte, final bool) bool {
	lifted := false
	for i := 0; ; i++ {
		k := bytes.IndexByte(b[i:], '\r')
		if k < 0 {
			return lifted
		}
		i += k
		if i+1 < len(b) && b[i+1] != '\n' || i+1 == len(b) && final {
			b[i], lifted = '\n', true
		}
	}
}

// fill reads into buf[n:] until it is full or the file ends; a short
// read counts as the end (see searchFile).
func fill(fh fileHandle, buf []byte, n int) (int, bool, error) {
	for n < len(buf) {
		k, err := fh.read(buf[n:])
		if err != nil {
			return n, true, err
		}
		want := len(buf) - n
		n += k
		if k < want {
			return n, true, nil
		}
	}
	return n, false, nil
}

// grow makes s.buf at least n bytes long, keeping nothing.
func (s *searchState) grow(n int) {
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	s.buf = s.buf[:cap(s.buf)]
}

// searchChunked searches a file larger than the buffer, which holds its
// first n bytes (after the skipped bytes of a BOM), carrying the
// unfinished last line (and the context lines the next chunk needs) from
// one chunk to the next. Hits are copied to the arena.
func (s *searchState) searchChunked(fh fileHandle, n, skipped, limit int) (fileStatus, error) {
	s.copy = true
	s.cntPos, s.cntLine = 0, 1
	before, after := s.q.opts.ContextBefore, s.q.opts.ContextAfter
	maxSize := s.q.opts.MaxFileSize
	total := int64(skipped + n) // bytes read so far
	from := 0                   // where the unsearched part starts
	eof := false
	scanned := 0 // bytes of the buffer already checked for NUL
	for {
		liftCRs(s.buf[from:n], eof)
		n, eof = s.chunkNULs(scanned, n, eof)
		scanned = n
		end := n
		if !eof {
			// Search whole lines only, and leave `after` complete lines
			// behind them so their context is in the buffer.
			end = from
			if i := bytes.LastIndexByte(s.buf[from:n], '\n'); i >= 0 {
				end = from + i + 1
				for k := 0; k < after && end > from; k++ {
					end = from + bytes.LastIndexByte(s.buf[from:end-1], '\n') + 1
				}
			}
		}
		if end > from || eof {
			if s.find != nil {
				s.find.reset()
			}
			if !s.scanLines(s.buf[:n], from, end, n, limit) || eof {
				break
			}
			// Carry over `before` lines before end, and everything after.
			keep := end
			for k := 0; k < before && keep > 0; k++ {
				keep = bytes.LastIndexByte(s.buf[:keep-1], '\n') + 1
			}
			s.lineAt(s.buf, end)
			copy(s.buf, s.buf[keep:n])
			s.base += int64(keep)
			n -= keep
			scanned -= keep
			from = end - keep
			s.cntPos = from
		}
		if n == len(s.buf) {
			// Not one whole line (plus context) fits: grow the buffer.
			nb := make([]byte, 2*len(s.buf))
			copy(nb, s.buf[:n])
			s.buf = nb
		}
		if s.call != nil && s.call.Err() != nil {
			return statusNone, nil
		}
		m, e, err := fill(fh, s.buf, n)
		if err != nil {
			return statusFailed, err
		}
		total += int64(m - n)
		n, eof = m, e
		if maxSize > 0 && total > maxSize {
			s.hits, s.ctx, s.truncated = s.hits[:0], s.ctx[:0], false
			return statusTooLarge, nil
		}
	}
	s.noteCut(s.buf, n)
	return statusSearched, nil
}

// lineAt returns the 1-based number of the line starting at pos, counting
// forward from the last position asked about.
func (s *searchState) lineAt(buf []byte, pos int) int {
	s.cntLine += bytes.Count(buf[s.cntPos:pos], []byte{'\n'})
	s.cntPos = pos
	return s.cntLine
}

// scanLines finds the matching lines that start in buf[from:end] (end is
// at a line start or the end of the data); context may reach up to
// buf[:dataEnd]. It returns false when the per-file limit was reached.
func (s *searchState) scanLines(buf []byte, from, end, dataEnd, limit int) bool {
	m := s.m
	pos := from
	if s.find != nil {
		hay := buf[:end]
		for pos < end {
			c := s.find.find(hay, pos)
			if c < 0 {
				break
			}
			ls := bytes.LastIndexByte(buf[pos:c], '\n') + 1 + pos
			le := end
			if i := bytes.IndexByte(buf[c:end], '\n'); i >= 0 {
				le = c + i
			}
			if m.win != nil && !m.win.ok(buf, c, len(m.lits.lits[0]), ls, le) {
				// Not this occurrence; another one in the line may do.
				c = s.find.find(hay[:le], c+1)
				for c >= 0 && !m.win.ok(buf, c, len(m.lits.lits[0]), ls, le) {
					c = s.find.find(hay[:le], c+1)
				}
				if c < 0 {
					pos = le + 1
					continue
				}
			}
			if m.exact || m.regexpFor(buf[ls:le]).Match(buf[ls:le]) {
				if !s.hit(buf, ls, le, dataEnd, limit) {
					return false
				}
			}
			pos = le + 1
		}
		return true
	}
	// No literal: run the regexp over the rest of the buffer, then check
	// the line it found on its own (a match can run into the next line
	// through \s or [^x]).
	re := m.regexpFor(buf[from:end])
	for pos < end {
		loc := re.FindIndex(buf[pos:end])
		if loc == nil {
			break
		}
		st, en := pos+loc[0], pos+loc[1]
		if st >= end && (end == 0 || buf[end-1] == '\n') {
			break // an empty match after the last line terminator
		}
		ls := bytes.LastIndexByte(buf[pos:st], '\n') + 1 + pos
		le := end
		if i := bytes.IndexByte(buf[st:end], '\n'); i >= 0 {
			le = st + i
		}
		if en <= le || re.Match(buf[ls:le]) {
			if !s.hit(buf, ls, le, dataEnd, limit) {
				return false
			}
		}
		pos = le + 1
	}
	return true
}

// scanMulti finds matches in a whole file, which may span lines.
func (s *searchState) scanMulti(buf []byte, limit int) {
	if s.find != nil && s.find.find(buf, 0) < 0 {
		return
	}
	re := s.m.regexpFor(buf)
	anchored := s.m.anchoredTwin(re)
	lastEnd := -1 // where the last hit's last line ends
	// block is the first line of ripgrep's block of matches the last hit
	// is in: ripgrep joins a match that starts on a line of the last one
	// or the line after it into one block, and when a line of the block
	// has a NUL byte, it stops before the whole block (noteNUL).
	block := 0
	// take records the match buf[st:en]; false ends the search.
	take := func(st, en int) bool {
		last := st
		if en > st {
			last = en - 1
		}
		le := len(buf)
		if i := bytes.IndexByte(buf[last:], '\n'); i >= 0 {
			le = last + i
		}
		if st <= lastEnd {
			// The match starts on a line the last hit has: widen it,
			// so no line is reported twice.
			if le > lastEnd {
				s.widen(buf, le, block)
				lastEnd = le
			}
			s.nmatch++
			return true
		}
		ls := bytes.LastIndexByte(buf[:st], '\n') + 1
		if !s.hit(buf, ls, le, len(buf), limit) {
			return false
		}
		if block > 0 && ls == lastEnd+1 {
			if s.track {
				s.noteNUL(buf[ls:le], ls, block, stopMatch)
			}
		} else {
			block = s.hits[len(s.hits)-1].line
		}
		lastEnd = le
		s.nmatch++
		return true
	}
	// FindAllIndex, not FindIndex on a subslice: it keeps the context
	// that ^, $ and \b see at the previous match's end. With a per-file
	// limit, matches are found in batches (limit of them, then twice as
	// many, and so on), each found again from the start: at most twice
	// the work up to the last match taken, rather than every match of
	// the file (one per byte, for \w) for the few the limit keeps.
	n := -1
	if limit > 0 {
		n = limit
	}
	locs := re.FindAllIndex(buf, n)
	for i := 0; i < len(locs); i++ {
		if i+1 == len(locs) && len(locs) == n {
			// More may follow, and the next one is looked at below.
			n *= 2
			locs = re.FindAllIndex(buf, n)
		}
		st, en := locs[i][0], locs[i][1]
		if st >= len(buf) && (len(buf) == 0 || buf[len(buf)-1] == '\n') {
			break // an empty match after the last line terminator
		}
		if !take(st, en) {
			return
		}
		if en > st && buf[en-1] == '\n' && en < len(buf) &&
			(i+1 == len(locs) || bytes.IndexByte(buf[en:locs[i+1][0]], '\n') >= 0) &&
			anchored.Match(buf[en:]) {
			// FindAll skips an empty match right after a match; but after
			// a line break it is on a line of its own, which it makes a
			// match (as rg reports it), unless a match found later starts
			// on that line anyway. None found starts there: the one that
			// does is empty, or not the preferred one.
			if !take(en, en) {
				return
			}
		}
	}
}

// hit records the line(s) buf[ls:le] (ls at a line start) and its
// context. It returns false when the per-file limit has been reached.
func (s *searchState) hit(buf []byte, ls, le, dataEnd, limit int) bool {
	if limit > 0 && len(s.hits) >= limit {
		s.truncated = true
		return false
	}
	t := s.store(buf, ls, le)
	h := hitRec{line: s.lineAt(buf, ls), off: t.off, end: t.end}
	if s.track {
		s.noteNUL(buf[ls:le], ls, h.line, stopMatch)
	}
	if b := s.q.opts.ContextBefore; b > 0 {
		h.bLo = int32(len(s.ctx))
		starts := s.starts[:0]
		p := ls
		for k := 0; k < b && p > 0; k++ {
			p = bytes.LastIndexByte(buf[:p-1], '\n') + 1
			starts = append(starts, p)
		}
		for k := len(starts) - 1; k >= 0; k-- {
			st := starts[k]
			en := st + bytes.IndexByte(buf[st:], '\n')
			if s.track {
				s.noteNUL(buf[st:en], st, h.line-k-1, stopBefore)
			}
			s.ctx = append(s.ctx, s.store(buf, st, en))
		}
		h.bHi = int32(len(s.ctx))
		s.starts = starts
	}
	h.aLo, h.aHi = s.after(buf, ls, le, dataEnd, h.line)
	s.hits = append(s.hits, h)
	return true
}

// after records the context lines after a hit from ls (line number
// line) to le.
func (s *searchState) after(buf []byte, ls, le, dataEnd, line int) (lo, hi int32) {
	a := s.q.opts.ContextAfter
	if a <= 0 {
		return 0, 0
	}
	lo = int32(len(s.ctx))
	p := le + 1
	for k := 0; k < a && p < dataEnd; k++ {
		en := dataEnd
		if i := bytes.IndexByte(buf[p:dataEnd], '\n'); i >= 0 {
			en = p + i
		}
		if s.track && bytes.IndexByte(buf[p:en], 0) >= 0 {
			s.noteNUL(buf[p:en], p, line+bytes.Count(buf[ls:p], []byte{'\n'}), stopAfter)
		}
		s.ctx = append(s.ctx, s.store(buf, p, en))
		p = en + 1
	}
	return lo, int32(len(s.ctx))
}

// widen extends the last hit, of a whole-file (multiline) search, to end
// at le, and its context after it to follow; block is the first line of
// ripgrep's block of matches it is in (see scanMulti).
func (s *searchState) widen(buf []byte, le, block int) {
	h := &s.hits[len(s.hits)-1]
	if s.track {
		s.noteNUL(buf[h.end:le], h.end, block, stopMatch)
	}
	h.end = le
	if h.aHi > h.aLo {
		s.ctx = s.ctx[:h.aLo] // the last hit's context after is last
	}
	h.aLo, h.aHi = s.after(buf, h.off, le, len(buf), h.line)
}

func (s *searchState) store(buf []byte, from, to int) span {
	if !s.copy {
		return span{from, to}
	}
	off := len(s.arena)
	s.arena = append(s.arena, buf[from:to]...)
	return span{off, len(s.arena)}
}

// text is the store the hits' spans refer to.
func (s *searchState) text() []byte {
	if s.copy {
		return s.arena
	}
	return s.buf
}

func (s *searchState) ctxLines(text []byte, lo, hi int32) [][]byte {
	out := make([][]byte, 0, hi-lo)
	for _, c := range s.ctx[lo:hi] {
		out = append(out, text[c.off:c.end:c.end])
	}
	return out
}

// matches wraps the hits for collect.
func (s *searchState) matches(rel string) *FileMatches {
	fm := &FileMatches{Path: rel, Truncated: s.truncated, s: s}
	switch {
	case s.pol == binLineBreaks && s.binAt >= 0:
		fm.Binary, fm.BinaryOffset = true, s.binAt
	case s.q.opts.RipgrepBinary:
		fm.Binary, fm.Stopped, fm.BinaryOffset, fm.Separated = s.binary, s.stopped, s.binOff, s.sep
	}
	return fm
}
