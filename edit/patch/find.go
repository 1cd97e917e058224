package patch

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/fsplane/fsplane/edit"
)

// finder answers the planner's two questions about a file, where an @@
// anchor is and where a chunk's old lines are, with exactly the results of
// edit.Doc's FindLine and FindBlock. Those normalise every line of the file
// for every tier and window; finder instead searches the raw content for a
// literal that any matching line must contain (one pass per tier), and
// normalises only the lines around the hits. The blocks it
// returns come from FindBlock itself, run on the candidate's own lines, so
// the tier's final decision (relative indentation, punctuation) and the
// Block that Splice needs are edit's. Where no literal can be derived it
// defers to Doc, which is slow but always right.
type finder struct {
	doc   *edit.Doc
	body  []byte // the content after any byte order mark, as Doc indexes it
	bom   int
	hasCR bool      // line breaks may also be "\r\n" or a lone "\r"
	freq  *[256]int // byte counts over a sample of body, for index
}

func newFinder(content []byte) *finder {
	f := &finder{doc: edit.NewDoc(content)}
	f.body, f.bom = edit.StripBOM(content)
	f.hasCR = bytes.IndexByte(f.body, '\r') >= 0
	return f
}

// lineStart returns the offset in body where line i (0 <= i <= Len)
// begins, in constant time. Doc has no accessor for it, but an insertion
// before line i is, by Insert's contract, an empty edit at that offset.
func (f *finder) lineStart(i int) int {
	return f.doc.Insert(i, nil).Start - f.bom
}

// lineText returns line i without its terminator, as Doc.Text does, without
// copying.
func (f *finder) lineText(i int) []byte {
	b := f.body[f.lineStart(i):f.lineStart(i+1)]
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return b[:len(b)-2]
	case bytes.HasSuffix(b, []byte("\n")), bytes.HasSuffix(b, []byte("\r")):
		return b[:len(b)-1]
	}
	return b
}

// lineAt returns the line holding offset off, given that line starts at
// offset start <= off. The byte at off must not be a line break.
func (f *finder) lineAt(line, start, off int) int {
	seg := f.body[start:off]
	n := bytes.Count(seg, []byte("\n"))
	if f.hasCR {
		n += bytes.Count(seg, []byte("\r")) - bytes.Count(seg, []byte("\r\n"))
	}
	return line + n
}

// scan calls match for each line from first to last (inclusive) that
// contains lit, in order, until match returns true. lit must be non-empty
// and hold no line break, so every hit lies inside one line.
func (f *finder) scan(lit string, first, last int, match func(line int) bool) {
	if first > last {
		return
	}
	needle := []byte(lit)
	line, start := first, f.lineStart(first)
	for line <= last {
		k := f.index(f.body[start:], needle)
		if k < 0 {
			return
		}
		if line = f.lineAt(line, start, start+k); line > last || match(line) {
			return
		}
		line++
		start = f.lineStart(line)
	}
}

