package edit

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// view is content as one matcher tier sees it, possibly normalised, with a
// map from its offsets back to the original content's.
type view struct {
	b []byte
	// pos[i] is an offset in b; extra[i] the original bytes dropped at or
	// before it, cumulatively. An offset n of b maps to n + extra[k] for
	// the last k with pos[k] < n.
	pos, extra []int
	parent     *view  // when set, offsets map on through it
	lines      *lines // built on first use
}

func identity(b []byte) *view { return &view{b: b} }

func (v *view) orig(n int) int {
	if k := sort.SearchInts(v.pos, n); k > 0 { // pos[k-1] < n <= pos[k]
		n += v.extra[k-1]
	}
	if v.parent != nil {
		return v.parent.orig(n)
	}
	return n
}

func (v *view) index() *lines {
	if v.lines == nil {
		v.lines = newLines(v.b)
	}
	return v.lines
}

// normalizeEOL returns content with CRLF and lone CR as LF, or nil when
// content has no CR. A lone CR becomes LF in place; a CRLF loses its CR,
// recorded at the LF's new offset.
func normalizeEOL(content []byte) *view {
	if bytes.IndexByte(content, '\r') < 0 {
		return nil
	}
	out := make([]byte, 0, len(content))
	v := &view{}
	dropped := 0
	for i := 0; i < len(content); i++ {
		c := content[i]
		if c != '\r' {
			out = append(out, c)
			continue
		}
		if i+1 < len(content) && content[i+1] == '\n' {
			dropped++
			v.pos = append(v.pos, len(out))
			v.extra = append(v.extra, dropped)
			continue
		}
		out = append(out, '\n')
	}
	v.b = out
	return v
}

func normalizeEOLString(s string) string {
	if !containsCR(s) {
		return s
	}
	return string(normalizeEOL([]byte(s)).b)
}

// PunctASCII maps typographic punctuation to the ASCII a model tends to
// type instead: dashes and minus to '-', curly single quotes to an apostrophe,
// curly double quotes to '"', non-breaking and other fixed-width spaces to
// ' ' (the set Codex's apply_patch tolerates). Used only to locate text;
// what is written is always the caller's text.
func PunctASCII(r rune) (byte, bool) {
	switch {
	case r >= 0x2010 && r <= 0x2015, r == 0x2212:
		return '-', true
	case r >= 0x2018 && r <= 0x201B:
		return '\'', true
	case r >= 0x201C && r <= 0x201F:
		return '"', true
	case r == 0x00A0, r >= 0x2002 && r <= 0x200A, r == 0x202F, r == 0x205F, r == 0x3000:
		return ' ', true
	}
	return 0, false
}

// mayHavePunct reports whether b could contain a rune PunctASCII maps: all
// of them encode with a 0xC2 or 0xE2/0xE3 lead byte.
func mayHavePunct(b []byte) bool {
	return bytes.IndexByte(b, 0xE2) >= 0 || bytes.IndexByte(b, 0xC2) >= 0 || bytes.IndexByte(b, 0xE3) >= 0
}

// normalizePunct returns b with typographic punctuation as ASCII, or nil
// when there is none.
func normalizePunct(b []byte) *view {
	if !mayHavePunct(b) {
		return nil
	}
	var out []byte
	v := &view{}
	dropped := 0
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c != 0xC2 && c != 0xE2 && c != 0xE3 {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		a, ok := PunctASCII(r)
		if !ok {
			i += size
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[last:i]...)
		v.pos = append(v.pos, len(out))
		out = append(out, a)
		dropped += size - 1
		v.extra = append(v.extra, dropped)
		i += size
		last = i
	}
	if out == nil {
		return nil
	}
	v.b = append(out, b[last:]...)
	return v
}

func normalizePunctString(s string) string {
	v := normalizePunct([]byte(s))
	if v == nil {
		return s
	}
	return string(v.b)
}

// on returns v with its offsets mapped on through parent (v was derived
// from parent's content), or parent when v is nil.
func (v *view) on(parent *view) *view {
	if v == nil {
		return parent
	}
	v.parent = parent
	return v
}
