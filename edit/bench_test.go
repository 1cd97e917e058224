package edit

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// bigSource returns ~100 MB of Go-like source, tab-indented, LF, with a
// unique marker function in the middle.
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

func BenchmarkReplace100MB(b *testing.B) {
	content := bigSource()
	cases := []struct {
		name, old, new string
		tier           Tier
	}{
		{"exact", "func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n\tfor _, it := range items {\n", "func uniqueMarker(ctx context.Context, items []Item) (total int, err error) {\n\tfor _, item := range items {\n", TierExact},
		{"line_ending", "\tfor _, it := range items {\r\n\t\ttotal += it.Weight * 3  \r\n", "\tfor _, it := range items {\r\n\t\ttotal += it.Weight * 4\r\n", TierLineEnding},
		{"trailing_whitespace", "\tfor _, it := range items {\n\t\ttotal += it.Weight * 3\n\t}\n", "\tfor _, it := range items {\n\t\ttotal += it.Weight * 5\n\t}\n", TierTrailingSpace},
		{"trimmed", "\n\n   total += it.Weight * 3  \n\n", "total += it.Weight * 6", TierTrimmed},
		{"indentation", "for _, it := range items {\n\ttotal += it.Weight * 3\n}", "for _, it := range items {\n\ttotal += it.Weight * 7\n}", TierIndentation},
		{"punctuation", "log.Printf(\"total is %d\", total)", "log.Printf(\"sum is %d\", total)", TierPunctuation},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				r, err := Replace(content, c.old, c.new, ReplaceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if r.Tier != c.tier {
					b.Fatalf("tier %v, want %v", r.Tier, c.tier)
				}
			}
		})
	}
}

func BenchmarkLocateRareByte(b *testing.B) {
	content := bigSource()
	needle := strings.Repeat(" the ", 4) + "uniqueMarker("
	b.Run("indexAll", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			indexAll(content, []byte(needle))
		}
	})
	b.Run("bytes.Index", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			bytes.Index(content, []byte(needle))
		}
	})
}
