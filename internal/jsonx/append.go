package jsonx

import (
	"encoding/binary"
	"math/bits"
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

// skipPlain returns the index of the first byte at or after i that
// literalSpecial marks, or, with multibyte, that is part of a multi-byte
// sequence (an encoder must look at those: invalid UTF-8, U+2028, U+2029);
// len(s) when there is none. It looks at eight bytes at a time.
func skipPlain(s []byte, i int, multibyte bool) int {
	for ; i < len(s); i += 8 {
		var x uint64
		if i+8 <= len(s) {
			x = load8(s, i)
		} else {
			x = 'a' * ones // padding no mask marks
			for k := len(s) - 1; k >= i; k-- {
				x = x<<8 | uint64(s[k])
			}
		}
		m := literalSpecial(x)
		if multibyte {
			m |= x & highs
		}
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return len(s)
}

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
	b = append(b, '"')
	run := 0 // start of the bytes not yet copied
	i := 0
	for {
		if i = skipPlain(s, i, true); i == len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, s[run:i]...)
				b = append(b, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				b = append(b, s[run:i]...)
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			run = i
			continue
		}
		b = append(b, s[run:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		run = i
	}
	b = append(b, s[run:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"
