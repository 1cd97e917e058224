package edit

import (
	"hash/maphash"
	"strings"
)

// Doc is content split into lines, for matching whole-line blocks: the
// hunks of context patches. Line numbers here are 0-based.
//
// A Doc is not safe for concurrent use: the finders fill a cache lazily.
type Doc struct {
	content []byte
	bom     int
	idx     *lines
	eol     EOL
	freq    *[256]int    // byte counts over a sample of the body (see index)
	scanned int          // bytes read by scan, which decides when to build exact
	exact   []lineHash   // the lines by hash, for the exact rung (see exactIndex)
	seed    maphash.Seed // exact's
}

// NewDoc indexes content. A UTF-8 byte order mark is not part of line 0.
func NewDoc(content []byte) *Doc {
	d := &Doc{content: content}
	var body []byte
	body, d.bom = StripBOM(content)
	d.idx = newLines(body)
	d.eol = DetectEOL(body)
	return d
}

// Len returns the number of lines.
func (d *Doc) Len() int { return d.idx.count() }

// Text returns line i without its terminator.
func (d *Doc) Text(i int) string { return string(d.idx.text(i)) }

// findLineRef defines FindLine, testing every line from from on for each
// tier in turn.
func (d *Doc) findLineRef(text string, from int) (int, bool) {
	want := strings.TrimSpace(text)
	if want == "" {
		return 0, false
	}
	tests := []func(l string) bool{
		func(l string) bool { return l == text },
		func(l string) bool { return strings.TrimRight(l, " \t") == strings.TrimRight(text, " \t") },
		func(l string) bool { return strings.TrimSpace(l) == want },
		func(l string) bool { return normalizePunctString(strings.TrimSpace(l)) == normalizePunctString(want) },
	}
	if len(want) >= 4 {
		tests = append(tests, func(l string) bool {
			k, p := normalizePunctString(strings.TrimSpace(l)), normalizePunctString(want)
			return strings.HasPrefix(k, p) && prefixEndsWord(p, k[len(p):])
		})
	}
	for _, ok := range tests {
		for i := max(from, 0); i < d.Len(); i++ {
			if ok(d.Text(i)) {
				return i, true
			}
		}
	}
	return 0, false
}

// Block is a run of whole lines that matched a block of wanted lines.
type Block struct {
	Line, Count int // first line (0-based) and number of lines matched
	Tier        Tier
	lead, trail int // blank wanted lines at each end left unmatched (trimmed tiers)
	from, to    string
	reindent    bool
}

// findBlockRef defines FindBlock, comparing the keys of every window from
// from on for each tier in turn.
func (d *Doc) findBlockRef(want []string, from int, eof bool) (Tier, []Block) {
	if len(want) == 0 {
		return 0, nil
	}
	body, lead, trail := trimBlank(want)
	rstrip := func(s string) string { return strings.TrimRight(s, " \t") }
	punct := func(s string) string { return normalizePunctString(strings.TrimSpace(s)) }
	type rung struct {
		tier        Tier
		lines       []string
		lead, trail int
		key         func(string) string // per-line prefilter: keys must be equal
		indent      bool                // then compare relative indentation
		punct       bool
	}
	rungs := []rung{
		{tier: TierExact, lines: want, key: func(s string) string { return s }},
		{tier: TierTrailingSpace, lines: want, key: rstrip},
	}
	if len(body) > 0 && len(body) < len(want) {
		rungs = append(rungs, rung{tier: TierTrimmed, lines: body, lead: lead, trail: trail, key: rstrip})
	}
	if len(body) > 0 {
		rungs = append(rungs,
			rung{tier: TierIndentation, lines: body, lead: lead, trail: trail, key: strings.TrimSpace, indent: true},
			rung{tier: TierPunctuation, lines: body, lead: lead, trail: trail, key: punct, indent: true, punct: true})
	}
	n := d.Len()
	for _, r := range rungs {
		keys := make([]string, len(r.lines))
		for i, l := range r.lines {
			keys[i] = r.key(l)
		}
		k := len(r.lines)
		first := max(from, 0)
		if eof {
			first = max(first, n-k)
		}
		var out []Block
	candidates:
		for i := first; i+k <= n; i++ {
			for j := range keys {
				if r.key(d.Text(i+j)) != keys[j] {
					continue candidates
				}
			}
			b := Block{Line: i, Count: k, Tier: r.tier, lead: r.lead, trail: r.trail}
			if r.indent {
				got := make([]string, k)
				want := r.lines
				for j := range got {
					got[j] = d.Text(i + j)
				}
				if r.punct {
					got, want = mapStrings(got, normalizePunctString), mapStrings(want, normalizePunctString)
				}
				ok, fromIndent, toIndent := sameRelativeIndent(got, want)
				if !ok {
					continue
				}
				b.from, b.to, b.reindent = fromIndent, toIndent, fromIndent != toIndent
			}
			out = append(out, b)
		}
		if len(out) > 0 {
			return r.tier, out
		}
	}
	return 0, nil
}

