package search

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
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
	// breaks: in multiline mode, the pattern can match a line break (see
	// FileMatches.Count).
	breaks bool
	// whole: in multiline mode, ripgrep searches a file whole rather
	// than line by line, which changes how it deals with NUL bytes (see
	// binPolicy): the pattern can match a line break, or has a ^ or $,
	// which ripgrep takes as able to.
	whole bool
	// In multiline mode, re and reUni anchored at the start of the text
	// they run on, which is never the file's (\A never matches): whether
	// a match starts at a given place (see scanMulti).
	reAt, reUniAt *regexp.Regexp
}

// InvalidError reports an option or pattern that cannot be used. Field
// names the option with its AIO name ("pattern", "type", "include"...).
type InvalidError struct {
	Field   string
	Message string
	Hint    string
	// Suggests is the option Hint proposes, by its AIO name
	// ("fixed_strings"), or "". A front end that spells the option
	// otherwise (the command line's -F) words the hint with HintFor.
	Suggests string
	hintf    string // Hint with %s where the option's name goes
}

func (e *InvalidError) Error() string { return e.Message }

// HintFor returns the hint with the option it suggests spelled name; Hint
// when it suggests none.
func (e *InvalidError) HintFor(name string) string {
	if e.hintf == "" {
		return e.Hint
	}
	return fmt.Sprintf(e.hintf, name)
}

// suggesting returns an InvalidError whose hint, hintf, names the option
// opt (by its AIO name) where hintf has %s.
func suggesting(field, message, hintf, opt string) *InvalidError {
	return &InvalidError{Field: field, Message: message, Hint: fmt.Sprintf(hintf, opt), Suggests: opt, hintf: hintf}
}

