package jsonx

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// SWAR constants: one byte value repeated in every byte of a word.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load8 reads b[i:i+8] as a little-endian word.
func load8(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// literalSpecial marks (in their high bits) the bytes of x that end or
// interrupt a run inside a JSON string literal: a control character, '"'
// or '\\'. Bytes above the first marked one may be marked wrongly (a
// borrow), never the first.
func literalSpecial(x uint64) uint64 {
	ctl := (x - 0x20*ones) &^ x
	q := x ^ ('"' * ones)
	bs := x ^ ('\\' * ones)
	return (ctl | (q-ones)&^q | (bs-ones)&^bs) & highs
}

// plain[c] is true for the bytes a JSON string holds as they are:
// printable ASCII but '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s to b as a JSON string literal, byte for byte as
// encoding/json writes it with HTML escaping off (and so as
// segmentio/encoding/json without EscapeHTML): \" \\ \b \f \n \r \t, other
// control characters as \u00XX, U+2028 and U+2029 escaped, and each byte
// of invalid UTF-8 as \ufffd.
//
// It exists for the file text results carry: encoders look at such a
// string byte by byte from its first escape on (a line break every few
// dozen bytes); AppendString jumps from one special byte to the next eight
// bytes at a time and copies the runs between them.
func AppendString(b []byte, str string) []byte {
	// Read only: the bytes of str, not a copy.
	s := unsafe.Slice(unsafe.StringData(str), len(str))
	// The bytes are stored straight into b's spare room, a word at a time
	// where eight need nothing; room grows as escapes come.
	j := len(b)
	b = grow(b, len(s)+2)
	b[j] = '"'
	j++
	for i := 0; i < len(s); {
		if len(b)-j < 16 {
			b = grow(b[:j], len(s)-i+16)
		}
		if i+8 <= len(s) {
			// The whole word is stored; j moves past its plain bytes
			// only, up to the first special one (see literalSpecial).
			x := load8(s, i)
			binary.LittleEndian.PutUint64(b[j:], x)
			m := literalSpecial(x) | x&highs
			if m == 0 {
				i, j = i+8, j+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i, j = i+k, j+k
		}
		c := s[i]
		if plain[c] {
			b[j] = c
			i, j = i+1, j+1
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				j += copy(b[j:], `\ufffd`)
			case r == '\u2028' || r == '\u2029':
				j += copy(b[j:], `\u202`)
				b[j] = hexDigits[r&0xF]
				j++
			default:
				j += copy(b[j:], s[i:i+size])
			}
			i += size
			continue
		}
		b[j] = '\\'
		switch c {
		case '"', '\\':
			b[j+1] = c
		case '\b':
			b[j+1] = 'b'
		case '\f':
			b[j+1] = 'f'
		case '\n':
			b[j+1] = 'n'
		case '\r':
			b[j+1] = 'r'
		case '\t':
			b[j+1] = 't'
		default:
			copy(b[j+1:], []byte{'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]})
			j += 4
		}
		i, j = i+1, j+2
	}
	b = b[:j+1]
	b[j] = '"'
	return b
}

// grow returns b with at least n bytes of room past len(b), extended to
// its whole capacity.
func grow(b []byte, n int) []byte {
	b = slices.Grow(b, n)
	return b[:cap(b)]
}

const hexDigits = "0123456789abcdef"