// index is bytes.Index(hay, needle) for a non-empty needle. bytes.Index
// skips ahead with IndexByte on the needle's first byte, which in source
// code is often a tab, a space or a common letter; index skips on the
// needle's byte that is rarest in a sample of the content, and hands over
// to bytes.Index once hits on that byte turn out too frequent too.
func (f *finder) index(hay, needle []byte) int {
	if f.freq == nil {
		f.freq = sampleBytes(f.body)
	}
	at := 0
	for j, c := range needle {
		if f.freq[c] < f.freq[needle[at]] {
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

// findLine is Doc.FindLine. Each of its tests compares a key of the line
// with a key of text; every line that passes contains lit, so only those
// lines are tested.
func (f *finder) findLine(text string, from int) (int, bool) {
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
		tests = append(tests, test{pwant, plit, func(l []byte) bool { return bytes.HasPrefix(punctTrimmed(l), []byte(pwant)) }})
	}
	for _, t := range tests {
		if hasLineBreak(t.key) {
			continue // no line's key holds a line break
		}
		if t.lit == "" {
			return f.doc.FindLine(text, from)
		}
		found := -1
		f.scan(t.lit, max(from, 0), f.doc.Len()-1, func(i int) bool {
			if t.ok(f.lineText(i)) {
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

// rung is one tier of FindBlock's ladder.
type rung struct {
	tier  edit.Tier
	lines []string
	key   func([]byte) []byte // a window's lines must have the keys of lines
	punct bool                // key reads typographic punctuation as ASCII
}

// findBlock is Doc.FindBlock: the same rungs, tried in the same order over
// the same windows. With firstOnly the blocks after the deciding tier's
// first may be left out, for callers that use no other. A rung's
// candidates are the hits of the longest literal among its keys; their
// keys are compared, and the survivors are confirmed by FindBlock on a Doc
// of just the window.
func (f *finder) findBlock(want []string, from int, eof, firstOnly bool) (edit.Tier, []edit.Block) {
	if len(want) == 0 {
		return 0, nil
	}
	body := trimBlankLines(want)
	rungs := []rung{
		{tier: edit.TierExact, lines: want, key: func(b []byte) []byte { return b }},
		{tier: edit.TierTrailingSpace, lines: want, key: rstripBytes},
	}
	if len(body) > 0 && len(body) < len(want) {
		rungs = append(rungs, rung{tier: edit.TierTrimmed, lines: body, key: rstripBytes})
	}
	if len(body) > 0 {
		rungs = append(rungs,
			rung{tier: edit.TierIndentation, lines: body, key: bytes.TrimSpace},
			rung{tier: edit.TierPunctuation, lines: body, key: punctTrimmed, punct: true})
	}
	n := f.doc.Len()
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
			return f.doc.FindBlock(want, from, eof)
		}
		var out []edit.Block
		deferred := false
		f.scan(lit, first+pivot, n-k+pivot, func(line int) bool {
			i := line - pivot
			for j, key := range keys {
				if string(r.key(f.lineText(i+j))) != key {
					return false
				}
			}
			b, ok, sure := f.confirm(want, r.tier, i, k)
			if !sure {
				deferred = true
				return true
			}
			if ok {
				out = append(out, b)
			}
			return ok && firstOnly
		})
		if deferred {
			return f.doc.FindBlock(want, from, eof)
		}
		if len(out) > 0 {
			return r.tier, out
		}
	}
	return 0, nil
}

// confirm runs FindBlock on a Doc of lines [i, i+k) alone and reports
// whether want matches them at tier, returning the block moved to line i.
// No stricter tier can match there (the caller only asks once every
// stricter tier failed over windows that include this one), so any such
// answer, or a window that starts with what Doc would take for a byte
// order mark, means the window cannot be judged alone: sure is false.
func (f *finder) confirm(want []string, tier edit.Tier, i, k int) (b edit.Block, ok, sure bool) {
	win := f.body[f.lineStart(i):f.lineStart(i+k)]
	if edit.HasBOM(win) {
		return b, false, false
	}
	t, blocks := edit.NewDoc(win).FindBlock(want, 0, false)
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

// trimBlankLines returns ls without its leading and trailing blank lines,
// as FindBlock's trimmed tiers see it.
func trimBlankLines(ls []string) []string {
	i, j := 0, len(ls)
	for i < j && strings.TrimSpace(ls[i]) == "" {
		i++
	}
	for j > i && strings.TrimSpace(ls[j-1]) == "" {
		j--
	}
	return ls[i:j]
}

func rstripBytes(b []byte) []byte { return bytes.TrimRight(b, " \t") }

// punctTrimmed is the punctuation tier's key of a line: the line without
// surrounding white space, with typographic punctuation read as the ASCII
// a model types instead (dashes and minus as a hyphen, curly quotes as
// straight ones, fixed-width and non-breaking spaces as a space), as edit
// reads it. Every such rune encodes with a 0xC2, 0xE2 or 0xE3 lead byte;
// other runes and invalid UTF-8 stay as they are. It must agree with edit
// byte for byte (a stricter key would lose matches); the differential tests
// in find_test.go hold the two together.
func punctTrimmed(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if bytes.IndexByte(b, 0xC2) < 0 && bytes.IndexByte(b, 0xE2) < 0 && bytes.IndexByte(b, 0xE3) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if a, ok := edit.PunctASCII(r); ok {
			out = append(out, a)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// punctLiteral returns the longest run of key (a punctTrimmed result)
// without the ASCII that edit.PunctASCII writes. A line whose punctTrimmed key
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
