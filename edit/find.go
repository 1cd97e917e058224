package edit

import (
	"bytes"
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FindLine and FindBlock answer with exactly the results of findLineRef and
// findBlockRef, which define them: those normalise every line of the file
// for every tier and window, which on a 100 MB file takes seconds. The
// finders here instead search the raw content for a literal that any
// matching line must contain (one pass per tier), and normalise only the
// lines around the hits. The blocks they return come from findBlockRef
// itself, run on the candidate's own lines, so the tier's final decision
// (relative indentation, punctuation) is the definition's. Where no literal
// can be derived they defer to the definition, which is slow but always
// right. Differential tests and a fuzz target (find_test.go) hold the two
// together.

// body returns the content after any byte order mark, as lines indexes it.
func (d *Doc) body() []byte { return d.content[d.bom:] }

// scan calls match for each line from first to last (inclusive) that
// contains lit, in order, until match returns true. lit must be non-empty
// and hold no line break, so every hit lies inside one line.
func (d *Doc) scan(lit string, first, last int, match func(line int) bool) {
	if first > last {
		return
	}
	body, needle := d.body(), []byte(lit)
	line, start := first, d.idx.start[first]
	reached := len(body)
	defer func() { d.scanned += reached - d.idx.start[first] }()
	for line <= last {
		k := d.index(body[start:], needle)
		if k < 0 {
			return
		}
		if line = d.idx.lineOf(start + k); line > last || match(line) {
			reached = start + k
			return
		}
		line++
		start = d.idx.start[line]
	}
	reached = start
}

// A patch's hunks are found one after the other, each from where the one
// before it matched to the end of the file (every match counts: two make
// the hunk ambiguous), so scanning for each costs the rest of the file,
// and a patch of one hunk per few lines is quadratic: 25,000 hunks took 3
// seconds, 100,000 a minute. Once the scans of a Doc have read its body
// indexAfter times over, the exact rung (which decides every hunk that
// applies cleanly) looks its candidates up instead, in an index of the
// lines by the hash of their text, built once. The other rungs still
// scan: only hunks that miss the exact rung pay for that.

// indexAfter is how many times over scans read a Doc's body before the
// exact rung indexes its lines.
const indexAfter = 8

// lineHash is one line of the index: its text's hash and its number.
type lineHash struct {
	h    uint64
	line int
}

// exactIndex returns the lines sorted by hash, then line, building them
// when scans have read enough; nil before then.
func (d *Doc) exactIndex() []lineHash {
	if d.exact == nil && d.scanned > indexAfter*len(d.body()) {
		d.seed = maphash.MakeSeed()
		d.exact = make([]lineHash, d.Len())
		for i := range d.exact {
			d.exact[i] = lineHash{maphash.Bytes(d.seed, d.idx.text(i)), i}
		}
		slices.SortFunc(d.exact, func(a, b lineHash) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.line, b.line)) })
	}
	return d.exact
}

// lookup calls match with each window start i in [first, last], in order,
// whose lines could equal keys (their hashes agree on the key that fewest
// lines have), until match returns true.
func (d *Doc) lookup(keys []string, first, last int, match func(i int) bool) {
	idx := d.exact
	var run []lineHash
	pivot := -1
	for j, key := range keys {
		h := maphash.String(d.seed, key)
		lo, _ := slices.BinarySearchFunc(idx, h, func(e lineHash, h uint64) int { return cmp.Compare(e.h, h) })
		hi := lo
		for hi < len(idx) && idx[hi].h == h {
			hi++
		}
		if pivot < 0 || hi-lo < len(run) {
			pivot, run = j, idx[lo:hi]
		}
	}
	k, _ := slices.BinarySearchFunc(run, first+pivot, func(e lineHash, line int) int { return cmp.Compare(e.line, line) })
	for _, e := range run[k:] {
		if i := e.line - pivot; i > last || match(i) {
			return
		}
	}
}

// index is bytes.Index(hay, needle) for a non-empty needle. bytes.Index
// skips ahead with IndexByte on the needle's first byte, which in source
// code is often a tab, a space or a common letter; index skips on the
// needle's byte that is rarest in a sample of the content, and hands over
// to bytes.Index once hits on that byte turn out too frequent too.
func (d *Doc) index(hay, needle []byte) int {
	if d.freq == nil {
		d.freq = sampleBytes(d.body())
	}
	at := 0
	for j, c := range needle {
		if d.freq[c] < d.freq[needle[at]] {
			at = j
		}
	}
	c, fails := needle[at], 0
	for i := at; i < len(hay); i++ {
		k := bytes.IndexByte(hay[i:], c)
		if k < 0 {
			return -1
		}
		i += k
		s := i - at
		if s+len(needle) > len(hay) {
			return -1
		}
		if bytes.Equal(hay[s:s+len(needle)], needle) {
			return s
		}
		if fails++; fails > 16 && fails > i>>6 {
			if k := bytes.Index(hay[s+1:], needle); k >= 0 {
				return s + 1 + k
			}
			return -1
		}
	}
	return -1
}

