package edit

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// numberedPrefix matches the line-number prefixes of numbered reads:
// cat -n ("    12\t"), "12: " and "  12 | " (Agent Zero's read format).
var numberedPrefix = regexp.MustCompile(`^(\s*\d+\t|\d+: |\s*\d+ \| )`)

// hasNumberedPrefixes reports whether most non-blank lines of s start with
// a line-number prefix.
func hasNumberedPrefixes(s string) bool {
	n, hit := 0, 0
	for _, l := range strings.Split(normalizeEOLString(s), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n++
		if numberedPrefix.MatchString(l) {
			hit++
		}
	}
	return n > 0 && hit*2 >= n+1
}

// hintScanLimit bounds the bytes scanned for the nearest region, so a miss
// in a huge file stays cheap; beyond it the hint says it looked no further.
const hintScanLimit = 64 << 20

// noMatchHint explains a miss: a note about numbered-read prefixes in
// old; then, for a strict miss that the rest of the ladder would match,
// where and what differs and how to ask for tolerant matching; otherwise
// the nearest region of content (line, similarity, a compact character
// diff) and what kind of difference it is. A diff that shows nothing (the
// texts differ only in line endings or blank lines around old) is never
// shown: the hint names the difference instead.
func noMatchHint(content []byte, old string, strict bool, names Names) string {
	var parts []string
	if hasNumberedPrefixes(old) {
		parts = append(parts, names.old()+` seems to carry line-number prefixes from a numbered read (like "  12\t" or "12: "); remove them and keep only the file's text`)
	}
	if strict && len(content) <= hintScanLimit {
		if tier, ms := Locate(content, old, false); len(ms) > 0 {
			return strings.Join(append(parts, tolerated(content, old, tier, ms, names)), "; ")
		}
	}
	if n, ok := nearest(content, old); ok {
		parts = append(parts, n.describe(old, strict, names))
	} else {
		parts = append(parts, "no similar text found; re-read the file and copy "+names.old()+" from it exactly")
	}
	return strings.Join(parts, "; ")
}

// tolerated explains a strict miss that a tolerant tier matches (ms, of
// tier): where, what differs, and how to ask for that tier.
func tolerated(content []byte, old string, tier Tier, ms []Match, names Names) string {
	idx := newLines(content)
	var at []string
	for i, m := range ms {
		if i == 3 {
			at = append(at, "…")
			break
		}
		at = append(at, strconv.Itoa(idx.lineOf(m.Start)+1))
	}
	where := "line " + at[0]
	if len(ms) > 1 {
		where = "lines " + strings.Join(at, ", ")
	}
	region := string(content[ms[0].Start:ms[0].End])
	eol := eolNote(old, region, names)
	var what string
	switch tier {
	case TierLineEnding:
		what = eol
		if what == "" {
			what = "they differ only in line endings"
		}
		eol = ""
	case TierTrailingSpace:
		what = "they differ only in spaces or tabs at the ends of lines"
	case TierTrimmed:
		// A diff of old against the text without the blank space
		// around it says no more than this.
		what = names.old() + " has blank lines or spaces around it that the file does not have there"
	case TierIndentation:
		what = "they differ only in indentation (tolerant matching re-indents the replacement to the file's)"
	case TierPunctuation:
		what = "they differ only in typographic punctuation: curly quotes, dashes or non-breaking spaces (tolerant matching writes the replacement as given)"
	}
	if eol != "" {
		what = eol + ", and " + what
	}
	if d, ok := shownDiff(normalizeEOLString(old), normalizeEOLString(region)); ok && tier != TierTrimmed {
		what += ": " + d
	}
	return fmt.Sprintf("%s matches the file at %s%s: %s; exact matching refuses any difference: %s to accept it (match tier %s)",
		names.old(), where, tier.describe(), what, names.tolerant(), tier)
}

// eolNote says how the line endings of old and of the file's text differ,
// or "" when they do not (or either has no line break).
func eolNote(old, region string, names Names) string {
	o, f := eolStyle(old), eolStyle(region)
	if o == "" || f == "" || o == f {
		return ""
	}
	return fmt.Sprintf("%s uses %s line endings, the file uses %s", names.old(), o, f)
}

// eolStyle names the line endings of s: "LF", "CRLF", "CR", "mixed", or
// "" when s has no line break.
func eolStyle(s string) string {
	crlf := strings.Count(s, "\r\n")
	counts := []struct {
		name string
		n    int
	}{{"LF", strings.Count(s, "\n") - crlf}, {"CRLF", crlf}, {"CR", strings.Count(s, "\r") - crlf}}
	style := ""
	for _, c := range counts {
		switch {
		case c.n == 0:
		case style != "":
			return "mixed"
		default:
			style = c.name
		}
	}
	return style
}

