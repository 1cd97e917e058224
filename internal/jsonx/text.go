package jsonx

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// InvalidText returns the byte offset of the first text in raw
// (syntactically valid JSON) that is not valid UTF-8 — a raw byte
// sequence, or a \u escape of a UTF-16 surrogate that is not half of a
// pair — and says what it is; the offset is -1 when there is none.
// encoding/json replaces either with U+FFFD, so a caller that decoded
// such text would store something other than what it was sent: the HTTP
// API and the MCP stdio server refuse it instead.
func InvalidText(raw []byte) (int, string) {
	if !utf8.Valid(raw) {
		for i := 0; i < len(raw); {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return i, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", raw[i])
			}
			i += size
		}
	}
	// Surrogates escape as \uD800 to \uDFFF; most bodies have none.
	if !bytes.Contains(raw, []byte(`\ud`)) && !bytes.Contains(raw, []byte(`\uD`)) {
		return -1, ""
	}
	// In valid JSON a backslash only occurs inside a string, always
	// starting an escape: jumping from one to the next is enough.
	for i := 0; ; {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			return -1, ""
		}
		i += k
		if raw[i+1] != 'u' {
			i += 2 // a one-character escape, \\ included
			continue
		}
		r, _ := Hex4(raw[i+2:]) // valid JSON: four hex digits
		if !utf16.IsSurrogate(r) {
			i += 6
			continue
		}
		if r < 0xdc00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if lo, _ := Hex4(raw[i+8:]); lo >= 0xdc00 && lo <= 0xdfff {
				i += 12
				continue
			}
		}
		return i, fmt.Sprintf("unpaired UTF-16 surrogate escape %s", raw[i:i+6])
	}
}
