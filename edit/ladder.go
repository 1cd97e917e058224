package edit

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// Tier is a rung of the matching ladder, from strictest to most tolerant.
// The first tier that finds any match decides where (and whether) text is
// replaced; a more tolerant tier is never consulted once a stricter one
// matched, so tolerance cannot make a unique exact match ambiguous.
type Tier int

// The tiers, in the order they are tried.
const (
	// TierExact matches the bytes as given.
	TierExact Tier = iota + 1
	// TierLineEnding matches after CRLF and lone CR become LF on both sides.
	TierLineEnding
	// TierTrailingSpace compares whole lines ignoring trailing spaces and tabs.
	TierTrailingSpace
	// TierTrimmed matches the old text with its surrounding blank space
	// (leading and trailing whitespace and blank lines) removed, where
	// that blank space fits: not inside a word, and at the start (end) of
	// a line when old starts (ends) with a line break. Deleting a match
	// that is all of its line but blanks deletes the line.
	TierTrimmed
	// TierIndentation compares whole lines after removing each side's
	// common leading indentation; the relative indentation must match
	// character for character (tabs are never taken for spaces). The
	// replacement is re-indented to the matched lines.
	TierIndentation
	// TierPunctuation retries the tiers above with typographic punctuation
	// (curly quotes, dashes, non-breaking spaces) read as ASCII. It only
	// locates text; the replacement is written exactly as given.
	TierPunctuation
)

var tierNames = [...]string{"", "exact", "line_ending", "trailing_whitespace", "trimmed", "indentation", "punctuation"}

// String returns the tier's stable name, e.g. "trailing_whitespace".
func (t Tier) String() string {
	if t > 0 && int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "none"
}

// describe says, for messages, what the tier tolerated.
func (t Tier) describe() string {
	switch t {
	case TierLineEnding:
		return " (ignoring line endings)"
	case TierTrailingSpace:
		return " (ignoring trailing whitespace)"
	case TierTrimmed:
		return " (ignoring surrounding blank space)"
	case TierIndentation:
		return " (ignoring indentation)"
	case TierPunctuation:
		return " (reading typographic punctuation as ASCII)"
	}
	return ""
}

// Match is one place the old text was found.
type Match struct {
	Start, End int // byte offsets of the matched span in the content
	Tier       Tier
	adapt      adaptation
}

// adaptation turns the caller's replacement into the text written for one
// match: surrounding blank space the matcher ignored is dropped from the
// replacement too, and a re-indented match re-indents the replacement.
type adaptation struct {
	lead, trail string // stripped from the replacement when present
	reindent    bool
	from, to    string // indentation: a replacement line's prefix from becomes to
	// rest limits re-indentation to the lines after the first (whose
	// indentation is the file's, before the match), and to replacements
	// that start with lead, whose indentation is then old's.
	rest bool
	// wholeLine: the match is all of its lines but indentation and
	// trailing blanks, so deleting it deletes the lines.
	wholeLine bool
}

type span struct {
	start, end int
	adapt      adaptation
}

// Locate finds old in content with the matching ladder and returns the
// deciding tier and every match of that tier in increasing order. Matches
// never overlap: they are found from the start, each after the one before
// ("aa" matches "aaa" once, at its start, as str.count, rg and
// replace-all count), so a unique match is the one replace-all would
// change too. With strict, only the exact
// tier is tried. A UTF-8 byte order mark at the start of content is not
// part of a match unless old starts with one too: a reader that shows the
// mark (AIO's read routes do, as AIO itself does) lets an agent copy the
// first line with it, and such an old can only mean the file's start, so
// it matches there alone, mark included, and the replacement decides
// whether the mark stays. It returns (0, nil) when no tier matches.
func Locate(content []byte, old string, strict bool) (Tier, []Match) {
	return locate(content, old, strict, 0)
}

