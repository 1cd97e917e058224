package edit

import (
	"bytes"
	"fmt"
	"strings"
)

// countEOLs returns the number of line terminators in b.
func countEOLs(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if bytes.IndexByte(b, '\r') < 0 {
		return n
	}
	for i := 0; i < len(b); i++ {
		if b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			n++
		}
	}
	return n
}

// lineAt returns the 1-based line number of byte offset off. A BOM does not
// count as text.
func lineAt(content []byte, off int) int {
	return countEOLs(content[:off]) + 1
}

// lineStart returns the offset where the line containing off starts.
func lineStart(b []byte, off int) int {
	for off > 0 {
		c := b[off-1]
		if c == '\n' {
			return off
		}
		if c == '\r' && (off >= len(b) || b[off] != '\n') {
			return off
		}
		off--
	}
	return 0
}

// lineEnd returns the offset just past the terminator of the line
// containing off (len(b) for a last line without one).
func lineEnd(b []byte, off int) int {
	for i := off; i < len(b); i++ {
		switch b[i] {
		case '\n':
			return i + 1
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				return i + 2
			}
			return i + 1
		}
	}
	return len(b)
}

// numbered renders lines in cat -n style ("%6d\t%s\n"), numbering from
// first. Terminators are dropped; each line ends with "\n".
func numbered(b []byte, first int) string {
	var sb strings.Builder
	l := newLines(b)
	for i := 0; i < l.count(); i++ {
		fmt.Fprintf(&sb, "%6d\t%s\n", first+i, l.text(i))
	}
	return sb.String()
}

// snippet renders content's lines from the line holding start to the line
// holding end (an offset inside the last changed line), with ctx lines of
// context on each side, numbered.
func snippet(content []byte, start, end, ctx int) string {
	body, bom := StripBOM(content)
	start, end = max(start, bom), max(end, bom)
	from := lineStart(content, start)
	for i := 0; i < ctx && from > bom; i++ {
		from = lineStart(content, from-1)
	}
	from = max(from, bom)
	to := lineEnd(content, end)
	for i := 0; i < ctx && to < len(content); i++ {
		to = lineEnd(content, to)
	}
	return numbered(content[from:to], lineAt(body, from-bom))
}
