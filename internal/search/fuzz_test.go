package search

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseIgnore: parsing any ignore file and matching any path never
// panics, and the fast paths agree with the general matcher.
func FuzzParseIgnore(f *testing.F) {
	for _, s := range []string{"*.go\n!keep.go\n", "/a/**/b/\n", "[!a-c]?\\*\n", "# c\n\\#x  \n", "[[:alpha:]\n", "**", "a\\"} {
		f.Add(s, "a/b/c.go", true)
	}
	f.Fuzz(func(t *testing.T, content, rel string, isDir bool) {
		l := parseIgnore("f", []byte(content))
		name := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			name = rel[i+1:]
		}
		l.match(rel, name, isDir)
		for _, p := range l.pats {
			subject := rel
			if p.baseName {
				subject = name
			}
			got := p.match(rel, name, isDir)
			want := (!p.dirOnly || isDir) && wildmatch(p.glob, subject, !p.baseName)
			if got != want {
				t.Fatalf("pattern %q (kind %d) on %q: fast path %v, wildmatch %v", p.glob, p.kind, subject, got, want)
			}
		}
	})
}

// FuzzParseSize: no panics; accepted sizes are non-negative and plain
// numbers mean bytes.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "500K", "4096", "2MiB", "1g", "", "K", "-1", "99999999999999999999G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && v >= 0 && v != n {
			t.Fatalf("ParseSize(%q) = %d, want %d", s, n, v)
		}
	})
}

// FuzzPrefilter: for any pattern that compiles and any text, the engine
// reports exactly the lines the regular expression matches on their
// own: the literal prefilter never drops a matching line, and a complete
// prefilter never accepts a line the regexp rejects. The Unicode and
// ASCII spellings of the pattern agree on ASCII lines.
func FuzzPrefilter(f *testing.F) {
	seeds := []struct {
		pat, text string
		fold      bool
	}{
		{`\w+Handler\(`, "func fooHandler(w)\nHandler(\n", false},
		{"errnotexist", "ErrNotExist\nerrnotexiſt\nERRNOTEXIST\n", true},
		{"kelvin|Sigma", "\u212aelvin\nsigma\nΣ\n", true},
		{`foo(bar|baz)+qux`, "foobarbazqux\nfooqux\n", false},
		{`a[\n]b`, "a\nb\n", false},
		{`^\s*$`, "  \n\t\n x\n", false},
		{`x{2,}y?z`, "xxz\nxz\n", false},
		{`(?i)ab[cd]e`, "ABDE\nabce\n", false},
		{`\bgo\b|\d+`, "go 12\ngopher\n", false},
		{`[^\x00-\x7f]+é`, "aé\nüé\n", true},
		{`\S+\s\W`, "a\v!\nb !\n", false},
		{`\w{5}\s+\w{5}\(`, "hello world(\nx hello(\nab cdefg hijkl(x) abcde fghij(\n", false},
		{`[a-z]{2}x\d.(y)`, "abx1.y\nx1.y abx1-y\n", false},
		{`é\w{2}=`, "éab=\néé=\n", false},
		{`(?-m)^\D+$|\Ax\z`, "ab\n1\nx\n", false},
		{`[^a]+(?s:.)\W`, "b\n\nbc!\n", false},
		{"x\uFFFD", "x\xff\nx\uFFFD\n", false},
	}
	for _, s := range seeds {
		f.Add(s.pat, s.text, s.fold, false)
	}
	f.Add(`a.*\nb`, "xa\n\nb", false, true)
	f.Fuzz(func(t *testing.T, pat, text string, fold, multiline bool) {
		if len(pat) > 200 || len(text) > 4000 {
			return
		}
		if multiline {
			// The prefilter only decides whether to search the file.
			m, err := compileMatcher([]string{pat}, false, fold, true, false)
			if err != nil || m.lits == nil {
				return
			}
			b := []byte(text)
			if m.regexpFor(b).Match(b) && newFinder(m.lits).find(b, 0) < 0 {
				t.Fatalf("multiline pattern %q: prefilter %+v misses a matching text", pat, m.lits)
			}
			return
		}
		m, err := compileMatcher([]string{pat}, false, fold, false, false)
		if err != nil {
			return
		}
		// The pattern as written, to check the rewriting for lines.
		_, uni := rewriteClasses(pat)
		flags := "(?m)"
		if fold {
			flags = "(?mi)"
		}
		written, err := regexp.Compile(flags + uni)
		if err != nil {
			t.Fatalf("pattern %q compiles, but not as written in Unicode: %v", pat, err)
		}
		q := &Query{m: m}
		s := newSearchState(q)
		buf := []byte(text)
		s.cntPos, s.cntLine = 0, 1
		if s.find != nil {
			s.find.reset()
		}
		s.scanLines(buf, 0, len(buf), len(buf), 0)
		got := map[int]bool{}
		for _, h := range s.hits {
			got[h.line] = true
		}
		lines := strings.Split(text, "\n")
		if strings.HasSuffix(text, "\n") || text == "" {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			lb := []byte(line)
			want := m.regexpFor(lb).Match(lb)
			if written.Match(lb) != want {
				t.Fatalf("pattern %q line %q: the regexp for lines says %v, the pattern as written %v", pat, line, want, !want)
			}
			if m.reUni != nil && isASCII(lb) && m.reUni.Match(lb) != want {
				t.Fatalf("pattern %q line %q: ASCII and Unicode spellings disagree", pat, line)
			}
			if got[i+1] != want {
				t.Fatalf("pattern %q (prefilter %+v exact %v) line %d %q: engine %v, regexp %v",
					pat, m.lits, m.exact, i+1, line, got[i+1], want)
			}
			if want && m.lits != nil {
				fd := newFinder(m.lits)
				if fd.find(lb, 0) < 0 {
					t.Fatalf("pattern %q: prefilter %+v misses matching line %q", pat, m.lits, line)
				}
			}
		}
	})
}

