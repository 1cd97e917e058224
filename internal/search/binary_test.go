package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
)

// binarySeen is what a search under RipgrepBinary hands collect for one
// file.
type binarySeen struct {
	Lines   []int // the shown matches' line numbers
	After   []int // the line numbers of the context after them
	Partial []int // the context before the first match not shown
	Count   int
	Binary  bool
	Stopped bool
	Sep     bool
	Offset  int64
}

// TestRipgrepBinary: under RipgrepBinary, what a file's NUL bytes leave
// of its matches and what is said of them, by policy (see binPolicy;
// the outputs are ripgrep 13's, as cmd/fsplane's
// TestGrepBinaryMatchesRipgrep checks on the command line). "f" is
// searched met while walking (start "."), or named (start "f", with
// SearchBinaryStart), mapped or not.
func TestRipgrepBinary(t *testing.T) {
	t.Parallel()
	late := "needle 1\n" + testenv.PadLines(7000) + "needle 2\n\x00\nneedle 3\n"     // NUL at 70018
	matchNUL := "needle 1\n" + testenv.PadLines(7000) + "needle \x00 2\nneedle 3\n"  // NUL at 70016, in line 7002
	big := "needle 1\n" + testenv.PadLines(120_000) + "needle 2\n\x00\nneedle 3\n"   // read in chunks
	bigNUL := "needle 1\n" + testenv.PadLines(120_000) + "needle \x00 2\nneedle 3\n" // NUL in line 120002
	legacy := "needle 1\n" + testenv.PadLines(1000) + "needle 2\n\x00\nneedle 3\n"   // NUL at 10018
	// A lone CR ends line 1 for grep, not for ripgrep, whose second fill
	// ends in "pad pad pad" and searches "needle" (grep's line 6555);
	// loneCRBig is read in chunks, and its 18th fill ends the same way.
	loneCR := "a\rb\n" + testenv.PadLines(6552) + "needle\npad pad pad\n" + strings.Repeat("pad\n", 1000) + "\x00\n"
	loneCRBig := "a\rb\n" + strings.Repeat("pad 00000\n", 111_400) + "needle 00\npad pad pad\n\x00\n"
	// ripgrep's first fill ends after "needle\rz", at no LF: the lone CR
	// does not end its search there.
	crAtFill := testenv.PadLines(6552) + "12345678needle\rzzz\n" + strings.Repeat("pad\n", 10) + "\x00\n"
	// ripgrep joins a match starting on the line after another's into
	// one block, which it does not show when a line of it has a NUL.
	adjacent := testenv.PadLines(6600) + "foo\nbar\nfoo\x00bar\n"
	adjacentOpts := Options{Pattern: `foo.*?bar`, Multiline: true}
	bigAt, bigNULAt := int64(strings.IndexByte(big, 0)), int64(strings.IndexByte(bigNUL, 0))
	tests := []struct {
		name    string
		file    string
		start   string // "." (walked) or "f" (named)
		mapped  bool
		opts    Options
		want    *binarySeen // nil: no match reported
		skipped int
	}{
		{name: "walked, NUL in the first 64 KiB: skipped", file: "needle 1\nx\x00y\n", start: ".", skipped: 1},
		{name: "walked, NUL after 64 KiB: the fills before", file: late, start: ".",
			want: &binarySeen{Lines: []int{1}, Count: 2, Stopped: true, Offset: 70018}},
		{name: "walked, NUL after 64 KiB, read in chunks", file: big, start: ".",
			want: &binarySeen{Lines: []int{1}, Count: 2, Stopped: true, Offset: bigAt}},
		{name: "walked, context after", file: late, start: ".", opts: Options{ContextAfter: 1},
			want: &binarySeen{Lines: []int{1}, After: []int{2}, Count: 2, Stopped: true, Offset: 70018}},
		{name: "walked, a line break in the first 3 bytes: read alone", file: "n\nx\x00\n", start: ".", opts: Options{Pattern: "^n$"},
			want: &binarySeen{Lines: []int{1}, Count: 1, Stopped: true, Offset: 3}},
		{name: "walked, the match after the first 3 bytes", file: "x\nn\n\x00\n", start: ".", opts: Options{Pattern: "^n$"},
			want: &binarySeen{Count: 1, Stopped: true, Offset: 4}},
		{name: "walked, no line break in the first 3 bytes", file: "nnn\n\x00\n", start: ".", opts: Options{Pattern: "^n+$"}, skipped: 1},
		{name: "walked, byte order mark: no 3 bytes read alone", file: "\ufeffn\nx\x00\n", start: ".", opts: Options{Pattern: "^n$"}, skipped: 1},
		{name: "walked, byte order mark: offset after it", file: "\ufeffneedle 1\n" + testenv.PadLines(7000) + "\x00\n", start: ".",
			want: &binarySeen{Lines: []int{1}, Count: 1, Stopped: true, Offset: 70009}},
		{name: "walked, multiline: NUL in no line shown", file: late, start: ".", opts: Options{Pattern: `needle\s.`, Multiline: true},
			want: &binarySeen{Lines: []int{1, 7002, 7004}, Count: 3}},
		{name: "walked, multiline: NUL in a match", file: matchNUL, start: ".", opts: Options{Pattern: `needle\s.`, Multiline: true},
			want: &binarySeen{Lines: []int{1}, Count: 3, Stopped: true, Offset: 70016}},
		{name: "walked, multiline: NUL in the first 64 KiB", file: "needle 1\n\x00", start: ".", opts: Options{Pattern: `needle\s.`, Multiline: true}, skipped: 1},
		{name: "named, read: NUL a line break", file: "needle\x00needle\n", start: "f",
			want: &binarySeen{Count: 2, Binary: true, Offset: 6}},
		{name: "named, mapped: NUL a byte", file: "needle\x00needle\n", start: "f", mapped: true,
			want: &binarySeen{Count: 1, Binary: true, Offset: 6}},
		{name: "named, mapped: NUL in no line shown", file: late, start: "f", mapped: true,
			want: &binarySeen{Lines: []int{1, 7002, 7004}, Count: 3}},
		{name: "named, mapped: NUL in a match", file: matchNUL, start: "f", mapped: true,
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Offset: 70016}},
		{name: "named, mapped, read in chunks: NUL in a match", file: bigNUL, start: "f", mapped: true,
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Offset: bigNULAt}},
		{name: "named, mapped: context before shown, then the separator", file: matchNUL, start: "f", mapped: true, opts: Options{ContextBefore: 1, ContextAfter: 1},
			want: &binarySeen{Lines: []int{1}, After: []int{2}, Partial: []int{7001}, Count: 3, Binary: true, Offset: 70016}},
		{name: "named, mapped: stopped in the context before", file: "needle 1\n" + testenv.PadLines(7000) + "x\x00\nneedle 2\n", start: "f", mapped: true, opts: Options{ContextBefore: 2},
			want: &binarySeen{Lines: []int{1}, Partial: []int{7001}, Count: 2, Binary: true, Offset: 70010}},
		// Read: ripgrep shows the context before from the fill with the
		// NUL on, and stops there, after its separator.
		{name: "named, read: stopped at context before, after the separator", file: matchNUL, start: "f", opts: Options{ContextBefore: 1},
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Sep: true, Offset: 70016}},
		{name: "named, mapped: context before the first match", file: "x\nneedle\x00\n", start: "f", mapped: true, opts: Options{ContextBefore: 1},
			want: &binarySeen{Count: 1, Offset: 8}},
		{name: "walked, a lone CR: grep's line numbers", file: loneCR, start: ".",
			want: &binarySeen{Lines: []int{6555}, Count: 1, Stopped: true, Offset: int64(strings.IndexByte(loneCR, 0))}},
		{name: "walked, a lone CR: grep's line numbers, read in chunks", file: loneCRBig, start: ".",
			want: &binarySeen{Lines: []int{111_403}, Count: 1, Stopped: true, Offset: int64(strings.IndexByte(loneCRBig, 0))}},
		{name: "walked, a lone CR where a fill ends", file: crAtFill, start: ".",
			want: &binarySeen{Count: 1, Stopped: true, Offset: 65579}},
		{name: "walked, a lone CR where a fill ends, context after", file: crAtFill, start: ".", opts: Options{ContextAfter: 1},
			want: &binarySeen{Count: 1, Stopped: true, Offset: 65579}},
		{name: "walked, a lone CR where a fill ends, context before", file: crAtFill, start: ".", opts: Options{ContextBefore: 1},
			want: &binarySeen{Count: 1, Stopped: true, Offset: 65579}},
		{name: "walked, multiline: NUL in a match on the line after a match", file: adjacent, start: ".", opts: adjacentOpts,
			want: &binarySeen{Count: 2, Stopped: true, Offset: 66011}},
		{name: "walked, multiline: NUL in a match on the line after a match, context before", file: adjacent, start: ".",
			opts: Options{Pattern: adjacentOpts.Pattern, Multiline: true, ContextBefore: 1},
			want: &binarySeen{Partial: []int{6600}, Count: 2, Stopped: true, Offset: 66011}},
		{name: "walked, multiline: the first NUL of a block of matches", file: testenv.PadLines(6600) + "foo bar\nzz\nfoo\x00bar\nfoo\x00bar\n", start: ".",
			opts: Options{Pattern: adjacentOpts.Pattern, Multiline: true, ContextAfter: 1},
			want: &binarySeen{Lines: []int{6601}, After: []int{6602}, Count: 3, Stopped: true, Offset: 66014}},
		{name: "named, mapped, multiline: NUL in a match on the line after a match", file: adjacent, start: "f", mapped: true, opts: adjacentOpts,
			want: &binarySeen{Count: 2, Binary: true, Offset: 66011}},
		{name: "named, read: the fills before", file: late, start: "f",
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Offset: 70018}},
		{name: "named, read in chunks", file: big, start: "f",
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Offset: bigAt}},
		{name: "named, a byte order mark: read, not mapped", file: "\ufeff" + matchNUL, start: "f", mapped: true,
			want: &binarySeen{Lines: []int{1}, Count: 3, Binary: true, Offset: 70016}},
		{name: "named, read: NUL on no line shown", file: "needle 1\n" + testenv.PadLines(7000) + "\x00\n", start: "f",
			want: &binarySeen{Lines: []int{1}, Count: 1, Binary: true, Offset: 70009}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := makeTree(t, map[string]string{"f": tt.file})
			opts := tt.opts
			if opts.Pattern == "" {
				opts.Pattern = "needle"
			}
			opts.RipgrepBinary, opts.RipgrepMapped, opts.SearchBinaryStart = true, tt.mapped, true
			got, st := streamBinary(t, dir, tt.start, opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if st.FilesSkippedBinary != tt.skipped {
				t.Errorf("%d skipped as binary, want %d", st.FilesSkippedBinary, tt.skipped)
			}
		})
	}
	// Without RipgrepBinary (HTTP, MCP) the first 8 KiB decide, and a
	// later NUL ends the search at its line.
	t.Run("without RipgrepBinary", func(t *testing.T) {
		t.Parallel()
		dir := makeTree(t, map[string]string{"f": legacy})
		got, _ := streamBinary(t, dir, ".", Options{Pattern: "needle"})
		if want := (&binarySeen{Lines: []int{1, 1002}, Count: 2}); !cmp.Equal(want, got) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		got, _ = streamBinary(t, dir, "f", Options{Pattern: "needle", SearchBinaryStart: true})
		if want := (&binarySeen{Lines: []int{1, 1002}, Count: 2}); !cmp.Equal(want, got) {
			t.Errorf("named: got %+v, want %+v", got, want)
		}
		got, st := streamBinary(t, dir, ".", Options{Pattern: "needle", RipgrepBinary: true})
		if got != nil || st.FilesSkippedBinary != 1 {
			t.Errorf("RipgrepBinary: got %+v, %+v; want it skipped (NUL in the first 64 KiB)", got, st)
		}
	})
}

