package transfer

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
)

// pseudoFiles are files whose stat size is not their content's: procfs
// says 0 and cannot seek to its end, sysfs says a page (4096) and gives
// a few bytes. fixed: two reads give the same bytes.
var pseudoFiles = []struct {
	path  string
	fixed bool
}{
	{"/proc/self/status", false},
	{"/sys/kernel/mm/transparent_hugepage/enabled", true},
}

// TestServePseudoFile: a generated file is served with a Content-Length
// and ranges that describe the bytes sent, under both policies and for
// HEAD, instead of ServeContent's "seeker can't seek" (procfs) or a
// Content-Length of 4096 over 23 bytes (sysfs).
func TestServePseudoFile(t *testing.T) {
	t.Parallel()
	for _, pf := range pseudoFiles {
		for _, tc := range []struct {
			method, rng string
			policy      Policy
		}{
			{"GET", "", Ignore},
			{"GET", "", Abort},
			{"HEAD", "", Ignore},
			{"GET", "bytes=2-5", Ignore},
		} {
			t.Run(pf.path+" "+tc.method+" "+tc.rng+" "+string(tc.policy), func(t *testing.T) {
				t.Parallel()
				want, err := os.ReadFile(pf.path)
				if err != nil {
					t.Skip(err)
				}
				s := openSource(t, pf.path, NewVersionCache(8))
				whole := httptest.NewRecorder()
				if started, err := s.Serve(whole, httptest.NewRequest("GET", "/", nil), Ignore); !started || err != nil || whole.Code != 200 {
					t.Fatalf("whole: started %v, err %v, status %d %q", started, err, whole.Code, whole.Body)
				}
				all := whole.Body.Bytes()
				if pf.fixed && !bytes.Equal(all, want) {
					t.Fatalf("served %q, file holds %q", all, want)
				}
				if s.Size() != int64(len(all)) || whole.Header().Get("Content-Length") != strconv.Itoa(len(all)) {
					t.Fatalf("Size %d, Content-Length %s, %d bytes sent", s.Size(), whole.Header().Get("Content-Length"), len(all))
				}
				r := httptest.NewRequest(tc.method, "/", nil)
				if tc.rng != "" {
					r.Header.Set("Range", tc.rng)
				}
				rec := httptest.NewRecorder()
				if started, err := s.Serve(rec, r, tc.policy); !started || err != nil {
					t.Fatalf("started %v, err %v", started, err)
				}
				wantBody, wantLen, status := all, len(all), 200
				switch {
				case tc.method == "HEAD":
					wantBody = nil
				case tc.rng != "":
					wantBody, wantLen, status = all[2:6], 4, 206
				}
				if rec.Code != status || !bytes.Equal(rec.Body.Bytes(), wantBody) || rec.Header().Get("Content-Length") != strconv.Itoa(wantLen) {
					t.Fatalf("status %d, Content-Length %s, body %q; want %d %d %q", rec.Code, rec.Header().Get("Content-Length"), rec.Body, status, wantLen, wantBody)
				}
				if rec.Header().Get("ETag") == "" || rec.Header().Get("Last-Modified") != "" {
					t.Fatalf("validators %v", rec.Header())
				}
				got, err := io.ReadAll(s.Section(1, s.Size()-1))
				if err != nil || !bytes.Equal(got, all[1:]) {
					t.Fatalf("Section: %q %v", got, err)
				}
				// Several ranges of a host download (there is no descriptor).
				got, err = io.ReadAll(s.Sections([]Span{{0, 2}, {3, 2}}))
				if want := append(all[0:2:2], all[3:5]...); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("Sections: %q %v, want %q", got, err, want)
				}
			})
		}
	}
}

// TestOpenMemTooLarge: a generated file over the bound is too_large,
// the read route's answer to a file it will not buffer.
func TestOpenMemTooLarge(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openMem(f, fi, f.Name(), 16); fserr.CodeOf(err) != fserr.TooLarge {
		t.Fatalf("err %v, want too_large", err)
	}
}

// TestOpenOrdinaryFile: a file on an ordinary file system keeps the
// descriptor path (sendfile, pinned state).
func TestOpenOrdinaryFile(t *testing.T) {
	t.Parallel()
	p := t.TempDir() + "/f"
	if err := os.WriteFile(p, []byte("ordinary"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := openSource(t, p, NewVersionCache(8)); s.mem != nil || s.file == nil {
		t.Fatal("an ordinary file is served from memory")
	}
}
