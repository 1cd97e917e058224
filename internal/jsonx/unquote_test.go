package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkUnquote asserts that Unquote decodes the literal of s as
// encoding/json does.
func checkUnquote(t *testing.T, lit []byte) {
	t.Helper()
	var want string
	wantErr := json.Unmarshal(lit, &want)
	got, err := Unquote(lit)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Unquote(%q) error = %v, encoding/json's = %v", lit, err, wantErr)
	}
	if err == nil && got != want {
		t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", lit, got, want)
	}
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{
		`""`, `"plain"`, `"line\nline\r\n\ttab"`, `"\"q\" \\ \/ \b \f"`,
		`"\u00e9 \u2028 \ud83d\ude00"`,      // BMP, separator, surrogate pair
		`"\ud83d alone \ude00 low \ud83dx"`, // unpaired surrogates
		`"\ud83d\u0041"`,                    // high surrogate then a non-surrogate
		`"ends with escape\\"`, `"é 😀 ü"`,
		"\"invalid \xff\xfe utf-8\"", "\"half \\n invalid \xc3\"",
		`"bad \x escape"`, `"short \u12"`, `"\uZZZZ"`, `"`, `x`,
	} {
		checkUnquote(t, []byte(lit))
	}
	// A read result of 4 KiB of source, as the benchmark sends.
	b, _ := json.Marshal(strings.Repeat("\tif err != nil { return \"<x>\" }\n", 128))
	checkUnquote(t, b)
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{"a\nb", "\"\\\x00\u2028😀", "\xff", `"\ud83d\u0041 \ude00"`} {
		f.Add(s)
		b, _ := json.Marshal(s)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Literals encoding/json writes, and arbitrary bytes that are
		// well-formed literals (Unquote's contract).
		b, _ := json.Marshal(s)
		checkUnquote(t, b)
		if json.Valid([]byte(s)) && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) {
			checkUnquote(t, []byte(s))
		}
	})
}

// FuzzUnquoteAny checks Unquote on any bytes between quotes, not only
// valid literals: it fails exactly when encoding/json does, and otherwise
// decodes as it does.
func FuzzUnquoteAny(f *testing.F) {
	f.Add([]byte(`"a\"b"`))
	f.Add([]byte("\"\xff\\u00e9\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
			return
		}
		checkUnquote(t, b)
	})
}
