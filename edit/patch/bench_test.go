package patch

import (
	"errors"
	"testing"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/gosource"
)

var bigSource = gosource.Big

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
