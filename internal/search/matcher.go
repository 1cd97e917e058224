package search

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
)

// matcher is a compiled pattern: the regular expression and its literal
// prefilter. It is immutable and safe for concurrent use; the finders it
// hands out are not.
type matcher struct {
	re *regexp.Regexp // classes with ASCII semantics: used on ASCII text
	// reUni has ripgrep's Unicode \w, \d, \s; nil when the pattern has
	// none of them. On ASCII text both agree, and the ASCII one is faster.
	reUni     *regexp.Regexp
	lits      *litSet // prefilter; nil when no literal is required
	exact     bool    // a literal hit is a match: the regexp is not run
	win       *window // bytes around a literal hit a match needs; may be nil
	multiline bool
}

// InvalidError reports an option or pattern that cannot be used. Field
// names the option with its AIO name ("pattern", "type", "include"...).
type InvalidError struct {
	Field   string
	Message string
	Hint    string
}

func (e *InvalidError) Error() string { return e.Message }

// compileMatcher compiles the patterns (several are alternatives, like
// repeated rg -e). fixed quotes them; fold makes the match
// case-insensitive; multiline lets matches span lines with '.' matching
// '\n' (rg -U --multiline-dotall). In line mode, as in ripgrep, a pattern
// containing a literal "\n" is refused, since no line can match it.
func compileMatcher(patterns []string, fixed, fold, multiline bool) (*matcher, error) {
	if len(patterns) == 0 {
		return nil, &InvalidError{Field: "pattern", Message: "no pattern given", Hint: "pass a regular expression (or a literal with fixed_strings)"}
	}
	parts := make([]string, len(patterns))
	for i, p := range patterns {
		if fixed {
			p = regexp.QuoteMeta(p)
		}
		parts[i] = p
	}
	pat := parts[0]
	if len(parts) > 1 {
		pat = "(?:" + strings.Join(parts, ")|(?:") + ")"
	}
	flags := "(?m"
	if fold {
		flags += "i"
	}
	if multiline {
		flags += "s"
	}
	flags += ")"
	ascii, uni := rewriteClasses(pat, !multiline)
	tree, err := syntax.Parse(flags+ascii, syntax.Perl)
	if err != nil {
		return nil, patternError(parts, err)
	}
	if !multiline && hasLiteralNewline(tree) {
		return nil, &InvalidError{Field: "pattern", Message: `the literal "\n" is not allowed in a regex`,
			Hint: "matches never span lines unless multiline is set"}
	}
	m := &matcher{multiline: multiline}
	if m.re, err = regexp.Compile(flags + ascii); err != nil {
		return nil, patternError(parts, err)
	}
	if uni != ascii {
		if m.reUni, err = regexp.Compile(flags + uni); err != nil {
			return nil, patternError(parts, err)
		}
	}
	// The literals a match needs come from the wider spelling: the Unicode
	// regexp runs on non-ASCII lines, and a set taken from the ASCII one
	// would drop them (\s is six literals in ASCII, a NBSP line has none).
	litTree := tree
	if m.reUni != nil {
		if litTree, err = syntax.Parse(flags+uni, syntax.Perl); err != nil {
			return nil, patternError(parts, err)
		}
	}
	m.lits = prefilterFor(litTree)
	if m.lits != nil && !multiline {
		for _, l := range m.lits.lits {
			if strings.IndexByte(l, '\n') >= 0 {
				// From a class such as [\n]: no line contains it, so a
				// hit must still be verified (and will fail).
				m.lits.complete = false
			}
		}
	}
	m.exact = m.lits != nil && m.lits.complete && !multiline
	if m.lits != nil && !m.exact && !multiline && len(m.lits.lits) == 1 && !m.lits.fold {
		m.win = windowFor(tree, m.lits.lits[0])
	}
	return m, nil
}

// patternError reports a pattern that does not compile. err comes from
// the pattern as rewritten (flags, alternatives joined, classes widened),
// which the caller never wrote; so each pattern is parsed again as given
// and the first one's error is reported instead, quoting the caller's
// text. Only when every pattern parses on its own (the rewrite itself
// failed, say by growing too large) is err reported as it is.
func patternError(patterns []string, err error) error {
	for _, p := range patterns {
		if _, perr := syntax.Parse(p, syntax.Perl); perr != nil {
			err = perr
			break
		}
	}
	return &InvalidError{Field: "pattern", Message: err.Error(),
		Hint: "the pattern is an RE2 regular expression (Go syntax); escape metacharacters or use fixed_strings to search for text as is"}
}

func hasLiteralNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasLiteralNewline(s) {
			return true
		}
	}
	return false
}

// regexpFor returns the regexp to run on text.
func (m *matcher) regexpFor(text []byte) *regexp.Regexp {
	if m.reUni != nil && !isASCII(text) {
		return m.reUni
	}
	return m.re
}

