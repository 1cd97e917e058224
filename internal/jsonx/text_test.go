package jsonx

import (
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestInvalidText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw  string
		off  int
		what string
	}{
		{`{"content":"plain é 😀"}`, -1, ""},
		{`{"content":"a\ud83d\ude00b"}`, -1, ""},
		{"{\"content\":\"\xff\xfe\"}", 12, "invalid UTF-8 (byte 0xff)"},
		{`{"content":"a\ud800b"}`, 13, `unpaired UTF-16 surrogate escape \ud800`},
		{`{"content":"\udc00"}`, 12, `unpaired UTF-16 surrogate escape \udc00`},
		{`{"content":"\ud83d\u0041"}`, 12, `unpaired UTF-16 surrogate escape \ud83d`},
		{`{"content":"\\ud800"}`, -1, ""},
	}
	for _, tc := range cases {
		off, what := InvalidText([]byte(tc.raw))
		if off != tc.off || what != tc.what {
			t.Errorf("InvalidText(%q) = %d, %q; want %d, %q", tc.raw, off, what, tc.off, tc.what)
		}
	}
}

// badSurrogateRef is the plain definition InvalidText's surrogate scan
// must agree with: walk every byte, tracking strings and escapes.
func badSurrogateRef(raw []byte) int {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if raw[i+1] != 'u' {
				i++
				continue
			}
			n, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
			if r := rune(n); !utf16.IsSurrogate(r) {
				i += 5
				continue
			} else if r < 0xdc00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, _ := strconv.ParseUint(string(raw[i+8:i+12]), 16, 32); lo >= 0xdc00 && lo <= 0xdfff {
					i += 11
					continue
				}
			}
			return i
		}
	}
	return -1
}

// FuzzInvalidText holds InvalidText's fast surrogate scan to the
// definition on any valid JSON.
func FuzzInvalidText(f *testing.F) {
	for _, s := range []string{
		`{"content":"a\ud83d\ude00b"}`, `{"content":"\ud800"}`, `{"content":"\\ud800"}`,
		`{"content":"\udc00\ud800"}`, `["\u0041\uD83D\uDE00", "\uDBFF"]`, `{"a":"\\\\\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || !utf8.Valid(raw) {
			return // invalid UTF-8 is reported before any surrogate
		}
		got, _ := InvalidText(raw)
		if want := badSurrogateRef(raw); got != want {
			t.Fatalf("InvalidText(%q) = %d, want %d", raw, got, want)
		}
	})
}
