package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		"a.go":        "package a\n\nfunc HandleThing() {}\nvar x = ErrNotExist\n// errnotexist in a comment\n",
		"b.py":        "def handler():\n    return ERRNOTEXIST\n",
		"c.txt":       "alpha beta\nγάμμα δέλτα\nword_1 spaced\n\tindented\n",
		"crlf.txt":    "one\r\ntwo\r\n",
		"bin.dat":     "needle\x00binary\n",
		"noeol.txt":   "last line needle",
		"sub/d.go":    "package sub\nfunc OtherHandler(w int) {}\n",
		"multi.txt":   "start\nmiddle\nend\nstart again\n",
		"kelvin.txt":  "\u212aelvin\n",
		"nbsp.txt":    "x\u00a0y\n",
		"circled.txt": "\u24b6\U0001f130\n",
		".hidden.txt": "needle\n",
	})
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"literal", Options{Pattern: "ErrNotExist"}, []string{"a.go:4:var x = ErrNotExist"}},
		{"case-insensitive", Options{Pattern: "errnotexist", CaseInsensitive: true}, []string{
			"a.go:4:var x = ErrNotExist", "a.go:5:// errnotexist in a comment", "b.py:2:    return ERRNOTEXIST"}},
		{"regex with literal", Options{Pattern: `\w+Handler\(`}, []string{"sub/d.go:2:func OtherHandler(w int) {}"}},
		{"alternation", Options{Pattern: `HandleThing|handler`}, []string{"a.go:3:func HandleThing() {}", "b.py:1:def handler():"}},
		{"anchors", Options{Pattern: `^package \w+$`}, []string{"a.go:1:package a", "sub/d.go:1:package sub"}},
		{"no literal", Options{Pattern: `^\s+\w`}, []string{"b.py:2:    return ERRNOTEXIST", "c.txt:4:\tindented"}},
		{"empty lines", Options{Pattern: `^$`}, []string{"a.go:2:"}},
		{"unicode class", Options{Pattern: `\p{Greek}+`}, []string{"c.txt:2:γάμμα δέλτα"}},
		{"unicode word", Options{Pattern: `^\w+ \w+$`}, []string{"a.go:1:package a", "c.txt:1:alpha beta", "c.txt:2:γάμμα δέλτα",
			"c.txt:3:word_1 spaced", "multi.txt:4:start again", "sub/d.go:1:package sub"}},
		{"unicode space", Options{Pattern: `x\sy`}, []string{"nbsp.txt:1:x\u00a0y"}},
		{"alphabetic symbols are word characters", Options{Pattern: `^\w\w$`}, []string{"circled.txt:1:\u24b6\U0001f130"}},
		{"alphabetic symbols are not non-word characters", Options{Patterns: []string{`^\W\x{1f130}`, `[\W]\x{1f130}`}}, nil},
		{"text anchors match at lines", Options{Pattern: `(?-m)^\s+\w`}, []string{"b.py:2:    return ERRNOTEXIST", "c.txt:4:\tindented"}},
		{"text anchors match at empty lines", Options{Pattern: `(?-m:^$)`}, []string{"a.go:2:"}},
		{"word boundary", Options{Pattern: `\bbeta\b`}, []string{"c.txt:1:alpha beta"}},
		{"fixed strings", Options{Pattern: "(w int)", FixedStrings: true}, []string{"sub/d.go:2:func OtherHandler(w int) {}"}},
		{"crlf", Options{Pattern: "two$"}, nil},
		{"crlf content", Options{Pattern: "two"}, []string{"crlf.txt:2:two"}},
		{"no final newline", Options{Pattern: "needle"}, []string{"noeol.txt:1:last line needle"}},
		{"hidden", Options{Pattern: "needle", Hidden: true}, []string{".hidden.txt:1:needle", "noeol.txt:1:last line needle"}},
		{"kelvin folds to k", Options{Pattern: "kelvin", CaseInsensitive: true}, []string{"kelvin.txt:1:\u212aelvin"}},
		{"type", Options{Pattern: "ErrNotExist", CaseInsensitive: true, Types: []string{"py"}}, []string{"b.py:2:    return ERRNOTEXIST"}},
		{"include", Options{Pattern: "package", Include: []string{"sub/*"}}, []string{"sub/d.go:1:package sub"}},
		{"exclude", Options{Pattern: "package", Exclude: []string{"sub"}}, []string{"a.go:1:package a"}},
		{"several patterns", Options{Patterns: []string{"alpha", "indented"}}, []string{"c.txt:1:alpha beta", "c.txt:4:\tindented"}},
		{"multiline", Options{Pattern: `start.*?end`, Multiline: true}, []string{"multi.txt:1:start\nmiddle\nend"}},
		{"multiline overlapping matches", Options{Pattern: `rt\nm|ddle`, Multiline: true}, []string{"multi.txt:1:start\nmiddle"}},
		{"multiline line anchors", Options{Pattern: `^middle\nend$`, Multiline: true}, []string{"multi.txt:2:middle\nend"}},
		{"depth 1", Options{Pattern: "Handler", MaxDepth: 1}, nil},
		{"whole words", Options{Pattern: "beta|word|indented", WordRegexp: true}, []string{"c.txt:1:alpha beta", "c.txt:4:\tindented"}},
		{"whole words, Unicode", Options{Pattern: "δέλτα|γάμ", WordRegexp: true}, []string{"c.txt:2:γάμμα δέλτα"}},
		{"whole words, fixed", Options{Patterns: []string{"int)", "Other"}, FixedStrings: true, WordRegexp: true}, []string{"sub/d.go:2:func OtherHandler(w int) {}"}},
		{"whole words, several patterns", Options{Patterns: []string{"alph", "spaced"}, WordRegexp: true}, []string{"c.txt:3:word_1 spaced"}},
		{"whole words, multiline", Options{Pattern: `middle
end`, Multiline: true, WordRegexp: true}, []string{"multi.txt:2:middle\nend"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _ := grepLines(t, dir, ".", tt.opts)
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("nil", func(s []string) []string {
				if len(s) == 0 {
					return nil
				}
				return s
			})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGrepStats(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		"a.txt":   "x\n",
		"b.txt":   "y\n",
		"big.txt": strings.Repeat("x\n", 2000),
		"bin":     "x\x00",
	})
	_, res := grepLines(t, dir, ".", Options{Pattern: "x", MaxFileSize: 1000})
	want := Stats{FilesSearched: 2, FilesMatched: 1, FilesSkippedSize: 1, FilesSkippedBinary: 1}
	if diff := cmp.Diff(want, res.Stats); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGrepPaging(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	var all []string
	for f := range 5 {
		var b strings.Builder
		for l := 1; l <= 30; l++ {
			fmt.Fprintf(&b, "hit %d\n", l)
			all = append(all, fmt.Sprintf("f%d.txt:%d:hit %d", f, l, l))
		}
		files[fmt.Sprintf("f%d.txt", f)] = b.String()
	}
	dir := makeTree(t, files)
	tests := []struct {
		offset, max   int
		want          []string
		wantTruncated bool
	}{
		{0, 0, all, false},
		{0, 10, all[:10], true},
		{25, 10, all[25:35], true},
		{140, 10, all[140:], false},
		{145, 10, all[145:], false},
		{150, 10, nil, false},
		{0, 150, all, false},
		{0, 149, all[:149], true},
	}
	for _, tt := range tests {
		got, res := grepLines(t, dir, ".", Options{Pattern: "hit", Offset: tt.offset, MaxResults: tt.max, Workers: 3})
		if len(got) == 0 {
			got = nil
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || res.Truncated != tt.wantTruncated {
			t.Errorf("offset %d max %d: truncated %v (want %v) (-want +got):\n%s", tt.offset, tt.max, res.Truncated, tt.wantTruncated, diff)
		}
	}
}

func TestGrepContext(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{"f.txt": "1\n2\nhit 3\n4\nhit 5\n6\n7\n8\nhit 9\n"})
	q, err := Compile(Options{Pattern: "hit", ContextBefore: 2, ContextAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(context.Background(), openRoot(t, dir), ".", q)
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{
		{Path: "f.txt", LineNumber: 3, LineContent: "hit 3", ContextBefore: []string{"1", "2"}, ContextAfter: []string{"4"}},
		{Path: "f.txt", LineNumber: 5, LineContent: "hit 5", ContextBefore: []string{"hit 3", "4"}, ContextAfter: []string{"6"}},
		{Path: "f.txt", LineNumber: 9, LineContent: "hit 9", ContextBefore: []string{"7", "8"}},
	}
	if diff := cmp.Diff(want, res.Matches); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGrepMultilineHits: a match that starts on a line an earlier one
// touches widens that hit, and the context after it then follows the
// widened hit; an empty match right after a match that ends with a line
// break is a match (Go's FindAll skips it).
func TestGrepMultilineHits(t *testing.T) {
	t.Parallel()
	const text = "start\nmiddle\nend\nlast\n"
	tests := []struct {
		pat  string
		want []Match
	}{
		{`^s|t\nm`, []Match{{LineNumber: 1, LineContent: "start\nmiddle", ContextAfter: []string{"end"}}}},
		{`rt\nm|ddle`, []Match{{LineNumber: 1, LineContent: "start\nmiddle", ContextAfter: []string{"end"}}}},
		{`t\nmid|le\ne`, []Match{{LineNumber: 1, LineContent: "start\nmiddle\nend", ContextAfter: []string{"last"}}}},
		{`rt\n|^`, []Match{
			{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}},
			{LineNumber: 2, LineContent: "middle", ContextAfter: []string{"end"}},
			{LineNumber: 3, LineContent: "end", ContextAfter: []string{"last"}},
			{LineNumber: 4, LineContent: "last"},
		}},
		{`rt\n(?:x)?|d\n\b|la`, []Match{
			{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}},
			{LineNumber: 3, LineContent: "end", ContextAfter: []string{"last"}},
			{LineNumber: 4, LineContent: "last"},
		}},
		{`rt\n(?:mid)??`, []Match{{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}}}},
		{`rt\n|^(?:mid)??`, []Match{
			{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}},
			{LineNumber: 2, LineContent: "middle", ContextAfter: []string{"end"}},
			{LineNumber: 3, LineContent: "end", ContextAfter: []string{"last"}},
			{LineNumber: 4, LineContent: "last"},
		}},
		{`rt\n|^(?:mid)?x`, []Match{{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}}}},
		{`\A|t\n`, []Match{ // \A is not at the start of "middle"
			{LineNumber: 1, LineContent: "start", ContextAfter: []string{"middle"}},
			{LineNumber: 4, LineContent: "last"},
		}},
	}
	dir := makeTree(t, map[string]string{"f.txt": text})
	for _, tt := range tests {
		q, err := Compile(Options{Pattern: tt.pat, Multiline: true, ContextAfter: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Grep(context.Background(), openRoot(t, dir), "f.txt", q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, res.Matches); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.pat, diff)
		}
	}
}

