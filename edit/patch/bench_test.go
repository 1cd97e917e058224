package patch

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fsplane/fsplane/edit"
)

// bigSource returns ~100 MB of Go-like source, tab-indented, LF, with a
// unique function in the middle whose lines carry trailing spaces and
// typographic quotes, so every tier of the block ladder can be reached.
var bigSource = sync.OnceValue(func() []byte {
	const target = 100 << 20
	var b bytes.Buffer
	b.Grow(target + 4096)
	i := 0
	for b.Len() < target/2 {
		writeFunc(&b, i)
		i++
	}
	b.WriteString("func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n")
	b.WriteString("\tfor _, it := range items {\n\t\ttotal += it.Weight * 3  \n\t}\n")
	b.WriteString("\tlog.Printf(\u201ctotal is %d\u201d, total)\n\treturn total, nil\n}\n\n")
	for b.Len() < target {
		writeFunc(&b, i)
		i++
	}
	return b.Bytes()
})

func writeFunc(b *bytes.Buffer, i int) {
	fmt.Fprintf(b, "// handler%d serves the request and returns the response or an error.\n", i)
	fmt.Fprintf(b, "func handler%d(w http.ResponseWriter, r *http.Request) error {\n", i)
	fmt.Fprintf(b, "\tif err := r.ParseForm(); err != nil {\n\t\treturn fmt.Errorf(\"parse: %%w\", err)\n\t}\n")
	fmt.Fprintf(b, "\tfor k, v := range r.Form {\n\t\tw.Header().Set(k, strings.Join(v, \",\"))\n\t}\n\treturn nil\n}\n\n")
}

type oneFile []byte

func (oneFile) Canonical(p string) (string, error)  { return p, nil }
func (f oneFile) Read(string) ([]byte, bool, error) { return f, true, nil }

// BenchmarkBuild100MB plans one-hunk patches against a 100 MB file: hits
// at several tiers, a hunk behind an anchor, and a miss (which runs every
// tier over the whole file).
func BenchmarkBuild100MB(b *testing.B) {
	content := bigSource()
	cases := []struct {
		name, hunk, tier string
	}{
		{"exact", "@@\n func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n-\tfor _, it := range items {\n+\tfor _, item := range items {\n", "exact"},
		{"trailing_whitespace", "@@\n \tfor _, it := range items {\n-\t\ttotal += it.Weight * 3\n+\t\ttotal += it.Weight * 4\n", "trailing_whitespace"},
		{"indentation", "@@\n for _, it := range items {\n-\ttotal += it.Weight * 3\n+\ttotal += it.Weight * 5\n", "indentation"},
		{"punctuation", "@@\n-\tlog.Printf(\"total is %d\", total)\n+\tlog.Printf(\"sum is %d\", total)\n", "punctuation"},
		{"anchor", "@@ func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n-\treturn total, nil\n+\treturn total, err\n", "exact"},
		{"miss", "@@\n func noSuchFunction() {\n-\treturn\n+\treturn nil\n", ""},
	}
	for _, c := range cases {
		p, err := Parse("*** Begin Patch\n*** Update File: big.go\n" + c.hunk + "*** End Patch")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				plan, err := Build(p, oneFile(content))
				if c.tier == "" {
					var e *edit.Error
					if !errors.As(err, &e) || e.Code != edit.CodeNoMatch {
						b.Fatalf("err = %v, want no_match", err)
					}
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				if got := plan.Hunks[0].Tier; got != c.tier {
					b.Fatalf("tier %s, want %s", got, c.tier)
				}
			}
		})
	}
}
