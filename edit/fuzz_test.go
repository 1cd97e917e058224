package edit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pureCRLF reports whether every line break in b is CRLF (and there is one).
func pureCRLF(b []byte) bool {
	return bytes.Contains(b, []byte("\r\n")) && bytes.Count(b, []byte("\n")) == bytes.Count(b, []byte("\r\n")) &&
		bytes.Count(b, []byte("\r")) == bytes.Count(b, []byte("\r\n"))
}

func FuzzReplace(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", uint8(0))
	f.Add("a\r\nb\r\nc\r\n", "a\nb", "x\ny", uint8(0))
	f.Add("\tif x {\n\t\ty()\n\t}\n", "if x {\n\ty()\n}", "if z {\n\tw()\n}", uint8(0))
	f.Add("say(\u201chi\u201d)\n", "say(\"hi\")", "say(\"yo\")", uint8(1))
	f.Add("aaa", "aa", "b", uint8(2))
	f.Add(BOM+"x  \ny\n", "x\ny\n", "", uint8(3))
	f.Add(BOM+"x  \ny\n", BOM+"x\ny\n", BOM+"z", uint8(1))
	f.Add("x y x\n", "x", "z", uint8(5))
	f.Add("x\r\ny\r\n", "x\ny", "z", uint8(8))
	f.Add("foo  \nbar\n", "foo\nbar", "z", uint8(8))
	f.Add("if a {\n\tb()\n}\n", "if a {\n    b()\n}", "z", uint8(0))
	f.Add("a\u200bb\r\n", "ab\n", "z", uint8(8))
	f.Fuzz(func(t *testing.T, content, old, new string, mode uint8) {
		modes := []Mode{ModeUnique, ModeAll, ModeFirst, ModeLast}
		in := []byte(content)
		r, err := Replace(in, old, new, ReplaceOptions{Mode: modes[int(mode)%len(modes)], Diff: mode&4 != 0, Strict: mode&8 != 0})
		if string(in) != content {
			t.Fatal("input modified")
		}
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if e.Code == CodeNoMatch {
				// A hint never shows a diff with nothing in it, nor does
				// the nearest-region hint on its own.
				if strings.Contains(e.Hint, "{--}{++}") {
					t.Fatalf("no_match hint with an empty diff: %q", e.Hint)
				}
				if h := noMatchHint(in, old, false, Names{}); strings.Contains(h, "{--}{++}") {
					t.Fatalf("nearest-region hint with an empty diff: %q", h)
				}
			}
			return
		}
		got, err := Apply(in, r.Edits)
		if err != nil || !bytes.Equal(got, r.Content) {
			t.Fatalf("Edits do not reproduce Content: %v", err)
		}
		if r.Count != len(r.Edits) || r.Count == 0 {
			t.Fatalf("count %d, %d edits", r.Count, len(r.Edits))
		}
		if mode&4 != 0 && r.Changed && r.Diff == "" {
			t.Fatalf("the content changed but the diff is empty")
		}
		// An old that starts with the BOM means the file's start, the mark
		// included (see Locate); any other leaves the mark alone.
		marked := HasBOM(in) && strings.HasPrefix(old, BOM)
		for _, e := range r.Edits {
			if marked && (e.Start != 0 || len(r.Edits) != 1) {
				t.Fatalf("edits %v for an old starting with the BOM", r.Edits)
			}
			if HasBOM(in) && !marked && e.Start < len(BOM) {
				t.Fatalf("edit %v touches the BOM", e)
			}
		}
		if HasBOM(in) && (!marked || strings.HasPrefix(new, BOM)) && !HasBOM(r.Content) {
			t.Fatal("BOM lost")
		}
		if r.Tier == TierExact && !strings.ContainsAny(new, "\r\n") {
			for _, e := range r.Edits {
				if string(in[e.Start:e.End]) != old || e.New != new {
					t.Fatalf("exact edit %q -> %q, want %q -> %q", in[e.Start:e.End], e.New, old, new)
				}
			}
		}
		if pureCRLF(in) && !pureCRLF(r.Content) && bytes.ContainsAny(r.Content, "\r\n") {
			if !bytes.Contains([]byte(new), []byte("\r")) && !bytes.Contains(r.Content, []byte("\r")) {
				t.Fatalf("CRLF file lost its line endings: %q", r.Content)
			}
			for _, e := range r.Edits {
				if strings.Contains(strings.ReplaceAll(e.New, "\r\n", ""), "\n") {
					t.Fatalf("LF written into a CRLF file: %q", e.New)
				}
			}
		}
		if r.StartLine < 1 || r.EndLine < r.StartLine-1 {
			t.Fatalf("lines %d..%d", r.StartLine, r.EndLine)
		}
	})
}

