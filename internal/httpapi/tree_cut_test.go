package httpapi_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestPutTreeCutBetweenMembers: a tree upload whose chunked body ends
// cleanly where a member should begin (`tar c dir | curl -T -` whose tar
// died: curl ends the body at its stdin's end) is refused as cut (400,
// with a hint to send the whole archive) and leaves nothing: no new
// directory, no change to one merged into, no temp. It used to extract
// the members before the cut and answer 200 "Tree extracted", a partial
// tree that looked whole.
func TestPutTreeCutBetweenMembers(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	var cut int // where the third member begins
	for i, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if i == 2 {
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			cut = b.Len()
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, name[:1]+"\n\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	whole := b.Bytes()
	e := newXEnv(t, ops.Options{})
	e.put("merged/keep.txt", []byte("kept\n"))
	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		want       []string // the directory's names afterwards; nil: it does not exist
	}{
		{"new directory, cut", "fresh", whole[:cut], http.StatusBadRequest, nil},
		{"merge, cut", "merged", whole[:cut], http.StatusBadRequest, []string{"keep.txt"}},
		{"new directory, whole", "whole", whole, http.StatusOK, []string{"a.txt", "b.txt", "c.txt", "d.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A reader of unknown length: the body goes chunked.
			body := io.MultiReader(bytes.NewReader(tc.body))
			req, err := http.NewRequest(http.MethodPut, e.srv.URL+"/v2/fs/tree?path="+e.path(tc.path), body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var env struct {
				Data struct {
					ErrorType string `json:"error_type"`
				} `json:"data"`
				Hint string `json:"hint"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%+v)", resp.StatusCode, tc.status, env)
			}
			if tc.status != http.StatusOK && (env.Data.ErrorType != "bad_request" || !strings.Contains(env.Hint, "whole archive")) {
				t.Errorf("answer %+v, want bad_request with a hint to send the whole archive", env)
			}
			var got []string
			ents, err := os.ReadDir(e.path(tc.path))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for _, d := range ents {
				got = append(got, d.Name())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s afterwards (-want +got):\n%s", tc.path, diff)
			}
			if s := e.strays(); len(s) != 0 {
				t.Errorf("left behind: %v", s)
			}
		})
	}
}