func mapStrings(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// sameRelativeIndent reports whether got and want are the same lines once
// each side's common indentation is removed (trailing whitespace ignored,
// relative indentation compared character for character), and returns
// want's and got's common indentation.
func sameRelativeIndent(got, want []string) (bool, string, string) {
	have, wantIndent := commonIndent(got), commonIndent(want)
	for i := range want {
		gi, wi := strings.TrimRight(got[i], " \t"), strings.TrimRight(want[i], " \t")
		if gi == "" || wi == "" {
			if gi != wi {
				return false, "", ""
			}
			continue
		}
		if gi[len(have):] != wi[len(wantIndent):] {
			return false, "", ""
		}
	}
	return true, wantIndent, have
}

func trimBlank(ls []string) (body []string, lead, trail int) {
	i, j := 0, len(ls)
	for i < j && strings.TrimSpace(ls[i]) == "" {
		i++
	}
	for j > i && strings.TrimSpace(ls[j-1]) == "" {
		j--
	}
	return ls[i:j], i, len(ls) - j
}

// Splice returns the edit that turns block b (which matched old) into new.
// Lines new shares with old (context) keep the file's own text; added lines
// are re-indented when the block matched with another indentation; every
// line gets the block's line ending. Apply the edits of one Doc together
// with Doc.Apply, which keeps a last line without a terminator without one.
func (d *Doc) Splice(b Block, old, new []string) Edit {
	pairs := alignLines(old, new)
	var out []string
	for ni, line := range new {
		if o, ok := pairs[ni]; ok {
			if o >= b.lead && o < len(old)-b.trail {
				out = append(out, d.Text(b.Line+o-b.lead))
			}
			continue
		}
		if b.reindent {
			line = strings.TrimSuffix(reindent(line+"\n", b.from, b.to), "\n")
		}
		out = append(out, line)
	}
	return d.edit(b.Line, b.Line+b.Count, out)
}

// Insert returns the edit that inserts lines before line at (Len appends),
// to be applied with Doc.Apply.
func (d *Doc) Insert(at int, lines []string) Edit {
	at = min(max(at, 0), d.Len())
	return d.edit(at, at, lines)
}

// edit renders lines over lines [from, to) of the body, each line ending
// in the line ending of the lines it replaces.
func (d *Doc) edit(from, to int, lines []string) Edit {
	eol := d.blockEOL(from, to)
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteString(string(eol))
	}
	return Edit{Start: d.idx.start[from] + d.bom, End: d.idx.start[to] + d.bom, New: sb.String()}
}

// Apply returns the content with edits made by Splice and Insert applied,
// as Apply does. When the content's last line has no terminator, the
// result's has none either: an append after it starts with the missing
// terminator, and a change or deletion through it drops the terminator
// that would end the result.
func (d *Doc) Apply(edits []Edit) ([]byte, error) {
	sorted, err := sortEdits(d.content, edits)
	if err != nil {
		return nil, err
	}
	if n := d.Len(); n > 0 && d.idx.eol(n-1) == "" {
		// Only moves a range's start back over a terminator no other
		// edit covers: sorted stays sorted and without overlaps.
		keepUnterminated(d.content, d.bom, d.idx.start[n-1]+d.bom, d.blockEOL(n-1, n), sorted)
	}
	return applySorted(d.content, sorted), nil
}

// blockEOL returns the line ending for lines written over lines [from, to).
func (d *Doc) blockEOL(from, to int) EOL {
	for i := from; i < to; i++ {
		if e := d.idx.eol(i); e != "" {
			return e
		}
	}
	if from > 0 {
		if e := d.idx.eol(from - 1); e != "" {
			return e
		}
	}
	return d.eol
}

// alignLines pairs each line of new with the line of old it keeps, by a
// longest common subsequence; unpaired new lines are additions.
func alignLines(old, new []string) map[int]int {
	pairs := make(map[int]int)
	if len(old)*len(new) > 4_000_000 {
		// Too large for the table: keep the lines the two share at
		// the start and at the end, the context of a usual hunk.
		pre := 0
		for pre < len(old) && pre < len(new) && old[pre] == new[pre] {
			pairs[pre] = pre
			pre++
		}
		for k := 1; k <= len(old)-pre && k <= len(new)-pre && old[len(old)-k] == new[len(new)-k]; k++ {
			pairs[len(new)-k] = len(old) - k
		}
		return pairs
	}
	// dp[i][j] = LCS length of old[i:], new[j:]
	dp := make([][]int32, len(old)+1)
	for i := range dp {
		dp[i] = make([]int32, len(new)+1)
	}
	for i := len(old) - 1; i >= 0; i-- {
		for j := len(new) - 1; j >= 0; j-- {
			if old[i] == new[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(old) && j < len(new); {
		switch {
		case old[i] == new[j]:
			pairs[j] = i
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return pairs
}
