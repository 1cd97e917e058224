// Package jsonx holds JSON helpers fsplane needs on hot paths that the
// JSON libraries it uses do not do fast.
package jsonx

import (
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"math/bits"
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
// copies the runs between escapes.
//
// b must be a well-formed literal, as decoders pass to UnmarshalJSON (raw
// control characters are not looked for). When the decoded text is not
// valid UTF-8 it defers to encoding/json, which replaces invalid bytes with
// U+FFFD.
func Unquote(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", errNotString
	}
	s := b[1 : len(b)-1]
	out := make([]byte, len(s)) // the text is never longer than its literal
	j := 0
	for i := 0; i < len(s); {
		// Runs without a backslash move eight bytes at a time.
		if i+8 <= len(s) {
			// The whole word is stored; j moves past the bytes before
			// its first backslash only.
			x := load8(s, i)
			binary.LittleEndian.PutUint64(out[j:], x)
			y := x ^ ('\\' * ones)
			m := (y - ones) &^ y & highs
			if m == 0 {
				i, j = i+8, j+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i, j = i+k, j+k
		}
		c := s[i]
		if c != '\\' {
			out[j] = c
			i, j = i+1, j+1
			continue
		}
		if i+1 >= len(s) {
			return stdUnquote(b)
		}
		switch c := s[i+1]; c {
		case '"', '\\', '/':
			out[j] = c
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
			r, ok := Hex4(s[i+2:])
			if !ok {
				return stdUnquote(b)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
					if v, ok := Hex4(s[i+2:]); ok {
						r2 = v
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					j += utf8.EncodeRune(out[j:], d) // 4 bytes for 12 of escapes
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			j += utf8.EncodeRune(out[j:], r) // at most 3 bytes for 6
			continue
		default:
			return stdUnquote(b)
		}
		i, j = i+2, j+1
	}
	out = out[:j]
	if !utf8.Valid(out) {
		return stdUnquote(b)
	}
	// out is not touched again: the string can own its bytes.
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
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