func FuzzEditLines(f *testing.F) {
	f.Add("a\nb\nc\n", 2, 2, "B", true, 1, 0, "x", false)
	f.Add("a\r\nb", 1, 0, "top", true, 3, 2, "", true)
	f.Add("", 1, 0, "x", true, 1, 0, "y", true)
	f.Add("a\nb\nc", 2, 2, "B", true, 3, 67, "", false) // to 67 is line 3
	f.Fuzz(func(t *testing.T, content string, f1, t1 int, c1 string, has1 bool, f2, t2 int, c2 string, has2 bool) {
		mk := func(from, to int, c string, has bool) LineEdit {
			e := LineEdit{From: from % 64, To: &to}
			if to%3 == 0 {
				e.To = nil
			} else {
				v := to % 64
				e.To = &v
			}
			if has {
				e.Content = &c
			}
			return e
		}
		in := []byte(content)
		edits := []LineEdit{mk(f1, t1, c1, has1), mk(f2, t2, c2, has2)}
		r, err := EditLines(in, edits, true, "f")
		if string(in) != content {
			t.Fatal("input modified")
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			if strings.Contains(err.Error(), "at byte") {
				// Line edits that pass the line checks must apply.
				t.Fatalf("line edits passed validation, then failed: %v", err)
			}
			return
		}
		if HasBOM(in) && !HasBOM(r.Content) {
			t.Fatal("BOM lost")
		}
		if r.TotalLines != LineCount(r.Content) {
			t.Fatalf("TotalLines %d, LineCount %d", r.TotalLines, LineCount(r.Content))
		}
		if pureCRLF(in) && !strings.ContainsAny(c1+c2, "\r") && bytes.Count(r.Content, []byte("\n")) != bytes.Count(r.Content, []byte("\r\n")) {
			t.Fatalf("LF written into a CRLF file: %q", r.Content)
		}
	})
}

// refLines splits content into lines without this package's line index:
// a leading BOM is not text, and CRLF, LF and a lone CR each end a line.
func refLines(content string) []string {
	content = strings.TrimPrefix(content, BOM)
	if content == "" {
		return nil
	}
	content = strings.ReplaceAll(content, "\r\n", "\n")
	content = strings.ReplaceAll(content, "\r", "\n")
	lines := strings.Split(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the last line's terminator
	}
	return lines
}

// FuzzView checks View against refLines: a valid range gives exactly lines
// start..end, numbered consecutively from start, each with the file's text;
// an invalid one gives a bad_request error naming the file's line count.
func FuzzView(f *testing.F) {
	f.Add("a\nb\n", 1, -1)
	f.Add("a\nb\nc", 2, 3)
	f.Add("a\nb\nc\n", 0, 2)
	f.Add("one\r\ntwo\rthree\n\nfive", 2, -1)
	f.Add("\r\r\n\n", 1, 3)
	f.Add(BOM+"x\ty\n"+BOM+"z", 1, -1)
	f.Add("", 0, -1)
	f.Add("", 1, 1)
	f.Add("a\nb\n", 3, -1)
	f.Add("a\nb\n", 2, 1)
	f.Add("a\nb\n", 1, 3)
	f.Add("a\nb\n", -1, 1)
	f.Fuzz(func(t *testing.T, content string, start, end int) {
		in := []byte(content)
		out, err := View(in, start, end)
		if string(in) != content {
			t.Fatal("input modified")
		}
		lines := refLines(content)
		n := len(lines)
		if got := LineCount(in); got != n {
			t.Fatalf("LineCount = %d, the reference splits %d lines", got, n)
		}
		s, e := start, end
		if s == 0 {
			s = 1
		}
		if e == -1 {
			e = n
		}
		if n == 0 && s == 1 {
			if out != "" || err != nil {
				t.Fatalf("View(empty, %d, %d) = %q, %v; want \"\", nil", start, end, out, err)
			}
			return
		}
		if s < 1 || s > n || e < s || e > n {
			var ee *Error
			if !errors.As(err, &ee) || ee.Code != CodeBadRequest || out != "" {
				t.Fatalf("View(%d, %d) of %d lines = %q, %v; want a %s error", start, end, n, out, err, CodeBadRequest)
			}
			var total string // the message names the line count it checked against
			switch {
			case s < 1 || s > n:
				total = fmt.Sprintf("[1, %d]", n)
			case e > n:
				total = fmt.Sprintf("`%d`", n)
			}
			if !strings.Contains(ee.Message, total) {
				t.Fatalf("View(%d, %d) of %d lines: %q does not name %s", start, end, n, ee.Message, total)
			}
			return
		}
		if err != nil {
			t.Fatalf("View(%d, %d) of %d lines: %v", start, end, n, err)
		}
		if !strings.HasSuffix(out, "\n") {
			t.Fatalf("View(%d, %d) = %q does not end with a line break", start, end, out)
		}
		rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(rows) != e-s+1 {
			t.Fatalf("View(%d, %d) gave %d lines, want %d: %q", start, end, len(rows), e-s+1, out)
		}
		for i, row := range rows {
			num, text, ok := strings.Cut(row, "\t")
			if want := fmt.Sprintf("%6d", s+i); !ok || num != want {
				t.Fatalf("View(%d, %d) row %d is numbered %q, want %q: %q", start, end, i, num, want, out)
			}
			if want := lines[s-1+i]; text != want {
				t.Fatalf("View(%d, %d) line %d = %q, want %q", start, end, s+i, text, want)
			}
		}
	})
}