// locate is Locate returning at most limit matches (0: all): the deciding
// tier is the same, its matches are the first limit of Locate's.
func locate(content []byte, old string, strict bool, limit int) (Tier, []Match) {
	body, bom := StripBOM(content)
	rest, markedOld := strings.CutPrefix(old, BOM)
	if bom > 0 && markedOld {
		return locateAtStart(body, bom, rest, strict)
	}
	l := ladder{raw: identity(body), old: old, limit: limit}
	tier, spans, v := l.run(strict)
	out := make([]Match, len(spans))
	for i, s := range spans {
		out[i] = Match{Start: v.orig(s.start) + bom, End: v.orig(s.end) + bom, Tier: tier, adapt: s.adapt}
	}
	return tier, out
}

// locateAtStart is Locate for an old that starts with the byte order mark
// body follows: the ladder run over the body's first lines alone, as many
// as rest has, so that a match further on cannot decide the tier; a match
// it finds at the start is extended over the mark.
func locateAtStart(body []byte, bom int, rest string, strict bool) (Tier, []Match) {
	if rest == "" {
		return TierExact, []Match{{Start: 0, End: bom, Tier: TierExact}}
	}
	lines := countEOLs([]byte(rest))
	if !endsWithEOL(rest) {
		lines++
	}
	end := 0
	for range lines {
		if end = lineEnd(body, end); end == len(body) {
			break
		}
	}
	l := ladder{raw: identity(body[:end]), old: rest}
	tier, spans, v := l.run(strict)
	for _, s := range spans {
		if v.orig(s.start) == 0 {
			return tier, []Match{{Start: 0, End: v.orig(s.end) + bom, Tier: tier, adapt: s.adapt}}
		}
	}
	return 0, nil
}

type ladder struct {
	raw   *view
	old   string
	limit int // the most matches wanted (0: all)
}

func (l *ladder) run(strict bool) (Tier, []span, *view) {
	if s := exactSpans(l.raw, l.old, l.limit); len(s) > 0 || strict {
		if len(s) == 0 {
			return 0, nil, l.raw
		}
		return TierExact, s, l.raw
	}
	norm := normalizeEOL(l.raw.b).on(l.raw)
	old := normalizeEOLString(l.old)
	if norm != l.raw || old != l.old {
		if s := exactSpans(norm, old, l.limit); len(s) > 0 {
			return TierLineEnding, s, norm
		}
	}
	if tier, s := tolerant(norm, old, l.limit); len(s) > 0 {
		return tier, s, norm
	}
	punct := normalizePunct(norm.b).on(norm)
	pold := normalizePunctString(old)
	if punct == norm && pold == old {
		return 0, nil, norm
	}
	if s := exactSpans(punct, pold, l.limit); len(s) > 0 {
		return TierPunctuation, s, punct
	}
	if _, s := tolerant(punct, pold, l.limit); len(s) > 0 {
		return TierPunctuation, s, punct
	}
	return 0, nil, punct
}

// tolerant runs the whitespace-tolerant tiers on LF-normalised text,
// returning at most limit spans (0: all).
func tolerant(v *view, old string, limit int) (Tier, []span) {
	if s := lineWindows(v, old, false, limit); len(s) > 0 {
		return TierTrailingSpace, s
	}
	if t := strings.TrimSpace(old); t != old && t != "" {
		lead := old[:strings.Index(old, t)]
		trail := old[len(lead)+len(t):]
		var s []span
		for _, p := range indexAll(v.b, []byte(t), 0) { // v has no CR to split
			if a, ok := trimmedFit(v.b, p, p+len(t), lead, trail); ok {
				if s = append(s, span{start: p, end: p + len(t), adapt: a}); len(s) == limit {
					break
				}
			}
		}
		if len(s) > 0 {
			return TierTrimmed, s
		}
	}
	if s := lineWindows(v, old, true, limit); len(s) > 0 {
		return TierIndentation, s
	}
	return 0, nil
}

