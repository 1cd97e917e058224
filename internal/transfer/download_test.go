package transfer

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestServeIgnoreChangedValidators: under Ignore a file changed between
// the open and the response is served as it is now, so the validators
// pinned at open (the ETag, which is the old content's version, and the
// old mtime) must not be sent with it or honoured: a client revalidating
// its copy of the old content would get 304 and keep it, and an If-Range
// resume would splice new bytes onto old ones.
func TestServeIgnoreChangedValidators(t *testing.T) {
	t.Parallel()
	old := []byte("before the change")
	now := []byte("after the change, longer")
	oldTime := time.Now().Add(-time.Hour).Truncate(time.Second)
	tests := []struct {
		name   string
		header [2]string
		status int
		body   string
	}{
		{name: "plain", status: 200, body: string(now)},
		{name: "If-None-Match old", header: [2]string{"If-None-Match", `"` + workspace.Version(old) + `"`}, status: 200, body: string(now)},
		{name: "If-Modified-Since old", header: [2]string{"If-Modified-Since", oldTime.UTC().Format(http.TimeFormat)}, status: 200, body: string(now)},
		{name: "If-Range old", header: [2]string{"If-Range", `"` + workspace.Version(old) + `"`}, status: 200, body: string(now)},
		{name: "If-Match old", header: [2]string{"If-Match", `"` + workspace.Version(old) + `"`}, status: 412},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, oldTime, oldTime); err != nil {
				t.Fatal(err)
			}
			s := openSource(t, p, NewVersionCache(8))
			s.afterPin = func() {
				if err := os.WriteFile(p, now, 0o644); err != nil {
					t.Error(err)
				}
			}
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header[0] != "" {
				r.Header.Set(tc.header[0], tc.header[1])
			}
			if tc.header[0] == "If-Range" {
				r.Header.Set("Range", "bytes=0-3")
			}
			rec := httptest.NewRecorder()
			if _, err := s.Serve(rec, r, Ignore); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || (tc.status == 200 && rec.Body.String() != tc.body) {
				t.Fatalf("status %d, body %q; want %d %q", rec.Code, rec.Body, tc.status, tc.body)
			}
			if etag := rec.Header().Get("ETag"); etag != "" && etag != `"`+workspace.Version(rec.Body.Bytes())+`"` {
				t.Errorf("ETag %s does not describe the body %q", etag, rec.Body)
			}
			if lm := rec.Header().Get("Last-Modified"); lm == oldTime.UTC().Format(http.TimeFormat) {
				t.Errorf("Last-Modified %s is the replaced content's", lm)
			}
		})
	}
}

// failingWriter is a client gone away: every body write fails.
type failingWriter struct{ h http.Header }

func (f *failingWriter) Header() http.Header       { return f.h }
func (f *failingWriter) WriteHeader(int)           {}
func (f *failingWriter) Write([]byte) (int, error) { return 0, errors.New("client gone") }

// TestServeAbortMultiRangeClientGone: a multi-range response is produced
// by http.ServeContent in a goroutine of its own, which can still be
// reading (and failing) through the guard after ServeContent has
// returned because the client went away. Serve must not race with it
// (run with -race).
func TestServeAbortMultiRangeClientGone(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	done := make(chan struct{})
	same := func() bool {
		if calls.Add(1) == 1 {
			return true // Serve's own check, before the headers
		}
		// The guard's, in ServeContent's goroutine: after Serve is over.
		time.Sleep(20 * time.Millisecond)
		defer close(done)
		return false
	}
	s, err := Open(f, p, NewVersionCache(8), same)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Range", "bytes=0-9,100-199")
	started, err := s.Serve(&failingWriter{h: http.Header{}}, r, Abort)
	if !started {
		t.Fatalf("started %v, err %v", started, err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the range goroutine never read")
	}
}

// TestSourceReaderChanged: Reader and Section feed a host download whose
// result already announced the pinned version (the hub's ETag): a file
// rewritten in place while it is read must fail the read, never deliver
// a mix of old and new bytes under that version; an unchanged one reads
// whole (a section: exactly its bytes, also one that stops short of the
// end, where the version's hash cannot be checked).
func TestSourceReaderChanged(t *testing.T) {
	t.Parallel()
	content := make([]byte, 256<<10)
	for i := range content {
		content[i] = byte(i % 251)
	}
	for _, tc := range []struct {
		name    string
		off, n  int64
		section bool
	}{
		{"whole", 0, int64(len(content)), false},
		{"section to the end", 16 << 10, int64(len(content)) - 16<<10, true},
		{"section in the middle", 16 << 10, 200 << 10, true},
	} {
		for _, change := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: " unchanged", true: " rewritten"}[change], func(t *testing.T) {
				t.Parallel()
				p := filepath.Join(t.TempDir(), "f")
				if err := os.WriteFile(p, content, 0o644); err != nil {
					t.Fatal(err)
				}
				s := openSource(t, p, NewVersionCache(8))
				r := s.Reader()
				if tc.section {
					r = s.Section(tc.off, tc.n)
				}
				want := content[tc.off : tc.off+tc.n]
				head := make([]byte, 4096)
				if _, err := io.ReadFull(r, head); err != nil {
					t.Fatal(err)
				}
				if change {
					f, err := os.OpenFile(p, os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteAt(bytes.Repeat([]byte("b"), 8192), 128<<10)
					f.Close()
				}
				rest, err := io.ReadAll(r)
				got := append(head, rest...)
				switch {
				case change && fserr.CodeOf(err) != fserr.Conflict:
					t.Fatalf("rewritten file: err %v, %d bytes, same as pinned: %v", err, len(got), bytes.Equal(got, want))
				case !change && (err != nil || !bytes.Equal(got, want)):
					t.Fatalf("unchanged file: err %v, %d bytes of %d", err, len(got), len(want))
				}
			})
		}
	}
}
