package httpapi_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
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

// TestTreeMergeUndoPartial: a merge the undo journal's limits record only
// in part says so in its hint, naming how many of its files undo can
// revert; before, undo_files stood alone with hint null.
func TestTreeMergeUndoPartial(t *testing.T) {
	t.Parallel()
	e := newEnvUndo(t, map[string]string{"m/": ""}, workspace.UndoLimits{MaxEntries: 2}, httpapi.Options{})
	archive := makeTar(t, []tarEntry{{Name: "a.txt", Type: tar.TypeReg, Body: "a"},
		{Name: "b.txt", Type: tar.TypeReg, Body: "b"}, {Name: "c.txt", Type: tar.TypeReg, Body: "c"}})
	req, err := http.NewRequest(http.MethodPut, e.srv.URL+"/v2/fs/tree?path=m", bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data client.TreeUploadResult
		Hint string
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if env.Data.UndoFiles != 2 || !strings.Contains(env.Hint, "undo can revert 2 of the 3 files this merge added or replaced") {
		t.Errorf("undo_files %d, hint %q; want 2 and a hint saying 2 of 3", env.Data.UndoFiles, env.Hint)
	}
}
