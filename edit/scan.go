package edit

import (
	"bytes"
	"strings"
)

// A LineScanner reads a text given in pieces — a file too large to hold —
// and keeps the lines From..To, with the semantics of Lines, LineCount and
// DetectEOL: LF, CR LF and a lone CR end a line, text after the last
// terminator is one more line, and a UTF-8 BOM at the start is not part of
// the first line. A terminator split between two pieces (CR | LF) is one
// terminator.
//
// Set From, To (To < 0: to the end) and Max (the most bytes kept; 0: no
// limit), Write every piece in order, then Close. A LineScanner is not
// safe for concurrent use.
type LineScanner struct {
	From, To int
	Max      int

	kept     []byte
	over     bool // a kept line did not fit Max
	line     int  // 1-based number of the line being read
	partial  bool // bytes since the last terminator
	cr       bool // the last byte seen was a CR whose successor is unknown
	head     []byte
	started  bool // the BOM question is settled
	bom      bool
	lf, crlf int
	lone     int // lone CRs
	closed   bool
}

// Write scans p. It never fails.
func (s *LineScanner) Write(p []byte) (int, error) {
	n := len(p)
	if !s.started {
		// Hold the first bytes until it is clear whether they are a BOM.
		s.head = append(s.head, p...)
		if len(s.head) < len(BOM) && bytes.HasPrefix([]byte(BOM), s.head) {
			return n, nil
		}
		s.start()
		return n, nil
	}
	s.scan(p)
	return n, nil
}

func (s *LineScanner) start() {
	s.started, s.line = true, 1
	p, n := StripBOM(s.head)
	s.head, s.bom = nil, n > 0
	s.scan(p)
}

func (s *LineScanner) scan(p []byte) {
	for len(p) > 0 {
		if s.cr {
			s.cr = false
			if p[0] == '\n' {
				s.crlf++
				s.keep(p[:1])
				p = p[1:]
			} else {
				s.lone++
			}
			s.endLine()
			continue
		}
		i := IndexLineBreak(p)
		if i < 0 {
			s.keep(p)
			s.partial = true
			return
		}
		s.keep(p[:i+1])
		if p[i] == '\n' {
			s.lf++
			s.endLine()
		} else {
			s.cr, s.partial = true, true
		}
		p = p[i+1:]
	}
}

// CutLine splits s at its first line terminator as the rest of edit reads
// them (CRLF, LF or a lone CR): the first line's text, its terminator
// ("" when s has none) and what follows. Fronts that number lines of text
// they got from the engine use it, so their numbers are the engine's.
func CutLine(s string) (line, eol, rest string) {
	i := strings.IndexByte(s, '\n')
	head := s
	if i >= 0 {
		head = s[:i]
	}
	if j := strings.IndexByte(head, '\r'); j >= 0 {
		if j+1 < len(s) && s[j+1] == '\n' {
			return s[:j], s[j : j+2], s[j+2:]
		}
		return s[:j], s[j : j+1], s[j+1:]
	}
	if i < 0 {
		return s, "", ""
	}
	return s[:i], s[i : i+1], s[i+1:]
}

// IndexLineBreak returns the index of b's first CR or LF, or -1. It is
// bytes.IndexAny(b, "\r\n") with two vectorised searches instead of a
// byte loop, for texts of many MiB on few lines.
func IndexLineBreak(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	head := b
	if i >= 0 {
		head = b[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}

func (s *LineScanner) keep(b []byte) {
	if s.line < s.From || (s.To >= 0 && s.line > s.To) || s.over {
		return
	}
	if s.Max > 0 && len(s.kept)+len(b) > s.Max {
		s.over = true
		return
	}
	s.kept = append(s.kept, b...)
}

func (s *LineScanner) endLine() {
	s.line++
	s.partial = false
}

// Close ends the text: a CR at the very end is a terminator.
func (s *LineScanner) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if !s.started {
		s.start()
	}
	if s.cr {
		s.cr = false
		s.lone++
		s.endLine()
	}
}

// Lines returns the kept lines with their terminators (call after Close).
func (s *LineScanner) Lines() []byte { return s.kept }

// Overflow reports that the lines asked for are more than Max bytes; Lines
// then holds only a prefix of them.
func (s *LineScanner) Overflow() bool { return s.over }

// Total returns the number of lines, as LineCount.
func (s *LineScanner) Total() int {
	n := s.line - 1
	if s.partial {
		n++
	}
	return n
}

// BOM reports whether the text starts with a UTF-8 BOM.
func (s *LineScanner) BOM() bool { return s.bom }

// EOL returns the dominant line ending, as DetectEOL.
func (s *LineScanner) EOL() EOL {
	switch {
	case s.crlf > s.lf && s.crlf >= s.lone:
		return CRLF
	case s.lone > s.lf && s.lone > s.crlf:
		return CR
	}
	return LF
}
