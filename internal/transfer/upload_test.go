package transfer

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// uploadForm builds a multipart body; a part whose name is "file" (or
// "file=NAME", to choose its file name) is a file part.
func uploadForm(parts ...[2]string) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if name, ok := strings.CutPrefix(p[0], "file"); ok {
			// "file" is named f.bin; "file=NAME" is named NAME.
			if name == "" {
				name = "f.bin"
			}
			w, _ := mw.CreateFormFile("file", strings.TrimPrefix(name, "="))
			io.WriteString(w, p[1])
		} else {
			mw.WriteField(p[0], p[1])
		}
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

func TestBaseName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a.txt": "a.txt", "dir/a.txt": "a.txt", "/abs/a.txt": "a.txt", `C:\Users\me\a.txt`: "a.txt", `mixed/dir\a b`: "a b",
		"": "", ".": "", "..": "", "dir/..": "", `dir\.`: "", "dir/": "", `dir\`: "", ".hidden": ".hidden", "...": "...",
	} {
		if got := BaseName(in); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadUploadOrder posts forms over loopback to a handler that records
// what ReadUpload hands its store: a path known before the file streams
// the part itself (no copy); a file before its path comes from a spool,
// which is gone afterwards.
func TestReadUploadOrder(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("0123456789", 300<<10) // 3 MiB: several buffers
	tests := []struct {
		name     string
		query    string
		parts    [][2]string
		wantPath string
		spooled  bool
		wantErr  string // "form:<field>" for a FormError, else an fserr code
	}{
		{name: "path first", parts: [][2]string{{"path", "a.txt"}, {"file", content}}, wantPath: "a.txt"},
		{name: "query", query: "q.txt", parts: [][2]string{{"file", content}}, wantPath: "q.txt"},
		{name: "query, same path after", query: "q.txt", parts: [][2]string{{"file", content}, {"path", "./q.txt"}}, wantPath: "q.txt"},
		{name: "file first", parts: [][2]string{{"other", "x"}, {"file", content}, {"path", " b.txt "}}, wantPath: "b.txt", spooled: true},
		{name: "a second file", parts: [][2]string{{"file", content}, {"path", "b.txt"}, {"file", "second"}}, wantErr: "bad_request"},
		{name: "file first, empty path", parts: [][2]string{{"file", content}, {"path", ""}}, wantPath: "", spooled: true},
		{name: "file first, no path", parts: [][2]string{{"file", content}}, wantPath: "", spooled: true},
		{name: "no path, no filename", parts: [][2]string{{"file=", content}}, wantErr: "form:path"},
		{name: "no path, filename ..", parts: [][2]string{{"file=dir/..", content}}, wantErr: "form:path"},
		{name: "no path, filename ends in a separator", parts: [][2]string{{`file=C:\dir\`, content}}, wantErr: "form:path"},
		{name: "no file", parts: [][2]string{{"path", "a.txt"}}, wantErr: "form:file"},
		{name: "query conflict after", query: "q.txt", parts: [][2]string{{"file", content}, {"path", "b.txt"}}, wantErr: "bad_request"},
		{name: "query conflict before", query: "q.txt", parts: [][2]string{{"path", "b.txt"}, {"file", content}}, wantErr: "bad_request"},
		{name: "spooled conflict", parts: [][2]string{{"file", content}, {"path", "a.txt"}, {"path", "b.txt"}}, wantErr: "bad_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// stored is what the store saw, passed back from the
			// handler's goroutine.
			type stored struct {
				path, name string
				got        []byte
				spooled    bool
				complete   bool // the store read to a clean end
			}
			seen := make(chan stored, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var st stored
				err := ReadUpload(r, r.URL.Query().Get("path"), dir, func(path, filename string, file io.Reader) error {
					st.path, st.name = path, filename
					_, st.spooled = file.(*drainSpool)
					var err error
					st.got, err = io.ReadAll(file)
					st.complete = err == nil
					return err
				})
				seen <- st
				var fe *FormError
				switch {
				case errors.As(err, &fe):
					io.WriteString(w, "form:"+fe.Field)
				case err != nil:
					io.WriteString(w, string(fserr.CodeOf(err)))
				}
			}))
			t.Cleanup(srv.Close)
			body, ct := uploadForm(tc.parts...)
			resp, err := http.Post(srv.URL+"?path="+tc.query, ct, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(out) != tc.wantErr {
				t.Fatalf("result %q, want %q", out, tc.wantErr)
			}
			st := <-seen
			if tc.wantErr == "" {
				if st.path != tc.wantPath || st.name != "f.bin" || string(st.got) != content || !st.complete {
					t.Errorf("store got path %q name %q, %d bytes (complete %v)", st.path, st.name, len(st.got), st.complete)
				}
				if st.spooled != tc.spooled {
					t.Errorf("spooled %v, want %v", st.spooled, tc.spooled)
				}
			} else if st.complete {
				t.Errorf("store read a clean end on a failed upload")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("spool directory not empty: %v", ents)
			}
		})
	}
}

// TestOpenSpool: with O_TMPFILE and without (the named-then-unlinked
// fallback) the spool holds data and never shows in its directory.
func TestOpenSpool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		flag int
	}{{"tmpfile", oTmpfile}, {"unlinked", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sp, err := openSpool(dir, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("spool visible: %v", ents)
			}
			if _, err := io.WriteString(sp, "held"); err != nil {
				t.Fatal(err)
			}
			sp.Seek(0, io.SeekStart)
			if b, _ := io.ReadAll(sp); string(b) != "held" {
				t.Errorf("read back %q", b)
			}
		})
	}
	if _, err := openSpool(t.TempDir()+"/missing", oTmpfile); err == nil {
		t.Error("spool in a missing directory opened")
	}
}

// TestOpenSpoolSweepsStale: a crash between the fallback's create and
// unlink leaves a named spool in the state directory, in no temp log;
// the next fallback spool removes it once it is stale, and nothing else.
func TestOpenSpoolSweepsStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-2 * staleSpool)
	files := map[string]bool{ // name → kept
		spoolPrefix + "STALE.part": false,
		spoolPrefix + "FRESH.part": true, // maybe another upload's, mid-create
		"journal.part":             true,
		spoolPrefix + "x.log":      true,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != spoolPrefix+"FRESH.part" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	sp, err := openSpool(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp.Close()
	for name, kept := range files {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}

// BenchmarkReadUpload parses a 64 MiB upload held in memory into a
// discarding store: the form's cost alone. Path first streams the part;
// file first adds the spool's write and read back.
func BenchmarkReadUpload(b *testing.B) {
	const size = 64 << 20
	content := strings.Repeat("x", size)
	for _, bc := range []struct {
		name  string
		parts [][2]string
	}{
		{"path-first", [][2]string{{"path", "a.bin"}, {"file", content}}},
		{"file-first", [][2]string{{"file", content}, {"path", "a.bin"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body, ct := uploadForm(bc.parts...)
			dir := b.TempDir()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/upload", bytes.NewReader(body))
				r.Header.Set("Content-Type", ct)
				err := ReadUpload(r, "", dir, func(_, _ string, file io.Reader) error {
					_, err := io.Copy(io.Discard, file)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
