package jsonx

import (
	"math/bits"
	"strconv"
)

// The scanner below validates JSON as encoding/json does (json.Valid) and
// finds where each value ends, for hand-written decoders of hot messages.
// It walks strings eight bytes at a time, where segmentio/encoding/json
// looks at an escaped string byte by byte, once to find its end and again
// to decode it. Invalid UTF-8 inside strings is accepted, as encoding/json
// accepts it (decoding replaces it with U+FFFD).

// maxDepth bounds the nesting ScanValue follows, as encoding/json bounds
// its own (10000).
const maxDepth = 10000

// ScanString checks the string literal that starts at b[i] (a '"') and
// returns the index just past its closing quote, and whether it holds an
// escape (without one, its text is b[i+1:end-1] as it is). ok is false
// when b[i:] does not start with a valid literal.
func ScanString(b []byte, i int) (end int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, false
	}
	i++
	for i < len(b) {
		if i+8 <= len(b) {
			m := literalSpecial(load8(b, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // a real one (see literalSpecial)
		}
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := Hex4(b[i+2:]); !ok {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		default: // a control character
			return 0, false, false
		}
	}
	return 0, false, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ScanValue checks the JSON value that starts at b[i] (no leading space)
// and returns the index just past it; ok is false when b[i:] does not start
// with a valid value.
func ScanValue(b []byte, i int) (end int, ok bool) {
	return scanValue(b, i, 0)
}

func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		end, _, ok := ScanString(b, i)
		return end, ok
	case '{', '[':
		if depth >= maxDepth {
			return 0, false
		}
		return scanComposite(b, i, depth+1)
	case 't':
		return scanLiteral(b, i, "true")
	case 'f':
		return scanLiteral(b, i, "false")
	case 'n':
		return scanLiteral(b, i, "null")
	default:
		return scanNumber(b, i)
	}
}

// scanComposite checks the object or array that starts at b[i].
func scanComposite(b []byte, i, depth int) (int, bool) {
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i, _, ok = ScanString(b, i); !ok {
				return 0, false
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
		if i, ok = scanValue(b, i, depth); !ok {
			return 0, false
		}
		if i = skipSpace(b, i); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closer:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// scanNumber checks the number that starts at b[i]: -? (0 | [1-9][0-9]*)
// (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i + 1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// Members calls f with each member of the JSON object b (surrounding space
// allowed), in order: key is the key's literal with its quotes, value the
// member's value, validated. It stops at the first f that returns false.
// ok is false when b is not exactly one valid object, or f stopped.
func Members(b []byte, f func(key, value []byte) bool) (ok bool) {
	return Fields(b, func(key []byte, i int) (int, bool) {
		end, ok := scanValue(b, i, 1)
		return end, ok && f(key, b[i:end])
	})
}

// Fields is Members for decoders that read each value themselves (with
// DecodeString, say, which checks and decodes a string in one pass): f
// gets the key's literal and the index of the value in b, and returns the
// index just past the value, or false to stop (then Fields is false).
func Fields(b []byte, f func(key []byte, i int) (end int, ok bool)) (ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		k := i
		end, _, ok := ScanString(b, i)
		if !ok {
			return false
		}
		key := b[k:end]
		if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
			return false
		}
		if i, ok = f(key, skipSpace(b, i+1)); !ok || i > len(b) {
			return false
		}
		if i = skipSpace(b, i); i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// String decodes the string literal lit (a key or value Members gave);
// ok is false when lit is not exactly one valid literal.
func String(lit []byte) (string, bool) {
	s, end, ok := DecodeString(lit, 0)
	return s, ok && end == len(lit)
}

// Int decodes a JSON number that is a whole int64, as encoding/json fills
// an int field: no fraction, no exponent, in range.
func Int(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// Bool decodes true or false.
func Bool(v []byte) (val, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}
