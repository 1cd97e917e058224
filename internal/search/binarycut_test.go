package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
)

// cutFile is a file whose first NUL byte is in line k+3, after filler
// bytes: "needle 1", k lines of 10 bytes, "needle 2", then filler x's,
// the NUL and " needle" (a match lost with its line), "needle 3" and
// tail lines of 10 bytes. The NUL is at offset 18+10k+filler.
func cutFile(k, filler, tail int) string {
	const line = "pad  line\n"
	return "needle 1\n" + strings.Repeat(line, k) + "needle 2\n" + strings.Repeat("x", filler) + "\x00 needle\n" +
		"needle 3\n" + strings.Repeat(line, tail)
}

// cutSeen is what a search without RipgrepBinary reports of its files'
// NUL bytes, and the matches it found.
type cutSeen struct {
	Matches        []string
	FilesSearched  int
	FilesSkipped   int
	FilesCutBinary int
	CutBinary      []BinaryCut
}

// TestGrepBinaryCut: without RipgrepBinary (HTTP, MCP), a file whose
// first NUL byte comes after its first 8 KiB is searched up to the line
// before it, and counted in FilesCutBinary with where it stopped: in a
// file read whole, read in chunks (the NUL in the first fill, at either
// side of the first fill's end, in a line across it, fills later, with
// context carried), or read whole in multiline mode. A NUL in the first
// 8 KiB still skips the file; a file without one, a search that the
// match limit ended before the NUL, and RipgrepBinary's searches are not
// counted.
func TestGrepBinaryCut(t *testing.T) {
	t.Parallel()
	// big tail lines make a file read in chunks; first x's after 104,000
	// lines put the NUL on the first byte after the first fill.
	const big = 120_000
	first := chunkSize - 18 - 10*104_000
	tests := []struct {
		name  string
		file  string
		start string // "." unless set: "f" names the file
		opts  Options
		want  cutSeen
	}{
		{name: "no NUL", file: "needle 1\n" + testenv.PadLines(3000) + "needle 2\n",
			want: cutSeen{Matches: []string{"f:1", "f:3002"}, FilesSearched: 1}},
		{name: "NUL in the first 8 KiB: skipped, not cut", file: "needle 1\n" + testenv.PadLines(100) + "\x00\nneedle 2\n",
			want: cutSeen{FilesSkipped: 1}},
		{name: "NUL at 20 KiB, read whole", file: cutFile(2000, 0, 10),
			want: cutSeen{Matches: []string{"f:1", "f:2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20018}}}},
		{name: "NUL the first 8 KiB's last byte: skipped", file: "needle 1\n" + testenv.PadLines(818) + "xx\x00\nneedle 2\n",
			want: cutSeen{FilesSkipped: 1}},
		{name: "NUL right after the first 8 KiB", file: "needle 1\n" + testenv.PadLines(818) + "xxx\x00\nneedle 2\n",
			want: cutSeen{Matches: []string{"f:1"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 820, Offset: binaryProbe}}}},
		{name: "NUL ending the file", file: "needle 1\n" + testenv.PadLines(2000) + "\x00",
			want: cutSeen{Matches: []string{"f:1"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2002, Offset: 20009}}}},
		{name: "lone CRs end lines", file: "needle 1\r" + testenv.PadLines(2000) + "x\r\x00\n",
			want: cutSeen{Matches: []string{"f:1"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20011}}}},
		{name: "byte order mark: in the offset", file: "\ufeff" + cutFile(2000, 0, 10),
			want: cutSeen{Matches: []string{"f:1", "f:2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20021}}}},
		{name: "multiline", file: cutFile(2000, 0, 10), opts: Options{Pattern: `needle\s\d`, Multiline: true},
			want: cutSeen{Matches: []string{"f:1", "f:2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20018}}}},
		{name: "multiline, read in chunks", file: cutFile(2000, 0, big), opts: Options{Pattern: `needle\s\d`, Multiline: true},
			want: cutSeen{Matches: []string{"f:1", "f:2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20018}}}},
		{name: "chunks: NUL in the first fill", file: cutFile(2000, 0, big),
			want: cutSeen{Matches: []string{"f:1", "f:2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20018}}}},
		{name: "chunks: NUL the first fill's last byte", file: cutFile(104_000, first-1, big),
			want: cutSeen{Matches: []string{"f:1", "f:104002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 104_003, Offset: chunkSize - 1}}}},
		{name: "chunks: NUL the second fill's first byte", file: cutFile(104_000, first, big),
			want: cutSeen{Matches: []string{"f:1", "f:104002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 104_003, Offset: chunkSize}}}},
		{name: "chunks: NUL in a line across the fills", file: cutFile(104_000, first+100, big),
			want: cutSeen{Matches: []string{"f:1", "f:104002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 104_003, Offset: chunkSize + 100}}}},
		{name: "chunks: NUL in the third fill", file: cutFile(250_000, 0, big),
			want: cutSeen{Matches: []string{"f:1", "f:250002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 250_003, Offset: 2_500_018}}}},
		{name: "chunks: context carried", file: cutFile(250_000, 0, big), opts: Options{ContextBefore: 3, ContextAfter: 3},
			want: cutSeen{Matches: []string{"f:1", "f:250002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 250_003, Offset: 2_500_018}}}},
		{name: "chunks: byte order mark", file: "\ufeff" + cutFile(104_000, first, big),
			want: cutSeen{Matches: []string{"f:1", "f:104002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 104_003, Offset: chunkSize + 3}}}},
		// MaxResults 1: the search of a file ends at its third match
		// (Offset + MaxResults + 1), before the NUL.
		{name: "the match limit first", file: "needle 1\nneedle 2\nneedle 3\n" + testenv.PadLines(2000) + "\x00\n", opts: Options{MaxResults: 1},
			want: cutSeen{Matches: []string{"f:1"}, FilesSearched: 1}},
		{name: "the match limit not reached in the file", file: cutFile(2000, 0, 10), opts: Options{MaxResults: 1},
			want: cutSeen{Matches: []string{"f:1"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "f", Line: 2003, Offset: 20018}}}},
		{name: "named: a path of \"\"", file: cutFile(2000, 0, 10), start: "f", opts: Options{SearchBinaryStart: true},
			want: cutSeen{Matches: []string{":1", ":2002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "", Line: 2003, Offset: 20018}}}},
		{name: "named, chunks", file: cutFile(104_000, first, big), start: "f", opts: Options{SearchBinaryStart: true},
			want: cutSeen{Matches: []string{":1", ":104002"}, FilesSearched: 1, FilesCutBinary: 1,
				CutBinary: []BinaryCut{{Path: "", Line: 104_003, Offset: chunkSize}}}},
		{name: "named, NUL in the first 8 KiB: line breaks, not cut", file: "needle 1\x00needle 2\n" + cutFile(2000, 0, 10), start: "f",
			opts: Options{SearchBinaryStart: true},
			want: cutSeen{Matches: []string{":1", ":2", ":3", ":2004", ":2006", ":2007"}, FilesSearched: 1}},
		{name: "RipgrepBinary: its own way", file: cutFile(104_000, first, big), opts: Options{RipgrepBinary: true},
			want: cutSeen{Matches: []string{"f:1", "f:104002"}, FilesSearched: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := makeTree(t, map[string]string{"f": tt.file})
			opts := tt.opts
			if opts.Pattern == "" {
				opts.Pattern = "needle"
			}
			start := tt.start
			if start == "" {
				start = "."
			}
			lines, res := grepLines(t, dir, start, opts)
			got := cutSeen{FilesSearched: res.FilesSearched, FilesSkipped: res.FilesSkippedBinary,
				FilesCutBinary: res.FilesCutBinary, CutBinary: res.CutBinary}
			for _, l := range lines {
				got.Matches = append(got.Matches, l[:strings.LastIndexByte(l, ':')])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGrepBinaryCutBounded: the files cut are counted all, and the first
// maxBinaryCuts of them kept, in path order whatever the workers' order.
func TestGrepBinaryCutBounded(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "needle\n"}
	var want []BinaryCut
	for i := range maxBinaryCuts + 3 {
		name := fmt.Sprintf("d/f%02d.log", i)
		files[name] = "needle\n" + testenv.PadLines(1000+i) + "\x00\n"
		if i < maxBinaryCuts {
			want = append(want, BinaryCut{Path: name, Line: 1002 + i, Offset: int64(7 + 10*(1000+i))})
		}
	}
	_, res := grepLines(t, makeTree(t, files), ".", Options{Pattern: "needle", Workers: 4})
	if res.FilesCutBinary != maxBinaryCuts+3 || res.FilesSearched != maxBinaryCuts+4 {
		t.Errorf("%d files cut of %d searched, want %d of %d", res.FilesCutBinary, res.FilesSearched, maxBinaryCuts+3, maxBinaryCuts+4)
	}
	if diff := cmp.Diff(want, res.CutBinary); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