// TestGrepChunked checks that files larger than the read buffer give the
// same matches, line numbers and context as the whole-buffer path,
// including lines longer than the buffer and matches at chunk borders.
func TestGrepChunked(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	var want []string
	line := 0
	add := func(s string, hit bool) {
		line++
		b.WriteString(s)
		b.WriteByte('\n')
		if hit {
			want = append(want, fmt.Sprintf("big.txt:%d:%s", line, s))
		}
	}
	for i := 0; b.Len() < 3*chunkSize; i++ {
		switch {
		case i%997 == 0:
			add(fmt.Sprintf("needle %d", i), true)
		case i == 5000:
			add("needle "+strings.Repeat("z", 2*chunkSize), true) // longer than the buffer
		default:
			add(fmt.Sprintf("filler line %d %s", i, strings.Repeat("y", i%120)), false)
		}
	}
	add("needle at the end", true)
	dir := makeTree(t, map[string]string{"big.txt": b.String()})
	for _, pat := range []string{"needle", "^needle", `needl[e]`} {
		got, _ := grepLines(t, dir, ".", Options{Pattern: pat})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", pat, diff)
		}
	}
	// Context across chunk borders equals the context from lines.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	q, _ := Compile(Options{Pattern: "needle", ContextBefore: 3, ContextAfter: 2})
	res, err := Grep(context.Background(), openRoot(t, dir), ".", q)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Matches {
		n := m.LineNumber - 1
		wantB := lines[max(0, n-3):n]
		wantA := lines[n+1 : min(len(lines), n+3)]
		if diff := cmp.Diff(wantB, m.ContextBefore, cmpEmpty); diff != "" {
			t.Errorf("line %d before (-want +got):\n%s", m.LineNumber, diff)
		}
		if diff := cmp.Diff(wantA, m.ContextAfter, cmpEmpty); diff != "" {
			t.Errorf("line %d after (-want +got):\n%s", m.LineNumber, diff)
		}
	}
	// The size limit applies to chunked files too.
	_, res2 := grepLines(t, dir, ".", Options{Pattern: "needle", MaxFileSize: chunkSize * 2})
	if res2.FilesSkippedSize != 1 || len(res2.Matches) != 0 {
		t.Errorf("size limit: %+v", res2.Stats)
	}
}

