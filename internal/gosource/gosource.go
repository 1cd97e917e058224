// Package gosource generates a large Go-like source file for the
// benchmarks of edit and edit/patch, so both measure on the same text.
package gosource

import (
	"bytes"
	"fmt"
	"sync"
)

// Big returns ~100 MB of Go-like source, tab-indented, LF, with a unique
// function uniqueMarker in the middle whose lines carry trailing spaces
// and typographic quotes, so every tier of the matching ladder can be
// reached. It is built once; callers must not modify it.
var Big = sync.OnceValue(func() []byte {
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
