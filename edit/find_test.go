package edit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// findPieces are line texts that collide under the ladder's keys: the same
// words with other indentation, trailing blanks, typographic punctuation,
// byte order marks, invalid UTF-8 and stray carriage returns.
var findPieces = []string{
	"", " ", "\t", "  ", "\u00a0", "\u3000",
	"a", "a ", " a", "\ta", "\t\ta", "  a  ", "a\t", "\u00a0a",
	"b", "\tb", "    b", "b  ",
	"a b", "a  b", "a\u00a0b", "a\u2003b", "\ta b ",
	"x-y", "x\u2014y", "x\u2212y", "\tx\u2013y",
	`say "hi"`, "say \u201chi\u201d", "say \u201chi\"", "it's", "it\u2019s",
	"--", "\u2014\u2014", "''", "\u201c\u201d", "\"",
	"func f() {", "\tfunc f() {", "func f() {  ", "func f(x int) {", "func f",
	"\xff", "\xe2\x80", "a\xe2\x80\x94", "\xc2", "\xe3\x80\x80a",
	"\ufeffa", "\ufeff", "a\rb", "a\v", "\fa",
}

var findBreaks = []string{"\n", "\n", "\n", "\r\n", "\r"}

func randomDoc(r *rand.Rand) string {
	var sb strings.Builder
	switch r.IntN(8) {
	case 0:
		sb.WriteString(BOM)
	case 1:
		sb.WriteString(BOM + BOM)
	}
	breaks := findBreaks[:1+r.IntN(len(findBreaks))]
	for range r.IntN(14) {
		sb.WriteString(findPieces[r.IntN(len(findPieces))])
		sb.WriteString(breaks[r.IntN(len(breaks))])
	}
	if r.IntN(3) == 0 {
		sb.WriteString(findPieces[r.IntN(len(findPieces))])
	}
	return sb.String()
}

// randomWant returns lines to look for: usually a run of doc's own lines,
// some of them swapped for colliding pieces, otherwise pieces alone.
func randomWant(r *rand.Rand, doc *Doc) []string {
	var want []string
	if n := doc.Len(); n > 0 && r.IntN(4) != 0 {
		i := r.IntN(n)
		for j := i; j < min(n, i+1+r.IntN(4)); j++ {
			want = append(want, doc.Text(j))
		}
	} else {
		for range r.IntN(4) {
			want = append(want, "")
		}
	}
	for j := range want {
		if r.IntN(3) == 0 {
			want[j] = findPieces[r.IntN(len(findPieces))]
		}
	}
	if r.IntN(4) == 0 {
		want = append([]string{findPieces[r.IntN(6)]}, want...)
	}
	if r.IntN(4) == 0 {
		want = append(want, findPieces[r.IntN(6)])
	}
	return want
}

// TestFindersMatchTheirDefinitions checks FindBlock, FindFirstBlock and
// FindLine against findBlockRef and findLineRef, on random documents built
// to make the tiers collide.
func TestFindersMatchTheirDefinitions(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 30000 {
		content := randomDoc(r)
		doc := NewDoc([]byte(content))
		want := randomWant(r, doc)
		from := r.IntN(doc.Len()+3) - 1
		eof := r.IntN(4) == 0
		wantTier, wantBlocks := doc.findBlockRef(want, from, eof)
		for _, d := range []*Doc{doc, indexed([]byte(content))} {
			gotTier, got := d.FindBlock(want, from, eof)
			if gotTier != wantTier || !slices.Equal(got, wantBlocks) {
				t.Fatalf("findBlock(%q, %d, %v) on %q (indexed %v)\n got %v %+v\nwant %v %+v", want, from, eof, content, d.exact != nil, gotTier, got, wantTier, wantBlocks)
			}
			// FindFirstBlock may leave out blocks after the first, never change them.
			if gotTier, got := d.FindFirstBlock(want, from, eof); gotTier != wantTier || (len(got) == 0) != (len(wantBlocks) == 0) ||
				len(got) > len(wantBlocks) || !slices.Equal(got, wantBlocks[:len(got)]) {
				t.Fatalf("findBlock(%q, %d, %v, first) on %q (indexed %v)\n got %v %+v\nwant %v %+v", want, from, eof, content, d.exact != nil, gotTier, got, wantTier, wantBlocks)
			}
		}
		text := findPieces[r.IntN(len(findPieces))]
		if len(want) > 0 && r.IntN(2) == 0 {
			text = want[0]
		}
		gotLine, gotOK := doc.FindLine(text, from)
		wantLine, wantOK := doc.findLineRef(text, from)
		if gotLine != wantLine || gotOK != wantOK {
			t.Fatalf("findLine(%q, %d) on %q = %d, %v; want %d, %v", text, from, content, gotLine, gotOK, wantLine, wantOK)
		}
	}
}

