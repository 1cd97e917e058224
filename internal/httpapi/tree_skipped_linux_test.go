package httpapi_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
)

// skippedEntry is one Fsplane-Skipped trailer, or one entry of the
// archive's FSPLANE.skipped note.
type skippedEntry struct {
	Path, Code, Message string
}

// TestGetTreeSkipsUnreadable: GET /v2/fs/tree of a directory holding a
// file the server may not read (mode 000; the server runs as nobody when
// the tests run as root) used to cut the stream at that file: the
// client got a truncated archive and none of the files after it. Now the
// archive is whole (every other file, end-of-archive blocks), its last
// member notes what was left out, and so do the response's trailers:
// Fsplane-Skipped-Count and one Fsplane-Skipped per entry, with
// permission_denied. With nothing left out there is neither.
func TestGetTreeSkipsUnreadable(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "locked.txt": "secret\n", "sub/b.txt": "b\n", "sub/ünreadable": "x\n", "z.txt": "z\n"}
	for _, tc := range []struct {
		name      string
		locked    []string
		wantFiles []string
	}{
		{"none unreadable", nil, []string{"a.txt", "locked.txt", "sub/b.txt", "sub/ünreadable", "z.txt"}},
		{"one unreadable", []string{"locked.txt"}, []string{"a.txt", "sub/b.txt", "sub/ünreadable", "z.txt"}},
		{"two unreadable", []string{"locked.txt", "sub/ünreadable"}, []string{"a.txt", "sub/b.txt", "z.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !testenv.AsNobody(t) {
				return
			}
			e := newXEnv(t, ops.Options{})
			dir := e.path("t")
			testenv.WriteTree(t, dir, files)
			for _, l := range tc.locked {
				if err := os.Chmod(filepath.Join(dir, l), 0); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := http.Get(e.srv.URL + "/v2/fs/tree?path=" + url.QueryEscape(dir))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("the tree download was cut: %v (%d bytes)", err, len(body))
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			var got []string
			var note []skippedEntry
			tr := tar.NewReader(bytes.NewReader(body))
			for {
				hdr, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("reading the archive: %v", err)
				}
				if hdr.Typeflag == tar.TypeReg {
					got = append(got, hdr.Name)
				}
				if _, listed, ok, err := client.SkippedInTree(hdr); ok {
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range listed {
						note = append(note, skippedEntry{s.Path, s.Code, s.Message})
					}
				}
			}
			if n := len(body); n < 1024 || !bytes.Equal(body[n-1024:], make([]byte, 1024)) {
				t.Error("the archive lacks its end-of-archive blocks")
			}
			if diff := cmp.Diff(tc.wantFiles, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			var want []skippedEntry
			for _, l := range tc.locked {
				want = append(want, skippedEntry{l, "permission_denied", "permission denied"})
			}
			if diff := cmp.Diff(want, note); diff != "" {
				t.Errorf("the archive's note (-want +got):\n%s", diff)
			}
			var trailers []skippedEntry
			for _, v := range resp.Trailer.Values("Fsplane-Skipped") {
				if strings.ContainsFunc(v, func(r rune) bool { return r >= 0x80 }) {
					t.Errorf("trailer %q is not ASCII", v)
				}
				var s skippedEntry
				if err := json.Unmarshal([]byte(v), &s); err != nil {
					t.Fatalf("trailer %q: %v", v, err)
				}
				trailers = append(trailers, s)
			}
			if diff := cmp.Diff(want, trailers); diff != "" {
				t.Errorf("Fsplane-Skipped trailers (-want +got):\n%s", diff)
			}
			wantCount := ""
			if len(want) > 0 {
				wantCount = strconv.Itoa(len(want))
			}
			if c := resp.Trailer.Get("Fsplane-Skipped-Count"); c != wantCount {
				t.Errorf("Fsplane-Skipped-Count %q, want %q", c, wantCount)
			}
		})
	}
}
