package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
)

// TestReadTextLinesMatchesReadText: streaming a file gives what reading it
// whole and cutting lines gives, including characters and CR LF pairs that
// straddle the 256 KiB read buffer.
func TestReadTextLinesMatchesReadText(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	const buf = 256 << 10
	straddle := func(at int, s string) string { return strings.Repeat("x", at) + s + "\nend\n" }
	files := map[string]string{
		"empty.txt":   "",
		"lf.txt":      "one\ntwo\nthree",
		"crlf.txt":    "a\r\nb\r\nc\r\n",
		"cr.txt":      "a\rb\rc",
		"bom.txt":     edit.BOM + "é\nü\n",
		"rune.txt":    straddle(buf-2, "€ and 😀"), // a 3-byte character across the boundary
		"emoji.txt":   straddle(buf-1, "😀"),
		"crlfcut.txt": strings.Repeat("y", buf-1) + "\r\nnext\r\n",
		"many.txt":    strings.Repeat("line of text é\n", 60000),
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content, 0o644)
	}
	for name := range files {
		tf, err := w.ReadText(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]int{{1, -1}, {2, 3}, {1, 1}, {59999, 60001}, {5, 4}} {
			tl, err := w.ReadTextLines(name, r[0], r[1])
			if err != nil {
				t.Fatalf("%s %v: %v", name, r, err)
			}
			want, total := edit.Lines(tf.Content, r[0], r[1])
			if string(tl.Content) != want || tl.TotalLines != total || tl.Version != tf.Version ||
				tl.BOM != tf.BOM || tl.EOL != edit.DetectEOL(tf.Content) || tl.Size != int64(len(tf.Content)) {
				t.Errorf("%s lines %v: got %q total %d version %s bom %v eol %s size %d; want %q %d %s %v %s %d",
					name, r, trunc(string(tl.Content)), tl.TotalLines, tl.Version, tl.BOM, tl.EOL, tl.Size,
					trunc(want), total, tf.Version, tf.BOM, edit.DetectEOL(tf.Content), len(tf.Content))
			}
		}
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestReadTextLinesRefusesWhatReadTextRefuses: the same decode errors at
// the same offsets, wherever the bad byte falls relative to the buffer.
func TestReadTextLinesRefusesWhatReadTextRefuses(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	const buf = 256 << 10
	files := map[string]string{
		"nul.txt":       "text\x00more",
		"bad.txt":       "ok\n\xff\n",
		"cut-end.txt":   "ends in half a character \xe2\x82",
		"bad-at-buf":    strings.Repeat("x", buf-1) + "\xc3\x28tail",
		"bad-after-buf": strings.Repeat("x", buf+10) + "\xff",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content, 0o644)
	}
	for name := range files {
		_, want := w.ReadText(name)
		_, got := w.ReadTextLines(name, 1, 2)
		if fserr.CodeOf(want) != fserr.DecodeError || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: ReadTextLines error %v, ReadText's %v", name, got, want)
		}
	}
}

// TestReadTextLinesOfALargeFile: a range over TextLimit is too_large,
// and a file over TextLimit is read by range.
func TestReadTextLinesOfALargeFile(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	var b strings.Builder
	for i := 0; b.Len() <= TextLimit+(1<<20); i++ {
		b.WriteString("log line ")
		b.WriteString(strings.Repeat("z", i%50))
		b.WriteString("\n")
	}
	content := b.String()
	if err := os.WriteFile(filepath.Join(root, "big.log"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadText("big.log"); fserr.CodeOf(err) != fserr.TooLarge {
		t.Fatalf("ReadText of %d bytes: %v, want too_large", len(content), err)
	}
	tl, err := w.ReadTextLines("big.log", 300000, 300002)
	if err != nil {
		t.Fatal(err)
	}
	want, total := edit.Lines([]byte(content), 300000, 300002)
	if string(tl.Content) != want || tl.TotalLines != total || tl.Version != Version([]byte(content)) {
		t.Errorf("lines 300000..300002: %q of %d, want %q of %d", tl.Content, tl.TotalLines, want, total)
	}
	for _, tc := range []struct {
		from, to int
		want     string
	}{
		{from: 1, to: -1, want: "lines 1 to the end of big.log are over the 16 MiB a read returns"},
		{from: 0, to: -1, want: "lines 1 to the end of big.log are over the 16 MiB a read returns"},
		{from: 10, to: -1, want: "lines 10 to the end of big.log are over the 16 MiB a read returns"},
		{from: 2, to: total, want: fmt.Sprintf("lines 2..%d of big.log are over the 16 MiB a read returns", total)},
	} {
		_, err := w.ReadTextLines("big.log", tc.from, tc.to)
		if e := wantCode(t, err, fserr.TooLarge); e.Message != tc.want {
			t.Errorf("lines %d..%d: message %q, want %q", tc.from, tc.to, e.Message, tc.want)
		}
	}
}

// BenchmarkReadTextLines reads three lines from the middle of a 64 MiB
// log: one streaming pass over the whole file (hash, UTF-8, line count).
func BenchmarkReadTextLines(b *testing.B) {
	root := b.TempDir()
	content := strings.Repeat("2026-11-30T05:00:00Z INFO request served path=/v2/fs/read status=200\n", 64<<20/70)
	if err := os.WriteFile(filepath.Join(root, "big.log"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	w, err := Open(Options{Roots: []string{root}, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := w.ReadTextLines("big.log", 500000, 500002); err != nil {
			b.Fatal(err)
		}
	}
}
