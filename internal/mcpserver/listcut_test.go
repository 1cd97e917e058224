package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestListCutKeepsTopLevel checks that a deep listing cut at
// listMaxEntries shows the whole top level before a big subdirectory's
// contents, and that its header and note say the listing is cut.
func TestListCutKeepsTopLevel(t *testing.T) {
	t.Parallel()
	files := map[string]string{"b.txt": "b\n", "c/x": "x\n"}
	for i := range listMaxEntries + 5 {
		files[fmt.Sprintf("a/f%04d", i)] = ""
	}
	e := newEnv(t, files, envOptions{})
	cases := []struct {
		name  string
		depth int
		wants []string
		lacks []string
		whole float64
	}{
		{
			name:  "depth 2",
			depth: 2,
			wants: []string{
				".: 2 directories, 1998 files (depth 2), cut at 2000 entries: more exist\n",
				"a/\na/f0000  0 bytes\n",
				"a/f1996  0 bytes\nb.txt  2 bytes\nc/\n",
				"[Truncated at 2000 entries: every entry down to depth 1 is shown, then the first 1997 at depth 2; more exist. List a subdirectory, or use a smaller depth or glob.]\n",
			},
			lacks: []string{"a/f1997", "c/x"},
			whole: 1,
		},
		{
			name:  "depth 3",
			depth: 3,
			wants: []string{
				"b.txt  2 bytes\nc/\n",
				"then the first 1997 at depth 2; more exist.",
			},
			whole: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e.on(t)
			r := e.ok("list", args("path", ".", "depth", tc.depth))
			wantContains(t, r.text, tc.wants...)
			for _, l := range tc.lacks {
				if strings.Contains(r.text, l) {
					t.Errorf("output has %q", l)
				}
			}
			if r.out["truncated"] != true || r.out["whole_depth"] != tc.whole || len(r.out["entries"].([]any)) != listMaxEntries {
				t.Errorf("truncated %v whole_depth %v entries %d", r.out["truncated"], r.out["whole_depth"], len(r.out["entries"].([]any)))
			}
		})
	}
}

// TestListCutNote checks the note for each shape of cut listing,
// including one from a host that cuts depth first and reports no
// WholeDepth, and a Windows host's paths.
func TestListCutNote(t *testing.T) {
	t.Parallel()
	entries := func(dir string, paths ...string) []ops.Entry {
		out := make([]ops.Entry, len(paths))
		for i, p := range paths {
			out[i] = ops.Entry{Path: dir + p}
		}
		return out
	}
	cases := []struct {
		name string
		r    ops.ListResult
		want string
	}{
		{
			name: "top level cut",
			r:    ops.ListResult{Path: "/w", Entries: entries("/w", "/a", "/b")},
			want: "these are the directory's first 2 entries by name; more exist.",
		},
		{
			name: "next level partly shown",
			r:    ops.ListResult{Path: "/w", WholeDepth: 1, Entries: entries("/w", "/a", "/a/x", "/b")},
			want: "every entry down to depth 1 is shown, then the first 1 at depth 2; more exist.",
		},
		{
			name: "next level not shown",
			r:    ops.ListResult{Path: "/w", WholeDepth: 2, Entries: entries("/w", "/a", "/a/x", "/b")},
			want: "every entry down to depth 2 is shown; deeper ones are not.",
		},
		{
			name: "host cutting depth first",
			r:    ops.ListResult{Path: "/w", Entries: entries("/w", "/a", "/a/x", "/a/x/y")},
			want: "[Truncated at 2000 entries; more exist. List a subdirectory",
		},
		{
			name: "backslash in a unix name",
			r:    ops.ListResult{Path: "/w", Entries: entries("/w", `/a\b`, `/c\d`)},
			want: "first 2 entries by name",
		},
		{
			name: "windows host",
			r:    ops.ListResult{Path: `C:\w`, WholeDepth: 1, Entries: entries(`C:\w`, `\a`, `\a\x`)},
			want: "then the first 1 at depth 2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := listCutNote(&tc.r); !strings.Contains(got, tc.want) {
				t.Errorf("note %q lacks %q", got, tc.want)
			}
		})
	}
}