// shownDiff is charDiff(want, got), unless the texts are equal and it
// would show nothing.
func shownDiff(want, got string) (string, bool) {
	if want == got {
		return "", false
	}
	return charDiff(want, got), true
}

// near is the region of a file most similar to an old text.
type near struct {
	line int     // 1-based first line
	sim  float64 // similarity of want and got in [0,1]
	want string  // the old text with LF line endings, blank lines around it trimmed
	got  string  // the region's lines joined with LF
	raw  string  // the region's lines as in the file, with their terminators
}

// describe words n for a hint: the region's line, its similarity and a
// diff, and what kind of difference it is when that can be named. Line
// endings are named when they count: under strict, or when nothing else
// differs.
func (n near) describe(old string, strict bool, names Names) string {
	var notes []string
	if e := eolNote(old, n.raw, names); e != "" && (strict || n.want == n.got) {
		notes = append(notes, e)
	}
	if n.want == n.got {
		// Only what nearest set aside differs.
		if norm := normalizeEOLString(old); norm != n.want {
			notes = append(notes, names.old()+" has blank lines or spaces around it that the file does not have there")
		}
		if len(notes) == 0 {
			notes = append(notes, "in bytes no hint can show; re-read the file and copy "+names.old()+" from it")
		}
		return fmt.Sprintf("the text at line %d equals %s except that %s", n.line, names.old(), strings.Join(notes, ", and "))
	}
	if k := whitespaceKind(n.want, n.got, names); k != "" {
		notes = append(notes, k)
	}
	pct := int(n.sim*100 + 0.5)
	if pct == 100 {
		pct = 99 // they differ
	}
	s := fmt.Sprintf("closest match at line %d (%d%% similar): %s", n.line, pct, charDiff(n.want, n.got))
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// whitespaceKind names a difference between want and got (LF texts) that
// is only in spaces and tabs, or returns "".
func whitespaceKind(want, got string, names Names) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		return ""
	}
	same := func(f func(string) string) bool {
		for i := range wl {
			if f(wl[i]) != f(gl[i]) {
				return false
			}
		}
		return true
	}
	switch {
	case same(func(l string) string { return strings.TrimRight(l, " \t") }):
		return "they differ only in spaces or tabs at the ends of lines"
	case same(func(l string) string { return strings.TrimLeft(l, " \t") }):
		var wantTabs, gotTabs bool
		for i := range wl {
			w, g := leadingSpace(wl[i]), leadingSpace(gl[i])
			if w != g {
				wantTabs = wantTabs || strings.Contains(w, "\t")
				gotTabs = gotTabs || strings.Contains(g, "\t")
			}
		}
		switch {
		case gotTabs && !wantTabs:
			return names.old() + " indents with spaces where the file has tabs; tabs are never taken for spaces: copy the file's indentation"
		case wantTabs && !gotTabs:
			return names.old() + " indents with tabs where the file has spaces; tabs are never taken for spaces: copy the file's indentation"
		}
		return "they differ only in indentation"
	case same(func(l string) string { return strings.Join(strings.Fields(l), " ") }):
		return "they differ only in spaces and tabs"
	}
	return ""
}

// nearest returns the region of content most similar to old.
func nearest(content []byte, old string) (near, bool) {
	body, _ := StripBOM(content)
	if len(body) > hintScanLimit {
		body = body[:hintScanLimit]
	}
	want, _, _ := trimBlankLines(normalizeEOLString(old))
	wantLines := strings.Split(want, "\n")
	probe := ""
	probeAt := 0
	for i, w := range wantLines {
		if t := strings.TrimSpace(w); len(t) > len(probe) {
			probe, probeAt = t, i
		}
	}
	if probe == "" {
		return near{}, false
	}
	idx := newLines(body)
	grams := bigrams(probe)
	type cand struct {
		line  int
		score float64
	}
	var top []cand
	for i := 0; i < idx.count(); i++ {
		t := trimSpaceBytes(idx.text(i))
		if len(t) == 0 {
			continue
		}
		s := dice(grams, len(probe), t)
		if len(top) < 5 || s > top[len(top)-1].score {
			top = append(top, cand{i, s})
			for j := len(top) - 1; j > 0 && top[j].score > top[j-1].score; j-- {
				top[j], top[j-1] = top[j-1], top[j]
			}
			if len(top) > 5 {
				top = top[:5]
			}
		}
	}
	best := near{sim: -1}
	for _, c := range top {
		first := max(c.line-probeAt, 0)
		last := min(first+len(wantLines), idx.count())
		var sb strings.Builder
		for i := first; i < last; i++ {
			if i > first {
				sb.WriteByte('\n')
			}
			sb.Write(idx.text(i))
		}
		got := sb.String()
		if s := similarity(want, got); s > best.sim {
			best = near{line: first + 1, sim: s, want: want, got: got, raw: string(body[idx.start[first]:idx.start[last]])}
		}
	}
	if best.sim < 0.3 {
		return near{}, false
	}
	return best, true
}

func trimSpaceBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// bigrams returns the set of byte bigrams of s.
func bigrams(s string) *[1 << 16 / 64]uint64 {
	var set [1 << 16 / 64]uint64
	for i := 0; i+1 < len(s); i++ {
		g := uint16(s[i])<<8 | uint16(s[i+1])
		set[g/64] |= 1 << (g % 64)
	}
	return &set
}

// dice estimates the similarity of t to the probe whose bigram set is
// grams: the share of t's bigrams found in the probe, scaled by length.
func dice(grams *[1 << 16 / 64]uint64, probeLen int, t []byte) float64 {
	if len(t) < 2 || probeLen < 2 {
		return 0
	}
	hit := 0
	for i := 0; i+1 < len(t); i++ {
		g := uint16(t[i])<<8 | uint16(t[i+1])
		if grams[g/64]&(1<<(g%64)) != 0 {
			hit++
		}
	}
	return 2 * float64(hit) / float64(len(t)-1+probeLen-1)
}

// similarity is 1 - editDistance/maxLen on runes, computed exactly for
// short texts and estimated from bigrams for long ones.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra)*len(rb) > 4_000_000 {
		return dice(bigrams(a), len(a), []byte(b))
	}
	m := max(len(ra), len(rb))
	if m == 0 {
		return 1
	}
	return 1 - float64(distance(ra, rb))/float64(m)
}

// Distance is the Levenshtein distance of a and b: the fewest rune
// insertions, deletions and substitutions that turn one into the other.
// It takes time len(a)*len(b); use it on short texts (names, lines).
func Distance(a, b string) int { return distance([]rune(a), []rune(b)) }

func distance(ra, rb []rune) int {
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// charDiff shows where want and got differ: the common prefix and suffix
// shortened, the differing middle as {-want-}{+got+}. Tabs show as →,
// spaces in the differing part as ·, line breaks as ⏎.
func charDiff(want, got string) string {
	p := 0
	for p < len(want) && p < len(got) && want[p] == got[p] {
		p++
	}
	for p > 0 && p < len(want) && !utf8.RuneStart(want[p]) {
		p-- // back to a rune start; p == len(want) when want is a prefix of got
	}
	s := 0
	for s < len(want)-p && s < len(got)-p && want[len(want)-1-s] == got[len(got)-1-s] {
		s++
	}
	for s > 0 && !utf8.RuneStart(want[len(want)-s]) {
		s--
	}
	const ctx = 24
	pre := want[:p]
	if len(pre) > ctx {
		pre = "…" + tail(pre, ctx)
	}
	suf := want[len(want)-s:]
	if len(suf) > ctx {
		suf = head(suf, ctx) + "…"
	}
	return visible(pre, false) + "{-" + visible(shorten(want[p:len(want)-s]), true) + "-}{+" +
		visible(shorten(got[p:len(got)-s]), true) + "+}" + visible(suf, false)
}

func shorten(s string) string {
	if len(s) <= 80 {
		return s
	}
	return head(s, 38) + "…" + tail(s, 38)
}

func head(s string, n int) string {
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}

func tail(s string, n int) string {
	i := max(len(s)-n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// visible shows s for a hint: a tab as →, a line break as ⏎, with spaces
// a space as · and a combining mark as <U+0301> (an "é" written as "e"
// and a mark prints as one written as one character), and other
// characters that print as nothing or as blank space (a BOM, a zero-width
// or non-breaking space) as <U+FEFF>, so that a difference in them is
// seen.
func visible(s string, spaces bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\t':
			b.WriteString("→")
		case r == '\n':
			b.WriteString("⏎")
		case r == ' ' && spaces:
			b.WriteString("·")
		case spaces && unicode.In(r, unicode.Mn, unicode.Me):
			fmt.Fprintf(&b, "<U+%04X>", r)
		case r == ' ', r == utf8.RuneError && size == 1, unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
		i += size
	}
	return b.String()
}