// streamBinary searches dir's start with opts and returns what collect
// was handed for its one file, nil if nothing.
func streamBinary(t *testing.T, dir, start string, opts Options) (*binarySeen, Stats) {
	t.Helper()
	q, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got *binarySeen
	st, err := Stream(t.Context(), openRoot(t, dir), start, q, func(fm *FileMatches) *binarySeen {
		b := &binarySeen{Count: fm.Count(), Binary: fm.Binary, Stopped: fm.Stopped, Sep: fm.Separated, Offset: fm.BinaryOffset}
		for i := range fm.Len() {
			l := fm.Line(i)
			b.Lines = append(b.Lines, l.Number)
			for k := range l.After {
				b.After = append(b.After, l.Number+1+k)
			}
		}
		if p, ok := fm.Partial(); ok {
			for k := range p.Before {
				b.Partial = append(b.Partial, p.Number-len(p.Before)+k)
			}
		}
		return b
	}, func(_ string, b *binarySeen) error {
		got = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

// TestRgReplay: where ripgrep's reading of a file stops before the read
// that brings its first NUL byte. The text is lines of 10 bytes: the
// first fill (64 KiB) searches up to the last line break in it, 65530,
// and the next fill ends 64 KiB after where it kept the buffer from.
func TestRgReplay(t *testing.T) {
	t.Parallel()
	lines := testenv.PadLines(20_000)
	tests := []struct {
		name string
		text string
		nul  int64
		bom  bool
		keep int
		// shown is the line lastShown gives for any line (0: none).
		shown int
		want  rgRead
	}{
		{name: "first fill", text: lines, nul: 65535, want: rgRead{end: 0, line: 1, bufLine: 1}},
		{name: "second fill", text: lines, nul: 65536, want: rgRead{end: 65530, line: 6554, bufLine: 6554}},
		{name: "second fill's end", text: lines, nul: 65530 + 65535, want: rgRead{end: 65530, line: 6554, bufLine: 6554}},
		{name: "third fill", text: lines, nul: 65530 + 65536, want: rgRead{end: 131060, line: 13107, bufLine: 13107}},
		// Keeping a line of context, ripgrep keeps the buffer's last two
		// (from 65510): the second fill ends at 65510 + 65536.
		{name: "context kept", text: lines, nul: 65510 + 65535, keep: 1, want: rgRead{end: 65530, line: 6554, bufLine: 6552}},
		{name: "context kept, third fill", text: lines, nul: 65510 + 65536, keep: 1, want: rgRead{end: 131040, line: 13105, bufLine: 13103}},
		// The last line shown was the buffer's last: nothing is kept
		// after the first fill (but after the second).
		{name: "last line shown", text: lines, nul: 65530 + 65536, keep: 1, shown: 6553, want: rgRead{end: 131060, line: 13107, bufLine: 13105}},
		// 3 bytes are read alone, and they end a line.
		{name: "first read", text: "a\n" + lines, nul: 5, want: rgRead{end: 2, line: 2, bufLine: 2}},
		{name: "first read, in it", text: "a\n" + lines, nul: 2, want: rgRead{end: 0, line: 1, bufLine: 1}},
		{name: "first read, byte order mark", text: "a\n" + lines, nul: 5, bom: true, want: rgRead{end: 0, line: 1, bufLine: 1}},
		// A line longer than the buffer grows it to three times its size.
		{name: "growth", text: strings.Repeat("x", 100_000) + "\n" + lines, nul: 150_000, want: rgRead{end: 0, line: 1, bufLine: 1}},
		// A lone CR ends a line for grep, not for ripgrep: 65534 starts
		// grep's line 6556.
		{name: "lone CR", text: "a\rb\n" + lines, nul: 65540, want: rgRead{end: 65534, line: 6556, bufLine: 6556}},
		{name: "lone CR, context kept", text: "a\rb\n" + lines, nul: 65514 + 65536, keep: 1, want: rgRead{end: 131044, line: 13107, bufLine: 13105}},
		{name: "grown", text: strings.Repeat("x", 100_000) + "\n" + lines, nul: 196_608, want: rgRead{end: 196_601, line: 9662, bufLine: 9662}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			readAt := func(p []byte, off int64) error {
				copy(p, tt.text[off:])
				return nil
			}
			got, err := rgReplay(readAt, tt.nul, tt.bom, tt.keep, func(n int) int { return min(tt.shown, n-1) })
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("rgReplay(nul %d, keep %d) = %+v, want %+v", tt.nul, tt.keep, got, tt.want)
			}
		})
	}
}

func TestTextLines(t *testing.T) {
	t.Parallel()
	for b, want := range map[string]int{"": 0, "a\n": 1, "a\r\n": 1, "a\rb\n": 2, "\r\r\n": 2, "a\r\rb\r\n\n": 4} {
		if got := textLines([]byte(b)); got != want {
			t.Errorf("textLines(%q) = %d, want %d", b, got, want)
		}
	}
}

// TestShownEnd: where ripgrep's last line shown ends when grep's last k
// lines were not shown, at the end of ripgrep's line when a lone CR
// split it.
func TestShownEnd(t *testing.T) {
	t.Parallel()
	b := []byte("ab\ncd\r\nef\rgh\n")
	for k, want := range []int{13, 13, 7, 3, 0, 0} {
		if got := shownEnd(b, k); got != want {
			t.Errorf("shownEnd(%q, %d) = %d, want %d", b, k, got, want)
		}
	}
}

func TestLineBack(t *testing.T) {
	t.Parallel()
	b := []byte("ab\ncd\nef\n")
	for k, want := range []int{9, 6, 3, 0, 0} {
		if got := lineBack(b, k); got != want {
			t.Errorf("lineBack(%q, %d) = %d, want %d", b, k, got, want)
		}
	}
}
