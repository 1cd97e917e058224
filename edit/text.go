package edit

import (
	"bytes"
	"sort"
)

// BOM is the UTF-8 byte order mark.
const BOM = "\xef\xbb\xbf"

// HasBOM reports whether content starts with a UTF-8 byte order mark.
func HasBOM(content []byte) bool { return bytes.HasPrefix(content, []byte(BOM)) }

// StripBOM returns content without a leading UTF-8 byte order mark, and
// the mark's length in content: len(BOM), or 0 when there is none.
func StripBOM(content []byte) (body []byte, n int) {
	if HasBOM(content) {
		return content[len(BOM):], len(BOM)
	}
	return content, 0
}

// EOL is a line terminator: "\n", "\r\n" or "\r".
type EOL string

// The line terminators.
const (
	LF   EOL = "\n"
	CRLF EOL = "\r\n"
	CR   EOL = "\r"
)

// Name returns "LF", "CRLF" or "CR".
func (e EOL) Name() string {
	switch e {
	case CRLF:
		return "CRLF"
	case CR:
		return "CR"
	}
	return "LF"
}

// DetectEOL returns the file's dominant line terminator: the most frequent
// one, LF on ties and for text without any.
func DetectEOL(content []byte) EOL {
	if bytes.IndexByte(content, '\r') < 0 {
		return LF
	}
	var lf, crlf, cr int
	for i := 0; i < len(content); i++ {
		switch content[i] {
		case '\n':
			lf++
		case '\r':
			if i+1 < len(content) && content[i+1] == '\n' {
				crlf++
				i++
			} else {
				cr++
			}
		}
	}
	switch {
	case crlf > lf && crlf >= cr:
		return CRLF
	case cr > lf && cr > crlf:
		return CR
	}
	return LF
}

// eolAt returns the terminator that starts at content[i], or "".
func eolAt(content []byte, i int) EOL {
	if i >= len(content) {
		return ""
	}
	switch content[i] {
	case '\n':
		return LF
	case '\r':
		if i+1 < len(content) && content[i+1] == '\n' {
			return CRLF
		}
		return CR
	}
	return ""
}

// convertEOL rewrites every line terminator of s as eol.
func convertEOL(s string, eol EOL) string {
	if eol == "" {
		eol = LF
	}
	if eol == LF && !containsCR(s) {
		return s
	}
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/32)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteString(string(eol))
		case '\n':
			b.WriteString(string(eol))
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func containsCR(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' {
			return true
		}
	}
	return false
}

// lines is a line index over content. Line i (0-based) occupies
// content[start[i]:start[i+1]], terminator included; the text after the
// last terminator, if any, is a final line without one. Terminators are
// "\n", "\r\n" and a lone "\r".
type lines struct {
	content []byte
	start   []int // len = number of lines + 1; last element = len(content)
}

func newLines(content []byte) *lines {
	n := bytes.Count(content, []byte{'\n'})
	start := make([]int, 0, n+2)
	start = append(start, 0)
	hasCR := bytes.IndexByte(content, '\r') >= 0
	if !hasCR {
		off := 0
		for {
			i := bytes.IndexByte(content[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
			start = append(start, off)
		}
	} else {
		for i := 0; i < len(content); i++ {
			switch content[i] {
			case '\n':
				start = append(start, i+1)
			case '\r':
				if i+1 < len(content) && content[i+1] == '\n' {
					i++
				}
				start = append(start, i+1)
			}
		}
	}
	if start[len(start)-1] != len(content) {
		start = append(start, len(content))
	}
	return &lines{content: content, start: start}
}

// count returns the number of lines. Empty content has zero lines.
func (l *lines) count() int { return len(l.start) - 1 }

// full returns line i with its terminator.
func (l *lines) full(i int) []byte { return l.content[l.start[i]:l.start[i+1]] }

// text returns line i without its terminator.
func (l *lines) text(i int) []byte {
	b := l.full(i)
	return b[:len(b)-len(terminator(b))]
}

// end returns the offset just past line i's text (before its terminator).
func (l *lines) end(i int) int { return l.start[i] + len(l.text(i)) }

// endOf returns the offset just past the terminator of the line holding
// off, as lineEnd does (len(content) for a last line without one).
func (l *lines) endOf(off int) int {
	if off >= len(l.content) {
		return len(l.content)
	}
	return l.start[l.lineOf(off)+1]
}

// startOf returns the offset where the line holding off starts, as
// lineStart does.
func (l *lines) startOf(off int) int {
	if n := l.count(); off >= len(l.content) && (n == 0 || l.eol(n-1) != "") {
		return len(l.content) // the empty line after the last terminator
	}
	return l.start[l.lineOf(off)]
}

// eol returns line i's terminator, "" for a last line without one.
func (l *lines) eol(i int) EOL { return terminator(l.full(i)) }

func terminator(b []byte) EOL {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return CRLF
	case bytes.HasSuffix(b, []byte("\n")):
		return LF
	case bytes.HasSuffix(b, []byte("\r")):
		return CR
	}
	return ""
}

// lineOf returns the 0-based line containing byte offset off.
func (l *lines) lineOf(off int) int {
	i := sort.Search(len(l.start), func(i int) bool { return l.start[i] > off })
	if i == 0 {
		return 0
	}
	if i-1 >= l.count() {
		return max(l.count()-1, 0)
	}
	return i - 1
}

// endsWithEOL reports whether s ends with a line terminator.
func endsWithEOL(s string) bool {
	return len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r')
}
