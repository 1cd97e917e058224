package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/testenv"
)

// TestRipgrepDifferential compares the engine with the real ripgrep on
// random patterns, texts and options (case folding, fixed strings,
// whole words, multiline, several patterns, context, CRLF and lone CR, no final
// newline, NUL bytes, a leading UTF-8 BOM (which both drop), files larger
// than the read buffer): the lines
// reported as matches and as context, and their text, must be the same,
// and paging must be a window on the whole list.
//
// The generator leaves out the differences doc.go documents: \b and \B
// only meet ASCII text, and the text is valid UTF-8. A lone CR, which
// ends a line here, is given to rg as the LF it stands for, and a file
// with a NUL past the first 8 KiB as the lines before it (see check).
// It also steers clear of ripgrep 13's own quirks: two assertions in a
// row (it never matches `$^` or `\B^`), \A in multiline mode (it
// restarts its search after each match), an inline flag with several
// patterns (it joins them with a bare "|"), classes that match nothing
// (an error in rg), and Unicode characters newer than its tables.
//
// Some cases add symbolic links to the tree (to a file and a directory
// inside it, to a file and a directory outside it, dangling, a loop):
// neither follows them by default, so they must find nothing through
// them; and the files listed are rg --files'.
//
// FSPLANE_RG_ITERS and FSPLANE_RG_SEED run more cases, or others, while
// hunting (FSPLANE_RG_BIG=n makes one case in n use big files,
// FSPLANE_RG_DUMP keeps the files, FSPLANE_RG_TRACE names a file
// that holds the case being run); the default is a few seconds' worth
// with a fixed seed.
func TestRipgrepDifferential(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	if testing.Short() {
		t.Skip("short")
	}
	iters, seed := 200, uint64(1)
	if testenv.Race {
		iters = 50
	}
	if s := os.Getenv("FSPLANE_RG_ITERS"); s != "" {
		iters, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("FSPLANE_RG_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	big := 150 // one case in big has files larger than the read buffer
	if s := os.Getenv("FSPLANE_RG_BIG"); s != "" {
		big, _ = strconv.Atoi(s)
	}
	base := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	// Whole words (-w) are drawn apart, so the other choices of a seed
	// stay what they were before -w was added. Not in multiline mode,
	// where a match that ends with a line break reports one line more
	// than rg does (see Options.WordRegexp). Links come from a stream of
	// their own too.
	wordRng := rand.New(rand.NewPCG(seed, 0x3057))
	lrng := rand.New(rand.NewPCG(seed, 0x1175))
	fails := 0
	for i := range iters {
		c := genRgCase(rng, i%big == big/2)
		c.word = wordRng.IntN(3) == 0 && !c.multiline
		c.links = genRgLinks(lrng)
		if f := os.Getenv("FSPLANE_RG_TRACE"); f != "" {
			os.WriteFile(f, []byte(fmt.Sprintf("case %d: %s", i, c)), 0o644)
		}
		if msg := c.check(t, rg, base, rng); msg != "" {
			t.Errorf("case %d: %s\n%s", i, c, msg)
			if fails++; fails >= 5 {
				t.Fatal("too many failures")
			}
		}
	}
}

type rgCase struct {
	patterns               []string
	fixed, fold, multiline bool
	word                   bool
	before, after          int
	files                  []string
	workers                int
	links                  []rgLink
}

// rgLink is a symbolic link added to a case's tree.
type rgLink struct {
	name, target string
}

// rgSubCopy is where a case with links keeps a copy of f0.txt, in the
// directory the link "ld" points to.
const rgSubCopy = "sub/f0.txt"

// genRgLinks picks the links of a case: none in two cases out of three.
func genRgLinks(rng *rand.Rand) []rgLink {
	if rng.IntN(3) != 0 {
		return nil
	}
	all := []rgLink{
		{"lf.txt", "f0.txt"},                  // a file inside
		{"ld", "sub"},                         // a directory inside
		{"sub/up", ".."},                      // a loop
		{"lo.txt", "../out/o.txt"},            // a file outside
		{"lod", "../out"},                     // a directory outside
		{"dangling.txt", "nowhere"},           // nothing
		{"la.txt", "ABS/o.txt"},               // a file outside, absolute
		{"lsub.txt", "sub/../sub/f0.txt"},     // a file inside, through ..
		{"zz", "sub/up/sub/up/sub/up/lf.txt"}, // a chain of links
	}
	var out []rgLink
	for _, l := range all {
		if rng.IntN(3) != 0 {
			out = append(out, l)
		}
	}
	return out
}

func (c *rgCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "patterns %q fixed=%v fold=%v word=%v multiline=%v -B%d -A%d", c.patterns, c.fixed, c.fold, c.word, c.multiline, c.before, c.after)
	for _, l := range c.links {
		fmt.Fprintf(&b, " %s->%s", l.name, l.target)
	}
	for i, f := range c.files {
		if len(f) > 2000 {
			fmt.Fprintf(&b, "\n  f%d: %d bytes, starting %q", i, len(f), f[:200])
			continue
		}
		fmt.Fprintf(&b, "\n  f%d: %q", i, f)
	}
	return b.String()
}

// lineRec is one reported line: a match (or part of one) or context.
type lineRec struct {
	match  bool
	text   string
	unsure bool // rg's, not compared
}

type report map[string]map[int]lineRec

// check runs the case through both and returns what differs.
func (c *rgCase) check(t *testing.T, rg, base string, rng *rand.Rand) string {
	t.Helper()
	dir, err := os.MkdirTemp(base, "c")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if d := os.Getenv("FSPLANE_RG_DUMP"); d != "" {
		// Keep the files of each case, to look at a failure.
		defer os.Rename(dir, filepath.Join(d, filepath.Base(dir)))
	}
	eng := filepath.Join(dir, "eng")
	ref := filepath.Join(dir, "ref")
	for _, d := range []string{eng, ref} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// paths holds, for each file written, which case file it is.
	paths := map[string]int{}
	for i := range c.files {
		paths[fmt.Sprintf("f%d.txt", i)] = i
	}
	if len(c.links) > 0 {
		paths[rgSubCopy] = 0
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		// What a link that leaves the tree leads to: text both would
		// match, were the link followed.
		if err := os.WriteFile(filepath.Join(out, "o.txt"), []byte(c.files[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, i := range paths {
		f := c.files[i]
		for _, d := range []string{eng, ref} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, name)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(eng, name), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		// A lone CR ends a line here: rg gets the LF it stands for. A
		// NUL past the first 8 KiB ends the search at the line before
		// it: rg gets the lines before. (What rg does with a NUL depends
		// on where its buffers happen to be.)
		lf := loneCRsToLF([]byte(f))
		if k := bodyNUL(f); k >= binaryProbe {
			k += len(f) - len(bodyOf(f))
			lf = lf[:bytes.LastIndexByte(lf[:k], '\n')+1]
		}
		if err := os.WriteFile(filepath.Join(ref, name), lf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range c.links {
		target := strings.Replace(l.target, "ABS", filepath.Join(dir, "out"), 1)
		for _, d := range []string{eng, ref} {
			if err := os.Symlink(target, filepath.Join(d, l.name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, rgErr := c.runRg(rg, ref)
	for _, lines := range want {
		// rg 13 gives the context of an empty match after the last line
		// (in multiline mode) but not the match: drop context that
		// belongs to no match.
		for n, r := range lines {
			near := false
			for k := n - c.after; k <= n+c.before && !near; k++ {
				near = lines[k].match
			}
			if !r.match && !near {
				delete(lines, n)
			}
		}
	}
	opts := Options{Pattern: c.patterns[0], Patterns: c.patterns[1:], FixedStrings: c.fixed,
		CaseInsensitive: c.fold, WordRegexp: c.word, Multiline: c.multiline, ContextBefore: c.before, ContextAfter: c.after, Workers: c.workers}
	q, err := Compile(opts)
	if err != nil || rgErr != nil {
		if rgErr != nil && strings.Contains(rgErr.Error(), "empty character classes are not allowed") {
			return "" // RE2 allows a class that matches nothing ([^\w\W])
		}
		if rgErr != nil && strings.Contains(rgErr.Error(), "panicked") {
			return "" // rg 13 -U with context can panic
		}
		if errors.Is(rgErr, errRgTimeout) {
			t.Logf("rg timed out on %s", c)
			return ""
		}
		if (err == nil) != (rgErr == nil) {
			return fmt.Sprintf("compile: engine %v, rg %v", err, rgErr)
		}
		return ""
	}
	root, err := os.OpenRoot(eng)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	res, err := Grep(context.Background(), root, ".", q)
	if err != nil {
		return fmt.Sprintf("engine: %v", err)
	}
	got, dup := engineReport(res.Matches)
	if dup != "" {
		return dup
	}
	for name, i := range paths {
		if k := bodyNUL(c.files[i]); k >= 0 && k < binaryProbe {
			// Binary: skipped here. (ripgrep 13 is erratic, it may
			// report the first lines.)
			if got[name] != nil {
				return fmt.Sprintf("%s: binary file reported", name)
			}
			delete(want, name)
		}
	}
	if msg := diffReports(want, got); msg != "" {
		return msg
	}
	if len(c.links) > 0 {
		if msg := diffFiles(t, rg, ref, root); msg != "" {
			return msg
		}
	}
	// Paging is a window on the full list.
	if len(res.Matches) > 0 {
		opts.Offset = rng.IntN(len(res.Matches) + 1)
		opts.MaxResults = 1 + rng.IntN(len(res.Matches)+1)
		q, _ := Compile(opts)
		page, err := Grep(context.Background(), root, ".", q)
		if err != nil {
			return fmt.Sprintf("engine page: %v", err)
		}
		all := res.Matches[opts.Offset:]
		trunc := len(all) > opts.MaxResults
		all = all[:min(len(all), opts.MaxResults)]
		if !matchesEqual(all, page.Matches) || trunc != page.Truncated {
			return fmt.Sprintf("page offset %d max %d: got %d matches truncated %v, want %d truncated %v",
				opts.Offset, opts.MaxResults, len(page.Matches), page.Truncated, len(all), trunc)
		}
	}
	return ""
}

// diffFiles compares the files Files lists under root with rg --files in
// ref (the same tree).
func diffFiles(t *testing.T, rg, ref string, root *os.Root) string {
	t.Helper()
	cmd := exec.Command(rg, "--no-config", "--files", "--no-ignore", "--hidden", "--no-messages")
	cmd.Dir = ref
	out, err := cmd.Output()
	if err != nil {
		return fmt.Sprintf("rg --files: %v", err)
	}
	want := strings.Fields(string(out))
	slices.Sort(want)
	var got []string
	if _, err := Files(context.Background(), root, ".", Options{Hidden: true}, func(p string) error {
		got = append(got, p)
		return nil
	}); err != nil {
		return fmt.Sprintf("Files: %v", err)
	}
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Sprintf("files: rg %q, engine %q", want, got)
	}
	return ""
}

func matchesEqual(a, b []Match) bool {
	return slices.EqualFunc(a, b, func(x, y Match) bool {
		return x.Path == y.Path && x.LineNumber == y.LineNumber && x.LineContent == y.LineContent &&
			slices.Equal(x.ContextBefore, y.ContextBefore) && slices.Equal(x.ContextAfter, y.ContextAfter)
	})
}

var errRgTimeout = errors.New("rg timed out")

func (c *rgCase) runRg(rg, dir string) (report, error) {
	// Not --sort path: with it, rg 13 reports no match in a file with a
	// NUL anywhere (see check). And --no-mmap: a file rg maps is one
	// buffer.
	args := []string{"--no-config", "--json", "--no-ignore", "--hidden", "--no-messages", "--no-mmap"}
	if c.fixed {
		args = append(args, "-F")
	}
	if c.fold {
		args = append(args, "-i")
	}
	if c.word {
		args = append(args, "-w")
	}
	if c.multiline {
		args = append(args, "-U", "--multiline-dotall")
	}
	if c.before > 0 {
		args = append(args, "-B", strconv.Itoa(c.before))
	}
	if c.after > 0 {
		args = append(args, "-A", strconv.Itoa(c.after))
	}
	for _, p := range c.patterns {
		args = append(args, "-e", p)
	}
	args = append(args, ".")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if ctx.Err() != nil {
		return nil, errRgTimeout
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	rep := report{}
	type data struct {
		Text  *string `json:"text"`
		Bytes *string `json:"bytes"`
	}
	decode := func(d data) string {
		if d.Text != nil {
			return *d.Text
		}
		if d.Bytes != nil {
			b, _ := base64.StdEncoding.DecodeString(*d.Bytes)
			return string(b)
		}
		return ""
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var msg struct {
			Type string `json:"type"`
			Data struct {
				Path       data `json:"path"`
				Lines      data `json:"lines"`
				LineNumber int  `json:"line_number"`
				Submatches []struct {
					Start int `json:"start"`
					End   int `json:"end"`
				} `json:"submatches"`
			} `json:"data"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, err
		}
		if msg.Type != "match" && msg.Type != "context" {
			continue
		}
		path := strings.TrimPrefix(decode(msg.Data.Path), "./")
		lines := decode(msg.Data.Lines)
		// The lines a match touches. rg 13 -U -i at times gives a line
		// after a match as part of it (`^\+\D?Ⓐ` on "+Ⓐ+\nⓐ+"): such a
		// line is not compared.
		touched := map[int]bool{}
		for _, sm := range msg.Data.Submatches {
			first := strings.Count(lines[:sm.Start], "\n")
			last := first
			if sm.End > sm.Start {
				last = strings.Count(lines[:sm.End-1], "\n")
			}
			for k := first; k <= last; k++ {
				touched[k] = true
			}
		}
		for i, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
			n := msg.Data.LineNumber + i
			if rep[path] == nil {
				rep[path] = map[int]lineRec{}
			}
			if old, ok := rep[path][n]; ok && old.match {
				continue
			}
			rec := lineRec{match: msg.Type == "match", text: strings.TrimSuffix(l, "\r")}
			rec.unsure = rec.match && !touched[i]
			rep[path][n] = rec
		}
	}
	return rep, nil
}

// engineReport turns matches into reported lines. It also reports a line
// given as (part of) two matches.
func engineReport(ms []Match) (report, string) {
	rep := report{}
	for _, m := range ms {
		r := rep[m.Path]
		if r == nil {
			r = map[int]lineRec{}
			rep[m.Path] = r
		}
		lines := strings.Split(m.LineContent, "\n")
		for i, l := range lines {
			n := m.LineNumber + i
			if old, ok := r[n]; ok && old.match {
				return nil, fmt.Sprintf("%s:%d reported in two matches", m.Path, n)
			}
			r[n] = lineRec{match: true, text: l}
		}
		ctx := func(n int, l string) {
			if old, ok := r[n]; ok && old.match {
				if old.text != l {
					r[n] = lineRec{match: true, text: old.text + " ≠ context " + l}
				}
				return
			}
			r[n] = lineRec{text: l}
		}
		for i, l := range m.ContextBefore {
			ctx(m.LineNumber-len(m.ContextBefore)+i, l)
		}
		for i, l := range m.ContextAfter {
			ctx(m.LineNumber+len(lines)+i, l)
		}
	}
	return rep, ""
}

// sortedUnion is the keys of a and b, sorted, each once.
func sortedUnion[K cmp.Ordered, V any](a, b map[K]V) []K {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

func diffReports(want, got report) string {
	var b strings.Builder
	for _, p := range sortedUnion(want, got) {
		w, g := want[p], got[p]
		for _, n := range sortedUnion(w, g) {
			wr, wok := w[n]
			gr, gok := g[n]
			if wr.unsure {
				continue
			}
			if wok != gok || wr != gr {
				fmt.Fprintf(&b, "  %s:%d: rg %s, engine %s\n", p, n, describe(wr, wok), describe(gr, gok))
			}
		}
	}
	return b.String()
}

func describe(r lineRec, ok bool) string {
	switch {
	case !ok:
		return "-"
	case r.match:
		return fmt.Sprintf("match %q", r.text)
	default:
		return fmt.Sprintf("context %q", r.text)
	}
}

// bodyOf is f without a leading UTF-8 BOM: the text both search.
func bodyOf(f string) string { return strings.TrimPrefix(f, "\ufeff") }

// bodyNUL is the offset of the first NUL in f's body (see bodyOf), or -1:
// the binary probe looks at the body's first 8 KiB.
func bodyNUL(f string) int { return strings.IndexByte(bodyOf(f), 0) }

// loneCRsToLF turns each CR not followed by LF into LF.
func loneCRsToLF(b []byte) []byte {
	out := slices.Clone(b)
	for i, c := range out {
		if c == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

// The generator. Characters are chosen to exercise Unicode classes and
// case folding: NBSP, NEL and LINE SEPARATOR are \s; KELVIN SIGN folds to
// k, LONG S to s, the sigmas to each other, ẞ to ß; Ⓐ is alphabetic
// (\w) but not a letter; ١ is a decimal digit, Ⅻ a letter number.
var (
	rgTextChars = []string{"a", "b", "c", "k", "s", "x", "A", "B", "K", "S", "X", "0", "1", "9", "_", " ", " ", "\t",
		"-", ".", "(", ")", "[", "]", "*", "+", "?", "|", "\\", "^", "$", "{", "}", "é", "É", "ß", "ẞ", "\u00a0",
		"\u0085", "\u2028", "\u2003", "\u212a", "ſ", "σ", "ς", "Σ", "Ⓐ", "ⓐ", "١", "Ⅻ", "ⅻ", "\u0301", "\u200d",
		"\v", "\f", "日", "\U0001F600", "İ", "ı", "i"}
	rgASCIIChars = []string{"a", "b", "c", "k", "s", "x", "A", "B", "K", "S", "X", "0", "1", "9", "_", " ", " ", "\t",
		"-", ".", "(", ")", "*", "\v", "\f"}
	// rgLitAtoms are pattern atoms matching one character; the second
	// string, when set, is a text that matches it.
	rgLitAtoms = [][2]string{{"a", ""}, {"b", ""}, {"c", ""}, {"k", ""}, {"s", ""}, {"x", ""}, {"A", ""}, {"K", ""},
		{"S", ""}, {"0", ""}, {"1", ""}, {"_", ""}, {" ", ""}, {"-", ""}, {`\.`, "."}, {`\(`, "("}, {`\)`, ")"},
		{`\*`, "*"}, {`\+`, "+"}, {`\?`, "?"}, {`\[`, "["}, {`\]`, "]"}, {`\{`, "{"}, {`\}`, "}"}, {`\|`, "|"},
		{`\\`, `\`}, {`\^`, "^"}, {`\$`, "$"}, {`\t`, "\t"}, {`\v`, "\v"}, {`\f`, "\f"}, {`\x41`, "A"},
		{`\x{e9}`, "é"}, {`\x{212a}`, "\u212a"}, {`\x{a0}`, "\u00a0"}, {"é", ""}, {"É", ""}, {"ß", ""}, {"ẞ", ""},
		{"\u00a0", ""}, {"\u0085", ""}, {"\u2028", ""}, {"\u212a", ""}, {"ſ", ""}, {"σ", ""}, {"ς", ""}, {"Σ", ""},
		{"Ⓐ", ""}, {"١", ""}, {"Ⅻ", ""}, {"日", ""}, {"İ", ""}, {"ı", ""}}
	rgClassItems = []string{"a", "b", "k", "s", "x", "K", "S", "0", "_", " ", "é", "ß", "σ", "Σ", "\u212a", "ſ",
		"a-c", "A-Z", "0-9", "x-z", "α-ω", `\w`, `\W`, `\d`, `\D`, `\s`, `\S`, "[:alpha:]", "[:digit:]", "[:space:]",
		"[:upper:]", "[:lower:]", "[:^alpha:]", "[:word:]", "[:punct:]", `\p{L}`, `\P{L}`, `\pN`, `\p{Greek}`,
		`\p{Lu}`, `\x{a0}`, `\x{2028}`, `\t`, `\v`, `\.`, `\-`, `\]`, `\\`, "(", ")", "*", "+", "?", "|", "$", "^x"}
	rgEscapes = []string{`\w`, `\W`, `\d`, `\D`, `\s`, `\S`, `\p{L}`, `\pL`, `\P{L}`, `\p{Lu}`, `\p{Ll}`, `\pN`,
		`\p{Nd}`, `\p{Greek}`, `\p{Latin}`, `\p{Zs}`, `\PN`, `.`}
)

type patGen struct {
	rng       *rand.Rand
	multiline bool
	hints     []string // texts the pattern's literals match
	assert    int      // the assertions used: 1 anchors, 2 \b and \B (the text must be ASCII)
	lastZW    bool     // the last atom was an assertion
}

func (g *patGen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *patGen) atom(depth int) string {
	last := g.lastZW
	g.lastZW = false
	r := g.rng.IntN(100)
	if r >= 66 && r < 72 && last {
		r = 60
	}
	switch {
	case r < 28:
		a := rgLitAtoms[g.rng.IntN(len(rgLitAtoms))]
		h := a[1]
		if h == "" {
			h = a[0]
		}
		g.hints = append(g.hints, h)
		return a[0]
	case r < 36:
		// A run of literal characters.
		var b, h strings.Builder
		for range 2 + g.rng.IntN(3) {
			c := g.pick(rgTextChars[:16])
			b.WriteString(c)
			h.WriteString(c)
		}
		g.hints = append(g.hints, h.String())
		return b.String()
	case r < 52:
		return g.pick(rgEscapes)
	case r < 66:
		return g.class()
	case r < 72:
		// One kind of assertion per pattern, never two in a row: rg 13
		// gets `$^` and `\B^` wrong.
		anchors := []string{"^", "$", `\A`, `\z`, "(?-m:^)", "(?-m:$)"}
		if g.multiline {
			// rg -U restarts its search at the line after a match,
			// where \A matches again.
			anchors = anchors[:2]
		}
		if g.assert == 0 {
			g.assert = 1 + g.rng.IntN(3)/2
		}
		g.lastZW = true
		if g.assert == 2 {
			return g.pick([]string{`\b`, `\B`})
		}
		return g.pick(anchors)
	case r < 74 && g.multiline:
		g.hints = append(g.hints, "\n")
		return g.pick([]string{`\n`, `[\n]`, `\r\n`, `(?-s:.)`})
	case r < 76:
		return g.pick([]string{`(?s:.)`, "[^a]", `[^\n]`})
	}
	if depth <= 0 {
		return g.pick(rgEscapes)
	}
	g.lastZW = last // what the group starts with follows the assertion
	switch g.rng.IntN(4) {
	case 0:
		return "(" + g.expr(depth-1) + ")"
	case 1:
		return "(?:" + g.expr(depth-1) + ")"
	case 2:
		return "(?i:" + g.expr(depth-1) + ")"
	default:
		return "(?-i:" + g.expr(depth-1) + ")"
	}
}

func (g *patGen) class() string {
	var b strings.Builder
	b.WriteByte('[')
	if g.rng.IntN(3) == 0 {
		b.WriteByte('^')
	}
	if g.rng.IntN(12) == 0 {
		b.WriteByte(']')
	}
	for range 1 + g.rng.IntN(3) {
		it := g.pick(rgClassItems)
		b.WriteString(it)
		if len([]rune(it)) == 1 {
			g.hints = append(g.hints, it)
		}
	}
	if g.rng.IntN(10) == 0 {
		b.WriteByte('-')
	}
	b.WriteByte(']')
	return b.String()
}

func (g *patGen) repeated(depth int) string {
	a := g.atom(depth)
	if strings.HasPrefix(a, `\b`) || strings.HasPrefix(a, `\B`) || a == "^" || a == "$" || strings.HasPrefix(a, `\A`) ||
		strings.HasPrefix(a, `\z`) || strings.HasPrefix(a, "(?-m") {
		return a
	}
	if len([]rune(a)) > 1 && !strings.HasPrefix(a, `\`) && !strings.HasPrefix(a, "[") && !strings.HasPrefix(a, "(") {
		a = "(?:" + a + ")"
	}
	if g.rng.IntN(3) != 0 {
		return a
	}
	ops := []string{"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "{3}"}
	op := g.pick(ops)
	if g.rng.IntN(4) == 0 {
		op += "?"
	}
	return a + op
}

func (g *patGen) expr(depth int) string {
	var alts []string
	start := g.lastZW
	for range 1 + g.rng.IntN(3)*g.rng.IntN(2) {
		g.lastZW = start
		var b strings.Builder
		for range 1 + g.rng.IntN(4) {
			b.WriteString(g.repeated(depth))
		}
		alts = append(alts, b.String())
	}
	return strings.Join(alts, "|")
}

func genRgCase(rng *rand.Rand, big bool) *rgCase {
	c := &rgCase{workers: 1 + rng.IntN(3)}
	c.fold = rng.IntN(3) == 0
	c.multiline = rng.IntN(5) == 0
	c.fixed = rng.IntN(8) == 0
	if rng.IntN(4) == 0 {
		c.before = rng.IntN(3)
		c.after = rng.IntN(3)
	}
	g := &patGen{rng: rng, multiline: c.multiline}
	npat := 1
	if rng.IntN(6) == 0 {
		npat = 2
	}
	for range npat {
		if c.fixed {
			var b strings.Builder
			for range 1 + rng.IntN(4) {
				b.WriteString(g.pick(rgTextChars))
			}
			g.hints = append(g.hints, b.String())
			c.patterns = append(c.patterns, b.String())
			continue
		}
		p := g.expr(2)
		if !c.fold && npat == 1 && rng.IntN(8) == 0 {
			// (Not with -e, which rg 13 joins with a bare "|": the
			// flag would reach the other patterns.)
			p = "(?i)" + p
		}
		c.patterns = append(c.patterns, p)
	}
	chars := rgTextChars
	if g.assert == 2 {
		chars = rgASCIIChars
		hints := g.hints[:0]
		for _, h := range g.hints {
			if isASCII([]byte(h)) {
				hints = append(hints, h)
			}
		}
		g.hints = hints
	}
	nfiles := 1 + rng.IntN(3)
	if big {
		nfiles = 1 + rng.IntN(2)
	}
	for range nfiles {
		c.files = append(c.files, genText(rng, chars, g.hints, big))
	}
	return c
}

func genText(rng *rand.Rand, chars, hints []string, big bool) string {
	var b strings.Builder
	nlines := rng.IntN(8)
	size, nulAt := 0, -1
	if big {
		// Past the read buffer, at times with a line longer than it, at
		// times with a NUL past the first 8 KiB.
		nlines = 1 << 30
		size = chunkSize/2 + rng.IntN(chunkSize)
		if rng.IntN(3) == 0 {
			nulAt = binaryProbe + rng.IntN(size)
		}
	}
	breaks := []string{"\n", "\n", "\n", "\n", "\r\n", "\r"}
	if rng.IntN(8) == 0 {
		b.WriteString("\ufeff") // a UTF-8 BOM: not part of line 1
	}
	for l := 0; l < nlines; l++ {
		if big && b.Len() > size {
			break
		}
		n := rng.IntN(7)
		if big && rng.IntN(100000) == 0 {
			n = chunkSize / 4
		}
		for range n {
			if len(hints) > 0 && rng.IntN(3) == 0 {
				b.WriteString(hints[rng.IntN(len(hints))])
				continue
			}
			b.WriteString(chars[rng.IntN(len(chars))])
		}
		if !big && rng.IntN(40) == 0 || nulAt >= 0 && b.Len() > nulAt {
			// Binary: both skip a file with a NUL this early.
			b.WriteByte(0)
			nulAt = -1
		}
		if l < nlines-1 || rng.IntN(3) != 0 {
			b.WriteString(breaks[rng.IntN(len(breaks))])
		}
	}
	return b.String()
}