// trimmedFit checks an occurrence b[start:end] (LF-only text) of old's
// text found without the blank space around it (lead, trail) against what
// that blank space said about the place: blank space before the text means
// it does not start inside a word (after punctuation is fine: "f(x = 1)"
// has " x = 1"), a line break before it means only
// indentation precedes it on its line, and likewise after it. An old text
// of "\nx = 1" is a line, not the end of "max = 1". It returns how to adapt
// the replacement there: lead and trail are dropped from it, and when the
// text starts its line, the replacement's further lines are re-indented
// from old's indentation to the line's, as the indentation tier does.
func trimmedFit(b []byte, start, end int, lead, trail string) (adaptation, bool) {
	a := adaptation{lead: lead, trail: trail}
	// Only the blanks next to the occurrence are read, not its whole
	// line: a long line can hold many occurrences.
	ls := start
	for ls > 0 && (b[ls-1] == ' ' || b[ls-1] == '\t') {
		ls--
	}
	le := end
	for le < len(b) && (b[le] == ' ' || b[le] == '\t') {
		le++
	}
	blankBefore := ls == 0 || b[ls-1] == '\n'
	blankAfter := le == len(b) || b[le] == '\n'
	switch {
	case strings.Contains(lead, "\n") && !blankBefore,
		lead != "" && insideWord(b, start),
		strings.Contains(trail, "\n") && !blankAfter,
		trail != "" && insideWord(b, end):
		return a, false
	}
	if blankBefore {
		a.wholeLine = blankAfter
		if want, before := lead[strings.LastIndexByte(lead, '\n')+1:], string(b[ls:start]); want != before {
			a.reindent, a.rest, a.from, a.to = true, true, want, before
		}
	}
	return a, true
}

// insideWord reports whether position i of b falls between two word
// characters, so that text starting or ending there cuts a word.
func insideWord(b []byte, i int) bool {
	if i <= 0 || i >= len(b) {
		return false
	}
	a, _ := utf8.DecodeLastRune(b[:i])
	c, _ := utf8.DecodeRune(b[i:])
	return isWordRune(a) && isWordRune(c)
}

// isBlank reports whether b holds only spaces and tabs.
func isBlank(b []byte) bool { return len(bytes.TrimLeft(b, " \t")) == 0 }

// exactSpans finds old in v. When an occurrence begins or ends between
// the CR and the LF of a CRLF, the bytes are no match for old as given:
// replacing it would leave a lone CR or write a bare LF into the file
// ("\nb" in "a\r\nb" means the line break). Then there is no exact match
// at all, and the line-ending tier decides over every occurrence — so
// dropping only the split ones cannot make an ambiguous edit unique.
func exactSpans(v *view, old string, limit int) []span {
	pos := indexAll(v.b, []byte(old), limit)
	if len(pos) == 0 {
		return nil
	}
	out := make([]span, len(pos))
	for i, p := range pos {
		end := p + len(old)
		if splitsCRLF(v.b, p) || splitsCRLF(v.b, end) {
			return nil
		}
		out[i] = span{start: p, end: end}
	}
	return out
}

// splitsCRLF reports whether offset i of b falls between a CR and its LF.
func splitsCRLF(b []byte, i int) bool {
	return i > 0 && i < len(b) && b[i-1] == '\r' && b[i] == '\n'
}