// sampleBytes counts the bytes of up to 64 evenly spaced 1 KiB pieces of b.
func sampleBytes(b []byte) *[256]int {
	var freq [256]int
	const pieces, size = 64, 1 << 10
	step := max(len(b)/pieces, size)
	for off := 0; off < len(b); off += step {
		for _, c := range b[off:min(off+size, len(b))] {
			freq[c]++
		}
	}
	return &freq
}

// FindLine returns the first line at or after from that equals text,
// trying exact, then ignoring trailing whitespace, then surrounding
// whitespace, then typographic punctuation, and last a line that starts
// with text (when text has at least 4 characters) where a word ends:
// "def f" finds "def f(x):", not "def foo():". It is how "@@ anchor"
// lines are found. Each of its tests compares a key of the line with a key
// of text; every line that passes contains a literal of the key, so only
// the lines holding it are tested.
func (d *Doc) FindLine(text string, from int) (int, bool) {
	want := strings.TrimSpace(text)
	if want == "" {
		return 0, false
	}
	rtext, pwant := string(rstripBytes([]byte(text))), string(punctTrimmed([]byte(want)))
	plit := punctLiteral(pwant)
	type test struct {
		key, lit string
		ok       func(l []byte) bool
	}
	tests := []test{
		{text, text, func(l []byte) bool { return string(l) == text }},
		{rtext, rtext, func(l []byte) bool { return string(rstripBytes(l)) == rtext }},
		{want, want, func(l []byte) bool { return string(bytes.TrimSpace(l)) == want }},
		{pwant, plit, func(l []byte) bool { return string(punctTrimmed(l)) == pwant }},
	}
	if len(want) >= 4 {
		tests = append(tests, test{pwant, plit, func(l []byte) bool {
			k := punctTrimmed(l)
			return bytes.HasPrefix(k, []byte(pwant)) && !insideWord(k, len(pwant))
		}})
	}
	for _, t := range tests {
		if hasLineBreak(t.key) {
			continue // no line's key holds a line break
		}
		if t.lit == "" {
			return d.findLineRef(text, from)
		}
		found := -1
		d.scan(t.lit, max(from, 0), d.Len()-1, func(i int) bool {
			if t.ok(d.idx.text(i)) {
				found = i
				return true
			}
			return false
		})
		if found >= 0 {
			return found, true
		}
	}
	return 0, false
}

