package edit

import (
	"strings"
	"testing"
)

// scanPieces runs a LineScanner over content cut at the given offsets.
func scanPieces(content []byte, from, to, maxBytes int, cuts ...int) *LineScanner {
	s := &LineScanner{From: from, To: to, Max: maxBytes}
	prev := 0
	for _, c := range cuts {
		c = min(max(c, prev), len(content))
		s.Write(content[prev:c])
		prev = c
	}
	s.Write(content[prev:])
	s.Close()
	return s
}

// checkScanner asserts that scanning content in pieces agrees with Lines,
// LineCount, DetectEOL and HasBOM on the whole.
func checkScanner(t *testing.T, content []byte, from, to int, cuts ...int) {
	t.Helper()
	s := scanPieces(content, from, to, 0, cuts...)
	want, n := Lines(content, from, to)
	if got := string(s.Lines()); got != want {
		t.Fatalf("%q lines %d..%d cut at %v: %q, Lines gives %q", content, from, to, cuts, got, want)
	}
	if s.Total() != n || n != LineCount(content) {
		t.Fatalf("%q cut at %v: Total %d, Lines %d, LineCount %d", content, cuts, s.Total(), n, LineCount(content))
	}
	if s.EOL() != DetectEOL(content) || s.BOM() != HasBOM(content) {
		t.Fatalf("%q cut at %v: EOL %s BOM %v, want %s %v", content, cuts, s.EOL(), s.BOM(), DetectEOL(content), HasBOM(content))
	}
}

func TestLineScanner(t *testing.T) {
	t.Parallel()
	texts := []string{
		"", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\rb\rc", "\r", "\n", "\r\n", "\r\r\n\n",
		BOM, BOM + "x\ny", "\xef\xbbx", "\xef", "a\r\n\r\nb\rc\nd",
	}
	for _, text := range texts {
		c := []byte(text)
		for from := 0; from <= 4; from++ {
			for _, to := range []int{-1, 0, 1, 2, 3, 5} {
				for cut := 0; cut <= len(c); cut++ {
					checkScanner(t, c, from, to, cut)
					checkScanner(t, c, from, to, cut, cut+1)
				}
			}
		}
	}
}

func TestLineScannerMax(t *testing.T) {
	t.Parallel()
	s := scanPieces([]byte("one\ntwo\nthree\n"), 2, 3, 8, 5)
	if !s.Overflow() || string(s.Lines()) != "two\n" || s.Total() != 3 {
		t.Errorf("Max 8 over lines 2..3: overflow %v, lines %q, total %d", s.Overflow(), s.Lines(), s.Total())
	}
	s = scanPieces([]byte("one\ntwo\nthree\n"), 2, 3, 10)
	if s.Overflow() || string(s.Lines()) != "two\nthree\n" {
		t.Errorf("Max 10 over lines 2..3: overflow %v, lines %q", s.Overflow(), s.Lines())
	}
}

func FuzzLineScanner(f *testing.F) {
	f.Add([]byte("a\r\nb\rc\n"), 2, 3, 3, 4)
	f.Add([]byte(BOM+"x\r"), 1, -1, 1, 2)
	f.Fuzz(func(t *testing.T, content []byte, from, to, cut1, cut2 int) {
		if len(content) > 1<<12 {
			return
		}
		from, to = min(max(from, 0), 1<<20), min(max(to, -1), 1<<20)
		checkScanner(t, content, from, to, cut1, cut2)
	})
}

// FuzzCutLine: cutting a text line by line gives it back whole, with as
// many lines as LineCount and each line's text free of terminators.
func FuzzCutLine(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\nb", "a\rb\r", "\r\n\r\n", "\n\r", "x\r\r\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if HasBOM([]byte(s)) {
			return // LineCount does not count a BOM; CutLine gets text without one
		}
		var b strings.Builder
		n := 0
		for rest := s; rest != ""; n++ {
			var line, eol string
			line, eol, rest = CutLine(rest)
			if strings.ContainsAny(line, "\r\n") {
				t.Fatalf("line %q holds a terminator", line)
			}
			if eol != "" && eol != "\n" && eol != "\r\n" && eol != "\r" {
				t.Fatalf("terminator %q", eol)
			}
			if eol == "" && rest != "" {
				t.Fatalf("no terminator but %q follows", rest)
			}
			b.WriteString(line + eol)
		}
		if b.String() != s {
			t.Fatalf("rejoined %q, want %q", b.String(), s)
		}
		if want := LineCount([]byte(s)); n != want {
			t.Fatalf("%d lines, LineCount says %d", n, want)
		}
	})
}