// lineWindows finds runs of whole lines of v equal to old's lines, compared
// without trailing spaces and tabs; with indent, blank lines around old are
// ignored and each side's common indentation is removed before comparing.
// v and old use LF only.
func lineWindows(v *view, old string, indent bool, limit int) []span {
	body := old
	lead, trail := "", ""
	if indent {
		body, lead, trail = trimBlankLines(old)
	} else if strings.HasSuffix(body, "\n") {
		body, trail = body[:len(body)-1], "\n"
	}
	if strings.TrimSpace(body) == "" {
		return nil
	}
	want := strings.Split(body, "\n")
	wantIndent := ""
	if indent {
		wantIndent = commonIndent(want)
	}
	key := 0
	for i, w := range want {
		if len(strings.TrimSpace(w)) > len(strings.TrimSpace(want[key])) {
			key = i
		}
	}
	probe := []byte(strings.TrimSpace(want[key]))
	idx := v.index()
	// The windows to try: those whose line key holds probe.
	var firsts []int
	lastLine := -1
	for _, hit := range indexAll(v.b, probe, 0) {
		li := idx.lineOf(hit)
		if li == lastLine {
			continue
		}
		lastLine = li
		if first := li - key; first >= 0 && first+len(want) <= idx.count() {
			firsts = append(firsts, first)
		}
	}
	var out []span
	free := 0 // the first line no window found holds
	try := func(first int) bool {
		if first < free {
			return false // windows do not overlap, as exact matches do not
		}
		got := make([][]byte, len(want))
		for i := range want {
			got[i] = idx.text(first + i)
		}
		a := adaptation{lead: lead, trail: trail, wholeLine: true}
		if indent {
			have := commonIndentBytes(got)
			if !indentEqual(got, want, have, wantIndent) {
				return false
			}
			a.reindent, a.from, a.to = true, wantIndent, have
		} else if !rstripEqual(got, want) {
			return false
		}
		last := first + len(want) - 1
		out = append(out, span{start: idx.start[first], end: idx.end(last), adapt: a})
		free = last + 1
		return len(out) == limit
	}
	if len(firsts)*len(want) <= windowBudget(idx.count()) {
		for _, first := range firsts {
			if try(first) {
				break
			}
		}
		return out
	}
	// Too many windows to compare line by line: only those whose every
	// line has the key of old's line there can match (trailing blanks
	// aside, and with indent indentation too).
	lineKey := rstripBytes
	if indent {
		lineKey = bytes.TrimSpace
	}
	keys := make([]string, len(want))
	for i, w := range want {
		keys[i] = string(lineKey([]byte(w)))
	}
	keyedWindows(idx, lineKey, keys, 0, idx.count()-len(want), try)
	return out
}

// windowBudget is how many line comparisons a search for a window of
// lines among n lines makes before it sorts the lines by key instead
// (keyedWindows): an old text whose every line is frequent in the file
// ("}", a blank line, a repeated row) would otherwise cost its length
// times the file's.
func windowBudget(n int) int { return 4*n + 1<<16 }

// keyedWindows calls match with each window start i in [first, last], in
// order, whose lines i, i+1, … have the keys (key of the line's text)
// keys, until match returns true. It reads each line of the windows once,
// then visits only the lines that have the key of keys that fewest lines
// have, so it costs the lines plus that key's count times len(keys).
func keyedWindows(idx *lines, key func([]byte) []byte, keys []string, first, last int, match func(i int) bool) {
	if first > last {
		return
	}
	ids := make(map[string]int32, len(keys))
	want := make([]int32, len(keys))
	for j, k := range keys {
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		want[j] = id
	}
	count := make([]int, len(ids))
	have := make([]int32, last+len(keys)-first) // the id of line first+l's key, or -1
	for l := range have {
		id, ok := ids[string(key(idx.text(first+l)))]
		if !ok {
			id = -1
		} else {
			count[id]++
		}
		have[l] = id
	}
	pivot := 0
	for j, id := range want {
		if count[id] < count[want[pivot]] {
			pivot = j
		}
	}
	for l := pivot; l <= last-first+pivot; l++ {
		if have[l] != want[pivot] || !slices.Equal(have[l-pivot:l-pivot+len(want)], want) {
			continue
		}
		if match(first + l - pivot) {
			return
		}
	}
}

func rstripEqual(got [][]byte, want []string) bool {
	for i, w := range want {
		if string(bytes.TrimRight(got[i], " \t")) != strings.TrimRight(w, " \t") {
			return false
		}
	}
	return true
}

