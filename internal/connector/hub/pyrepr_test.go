package hub

import "testing"

// TestPyRepr: the expected values are what CPython 3 prints for
// repr(s) (the last case is os.fsdecode(b"a\xffb")).
func TestPyRepr(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"f.txt", `'f.txt'`},
		{"", `''`},
		{"it's.txt", `"it's.txt"`},
		{`say "hi" it's`, `'say "hi" it\'s'`},
		{`a\b`, `'a\\b'`},
		{"a\x00b", `'a\x00b'`},
		{"t\tn\nr\r", `'t\tn\nr\r'`},
		{"\x7f\u0085\u00a0", `'\x7f\x85\xa0'`},
		{"\u200b\u2028", `'\u200b\u2028'`},
		{"caf\u00e9 \u65e5\u672c", "'caf\u00e9 \u65e5\u672c'"},
		{"\U000e0001", `'\U000e0001'`},
		{"a\xffb", `'a\udcffb'`},
	}
	for _, tt := range tests {
		if got := pyRepr(tt.in); got != tt.want {
			t.Errorf("pyRepr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestPyStrip: the expected values are what CPython 3 prints for
// s.strip().
func TestPyStrip(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{" a ", "a"},
		{"\x1c\x1d\x1e\x1fa\u0085\u00a0", "a"},
		{"\u2028a\u3000", "a"},
		{"\u200ba\u200b", "\u200ba\u200b"},
		{"a\u180e", "a\u180e"},
		{"\ufeffa", "\ufeffa"},
		{" \t\n\r\v\f", ""},
		{"a b", "a b"},
	}
	for _, tt := range tests {
		if got := pyStrip(tt.in); got != tt.want {
			t.Errorf("pyStrip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
