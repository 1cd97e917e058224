package ops

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestListTruncatedKeepsShallowerEntries checks that a recursive listing
// cut at its limit keeps every shallower entry before any deeper one: a
// big subdirectory sorted early must not push the later top-level entries
// out, and the result says how deep it is whole.
func TestListTruncatedKeepsShallowerEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := map[string]string{
		"b.txt":     "b\n",
		"c/x.txt":   "x\n",
		"z.txt":     "z\n",
		"a/q/deep1": "1\n",
	}
	for i := range 6 {
		files[fmt.Sprintf("a/f%d", i)] = "f\n"
	}
	e, root := newEngine(t, files, Options{})
	cases := []struct {
		name     string
		req      ListRequest
		want     []string
		whole    int
		truncate bool
	}{
		{
			name: "top level fits, second level cut",
			req:  ListRequest{Path: ".", Recursive: true, MaxDepth: 3, Limit: 7},
			// Depth 1 is a, b.txt, c, z.txt; then the first three of
			// depth 2 in listing order, each under its parent.
			want:     []string{"a", "a/f0", "a/f1", "a/f2", "b.txt", "c", "z.txt"},
			whole:    1,
			truncate: true,
		},
		{
			name:     "unlimited depth",
			req:      ListRequest{Path: ".", Recursive: true, Limit: 12},
			want:     []string{"a", "a/f0", "a/f1", "a/f2", "a/f3", "a/f4", "a/f5", "a/q", "b.txt", "c", "c/x.txt", "z.txt"},
			whole:    2,
			truncate: true,
		},
		{
			name:     "top level alone is cut",
			req:      ListRequest{Path: ".", Recursive: true, MaxDepth: 2, Limit: 3},
			want:     []string{"a", "b.txt", "c"},
			whole:    0,
			truncate: true,
		},
		{
			name: "everything fits",
			req:  ListRequest{Path: "c", Recursive: true, Limit: 1},
			want: []string{"c/x.txt"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := e.List(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			rels := []string{}
			for _, en := range got.Entries {
				rel, _ := filepath.Rel(root, en.Path)
				rels = append(rels, filepath.ToSlash(rel))
			}
			if diff := cmp.Diff(tc.want, rels); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got.Truncated != tc.truncate || got.WholeDepth != tc.whole {
				t.Errorf("truncated %v whole depth %d, want %v %d", got.Truncated, got.WholeDepth, tc.truncate, tc.whole)
			}
		})
	}
}
