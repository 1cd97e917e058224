// Package jsonx holds JSON helpers fsplane needs on hot paths that the
// JSON libraries it uses do not do fast.
package jsonx

import (
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

var errNotString = errors.New("not a JSON string")

// Unquote decodes the JSON string literal b exactly as encoding/json does.
// It exists because file text is what fsplane's JSON carries most (read
// results, write bodies): a line break every few dozen bytes, each
// escaped. segmentio/encoding decodes an escaped string rune by rune
// (about 20 µs for 4 KiB of source, an allocation per escape) and
// encoding/json validates the whole document before decoding it; Unquote
// copies the runs between escapes. When the decoded text is not valid
// UTF-8 it defers to encoding/json, which replaces invalid bytes with
// U+FFFD (and so for anything that is not exactly one valid literal,
// whose error it returns).
func Unquote(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", errNotString
	}
	if s, end, ok := DecodeString(b, 0); ok && end == len(b) {
		return s, nil
	}
	return stdUnquote(b)
}

// DecodeString decodes the string literal that starts at b[i] (a '"') in
// one pass that also checks it, and returns the index just past it; ok is
// false when b[i:] does not start with a valid literal. The text decodes
// as encoding/json decodes it (invalid UTF-8 becomes U+FFFD).
func DecodeString(b []byte, i int) (s string, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	start := i
	i++
	// The text is stored into out a word at a time where a word holds no
	// special byte. out starts at the distance to the next '"' (the end,
	// unless the text holds \" escapes) and grows once, if it must, to
	// what is left of b: a copy costs far less than a second pass over
	// the literal to find its end.
	n := len(b) - i
	if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
		n = min(n, q+16)
	}
	out := make([]byte, n)
	j := 0
	for {
		if len(out)-j < 16 {
			// Room for the rest of b, which the text cannot outgrow.
			out = slices.Grow(out[:j], len(b)-i+16)
			out = out[:cap(out)]
		}
		if i+8 <= len(b) {
			// j moves past the word's plain bytes only, up to the first
			// special one (see literalSpecial).
			x := load8(b, i)
			binary.LittleEndian.PutUint64(out[j:], x)
			m := literalSpecial(x)
			if m == 0 {
				i, j = i+8, j+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i, j = i+k, j+k
		}
		if i >= len(b) {
			return "", 0, false
		}
		c := b[i]
		switch {
		case c == '"':
			text := out[:j]
			if !utf8.Valid(text) {
				s, err := stdUnquote(b[start : i+1])
				return s, i + 1, err == nil
			}
			if cap(text) > 2*len(text)+64 {
				return string(text), i + 1, true // do not pin the slack
			}
			// out is not touched again: the string can own its bytes.
			return unsafe.String(unsafe.SliceData(text), len(text)), i + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			out[j] = c
			i, j = i+1, j+1
			continue
		}
		if i+1 >= len(b) {
			return "", 0, false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out[j] = e
		case 'b':
			out[j] = '\b'
		case 'f':
			out[j] = '\f'
		case 'n':
			out[j] = '\n'
		case 'r':
			out[j] = '\r'
		case 't':
			out[j] = '\t'
		case 'u':
			r, ok := Hex4(b[i+2:])
			if !ok {
				return "", 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if len(b)-i >= 6 && b[i] == '\\' && b[i+1] == 'u' {
					if v, ok := Hex4(b[i+2:]); ok {
						r2 = v
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					j += utf8.EncodeRune(out[j:], d)
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			j += utf8.EncodeRune(out[j:], r)
			continue
		default:
			return "", 0, false
		}
		i, j = i+2, j+1
	}
}

// Hex4 decodes the four hex digits that start s (those of a \u escape);
// ok is false when s is shorter or holds another character.
func Hex4(s []byte) (r rune, ok bool) {
	if len(s) < 4 {
		return 0, false
	}
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func stdUnquote(b []byte) (string, error) {
	var s string
	err := stdjson.Unmarshal(b, &s)
	return s, err
}
