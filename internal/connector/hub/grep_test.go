package hub

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestRemoteGrepAcrossVersions: a grep result decodes whatever the
// host's version: one older than files cut at a NUL byte leaves them
// zero, one that has them hands them on, and one newer than the hub may
// add fields the hub does not know.
func TestRemoteGrepAcrossVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		result string
		want   ops.GrepResult
	}{
		{name: "older host", result: `{"Path":"/h","Pattern":"x","Matches":[],"FilesSearched":3,"FilesSkippedBinary":1}`,
			want: ops.GrepResult{Path: "/h", Pattern: "x", Matches: []ops.GrepMatch{}, FilesSearched: 3, FilesSkippedBinary: 1}},
		{name: "this version", result: `{"Path":"/h","Pattern":"x","Matches":[],"FilesSearched":3,"FilesCutBinary":2,` +
			`"CutBinary":[{"Path":"/h/a.log","Line":812,"Offset":50000}]}`,
			want: ops.GrepResult{Path: "/h", Pattern: "x", Matches: []ops.GrepMatch{}, FilesSearched: 3, FilesCutBinary: 2,
				CutBinary: []ops.BinaryCut{{Path: "/h/a.log", Line: 812, Offset: 50_000}}}},
		{name: "newer host", result: `{"Path":"/h","Pattern":"x","Matches":[],"FilesSearched":3,"FilesCutBinary":1,` +
			`"CutBinary":[{"Path":"/h/a.log","Line":812,"Offset":50000,"Why":"later"}],"FilesSomethingElse":4}`,
			want: ops.GrepResult{Path: "/h", Pattern: "x", Matches: []ops.GrepMatch{}, FilesSearched: 3, FilesCutBinary: 1,
				CutBinary: []ops.BinaryCut{{Path: "/h/a.log", Line: 812, Offset: 50_000}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, srv := newHub(t, Options{})
			dial(t, srv, "laptop", proto.ReadOnly, func(*proto.Op) *proto.Result {
				return &proto.Result{OK: true, Result: []byte(tt.result)}
			})
			r, err := h.Remote("laptop")
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Grep(context.Background(), ops.GrepRequest{Path: ".", Pattern: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