// prefixEndsWord reports whether a line that starts with prefix and goes
// on with rest has a word end after prefix: rest is empty, or prefix does
// not end with a letter, digit or underscore, or rest does not start with
// one.
func prefixEndsWord(prefix, rest string) bool {
	if prefix == "" || rest == "" {
		return true
	}
	a, _ := utf8.DecodeLastRuneInString(prefix)
	b, _ := utf8.DecodeRuneInString(rest)
	return !isWordRune(a) || !isWordRune(b)
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// rung is one tier of FindBlock's ladder.
type rung struct {
	tier  Tier
	lines []string
	key   func([]byte) []byte // a window's lines must have the keys of lines
	punct bool                // key reads typographic punctuation as ASCII
}

// FindBlock finds want (lines without terminators) as whole lines starting
// at or after line from, with the ladder: exact, trailing whitespace,
// trimmed (blank lines around want ignored), indentation, punctuation. It
// returns the deciding tier and all its matches in order. With eof, only a
// block that ends the content counts.
func (d *Doc) FindBlock(want []string, from int, eof bool) (Tier, []Block) {
	return d.findBlock(want, from, eof, false)
}

// FindFirstBlock is FindBlock for callers that use only the first block:
// the blocks after it may be left out, which saves searching the rest of
// the file.
func (d *Doc) FindFirstBlock(want []string, from int, eof bool) (Tier, []Block) {
	return d.findBlock(want, from, eof, true)
}

// findBlock tries the definition's rungs in the same order over the same
// windows. A rung's candidates are the hits of the longest literal among
// its keys; their keys are compared, and the survivors are confirmed by
// the definition on a Doc of just the window.
func (d *Doc) findBlock(want []string, from int, eof, firstOnly bool) (Tier, []Block) {
	if len(want) == 0 {
		return 0, nil
	}
	body, _, _ := trimBlank(want)
	rungs := []rung{
		{tier: TierExact, lines: want, key: func(b []byte) []byte { return b }},
		{tier: TierTrailingSpace, lines: want, key: rstripBytes},
	}
	if len(body) > 0 && len(body) < len(want) {
		rungs = append(rungs, rung{tier: TierTrimmed, lines: body, key: rstripBytes})
	}
	if len(body) > 0 {
		rungs = append(rungs,
			rung{tier: TierIndentation, lines: body, key: bytes.TrimSpace},
			rung{tier: TierPunctuation, lines: body, key: punctTrimmed, punct: true})
	}
	n := d.Len()
	for _, r := range rungs {
		k := len(r.lines)
		first := max(from, 0)
		if eof {
			first = max(first, n-k)
		}
		if first+k > n {
			continue
		}
		keys := make([]string, k)
		for j, l := range r.lines {
			keys[j] = string(r.key([]byte(l)))
		}
		pivot, lit, possible := pickLiteral(keys, r.punct)
		if !possible {
			continue
		}
		if lit == "" {
			return d.findBlockRef(want, from, eof)
		}
		var out []Block
		deferred := false
		budget, resume := windowBudget(n), -1
		try := func(i int) bool {
			if resume < 0 {
				if budget -= k; budget < 0 {
					resume = i
					return true
				}
			}
			for j, key := range keys {
				if string(r.key(d.idx.text(i+j))) != key {
					return false
				}
			}
			b, ok, sure := d.confirm(want, r.tier, i, k)
			if !sure {
				deferred = true
				return true
			}
			if ok {
				out = append(out, b)
			}
			return ok && firstOnly
		}
		if r.tier == TierExact && d.exactIndex() != nil {
			d.lookup(keys, first, n-k, try)
		} else {
			d.scan(lit, first+pivot, n-k+pivot, func(line int) bool { return try(line - pivot) })
		}
		if resume >= 0 {
			// Too many windows to compare line by line (see windowBudget).
			keyedWindows(d.idx, r.key, keys, resume, n-k, try)
		}
		if deferred {
			return d.findBlockRef(want, from, eof)
		}
		if len(out) > 0 {
			return r.tier, out
		}
	}
	return 0, nil
}

// confirm runs findBlockRef on a Doc of lines [i, i+k) alone and reports
// whether want matches them at tier, returning the block moved to line i.
// No stricter tier can match there (the caller only asks once every
// stricter tier failed over windows that include this one), so any such
// answer, or a window that starts with what Doc would take for a byte
// order mark, means the window cannot be judged alone: sure is false.
func (d *Doc) confirm(want []string, tier Tier, i, k int) (b Block, ok, sure bool) {
	win := d.body()[d.idx.start[i]:d.idx.start[i+k]]
	if HasBOM(win) {
		return b, false, false
	}
	t, blocks := NewDoc(win).findBlockRef(want, 0, false)
	switch {
	case len(blocks) == 0 || t > tier:
		return b, false, true
	case t < tier || len(blocks) != 1 || blocks[0].Line != 0 || blocks[0].Count != k:
		return b, false, false
	}
	b = blocks[0]
	b.Line = i
	return b, true, true
}

// pickLiteral chooses, among the keys of a window's lines, the one to
// search for: the line whose literal is longest, hence likely the rarest.
// A line's key is a substring of the line, except for punctuation keys,
// where only a run without the ASCII that punctuation maps to is. possible
// is false when some key holds a line break, which no line's key does.
func pickLiteral(keys []string, punct bool) (pivot int, lit string, possible bool) {
	for j, key := range keys {
		if hasLineBreak(key) {
			return 0, "", false
		}
		l := key
		if punct {
			l = punctLiteral(key)
		}
		if len(l) > len(lit) {
			pivot, lit = j, l
		}
	}
	return pivot, lit, true
}

func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\r\n") }

func rstripBytes(b []byte) []byte { return bytes.TrimRight(b, " \t") }

// punctTrimmed is the punctuation tier's key of a line: the line without
// surrounding white space, with typographic punctuation read as the ASCII
// a model types instead (dashes and minus as a hyphen, curly quotes as
// straight ones, fixed-width and non-breaking spaces as a space). Every such rune encodes with a 0xC2, 0xE2 or 0xE3 lead byte;
// other runes and invalid UTF-8 stay as they are. It must agree with
// normalizePunctString byte for byte (a stricter key would lose matches);
// the differential tests hold the two together.
func punctTrimmed(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if bytes.IndexByte(b, 0xC2) < 0 && bytes.IndexByte(b, 0xE2) < 0 && bytes.IndexByte(b, 0xE3) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if a, ok := PunctASCII(r); ok {
			out = append(out, a)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// punctLiteral returns the longest run of key (a punctTrimmed result)
// without the ASCII that PunctASCII writes. A line whose punctTrimmed key
// equals or starts with key holds that run unchanged.
func punctLiteral(key string) string {
	var best string
	for run := range strings.FieldsFuncSeq(key, func(r rune) bool { return strings.ContainsRune("-'\" ", r) }) {
		if len(run) > len(best) {
			best = run
		}
	}
	return best
}
