package edit

import (
	"fmt"
	"regexp"
	"strings"
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

// noMatchHint explains a miss: the nearest region of content (line,
// similarity, a compact character diff) and a note about numbered-read
// prefixes in old.
func noMatchHint(content []byte, old string) string {
	var parts []string
	if hasNumberedPrefixes(old) {
		parts = append(parts, `old_text seems to carry line-number prefixes from a numbered read (like "  12\t" or "12: "); remove them and keep only the file's text`)
	}
	if line, sim, diff, ok := nearest(content, old); ok {
		parts = append(parts, fmt.Sprintf("closest match at line %d (%d%% similar): %s", line, int(sim*100+0.5), diff))
	} else {
		parts = append(parts, "no similar text found; re-read the file and copy old_text from it exactly")
	}
	return strings.Join(parts, "; ")
}

// nearest returns the region of content most similar to old: its 1-based
// first line, similarity in [0,1] and a compact diff {-old-}{+file+}.
func nearest(content []byte, old string) (int, float64, string, bool) {
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
		return 0, 0, "", false
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
	bestSim, bestLine, bestText := -1.0, 0, ""
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
		if s := similarity(want, got); s > bestSim {
			bestSim, bestLine, bestText = s, first+1, got
		}
	}
	if bestSim < 0.3 {
		return 0, 0, "", false
	}
	return bestLine, bestSim, charDiff(want, bestText), true
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
	return 1 - float64(prev[len(rb)])/float64(m)
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

func visible(s string, spaces bool) string {
	r := strings.NewReplacer("\t", "→", "\n", "⏎")
	if spaces {
		r = strings.NewReplacer("\t", "→", "\n", "⏎", " ", "·")
	}
	return r.Replace(s)
}