var cmpEmpty = cmp.Transformer("empty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestGrepLateNUL(t *testing.T) {
	t.Parallel()
	content := "match 1\n" + strings.Repeat("x\n", 5000) + "match 2 \x00\nmatch 3\n"
	dir := makeTree(t, map[string]string{"f": content, "g": content + strings.Repeat("y\n", chunkSize)})
	got, _ := grepLines(t, dir, ".", Options{Pattern: "match"})
	if diff := cmp.Diff([]string{"f:1:match 1", "g:1:match 1"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGrepBOM: a UTF-8 byte order mark at the start of a file is not
// part of line 1, for matching (^, \A, a multiline match from line 1) or
// in the text and context reported, as ripgrep reads it (and as read
// strips it); in small, chunked and multiline searches alike. Only the
// first mark is dropped, and the size limit counts it.
func TestGrepBOM(t *testing.T) {
	t.Parallel()
	const bom = "\ufeff"
	filler := strings.Repeat("filler line\n", 2*chunkSize/12)
	dir := makeTree(t, map[string]string{
		"small.txt":   bom + "top\nworld\n",
		"big.txt":     bom + "top\n" + filler + "top again\n",
		"crlf.txt":    bom + "top\r\nworld\r\n",
		"only.txt":    bom,
		"two.txt":     bom + bom + "top\n",
		"binary.txt":  bom + "top\x00\n",
		"context.txt": bom + "above\ntop\n",
	})
	tests := []struct {
		name  string
		start string
		opts  Options
		want  []Match
	}{
		{"anchored", "small.txt", Options{Pattern: "^top"}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"text", "small.txt", Options{Pattern: "top"}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"text anchor", "small.txt", Options{Pattern: `\Atop`}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"whole line", "small.txt", Options{Pattern: `^\w+$`}, []Match{{LineNumber: 1, LineContent: "top"}, {LineNumber: 2, LineContent: "world"}}},
		{"fixed", "small.txt", Options{Pattern: "top", FixedStrings: true}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"no literal", "small.txt", Options{Pattern: `^.{3}$`}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"the mark matches nothing", "small.txt", Options{Pattern: "\ufeff"}, nil},
		{"chunked", "big.txt", Options{Pattern: "^top"}, []Match{
			{LineNumber: 1, LineContent: "top"}, {LineNumber: 2*chunkSize/12 + 2, LineContent: "top again"}}},
		{"multiline", "small.txt", Options{Pattern: `^top\nworld$`, Multiline: true}, []Match{{LineNumber: 1, LineContent: "top\nworld"}}},
		{"multiline text anchor", "small.txt", Options{Pattern: `\Atop\n`, Multiline: true}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"multiline chunked", "big.txt", Options{Pattern: `\Atop\nfiller`, Multiline: true}, []Match{{LineNumber: 1, LineContent: "top\nfiller line"}}},
		{"crlf", "crlf.txt", Options{Pattern: `^top\r`}, []Match{{LineNumber: 1, LineContent: "top"}}},
		{"context", "context.txt", Options{Pattern: "^top", ContextBefore: 1}, []Match{{LineNumber: 2, LineContent: "top", ContextBefore: []string{"above"}}}},
		{"context after", "small.txt", Options{Pattern: "world", ContextBefore: 1}, []Match{{LineNumber: 2, LineContent: "world", ContextBefore: []string{"top"}}}},
		{"only a mark has no lines", "only.txt", Options{Pattern: "^"}, nil},
		{"a second mark is text", "two.txt", Options{Pattern: "^\ufefftop"}, []Match{{LineNumber: 1, LineContent: bom + "top"}}},
		{"binary after the mark", "binary.txt", Options{Pattern: "top"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := Compile(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Grep(context.Background(), openRoot(t, dir), tt.start, q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Matches, cmpEmptyMatches); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The mark counts toward the size limit: the file is 13 bytes.
	_, res := grepLines(t, dir, "small.txt", Options{Pattern: "top", MaxFileSize: 12})
	if res.FilesSkippedSize != 1 {
		t.Errorf("size limit: %+v", res.Stats)
	}
}

var cmpEmptyMatches = cmp.Transformer("emptyMatches", func(s []Match) []Match {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestGrepSingleFile(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{"d/.f.txt": "a\nneedle\n"})
	got, _ := grepLines(t, dir, "d/.f.txt", Options{Pattern: "needle"})
	if diff := cmp.Diff([]string{":2:needle"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts  Options
		field string
	}{
		{Options{Pattern: "(unclosed"}, "pattern"},
		{Options{Pattern: `a\nb`}, "pattern"},
		{Options{Pattern: "x", Types: []string{"nosuchtype"}}, "type"},
		{Options{Pattern: "x", ContextBefore: -1}, "context_before"},
		{Options{Pattern: "x", ContextAfter: -1}, "context_after"},
		{Options{Pattern: "x", ContextBefore: 100000}, "context_before"},
		{Options{Pattern: "x", ContextAfter: 1001}, "context_after"},
		{Options{Pattern: "x", Offset: -1}, "offset"},
		{Options{Pattern: "x", Include: []string{" "}}, "include"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.opts)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Field != tt.field {
			t.Errorf("Compile(%+v) = %v, want an InvalidError for %s", tt.opts, err, tt.field)
		}
		if strings.HasPrefix(tt.field, "context_") && (ie == nil || ie.Suggests != tt.field || !strings.Contains(ie.Hint, tt.field)) {
			t.Errorf("Compile(%+v): hint %+v does not name %s", tt.opts, ie, tt.field)
		}
	}
	if _, err := Compile(Options{Pattern: `a\nb`, Multiline: true}); err != nil {
		t.Errorf("multiline literal newline: %v", err)
	}
}

// TestLineModeMatchesStayInLine: in line mode the regexps never match
// '\n', even where the pattern's classes have it: the search over many
// lines at once would otherwise run on past the line end (to the end of
// the buffer for `\D+` in a text without digits, at every matching line:
// quadratic), and text anchors are line anchors.
func TestLineModeMatchesStayInLine(t *testing.T) {
	t.Parallel()
	for _, pat := range []string{`\D+`, `[^a]+`, `(?s:.)+`, `\s+`, `\W+`, `[\S\s]+`, `[^\S]+`, `(?s).+`, `[\n ]+`,
		`(?-m)^\W+$`, `\A\W+\z`, `é\s+`, `(?i)[^k]+`} {
		for _, fold := range []bool{false, true} {
			m, err := compileMatcher([]string{pat}, false, fold, false, false)
			if err != nil {
				t.Fatalf("%s: %v", pat, err)
			}
			for _, re := range []*regexp.Regexp{m.re, m.reUni} {
				if re == nil {
					continue
				}
				for _, text := range []string{"x\n\n!y\n", "é \n\u00a0\n"} {
					for _, loc := range re.FindAllStringIndex(text, -1) {
						if strings.Contains(text[loc[0]:loc[1]], "\n") {
							t.Errorf("%s (fold %v): %q matches %q", pat, fold, text, text[loc[0]:loc[1]])
						}
					}
				}
			}
		}
	}
}

// TestPatternHintNamesTheOption: the hint of a pattern that does not
// compile names fixed_strings (the HTTP and MCP field); a front end that
// spells the option otherwise words it with HintFor.
func TestPatternHintNamesTheOption(t *testing.T) {
	t.Parallel()
	_, err := Compile(Options{Pattern: "("})
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("Compile = %v, want an InvalidError", err)
	}
	if ie.Suggests != "fixed_strings" || !strings.Contains(ie.Hint, "use fixed_strings to search") {
		t.Errorf("Suggests %q, Hint %q: want fixed_strings", ie.Suggests, ie.Hint)
	}
	if h := ie.HintFor("-F"); !strings.Contains(h, "use -F to search") || strings.Contains(h, "fixed_strings") {
		t.Errorf("HintFor(-F) = %q", h)
	}
	plain := &InvalidError{Field: "type", Message: "m", Hint: "h"}
	if h := plain.HintFor("-F"); h != "h" {
		t.Errorf("HintFor on a hint that suggests no option = %q, want the hint", h)
	}
}

func TestCompilePatternErrorQuotesCaller(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		want string // the error must quote this, the caller's own text
	}{
		{"class rewritten", Options{Pattern: `\s+(`}, "`\\s+(`"},
		{"flags added", Options{Pattern: `a(`, CaseInsensitive: true, Multiline: true}, "`a(`"},
		{"second alternative", Options{Pattern: "ok", Patterns: []string{`\w[`}}, "`[`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.opts)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Field != "pattern" {
				t.Fatalf("Compile = %v, want an InvalidError for pattern", err)
			}
			if !strings.Contains(ie.Message, tt.want) || strings.Contains(ie.Message, "(?") || strings.Contains(ie.Message, `\t-\r`) {
				t.Errorf("message %q: want it to quote %s and nothing rewritten", ie.Message, tt.want)
			}
		})
	}
}

func TestGrepCancel(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "x\n"
	}
	dir := makeTree(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q, _ := Compile(Options{Pattern: "x"})
	if _, err := Grep(ctx, openRoot(t, dir), ".", q); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestGrepMissingStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q, _ := Compile(Options{Pattern: "x"})
	_, err := Grep(context.Background(), openRoot(t, dir), "nope", q)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want not exist", err)
	}
	_ = filepath.Join
}

// TestGrepLoneCRBreaksLines: a lone CR ends a line (old Mac text), as
// edit and read count lines, so a line number grep reports is the one a
// line edit must use; CRLF is one break. Also across chunk boundaries,
// where a CR at the end of a chunk may be the first half of a CRLF.
func TestGrepLoneCRBreaksLines(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	breaks := []string{"\r", "\n", "\r\n"}
	line := 1
	var want []Match
	for big.Len() < 3*chunkSize {
		text := fmt.Sprintf("line %d of filler text", line)
		if line%9973 == 0 {
			text = fmt.Sprintf("needle %d", line)
			want = append(want, Match{Path: "big.txt", LineNumber: line, LineContent: text})
		}
		big.WriteString(text)
		big.WriteString(breaks[line%3])
		line++
	}
	dir := makeTree(t, map[string]string{"small.txt": "a\rneedle b\rc\r\nneedle d\n", "big.txt": big.String()})
	want = append([]Match{
		{Path: "small.txt", LineNumber: 2, LineContent: "needle b"},
		{Path: "small.txt", LineNumber: 4, LineContent: "needle d"},
	}, want...)
	q, err := Compile(Options{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(context.Background(), openRoot(t, dir), ".", q)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Matches
	slices.SortFunc(got, func(a, b Match) int {
		if a.Path != b.Path {
			return strings.Compare(b.Path, a.Path) // small.txt first
		}
		return a.LineNumber - b.LineNumber
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBinaryStart: a binary file is skipped, unless it is the start and
// SearchBinaryStart is set: then it is searched with its NULs read as
// line breaks, and its matches say it is binary and where its first NUL
// is (rg's "binary file matches (found "\0" byte around offset N)").
func TestBinaryStart(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{"bin.dat": "\ufefffoo\x00binary\nfoo\n", "d/bin.dat": "foo\x00\n"})
	tests := []struct {
		start   string
		opts    Options
		count   int
		binary  bool
		offset  int64
		skipped int
	}{
		{"bin.dat", Options{Pattern: "foo"}, 0, false, 0, 1},
		// The offset is in the text after the byte order mark, as rg's.
		{"bin.dat", Options{Pattern: "foo", SearchBinaryStart: true}, 2, true, 3, 0},
		{"bin.dat", Options{Pattern: "^binary$", SearchBinaryStart: true}, 1, true, 3, 0},
		{"d", Options{Pattern: "foo", SearchBinaryStart: true}, 0, false, 0, 1},
	}
	for _, tt := range tests {
		q, err := Compile(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		type seen struct {
			count  int
			binary bool
			offset int64
		}
		var got []seen
		st, err := Stream(t.Context(), openRoot(t, dir), tt.start, q, func(fm *FileMatches) seen {
			return seen{fm.Count(), fm.Binary, fm.BinaryOffset}
		}, func(_ string, v seen) error {
			got = append(got, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if len(got) > 0 {
			n = got[0].count
			if got[0].binary != tt.binary || got[0].offset != tt.offset {
				t.Errorf("%s %+v: Binary %v at %d, want %v at %d", tt.start, tt.opts, got[0].binary, got[0].offset, tt.binary, tt.offset)
			}
		}
		if n != tt.count {
			t.Errorf("%s %+v: %d matches, want %d", tt.start, tt.opts, n, tt.count)
		}
		if st.FilesSkippedBinary != tt.skipped {
			t.Errorf("%s %+v: %+v, want %d skipped as binary", tt.start, tt.opts, st, tt.skipped)
		}
	}
}

// TestFilesMatchedTruncated: FilesMatched counts the files the returned
// matches are in, not the file whose match only told that more exist.
func TestFilesMatchedTruncated(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 5 {
		files["f"+itoa(i)+".txt"] = "needle\nneedle\n"
	}
	dir := makeTree(t, files)
	tests := []struct {
		opts  Options
		files int
	}{
		{Options{Pattern: "needle", MaxResults: 2}, 1},
		{Options{Pattern: "needle", MaxResults: 3}, 2},
		{Options{Pattern: "needle", MaxResults: 2, Offset: 4}, 1},
		{Options{Pattern: "needle", MaxResults: 3, Offset: 3}, 2},
		{Options{Pattern: "needle"}, 5},
	}
	for _, tt := range tests {
		_, res := grepLines(t, dir, ".", tt.opts)
		if res.FilesMatched != tt.files {
			t.Errorf("%+v: FilesMatched %d, want %d (%d matches)", tt.opts, res.FilesMatched, tt.files, len(res.Matches))
		}
	}
}

// TestGrepMultilineLimitStopsEarly: a multiline search with a per-file
// match limit (Offset + MaxResults + 1) stops looking for matches once
// it has them, as a line search does, rather than finding every match of
// the file first: max_results 1 on a 1 MiB file of words found its
// ~350,000 matches (a second and ~90 MB). Counted in allocations, one
// per match found, not in time; not parallel, so that no other test's
// allocations are counted.
func TestGrepMultilineLimitStopsEarly(t *testing.T) {
	dir := makeTree(t, map[string]string{"f.txt": strings.Repeat("ab cd ef\n", 100_000)})
	root := openRoot(t, dir)
	tests := []struct {
		pat         string
		max, offset int
	}{
		{`\w`, 1, 0},
		{`\w+\n`, 10, 5},
		{`(?:cd|ef\n)`, 500, 0},
	}
	for _, tt := range tests {
		q, err := Compile(Options{Pattern: tt.pat, Multiline: true, MaxResults: tt.max, Offset: tt.offset})
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		allocs := testing.AllocsPerRun(1, func() {
			if res, err = Grep(context.Background(), root, ".", q); err != nil {
				t.Fatal(err)
			}
		})
		if len(res.Matches) != tt.max || !res.Truncated {
			t.Errorf("%s: %d matches, truncated %v; want %d, truncated", tt.pat, len(res.Matches), res.Truncated, tt.max)
		}
		if allocs > 20_000 {
			t.Errorf("%s, max %d offset %d: %.0f allocations; the search found far more matches than it needed", tt.pat, tt.max, tt.offset, allocs)
		}
	}
}

// TestGrepMultilinePagingWindows: in multiline mode, where a hit can
// gather several matches (and an empty match after a line break is one
// of its own), every page of a search is the window of the whole list
// at its offset, whatever the per-file limit the page sets.
func TestGrepMultilinePagingWindows(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("start\nmiddle\nend\nlast\n", 20)
	dir := makeTree(t, map[string]string{"f.txt": text, "g.txt": text})
	for _, pat := range []string{`rt\n|^`, `t\nmid|le\ne`, `rt\n(?:x)?|d\n\b|la`, `\w`, `(?s)e.`, `\n`} {
		all, _ := grepLines(t, dir, ".", Options{Pattern: pat, Multiline: true})
		for _, page := range []struct{ offset, max int }{{0, 1}, {1, 1}, {3, 2}, {7, 5}, {0, 33}, {40, 3}, {len(all) - 2, 5}} {
			got, res := grepLines(t, dir, ".", Options{Pattern: pat, Multiline: true, Offset: page.offset, MaxResults: page.max})
			want := all[min(page.offset, len(all)):min(page.offset+page.max, len(all))]
			if diff := cmp.Diff(want, got); diff != "" || res.Truncated != (page.offset+page.max < len(all)) {
				t.Errorf("%s offset %d max %d: truncated %v (-want +got):\n%s", pat, page.offset, page.max, res.Truncated, diff)
			}
		}
	}
}
