package search

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWildmatchSteps: inputs on which the matcher without its abort
// returns took exponential time (one more "*a" or "**/" doubled it or
// worse) take a number of steps bounded by pattern × text length.
func TestWildmatchSteps(t *testing.T) {
	t.Parallel()
	// Kept small enough for the old matcher to fail in well under a
	// second rather than run for hours.
	as := strings.Repeat("a", 60) + "x"
	dirs := strings.Repeat("a/", 20) + "y"
	tests := []struct {
		pattern, text string
		pathname      bool
	}{
		{"*a*a*a*a*b", as, false},
		{"*a*a*a*a*b", as, true},
		{strings.Repeat("*a", 6) + "*b", as[30:], true},
		{strings.Repeat("*a", 6) + "*b", dirs, false},
		{strings.Repeat("**/", 6) + "x", dirs, true},
		{strings.Repeat("**/", 16) + "x", "a/a/y", true},
		{strings.Repeat("**/a/", 6) + "b", dirs, true},
		{"**/" + strings.Repeat("*a", 4) + "b", dirs, true},
		{strings.Repeat("**/*a", 6) + "b", dirs, true},
	}
	for _, tt := range tests {
		ok, steps := wildmatchSteps(tt.pattern, tt.text, tt.pathname)
		if ok {
			t.Errorf("wildmatch(%.20q…, pathname %v) matched", tt.pattern, tt.pathname)
		}
		if limit := (len(tt.pattern) + 1) * (len(tt.text) + 1); steps > limit {
			t.Errorf("wildmatch(%.20q…, pathname %v) took %d steps, want at most %d", tt.pattern, tt.pathname, steps, limit)
		}
	}
}

// TestWildmatchReference compares the matcher with the one it replaced
// (refWild) on many small random inputs built from the pieces where the
// two could differ.
func TestWildmatchReference(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "b", "/", "*", "**", "**/", "/**", "*a", "?", "[ab]", "[!a]", "[a-c]", "[]a]",
		"[[:alpha:]]", "[a", `\*`, `\`, "]"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var pb strings.Builder
		for k := r.IntN(8); k >= 0; k-- {
			pb.WriteString(pieces[r.IntN(len(pieces))])
		}
		tb := make([]byte, r.IntN(14))
		for i := range tb {
			tb[i] = "aab/*]c"[r.IntN(7)]
		}
		checkWildmatch(t, pb.String(), string(tb))
	}
}

// FuzzWildmatch: on inputs small enough for the old matcher, the answers
// agree, and the steps stay within pattern × text length.
func FuzzWildmatch(f *testing.F) {
	for _, s := range [][2]string{{"*a*a*b", "aaaaaaaax"}, {"**/**/x", "a/a/a/y"}, {"a/**/b", "a/x/b"},
		{"*/[!a]?", "b/cd"}, {`\**[[:digit:]]`, "*x1"}, {"[a-", "a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 16 || len(text) > 24 {
			return
		}
		checkWildmatch(t, pattern, text)
	})
}

func checkWildmatch(t *testing.T, pattern, text string) {
	t.Helper()
	for _, pathname := range []bool{false, true} {
		got, steps := wildmatchSteps(pattern, text, pathname)
		if want := refWild(pattern, 0, text, 0, pathname) == wmMatch; got != want {
			t.Fatalf("wildmatch(%q, %q, %v) = %v, the old matcher says %v", pattern, text, pathname, got, want)
		}
		if limit := (len(pattern) + 1) * (len(text) + 1); steps > limit {
			t.Fatalf("wildmatch(%q, %q, %v) took %d steps, want at most %d", pattern, text, pathname, steps, limit)
		}
	}
}
