package hub

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyRepr formats s as Python's repr(str) does, for the texts Agent Zero
// builds with {x!r}: single quotes unless s holds a single quote and no
// double one; backslash, the quote, \t, \n and \r escaped; other
// characters that are not printable as \xNN, \uNNNN or \UNNNNNNNN. A byte
// that is not UTF-8 is shown as Python's surrogate escape for it
// (\udcNN), as a path read with os.fsdecode would be.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\udc%02x`, s[i])
		case r == '\\' || r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	b.WriteByte(quote)
	return b.String()
}

// pyStrip strips s as Python's str.strip() does: the characters
// str.isspace() counts as whitespace, unicode.IsSpace's and the
// separators U+001C to U+001F.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}