// compileMatcher compiles the patterns (several are alternatives, like
// repeated rg -e). fixed quotes them; fold makes the match
// case-insensitive; multiline lets matches span lines with '.' matching
// '\n' (rg -U --multiline-dotall); word keeps whole words only (rg -w).
// In line mode, as in ripgrep, a pattern containing a literal "\n" is
// refused, since no line can match it.
func compileMatcher(patterns []string, fixed, fold, multiline, word bool) (*matcher, error) {
	if len(patterns) == 0 {
		return nil, suggesting("pattern", "no pattern given", "pass a regular expression (or a literal with %s)", "fixed_strings")
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
	if word {
		// ripgrep's -w: (?:^|\W)(?:pat)(?:$|\W), with the \W not taking a
		// '\n' (^ and $ stand for the line's ends), so that in multiline
		// mode a match does not reach into the line before or after.
		pat = `(?:^|[^\w\n])(?:` + pat + `)(?:$|[^\w\n])`
	}
	flags := "(?m"
	if fold {
		flags += "i"
	}
	if multiline {
		flags += "s"
	}
	flags += ")"
	ascii, uni := rewriteClasses(pat)
	ascii, uni = flags+ascii, flags+uni
	tree, err := syntax.Parse(ascii, syntax.Perl)
	if err != nil {
		return nil, patternError(parts, err)
	}
	if !multiline && hasLiteralNewline(tree) {
		return nil, suggesting("pattern", `the literal "\n" is not allowed in a regex`,
			"a match never spans lines unless you turn on %s", "multiline")
	}
	// The literals a match needs come from the wider spelling: the Unicode
	// regexp runs on non-ASCII lines, and a set taken from the ASCII one
	// would drop them (\s is six literals in ASCII, a NBSP line has none).
	litTree := tree
	if uni != ascii {
		if litTree, err = syntax.Parse(uni, syntax.Perl); err != nil {
			return nil, patternError(parts, err)
		}
	}
	if !multiline {
		if forLines(tree) {
			ascii = tree.String()
		}
		if litTree == tree {
			uni = ascii
		} else if forLines(litTree) {
			uni = litTree.String()
		}
	}
	m := &matcher{multiline: multiline, breaks: multiline && canMatchNewline(tree)}
	m.whole = m.breaks || multiline && hasLineAnchor(tree)
	if m.re, err = regexp.Compile(ascii); err != nil {
		return nil, patternError(parts, err)
	}
	if uni != ascii {
		if m.reUni, err = regexp.Compile(uni); err != nil {
			return nil, patternError(parts, err)
		}
	}
	if multiline {
		if m.reAt, err = anchoredAt(ascii); err != nil {
			return nil, patternError(parts, err)
		}
		if m.reUni != nil {
			if m.reUniAt, err = anchoredAt(uni); err != nil {
				return nil, patternError(parts, err)
			}
		}
	}
	m.lits = prefilterFor(litTree)
	if m.lits != nil && slices.ContainsFunc(m.lits.lits, func(l string) bool { return strings.ContainsRune(l, utf8.RuneError) }) {
		// The regexp matches a byte that is not UTF-8 as U+FFFD; a
		// finder would look for U+FFFD's encoding only.
		m.lits = nil
	}
	if m.lits != nil && !multiline {
		for _, l := range m.lits.lits {
			if strings.IndexByte(l, '\n') >= 0 {
				// No line contains it (forLines leaves no class with a
				// '\n', but to be safe): a hit must still be verified,
				// and will fail.
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

// canMatchNewline reports whether re can match a '\n' (ripgrep counts
// matches rather than lines for such a pattern in multiline mode).
func canMatchNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
		return false
	}
	return slices.ContainsFunc(re.Sub, canMatchNewline)
}

// hasLineAnchor reports whether re has a ^ or $ matching at line breaks.
func hasLineAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginLine || re.Op == syntax.OpEndLine {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasLineAnchor)
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
	return suggesting("pattern", err.Error(),
		"the pattern is an RE2 regular expression (Go syntax); escape metacharacters or use %s to search for text as is", "fixed_strings")
}

// forLines rewrites re, in place, for line mode, and reports whether
// it changed anything. Each line is matched on its own (as in ripgrep),
// so the start and end of the text are the line's and no match contains
// '\n'; but the search that runs the regexp over many lines at once
// must see it that way too. So \A, \z, and ^ and $ in (?-m) become line
// anchors, and '\n' is taken out of every class: a match cannot run on
// into the next line (`\D+` would otherwise match to the next digit, in
// any line, at each line that has a match: quadratic).
func forLines(re *syntax.Regexp) bool {
	changed := false
	switch re.Op {
	case syntax.OpBeginText:
		re.Op, changed = syntax.OpBeginLine, true
	case syntax.OpEndText:
		re.Op, changed = syntax.OpEndLine, true
		re.Flags &^= syntax.WasDollar
	case syntax.OpAnyChar:
		re.Op, changed = syntax.OpAnyCharNotNL, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo > '\n' || hi < '\n' {
				continue
			}
			var r []rune
			if lo < '\n' {
				r = append(r, lo, '\n'-1)
			}
			if hi > '\n' {
				r = append(r, '\n'+1, hi)
			}
			re.Rune = slices.Concat(re.Rune[:i], r, re.Rune[i+2:])
			if len(re.Rune) == 0 {
				re.Op, re.Rune = syntax.OpNoMatch, nil
			}
			changed = true
			break
		}
	}
	for _, sub := range re.Sub {
		if forLines(sub) {
			changed = true
		}
	}
	return changed
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

// anchoredAt compiles the pattern src to match only at the start of the
// text, which is not the start of the file: \A in it matches nothing.
func anchoredAt(src string) (*regexp.Regexp, error) {
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	var noBeginText func(re *syntax.Regexp)
	noBeginText = func(re *syntax.Regexp) {
		if re.Op == syntax.OpBeginText {
			re.Op = syntax.OpNoMatch
		}
		for _, sub := range re.Sub {
			noBeginText(sub)
		}
	}
	noBeginText(tree)
	return regexp.Compile(`\A(?:` + tree.String() + `)`)
}

// regexpFor returns the regexp to run on text.
func (m *matcher) regexpFor(text []byte) *regexp.Regexp {
	if m.reUni != nil && !isASCII(text) {
		return m.reUni
	}
	return m.re
}

// anchoredTwin returns the anchored twin of re, which regexpFor chose
// (multiline only). It is derived from that choice, not from the text: the
// text is a whole file, and looking at it again per match made a search
// with a match per line quadratic.
func (m *matcher) anchoredTwin(re *regexp.Regexp) *regexp.Regexp {
	if re == m.reUni {
		return m.reUniAt
	}
	return m.reAt
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
	uniSpace = `\t-\r\x{85}\p{Z}`
	asciiSp  = `\t-\r `
)

// uniWord is ripgrep's \w: Alphabetic, marks, decimal digits, connector
// punctuation and the joiners. Alphabetic is the letters, the letter
// numbers and Other_Alphabetic, which is marks but for a few symbols (Ⓐ,
// 🄰) that Go has no class for: those are spelled out.
var uniWord = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}` +
	classBody([]*unicode.RangeTable{unicode.Other_Alphabetic}, []*unicode.RangeTable{unicode.L, unicode.Nl, unicode.M})

var negatedBodies = sync.OnceValues(func() (notWord, notSpace string) {
	all := []*unicode.RangeTable{{R32: []unicode.Range32{{Lo: 0, Hi: unicode.MaxRune, Stride: 1}}}}
	word := []*unicode.RangeTable{unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd,
		unicode.Pc, unicode.Join_Control}
	space := []*unicode.RangeTable{unicode.White_Space}
	return classBody(all, word), classBody(all, space)
})

// classBody spells the code points that are in one of the tables in and
// in none of the tables out as the body of a character class.
func classBody(in, out []*unicode.RangeTable) string {
	ins, outs := intervals(in), intervals(out)
	var b strings.Builder
	j := 0
	for _, v := range ins {
		lo := v[0]
		for ; j < len(outs) && outs[j][1] < lo; j++ {
		}
		for k := j; lo <= v[1]; k++ {
			hi := v[1]
			if k < len(outs) && outs[k][0] <= hi {
				hi = outs[k][0] - 1
			}
			if lo <= hi {
				fmt.Fprintf(&b, `\x{%x}-\x{%x}`, lo, hi)
			}
			if k >= len(outs) || outs[k][0] > v[1] {
				break
			}
			lo = outs[k][1] + 1
		}
	}
	return b.String()
}

// intervals returns the code points of the tables as sorted, disjoint,
// non-adjacent closed intervals.
func intervals(tables []*unicode.RangeTable) [][2]rune {
	var iv [][2]rune
	add := func(lo, hi, stride rune) {
		if stride == 1 {
			iv = append(iv, [2]rune{lo, hi})
			return
		}
		for r := lo; r <= hi; r += stride {
			iv = append(iv, [2]rune{r, r})
		}
	}
	for _, t := range tables {
		for _, r := range t.R16 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range t.R32 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
	}
	slices.SortFunc(iv, func(a, b [2]rune) int { return int(a[0] - b[0]) })
	out := iv[:0]
	for _, v := range iv {
		if n := len(out); n > 0 && v[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], v[1])
			continue
		}
		out = append(out, v)
	}
	return out
}

func rewriteClasses(p string) (ascii, uni string) {
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
			notWord, _ := negatedBodies() // built when first needed
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