// FuzzFinders checks the finders against their definitions on arbitrary
// content; the wanted lines are a run of the content's own lines with one
// replaced.
func FuzzFinders(f *testing.F) {
	f.Add("a\n\tb  \nc\r\n", 0, 2, "\tb", false)
	f.Add("\ufeffsay \u201chi\u201d\r\n  x\u2014y\n", 0, 2, `say "hi"`, true)
	f.Add("\n\n a\n\n", 1, 3, "", false)
	f.Fuzz(func(t *testing.T, content string, i, k int, line string, eof bool) {
		doc := NewDoc([]byte(content))
		n := doc.Len()
		if n == 0 || k < 0 {
			return
		}
		i, k = ((i%n)+n)%n, 1+k%4
		var want []string
		for j := i; j < min(n, i+k); j++ {
			want = append(want, doc.Text(j))
		}
		want[len(want)/2] = line
		idoc := indexed([]byte(content))
		for _, from := range []int{0, i, i + 1} {
			wantTier, wantBlocks := doc.findBlockRef(want, from, eof)
			for _, d := range []*Doc{doc, idoc} {
				gotTier, got := d.FindBlock(want, from, eof)
				if gotTier != wantTier || !slices.Equal(got, wantBlocks) {
					t.Fatalf("findBlock(%q, %d, %v) (indexed %v)\n got %v %+v\nwant %v %+v", want, from, eof, d.exact != nil, gotTier, got, wantTier, wantBlocks)
				}
			}
			gotLine, gotOK := doc.FindLine(line, from)
			wantLine, wantOK := doc.findLineRef(line, from)
			if gotLine != wantLine || gotOK != wantOK {
				t.Fatalf("findLine(%q, %d) = %d, %v; want %d, %v", line, from, gotLine, gotOK, wantLine, wantOK)
			}
		}
	})
}

// indexed is NewDoc(content) as a patch of many hunks leaves it: its exact
// rung looks lines up in the index rather than scanning.
func indexed(content []byte) *Doc {
	d := NewDoc(content)
	d.scanned = indexAfter*len(d.body()) + 1
	return d
}

// TestIndexMatchesBytesIndex checks Doc.index, including its hand-over
// to bytes.Index, on haystacks of few distinct bytes.
func TestIndexMatchesBytesIndex(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "aab\tc "
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	for range 3000 {
		hay := random(r.IntN(5000))
		d := NewDoc(hay)
		needle := random(1 + r.IntN(6))
		for off := 0; off <= len(hay); off += 1 + r.IntN(len(hay)/4+1) {
			if got, want := d.index(hay[off:], needle), bytes.Index(hay[off:], needle); got != want {
				t.Fatalf("index(hay[%d:], %q) = %d, want %d", off, needle, got, want)
			}
		}
	}
}

// TestFindBlockManyHunksScansLinearly: finding n blocks one after the
// other, each from where the last matched (a patch's hunks), reads the
// content a bounded number of times over, not once per block.
func TestFindBlockManyHunksScansLinearly(t *testing.T) {
	t.Parallel()
	const n = 2000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "ctx %d\nold %d\n\n", i, i)
	}
	d := NewDoc([]byte(sb.String()))
	from := 0
	for i := range n {
		tier, blocks := d.FindBlock([]string{fmt.Sprintf("ctx %d", i), fmt.Sprintf("old %d", i)}, from, false)
		if tier != TierExact || len(blocks) != 1 || blocks[0].Line != 3*i {
			t.Fatalf("block %d: %v %+v", i, tier, blocks)
		}
		from = blocks[0].Line + blocks[0].Count
	}
	if limit := (indexAfter + 2) * len(d.body()); d.scanned > limit {
		t.Errorf("scanned %d bytes for %d blocks of a %d-byte document, want at most %d", d.scanned, n, len(d.body()), limit)
	}
}
