package mcpserver

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fitLines returns how many of text's lines (numbered from first) numberLines
// renders within maxBytes (0: no cap); cut is set when the first line alone
// is longer and will be cut.
func fitLines(text string, first, maxBytes int) (n int, cut bool) {
	size := 0
	for len(text) > 0 {
		line, rest := nextLine(text)
		size += max(6, digits(first+n)) + len(line) + 2
		if maxBytes > 0 && size > maxBytes {
			return max(n, 1), n == 0
		}
		n++
		text = rest
	}
	return n, false
}

// numberLines renders text's first n lines in cat -n style
// ("%6d\t%s\n"), numbering from first. Lines end at LF, CR LF or a lone
// CR; terminators are not shown. With cut, the (single) line is cut to fit
// maxBytes.
func numberLines(b *strings.Builder, text string, first, n int, cut bool, maxBytes int) {
	var num [20]byte
	for i := 0; i < n && len(text) > 0; i++ {
		line, rest := nextLine(text)
		d := strconv.AppendInt(num[:0], int64(first+i), 10)
		if cut {
			line = cutUTF8(line, maxBytes-max(6, len(d))-2)
		}
		for j := len(d); j < 6; j++ {
			b.WriteByte(' ')
		}
		b.Write(d)
		b.WriteByte('\t')
		b.WriteString(line)
		b.WriteByte('\n')
		text = rest
	}
}

func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// nextLine splits off text's first line, without its terminator.
func nextLine(text string) (line, rest string) {
	i := strings.IndexAny(text, "\r\n")
	if i < 0 {
		return text, ""
	}
	if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
		return text[:i], text[i+2:]
	}
	return text[:i], text[i+1:]
}

// cutUTF8 returns s's longest prefix of at most n bytes that does not
// split a character.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// plural renders "1 line", "2 lines".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// capText returns s cut to max bytes with a note saying how much was left
// out.
func capText(s string, maxBytes int, what string) string {
	if len(s) <= maxBytes {
		return s
	}
	kept := cutUTF8(s, maxBytes)
	if i := strings.LastIndexByte(kept, '\n'); i > 0 {
		kept = kept[:i+1]
	}
	return kept + "[" + what + " truncated: " + strconv.Itoa(len(s)-len(kept)) + " more bytes not shown]\n"
}
