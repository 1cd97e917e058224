package edit

import (
	"bytes"
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
	f.Fuzz(func(t *testing.T, content, old, new string, mode uint8) {
		modes := []Mode{ModeUnique, ModeAll, ModeFirst, ModeLast}
		in := []byte(content)
		r, err := Replace(in, old, new, ReplaceOptions{Mode: modes[int(mode)%len(modes)], Diff: mode&4 != 0})
		if string(in) != content {
			t.Fatal("input modified")
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
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
		for _, e := range r.Edits {
			if HasBOM(in) && e.Start < len(BOM) {
				t.Fatalf("edit %v touches the BOM", e)
			}
		}
		if HasBOM(in) && !HasBOM(r.Content) {
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

func FuzzView(f *testing.F) {
	f.Add("a\nb\n", 1, -1)
	f.Fuzz(func(t *testing.T, content string, start, end int) {
		out, err := View([]byte(content), start, end)
		if err == nil && strings.Count(out, "\n") > LineCount([]byte(content)) {
			t.Fatalf("view has more lines than the file")
		}
	})
}
