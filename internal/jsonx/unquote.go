// Package jsonx holds JSON helpers fsplane needs on hot paths that the
// JSON libraries it uses do not do fast.
package jsonx

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
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
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			out = append(out, s...)
			break
		}
		out = append(out, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return stdUnquote(b)
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := Hex4(s[2:])
			if !ok {
				return stdUnquote(b)
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if v, ok := Hex4(s[2:]); ok {
						r2 = v
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					out = utf8.AppendRune(out, d)
					s = s[6:]
					continue
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return stdUnquote(b)
		}
		s = s[2:]
	}
	if !utf8.Valid(out) {
		return stdUnquote(b)
	}
	return string(out), nil
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