// FuzzRewriteClasses: when a pattern compiles, both rewritten spellings
// compile and agree on ASCII input.
func FuzzRewriteClasses(f *testing.F) {
	for _, s := range []string{`\w+\s\d`, `[\w-]\S`, `[^\W\d]`, `\Q\w\E\w`, `\p{L}\x{41}\pN`, `[[:alpha:]\s]`, `[]\w]`} {
		f.Add(s, "ab 12\tc_d-!")
	}
	f.Fuzz(func(t *testing.T, pat, text string) {
		orig, err := regexp.Compile(pat)
		if err != nil {
			return
		}
		_ = orig
		ascii, uni := rewriteClasses(pat)
		ra, err := regexp.Compile(ascii)
		if err != nil {
			t.Fatalf("%q: ASCII spelling %q does not compile: %v", pat, ascii, err)
		}
		ru, err := regexp.Compile(uni)
		if err != nil {
			t.Fatalf("%q: Unicode spelling %q does not compile: %v", pat, uni, err)
		}
		b := []byte(text)
		if isASCII(b) && utf8.Valid(b) && !bytes.ContainsRune(b, '\v') {
			if ra.Match(b) != ru.Match(b) {
				t.Fatalf("%q on %q: ASCII %v, Unicode %v", pat, text, ra.Match(b), ru.Match(b))
			}
		}
	})
}

// FuzzFinder: the finders agree with a naive search on texts long enough
// for the eight-bytes-at-a-time paths.
func FuzzFinder(f *testing.F) {
	f.Add("xi", "abc exit EXIT eXiT", true, uint8(5))
	f.Add("errnotexist", "ErrNotExist errnotexiſt", true, uint8(9))
	f.Add("a(", "foo(a(b)", false, uint8(3))
	f.Add("é1", "xé1É1", true, uint8(20))
	f.Fuzz(func(t *testing.T, lit, text string, fold bool, reps uint8) {
		if lit == "" || len(lit) > 40 || len(text) > 200 {
			return
		}
		hay := []byte(strings.Repeat(text, int(reps)%40+1))
		var fd finder
		if fold {
			fd = newSingleFinder(asciiLower(lit), true)
		} else {
			fd = newSingleFinder(lit, false)
		}
		want := func(from int) int {
			for i := from; i+len(lit) <= len(hay); i++ {
				w := hay[i : i+len(lit)]
				if fold && equalFoldASCII(w, []byte(asciiLower(lit))) || !fold && string(w) == lit {
					return i
				}
			}
			return -1
		}
		for from := 0; from <= len(hay); {
			got, exp := fd.find(hay, from), want(from)
			if got != exp {
				t.Fatalf("find(%q, fold=%v) from %d in %q = %d, want %d", lit, fold, from, hay, got, exp)
			}
			if got < 0 {
				break
			}
			from = got + 1
		}
	})
}

// FuzzExpandBraces: any glob expands without panics into 1 to
// maxBraceAlternatives globs, or is refused; a glob without a '{'
// expands to itself.
func FuzzExpandBraces(f *testing.F) {
	for _, s := range []string{"*.{go,md}", "{a,{b,c}d}", `\{x,y\}`, "[{]a", "{", "a}", "{,}", "{{{{a,b},c},d},e}", "[[:alpha:]{x,y}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, g string) {
		out, err := expandBraces(g)
		if err != nil {
			return
		}
		if len(out) == 0 || len(out) > maxBraceAlternatives {
			t.Fatalf("%q expands to %d globs", g, len(out))
		}
		if !strings.ContainsAny(g, "{") && (len(out) != 1 || out[0] != g) {
			t.Fatalf("%q has no group but expands to %q", g, out)
		}
	})
}
