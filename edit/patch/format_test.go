package patch

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// formatIgnoreLines compares patches without their Line fields, which
// number the lines of the text a patch was parsed from.
var formatIgnoreLines = cmp.Options{
	cmpopts.IgnoreFields(FileOp{}, "Line"),
	cmpopts.IgnoreFields(Chunk{}, "Line"),
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		patch *Patch
		want  string
	}{
		{
			name:  "no files",
			patch: &Patch{Dialect: Codex},
			want:  "*** Begin Patch\n*** End Patch\n",
		},
		{
			name: "every kind",
			patch: parseCodex(
				FileOp{Kind: Add, Path: "new.txt", Lines: []string{"one", "", "three"}},
				FileOp{Kind: Delete, Path: "old.txt"},
				FileOp{Kind: Update, Path: "a.py", MoveTo: "b.py", Chunks: []Chunk{
					{Anchors: []string{"class A:", "    def f(self):"}, Old: []string{"x", "y", "z"}, New: []string{"x", "Y", "z"}},
					{Old: []string{"", "tail"}, New: []string{""}, EOF: true},
				}},
			),
			want: "*** Begin Patch\n*** Add File: new.txt\n+one\n+\n+three\n*** Delete File: old.txt\n" +
				"*** Update File: a.py\n*** Move to: b.py\n@@ class A:\n@@     def f(self):\n x\n-y\n+Y\n z\n" +
				"@@\n \n-tail\n*** End of File\n*** End Patch\n",
		},
		{
			name: "interleaved changes render removed lines then added lines",
			patch: parseCodex(parseUpdate(0, "f", Chunk{
				Old: []string{"c", "a", "k", "d", "c2"},
				New: []string{"c", "b", "k", "e", "c2"},
			})),
			want: "*** Begin Patch\n*** Update File: f\n@@\n c\n-a\n-k\n-d\n+b\n+k\n+e\n c2\n*** End Patch\n",
		},
		{
			name:  "insertion only",
			patch: parseCodex(parseUpdate(0, "f", Chunk{Anchors: []string{"def f():"}, New: []string{"    pass"}})),
			want:  "*** Begin Patch\n*** Update File: f\n@@ def f():\n+    pass\n*** End Patch\n",
		},
		{
			name:  "common prefix and suffix do not overlap",
			patch: parseCodex(parseUpdate(0, "f", Chunk{Old: []string{"a", "a"}, New: []string{"a", "a", "a"}})),
			want:  "*** Begin Patch\n*** Update File: f\n@@\n a\n a\n+a\n*** End Patch\n",
		},
		{
			name: "agent zero patch renders as codex",
			patch: &Patch{Dialect: AgentZero, Files: []FileOp{{Kind: Update, Path: "x.go", Chunks: []Chunk{
				{Anchors: []string{"func f() {"}, Old: []string{"\treturn 1"}, New: []string{"\treturn 2"}},
			}}}},
			want: "*** Begin Patch\n*** Update File: x.go\n@@ func f() {\n-\treturn 1\n+\treturn 2\n*** End Patch\n",
		},
		{
			name:  "unknown kind left out",
			patch: parseCodex(FileOp{Kind: Kind(0), Path: "?"}, FileOp{Kind: Delete, Path: "d"}),
			want:  "*** Begin Patch\n*** Delete File: d\n*** End Patch\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Format(tc.patch)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Format mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want string
	}{
		{
			name: "lenient input",
			text: "apply_patch <<'EOF'\n *** Begin Patch\r\n*** Environment ID: e\n  *** Update File:  a.txt \n" +
				" ctx\n+new\n\n@@ f  \n@@\n-old\n*** End of File \n *** End Patch\nEOF\n",
			want: "*** Begin Patch\n*** Update File: a.txt\n@@\n ctx\n+new\n \n@@ f\n-old\n*** End of File\n*** End Patch\n",
		},
		{
			name: "agent zero body",
			text: "*** Begin Patch\n*** Update File: p\n@@ x\n+a\n-b\n c\n*** End Patch",
			want: "*** Begin Patch\n*** Update File: p\n@@ x\n-b\n+a\n c\n*** End Patch\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			got := Format(p)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Format(Parse(x)) mismatch (-want +got):\n%s", diff)
			}
			formatCheckRoundTrip(t, p)
		})
	}
}

// TestFormatRoundTripCases checks Parse(Format(p)) == p for every
// successful parse case of both dialects.
func TestFormatRoundTripCases(t *testing.T) {
	t.Parallel()
	for _, tc := range parseCodexCases {
		if tc.want != nil {
			formatCheckRoundTrip(t, tc.want)
		}
	}
	for _, tc := range parseAZCases {
		if tc.want != nil {
			formatCheckRoundTrip(t, tc.want)
		}
	}
}

// formatCheckRoundTrip checks that Parse(Format(p)) equals p but for
// Dialect and Line fields, that its Line fields number the lines of
// Format(p), and that Format is idempotent.
func formatCheckRoundTrip(t *testing.T, p *Patch) {
	t.Helper()
	text := Format(p)
	q, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(Format(p)) failed: %v\ntext:\n%s", err, text)
	}
	want := *p
	want.Dialect = Codex
	// Format writes each file's Path; an Agent Zero Header is not kept.
	want.Files = slices.Clone(p.Files)
	for i := range want.Files {
		want.Files[i].Header = ""
	}
	if diff := cmp.Diff(&want, q, formatIgnoreLines); diff != "" {
		t.Fatalf("Parse(Format(p)) mismatch (-want +got):\n%s\ntext:\n%s", diff, text)
	}
	again := Format(q)
	if again != text {
		t.Fatalf("Format not idempotent:\n%s\nthen:\n%s", text, again)
	}
	r, err := Parse(again)
	if err != nil {
		t.Fatalf("second Parse failed: %v", err)
	}
	if diff := cmp.Diff(q, r); diff != "" {
		t.Fatalf("canonical reparse mismatch (-want +got):\n%s", diff)
	}
	formatCheckLines(t, q, text)
}

// formatCheckLines checks that the Line fields of q, parsed from the
// canonical text, point at its headers and chunk starts.
func formatCheckLines(t *testing.T, q *Patch, text string) {
	t.Helper()
	lines := parseCodexLines(text[:len(text)-1])
	at := func(n int) string {
		if n < 1 || n > len(lines) {
			t.Fatalf("line %d out of range 1..%d", n, len(lines))
		}
		return lines[n-1]
	}
	for _, f := range q.Files {
		want := map[Kind]string{Add: codexAddMarker, Delete: codexDeleteMarker, Update: codexUpdateMarker}[f.Kind] + f.Path
		if got := at(f.Line); got != want {
			t.Errorf("FileOp.Line %d is %q, want %q", f.Line, got, want)
		}
		for _, c := range f.Chunks {
			if got := at(c.Line); len(got) < 2 || got[:2] != "@@" {
				t.Errorf("Chunk.Line %d is %q, want an @@ line", c.Line, got)
			}
		}
	}
}