// indentEqual reports whether got is want re-indented from wantIndent to
// have. Blank lines are blank as commonIndent sees them (any Unicode
// space), so a non-blank line always starts with its indentation.
func indentEqual(got [][]byte, want []string, have, wantIndent string) bool {
	for i, w := range want {
		g := bytes.TrimRight(got[i], " \t")
		w = strings.TrimRight(w, " \t")
		gBlank, wBlank := len(bytes.TrimSpace(g)) == 0, strings.TrimSpace(w) == ""
		if gBlank || wBlank {
			if gBlank != wBlank {
				return false
			}
			continue
		}
		if string(g[len(have):]) != w[len(wantIndent):] {
			return false
		}
	}
	return true
}

// trimBlankLines splits s into its body without surrounding blank lines and
// the blank text before and after it. The body keeps the leading
// indentation of its first line.
func trimBlankLines(s string) (body, lead, trail string) {
	start := 0
	for {
		nl := strings.IndexByte(s[start:], '\n')
		if nl < 0 || strings.TrimSpace(s[start:start+nl]) != "" {
			break
		}
		start += nl + 1
	}
	end := len(s)
	for {
		nl := strings.LastIndexByte(s[start:end], '\n')
		if nl < 0 {
			break
		}
		if strings.TrimSpace(s[start+nl+1:end]) != "" {
			break
		}
		end = start + nl
	}
	return s[start:end], s[:start], s[end:]
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// commonIndent returns the longest literal whitespace prefix shared by the
// non-blank lines.
func commonIndent(ls []string) string {
	var c string
	first := true
	for _, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := leadingSpace(l)
		if first {
			c, first = ind, false
			continue
		}
		c = commonPrefix(c, ind)
	}
	return c
}

func commonIndentBytes(ls [][]byte) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return commonIndent(s)
}

func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return a[:i]
}

// apply turns the caller's replacement into the text written for a match,
// with LF line endings (the caller converts them to the span's).
func (a adaptation) apply(orig string) string {
	norm := normalizeEOLString(orig)
	repl := norm
	if a.lead != "" {
		repl = strings.TrimPrefix(repl, a.lead)
	}
	if a.trail != "" {
		repl = strings.TrimSuffix(repl, a.trail)
	}
	switch {
	case a.reindent && a.rest:
		if strings.HasPrefix(norm, a.lead) {
			if first, more, ok := strings.Cut(repl, "\n"); ok {
				repl = first + "\n" + reindent(more, a.from, a.to)
			}
		}
	case a.reindent:
		repl = reindent(repl, ownIndent(repl, a.from), a.to)
	}
	return repl
}

// deletesLines reports whether the adapted replacement removes the matched
// lines entirely, terminator included: the old text ended with a line
// break the matcher set aside, or started with one and the match is all
// of its lines, and nothing replaces it.
func (a adaptation) deletesLines(adapted string) bool {
	return adapted == "" && (strings.Contains(a.trail, "\n") || a.wholeLine && strings.Contains(a.lead, "\n"))
}

// ownIndent returns the indentation that s (LF endings) is written
// relative to: from, old's common indentation, unless no non-blank line of
// s carries it, in which case s was written with its own (a replacement
// typed flush left for an indented old text); then s's common indentation,
// so that its lines keep their indentation relative to each other.
func ownIndent(s, from string) string {
	if from == "" {
		return from
	}
	ls := strings.Split(s, "\n")
	for _, l := range ls {
		if strings.TrimSpace(l) != "" && strings.HasPrefix(l, from) {
			return from
		}
	}
	return commonIndent(ls)
}

// reindent replaces the indentation prefix from with to on every non-blank
// line of s (LF endings). A line indented less than from gets to plus its
// own text.
func reindent(s, from, to string) string {
	if from == to {
		return s
	}
	ls := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, line := range ls {
		switch {
		case strings.TrimSpace(line) == "":
			b.WriteString(line)
		case strings.HasPrefix(line, from):
			b.WriteString(to)
			b.WriteString(line[len(from):])
		default:
			b.WriteString(to)
			b.WriteString(strings.TrimLeft(line, " \t"))
		}
	}
	return b.String()
}
