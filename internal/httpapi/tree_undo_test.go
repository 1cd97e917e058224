package httpapi_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestTreeMergeUndo: PUT /v2/fs/tree over an existing directory records
// every file it replaces or adds, and POST /v2/fs/undo reverts each: the
// replaced file gets its content back, an added one goes. (The merge used
// to record nothing: undo answered 409 and the old content was lost.)
func TestTreeMergeUndo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path    string
		want    string // content after the undo; "" absent
		deleted bool
	}{
		{path: "m/x.txt", want: "old1"},
		{path: "m/added.txt", deleted: true},
		{path: "m/new/deep.txt", deleted: true},
	}
	archive := makeTar(t, []tarEntry{{Name: "x.txt", Type: tar.TypeReg, Body: "new1"},
		{Name: "added.txt", Type: tar.TypeReg, Body: "added"}, {Name: "new/deep.txt", Type: tar.TypeReg, Body: "deep"}})
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			e.put("m/x.txt", []byte("old1"))
			res, err := e.c.PutTree(bg, client.TreeQuery{Path: "m"}, bytes.NewReader(archive))
			if err != nil || res.Mode != "merge" || res.UndoFiles != 3 || res.UndoRecorded != nil {
				t.Fatalf("merge: %+v %v; want mode merge, 3 undo records", res, err)
			}
			u, err := e.c.Undo(bg, tc.path)
			if err != nil {
				t.Fatalf("undo %s: %v", tc.path, err)
			}
			if u.Deleted != tc.deleted || u.Undone != "tree" {
				t.Errorf("undo %s: %+v", tc.path, u)
			}
			b, err := os.ReadFile(e.path(tc.path))
			switch {
			case tc.want == "" && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("%s after undo: %q %v, want it gone", tc.path, b, err)
			case tc.want != "" && string(b) != tc.want:
				t.Errorf("%s after undo: %q %v, want %q", tc.path, b, err, tc.want)
			}
			if len(e.strays()) != 0 {
				t.Errorf("strays: %v", e.strays())
			}
		})
	}
}