// isASCII reports whether b has no byte >= 0x80, eight bytes at a time.
func isASCII(b []byte) bool {
	for len(b) >= 32 {
		x := binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		if x&0x8080808080808080 != 0 {
			return false
		}
		b = b[32:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// Class rewriting. Go's \w, \d, \s and \b are ASCII; ripgrep's are
// Unicode. rewriteClasses returns two spellings of the pattern: ascii,
// with only \s widened to include \v (which ripgrep's \s has and Go's
// lacks), and uni, with \w, \d, \s and their negations spelled as Unicode
// classes. On ASCII text the two match the same; the engine runs the
// first on ASCII lines and the second on the rest. \b stays ASCII-only
// (Go has no Unicode word boundary).
const (
	uniWord  = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}`
	uniSpace = `\t-\r\x{85}\p{Z}`
	asciiSp  = `\t-\r `
)

var negatedBodies = sync.OnceValues(func() (notWord, notSpace string) {
	word := []*unicode.RangeTable{unicode.L, unicode.Nl, unicode.M, unicode.Nd, unicode.Pc,
		{R16: []unicode.Range16{{Lo: 0x200c, Hi: 0x200d, Stride: 1}}}}
	space := []*unicode.RangeTable{unicode.White_Space}
	return complementBody(word), complementBody(space)
})

// complementBody spells the code points in none of the tables as the
// body of a character class.
func complementBody(tables []*unicode.RangeTable) string {
	in := func(r rune) bool {
		for _, t := range tables {
			if unicode.Is(t, r) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	start := rune(-1)
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		out := r <= unicode.MaxRune && !in(r)
		switch {
		case out && start < 0:
			start = r
		case !out && start >= 0:
			fmt.Fprintf(&b, `\x{%x}-\x{%x}`, start, r-1)
			start = -1
		}
	}
	return b.String()
}

// In line mode \A and \z become ^ and $: a line is matched on its own,
// so the start and end of the text are the line's (as in ripgrep), and
// the whole-buffer search must see them that way too.
func rewriteClasses(p string, lineMode bool) (ascii, uni string) {
	var a, u strings.Builder
	both := func(s string) { a.WriteString(s); u.WriteString(s) }
	inClass, classStart := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			d := p[i+1]
			classStart = false
			switch d {
			case 'Q':
				end := len(p)
				if j := strings.Index(p[i+2:], `\E`); j >= 0 {
					end = i + 2 + j + 2
				}
				both(p[i:end])
				i = end - 1
				continue
			case 'p', 'P', 'x':
				end := i + 3
				if i+2 < len(p) && p[i+2] == '{' {
					if j := strings.IndexByte(p[i+2:], '}'); j >= 0 {
						end = i + 2 + j + 1
					}
				} else if d == 'x' {
					end = i + 4
				}
				end = min(end, len(p))
				both(p[i:end])
				i = end - 1
				continue
			case 'A', 'z':
				if lineMode && !inClass {
					if d == 'A' {
						both("^")
					} else {
						both("$")
					}
					i++
					continue
				}
			case 'w', 'W', 'd', 'D', 's', 'S':
				as, us := classEscape(d, inClass)
				a.WriteString(as)
				u.WriteString(us)
				i++
				if inClass && i+1 < len(p) && p[i+1] == '-' {
					// "-" after a class is a literal to RE2 ([\w-0]); after
					// the spelled-out class it would make a range.
					both(`\-`)
					i++
				}
				continue
			}
			both(p[i : i+2])
			i++
			continue
		}
		if inClass {
			if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				if j := strings.Index(p[i+2:], ":]"); j >= 0 {
					both(p[i : i+2+j+2])
					i += 2 + j + 1
					classStart = false
					continue
				}
			}
			if c == ']' && !classStart {
				inClass = false
			}
			classStart = false
			both(p[i : i+1])
			continue
		}
		if c == '[' {
			inClass, classStart = true, true
			both("[")
			if i+1 < len(p) && p[i+1] == '^' {
				both("^")
				i++
			}
			continue
		}
		both(p[i : i+1])
	}
	return a.String(), u.String()
}

// classEscape spells \w, \W, \d, \D, \s or \S (d is the letter) for the
// ASCII and the Unicode pattern, inside or outside a bracketed class.
func classEscape(d byte, inClass bool) (ascii, uni string) {
	orig := `\` + string(d)
	switch d {
	case 'w':
		if inClass {
			return orig, uniWord
		}
		return orig, "[" + uniWord + "]"
	case 'W':
		if inClass {
			notWord, _ := negatedBodies() // slow to build (tens of ms): only when needed
			return orig, notWord
		}
		return orig, "[^" + uniWord + "]"
	case 'd':
		return orig, `\p{Nd}`
	case 'D':
		return orig, `\P{Nd}`
	case 's':
		if inClass {
			return asciiSp, uniSpace
		}
		return "[" + asciiSp + "]", "[" + uniSpace + "]"
	default: // 'S'
		if inClass {
			_, notSpace := negatedBodies()
			return `\x00-\x08\x0e-\x1f\x21-\x{10FFFF}`, notSpace
		}
		return "[^" + asciiSp + "]", "[^" + uniSpace + "]"
	}
}
