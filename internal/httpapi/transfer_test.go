package httpapi_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zeebo/xxh3"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/transfer"
)

func version(b []byte) string {
	s := xxh3.Hash128(b).Bytes()
	return fmt.Sprintf("%x", s[:])
}

func TestDownload(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	content := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB
	e.put("big.bin", content)
	e.put("empty.bin", nil)
	v := version(content)
	fi, _ := os.Stat(e.path("big.bin"))
	lastMod := fi.ModTime().UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		method     string
		query      string
		header     map[string]string
		wantStatus int
		wantBody   []byte // nil: not checked
		wantHeader map[string]string
		wantText   string // in the body
	}{
		{name: "whole", method: "GET", query: "path=big.bin", wantStatus: 200, wantBody: content,
			wantHeader: map[string]string{"ETag": `"` + v + `"`, "Accept-Ranges": "bytes", "Last-Modified": lastMod, "Content-Type": "application/octet-stream"}},
		{name: "v1 plane", method: "GET", query: "path=big.bin", wantStatus: 200, wantBody: content},
		{name: "head", method: "HEAD", query: "path=big.bin", wantStatus: 200, wantBody: []byte{},
			wantHeader: map[string]string{"Content-Length": "1000000", "ETag": `"` + v + `"`}},
		{name: "range", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=10-19"}, wantStatus: 206,
			wantBody: content[10:20], wantHeader: map[string]string{"Content-Range": "bytes 10-19/1000000"}},
		{name: "suffix range", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=-5"}, wantStatus: 206, wantBody: content[len(content)-5:]},
		{name: "bad range", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=2000000-"}, wantStatus: 416,
			wantHeader: map[string]string{"Content-Range": "bytes */1000000", "Content-Type": "application/json"},
			wantText:   `"error_type":"bad_request"`},
		{name: "if-range etag matches", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=0-3", "If-Range": `"` + v + `"`}, wantStatus: 206, wantBody: content[:4]},
		{name: "if-range etag stale", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=0-3", "If-Range": `"0000"`}, wantStatus: 200, wantBody: content},
		{name: "if-range date", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=0-3", "If-Range": lastMod}, wantStatus: 206, wantBody: content[:4]},
		{name: "if-none-match", method: "GET", query: "path=big.bin", header: map[string]string{"If-None-Match": `"` + v + `"`}, wantStatus: 304},
		{name: "abort unchanged", method: "GET", query: "path=big.bin&change_policy=abort", wantStatus: 200, wantBody: content},
		{name: "abort range", method: "GET", query: "path=big.bin&change_policy=abort", header: map[string]string{"Range": "bytes=5-9"}, wantStatus: 206, wantBody: content[5:10]},
		{name: "missing", method: "GET", query: "path=nope", wantStatus: 404},
		{name: "directory", method: "GET", query: "path=.", wantStatus: 400, wantText: "is a directory; a download is one file"},
		{name: "outside", method: "GET", query: "path=/etc/passwd", wantStatus: 403},
		{name: "no path", method: "GET", query: "", wantStatus: 422},
		{name: "bad policy", method: "GET", query: "path=big.bin&change_policy=never", wantStatus: 422},
		// RFC 9110 where http.ServeContent departs from it (as the host
		// route answers: proto.Conditional).
		{name: "empty suffix range", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=-0"}, wantStatus: 416,
			wantHeader: map[string]string{"Content-Range": "bytes */1000000"}, wantText: "cannot be served"},
		{name: "empty suffix among ranges", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=-0,3-4"}, wantStatus: 206,
			wantBody: content[3:5], wantHeader: map[string]string{"Content-Range": "bytes 3-4/1000000"}},
		{name: "range of an empty file", method: "GET", query: "path=empty.bin", header: map[string]string{"Range": "bytes=-5"}, wantStatus: 200,
			wantBody: []byte{}, wantHeader: map[string]string{"Content-Range": ""}},
		{name: "other unit", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "items=0-3"}, wantStatus: 200, wantBody: content},
		{name: "unit in capitals", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "Bytes=0-3"}, wantStatus: 206, wantBody: content[:4]},
		{name: "malformed range", method: "GET", query: "path=big.bin", header: map[string]string{"Range": "bytes=5-3"}, wantStatus: 416,
			wantHeader: map[string]string{"Content-Range": ""}, wantText: `the Range header \"bytes=5-3\" is malformed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			route := "/v2/fs/download?"
			if tc.name == "v1 plane" {
				route = "/v1/file/download?"
			}
			req, _ := http.NewRequest(tc.method, e.srv.URL+route+tc.query, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.wantStatus, body)
			}
			if !strings.Contains(string(body), tc.wantText) {
				t.Errorf("body %.300s, want it to say %q", body, tc.wantText)
			}
			if tc.wantBody != nil && !bytes.Equal(body, tc.wantBody) {
				t.Errorf("body: %d bytes, want %d", len(body), len(tc.wantBody))
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if tc.wantStatus >= 400 && !strings.Contains(string(body), `"success":false`) {
				t.Errorf("failure without the envelope: %s", body)
			}
		})
	}
}

// TestDownloadAbortWhileRewritten downloads with change_policy=abort while
// another goroutine rewrites the file in place: every transfer is a 409,
// a cut body, or a complete body that matches its strong ETag; never a
// complete body that mixes states.
func TestDownloadAbortWhileRewritten(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	const size = 4 << 20
	a, b := bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)
	e.put("hot.bin", a)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			f, err := os.OpenFile(e.path("hot.bin"), os.O_WRONLY, 0)
			if err != nil {
				return
			}
			content := a
			if i%2 == 1 {
				content = b
			}
			for off := 0; off < size && ctx.Err() == nil; off += 256 << 10 {
				_, _ = f.WriteAt(content[off:off+256<<10], int64(off))
				time.Sleep(time.Millisecond)
			}
			f.Close()
		}
	})
	var conflicts, cuts, whole int
	for range 30 {
		d, err := e.c.Download(bg, "hot.bin", client.DownloadOptions{ChangePolicy: "abort"})
		if err != nil {
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != 409 || !strings.Contains(ce.Message, "change_policy=abort") {
				t.Fatalf("download: %v", err)
			}
			conflicts++
			continue
		}
		body, err := io.ReadAll(d.Body)
		d.Body.Close()
		if err != nil {
			cuts++
			continue
		}
		whole++
		// A complete body is the file as it was at one moment (possibly
		// half rewritten, which is a state the file really had): it
		// matches the strong ETag pinned at open.
		if len(body) != size || version(body) != d.Version {
			t.Fatalf("complete transfer of %d bytes does not match its ETag", len(body))
		}
	}
	cancel()
	wg.Wait()
	t.Logf("409: %d, cut: %d, whole: %d", conflicts, cuts, whole)
	if conflicts+cuts == 0 {
		t.Log("no change was caught (the rewriter was slow); still no torn body")
	}
}

// TestDownloadAbortOnWriteDuringTransfer writes into the file while the
// server is blocked sending it: the transfer must not complete.
func TestDownloadAbortOnWriteDuringTransfer(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("f.bin", bytes.Repeat([]byte{'x'}, 64<<20))
	for _, rng := range []string{"", "bytes=1000-"} {
		d, err := e.c.Download(bg, "f.bin", client.DownloadOptions{ChangePolicy: "abort", Range: rng})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(d.Body, make([]byte, 1024)); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(e.path("f.bin"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("changed"), 60<<20)
		f.Close()
		n, err := io.Copy(io.Discard, d.Body)
		d.Body.Close()
		if err == nil {
			t.Fatalf("range %q: the transfer completed (%d more bytes) although the file changed during it", rng, n)
		}
	}
	// Unchanged since: a new download is whole.
	d, err := e.c.Download(bg, "f.bin", client.DownloadOptions{ChangePolicy: "abort"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Body.Close()
	if n, err := io.Copy(io.Discard, d.Body); err != nil || n != 64<<20 {
		t.Fatalf("download after the change: %d %v", n, err)
	}
}

// TestDownloadAbortOnReplace: an atomic replacement of the path during a
// transfer is a change too.
func TestDownloadAbortOnReplace(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	content := bytes.Repeat([]byte{'x'}, 8<<20)
	e.put("f.bin", content)
	d, err := e.c.Download(bg, "f.bin", client.DownloadOptions{ChangePolicy: "abort"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Body.Close()
	if _, err := io.ReadFull(d.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "f.bin", Content: "new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(d.Body); err == nil {
		t.Fatal("the transfer of a replaced file completed under change_policy=abort")
	}
}

// TestDownloadIgnoreWriteDuringTransfer writes a file over the API while
// it downloads under the default change_policy (ignore). A file with a
// second hard link is rewritten in place (to keep the link): its
// transfer must be cut, never complete with the new bytes after the old
// under the old ETag. An ordinary file is replaced by a rename, which
// leaves the opened file whole: its transfer completes with the old
// content.
func TestDownloadIgnoreWriteDuringTransfer(t *testing.T) {
	t.Parallel()
	const size = 16 << 20
	old, now := bytes.Repeat([]byte("O"), size), strings.Repeat("N", size)
	for _, linked := range []bool{true, false} {
		t.Run(fmt.Sprintf("linked=%v", linked), func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			e.put("f.bin", old)
			if linked {
				if err := os.Link(e.path("f.bin"), e.path("link.bin")); err != nil {
					t.Fatal(err)
				}
			}
			d, err := e.c.Download(bg, "f.bin", client.DownloadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Body.Close()
			if d.Version != version(old) {
				t.Fatalf("ETag %s, want the old content's", d.Version)
			}
			head := make([]byte, 1024)
			if _, err := io.ReadFull(d.Body, head); err != nil {
				t.Fatal(err)
			}
			if _, err := e.c.Write(bg, client.WriteRequest{Path: "f.bin", Content: now}); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(d.Body)
			body := append(head, rest...)
			if n := bytes.Count(body, []byte("O")); n != len(body) {
				t.Fatalf("the body mixes contents: %d of %d bytes old (read error %v)", n, len(body), err)
			}
			if linked {
				if got, _ := os.ReadFile(e.path("link.bin")); string(got) != now {
					t.Fatal("the write did not go through the hard link (not in place)")
				}
				if err == nil || len(body) >= size {
					t.Fatalf("got %d of %d bytes, read error %v; want a cut transfer", len(body), size, err)
				}
				return
			}
			if err != nil || len(body) != size {
				t.Fatalf("got %d of %d bytes, read error %v; want the old content whole", len(body), size, err)
			}
		})
	}
}

func TestUpload(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("dir/existing.txt", []byte("old"))
	if err := os.Chmod(e.path("dir/existing.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	content := []byte("binary\x00\xff\xfe data")
	res, err := e.c.Upload(bg, "dir/new.bin", bytes.NewReader(content), "")
	if err != nil || !res.Success || res.FileSize != int64(len(content)) || res.FilePath != e.path("dir/new.bin") || !res.Created || res.Version != version(content) {
		t.Fatalf("upload: %+v %v", res, err)
	}
	if got, _ := os.ReadFile(e.path("dir/new.bin")); !bytes.Equal(got, content) {
		t.Fatal("content differs")
	}
	res, err = e.c.V1Upload(bg, e.path("dir/existing.txt"), strings.NewReader("replaced"))
	if err != nil || res.Created {
		t.Fatalf("v1 upload over a file: %+v %v", res, err)
	}
	if fi, _ := os.Stat(e.path("dir/existing.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file's mode %v, want 0600 kept", fi.Mode().Perm())
	}
	// Undo brings the replaced content back.
	if _, err := e.c.Undo(bg, "dir/existing.txt"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(e.path("dir/existing.txt")); string(got) != "old" {
		t.Errorf("after undo: %q", got)
	}
	_, err = e.c.Upload(bg, "nodir/x", strings.NewReader("x"), "")
	if ce := wantErr(t, err, 404, "not_found"); !strings.Contains(ce.Hint, "mkdir") {
		t.Errorf("hint %q", ce.Hint)
	}
	_, err = e.c.V1Upload(bg, "nodir/x", strings.NewReader("x"))
	wantErr(t, err, 200, "not_found")
	_, err = e.c.Upload(bg, "/etc/x", strings.NewReader("x"), "")
	wantErr(t, err, 403, "outside_root")
	_, err = e.c.Upload(bg, "dir", strings.NewReader("x"), "") // a directory: the file goes into it as its name
	if err != nil {
		t.Fatalf("upload into a directory: %v", err)
	}
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

// TestUploadExpectedVersion: an upload can be made conditional, as a write
// is: a stale, absent or malformed version writes nothing and leaves no
// part file.
func TestUploadExpectedVersion(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("f.txt", []byte("v1"))
	v1 := version([]byte("v1"))
	res, err := e.c.UploadWith(bg, "f.txt", strings.NewReader("v2"), client.UploadOptions{ExpectedVersion: v1})
	if err != nil || res.Version != version([]byte("v2")) {
		t.Fatalf("upload with the current version: %+v %v", res, err)
	}
	_, err = e.c.UploadWith(bg, "f.txt", strings.NewReader("v3"), client.UploadOptions{ExpectedVersion: v1})
	if ce := wantErr(t, err, 409, "stale_version"); !strings.Contains(ce.Message, "current version "+version([]byte("v2"))) {
		t.Errorf("stale message %q", ce.Message)
	}
	_, err = e.c.UploadWith(bg, "gone.txt", strings.NewReader("x"), client.UploadOptions{ExpectedVersion: v1})
	wantErr(t, err, 409, "stale_version")
	_, err = e.c.UploadWith(bg, "f.txt", strings.NewReader("x"), client.UploadOptions{ExpectedVersion: "v1"})
	wantErr(t, err, 400, "bad_request")
	if got, _ := os.ReadFile(e.path("f.txt")); string(got) != "v2" {
		t.Errorf("f.txt = %q after refused uploads, want v2", got)
	}
	if _, err := os.Stat(e.path("gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt was created: %v", err)
	}
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

func TestUploadFormValidation(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	form := func(parts ...[2]string) (string, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, p := range parts {
			if p[0] == "file" {
				w, _ := mw.CreateFormFile("file", "f.txt")
				io.WriteString(w, p[1])
			} else {
				mw.WriteField(strings.TrimPrefix(p[0], "plain:"), p[1])
			}
		}
		mw.Close()
		return b.String(), mw.FormDataContentType()
	}
	tests := []struct {
		name   string
		query  string
		body   func() (string, string)
		status int
		loc    []any
	}{
		{"file without path", "", func() (string, string) { return form([2]string{"file", "x"}) }, 200, nil},
		{"file without path or filename", "", func() (string, string) { return form([2]string{"plain:file", "x"}) }, 422, []any{"body", "path"}},
		{"path after file", "", func() (string, string) { return form([2]string{"file", "x"}, [2]string{"path", "a"}) }, 200, nil},
		{"no file", "", func() (string, string) { return form([2]string{"path", "a"}) }, 422, []any{"body", "file"}},
		{"not multipart", "", func() (string, string) { return "{}", "application/json" }, 422, []any{"body"}},
		{"path in query", "?path=q.txt", func() (string, string) { return form([2]string{"file", "x"}) }, 200, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, ct := tc.body()
			status, m := e.rawCT("POST", "/v2/fs/upload"+tc.query, body, ct)
			if status != tc.status {
				t.Fatalf("status %d: %v", status, m)
			}
			if tc.loc != nil {
				errs, _ := m["errors"].([]any)
				if len(errs) != 1 || !cmp.Equal(errs[0].(map[string]any)["location"], tc.loc) {
					t.Errorf("errors %v, want location %v", m["errors"], tc.loc)
				}
			}
		})
	}
}

func (e *xenv) rawCT(method, path, body, ct string) (int, map[string]any) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = jsonUnmarshal(b, &m)
	return resp.StatusCode, m
}

// TestUploadCutLeavesNoTrace sends part of an upload and drops the
// connection: no part file stays and the target keeps its content.
func TestUploadCutLeavesNoTrace(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("target.bin", []byte("original"))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("path", "target.bin")
	fw, _ := mw.CreateFormFile("file", "target.bin")
	fw.Write(bytes.Repeat([]byte("z"), 4<<20))
	mw.Close()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v2/fs/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", mw.FormDataContentType(), body.Len())
	conn.Write(body.Bytes()[:body.Len()/2])
	// Wait until the part file exists, so the cut lands mid-spool.
	deadline := time.Now().Add(10 * time.Second)
	for len(e.strays()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	conn.Close()
	for len(e.strays()) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s := e.strays(); len(s) != 0 {
		t.Fatalf("part files left: %v", s)
	}
	if got, _ := os.ReadFile(e.path("target.bin")); string(got) != "original" {
		t.Fatalf("target changed: %.20q", got)
	}
}

// patterned yields n bytes of a fixed pattern (byte i is i mod 251)
// without holding them.
type patterned struct{ n, off int64 }

// pattern holds the cycle many times over, so reads are copies.
var pattern = func() []byte {
	b := make([]byte, 251*1024)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}()

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && p.off < p.n {
		start := int(p.off % 251)
		k := copy(b[n:], pattern[start:])
		k = int(min(int64(k), p.n-p.off))
		n += k
		p.off += int64(k)
	}
	return n, nil
}

// TestUploadLargeHeapFlat uploads 1 GiB (256 MiB under the race
// detector) and samples the server's heap meanwhile: it must not grow
// with the file.
func TestUploadLargeHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("large upload skipped in -short mode")
	}
	size := int64(1 << 30)
	if testenv.Race {
		size = 256 << 20
	}
	e := newXEnv(t, ops.Options{})
	t.Cleanup(func() { os.Remove(e.path("huge.bin")) })
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	})
	res, err := e.c.Upload(bg, "huge.bin", &patterned{n: size}, "")
	close(stop)
	wg.Wait()
	if err != nil || res.FileSize != size {
		t.Fatalf("upload: %+v %v", res, err)
	}
	growth := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("uploaded %d MiB; heap in use %d MiB before, peak %d MiB", size>>20, base.HeapInuse>>20, peak.Load()>>20)
	if growth > 64<<20 {
		t.Fatalf("heap grew by %d MiB during a %d MiB upload", growth>>20, size>>20)
	}
	f, _ := os.Open(e.path("huge.bin"))
	defer f.Close()
	h := sha256.New()
	want := sha256.New()
	io.Copy(h, f)
	io.Copy(want, &patterned{n: size})
	if !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatal("stored content differs")
	}
}

type tarEntry struct {
	Name, Link string
	Type       byte
	Mode       int64
	Body       string
}

func makeTar(t *testing.T, entries []tarEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, en := range entries {
		mode := en.Mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: en.Name, Linkname: en.Link, Typeflag: en.Type, Mode: mode, Size: int64(len(en.Body)), Format: tar.FormatPAX}
		if en.Type != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, en.Body)
	}
	tw.Close()
	return b.Bytes()
}

// tree describes a directory for comparison: path → kind, mode, content or target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %o %s", fi.Mode().Perm(), b)
		}
		return nil
	})
	return out
}

func TestTreeRoundTrip(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	src := e.path("src")
	for _, d := range []string{"empty", "sub/deeper", "ro"} {
		os.MkdirAll(filepath.Join(src, d), 0o755)
	}
	e.put("src/a.txt", []byte("alpha"))
	e.put("src/sub/deeper/x.sh", []byte("#!/bin/sh\n"))
	os.Chmod(filepath.Join(src, "sub/deeper/x.sh"), 0o750)
	e.put("src/ro/file", []byte("r"))
	os.Chmod(filepath.Join(src, "ro/file"), 0o400)
	os.Chmod(filepath.Join(src, "ro"), 0o555)
	os.Chmod(filepath.Join(src, "empty"), 0o700)
	os.Symlink("a.txt", filepath.Join(src, "link-to-a"))
	os.Symlink("../deeper", filepath.Join(src, "sub/deeper/dir-link"))
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "ro"), 0o755); os.Chmod(e.path("copy/ro"), 0o755) })

	rc, err := e.c.GetTree(bg, "src")
	if err != nil {
		t.Fatal(err)
	}
	archive, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.c.PutTree(bg, client.TreeQuery{Path: "copy"}, bytes.NewReader(archive))
	if err != nil || res.Mode != "rename" || res.Path != e.path("copy") {
		t.Fatalf("put tree: %+v %v", res, err)
	}
	want := tree(t, src)
	if diff := cmp.Diff(want, tree(t, e.path("copy"))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if res.Entries != len(want) {
		t.Errorf("entries %d, want %d", res.Entries, len(want))
	}
	// Merge onto an existing directory: files replaced, extra ones kept.
	e.put("merge/keep.txt", []byte("keep"))
	e.put("merge/a.txt", []byte("to be replaced"))
	res, err = e.c.PutTree(bg, client.TreeQuery{Path: "merge"}, bytes.NewReader(archive))
	if err != nil || res.Mode != "merge" {
		t.Fatalf("merge: %+v %v", res, err)
	}
	got := tree(t, e.path("merge"))
	if got["keep.txt"] != "file 644 keep" || got["a.txt"] != "file 644 alpha" || got["link-to-a"] != "link a.txt" {
		t.Errorf("merged tree: %v", got)
	}
	os.Chmod(e.path("merge/ro"), 0o755)
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
	// Empty body: success, nothing extracted.
	res, err = e.c.PutTree(bg, client.TreeQuery{Path: "empty-archive"}, bytes.NewReader(nil))
	if err != nil || res.Entries != 0 {
		t.Fatalf("empty body: %+v %v", res, err)
	}
	_, err = e.c.GetTree(bg, "src/a.txt")
	wantErr(t, err, 400, "invalid_target")
	_, err = e.c.GetTree(bg, "missing")
	wantErr(t, err, 404, "not_found")
}

func TestTreeRejections(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("exists/file", []byte("x"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(makeTar(t, []tarEntry{{Name: "a", Type: tar.TypeReg, Body: "a"}}))
	zw.Close()
	tests := []struct {
		name    string
		path    string
		archive []byte
		status  int
		code    string
		msg     string
	}{
		{"dot dot", "t1", makeTar(t, []tarEntry{{Name: "ok", Type: tar.TypeReg}, {Name: "../evil", Type: tar.TypeReg, Body: "x"}}), 400, "bad_request", ".."},
		{"nested dot dot", "t2", makeTar(t, []tarEntry{{Name: "a/../../evil", Type: tar.TypeReg}}), 400, "bad_request", ".."},
		{"absolute", "t3", makeTar(t, []tarEntry{{Name: "/etc/evil", Type: tar.TypeReg}}), 400, "bad_request", "absolute"},
		{"symlink out", "t4", makeTar(t, []tarEntry{{Name: "l", Type: tar.TypeSymlink, Link: "/etc/passwd"}}), 403, "outside_root", "outside"},
		{"relative symlink out", "t5", makeTar(t, []tarEntry{{Name: "d/l", Type: tar.TypeSymlink, Link: "../../../x"}}), 403, "outside_root", "outside"},
		{"write through a link", "t6", makeTar(t, []tarEntry{{Name: "l", Type: tar.TypeSymlink, Link: "."}, {Name: "l/f", Type: tar.TypeReg}}), 400, "bad_request", "not a directory"},
		{"hard link out", "t7", makeTar(t, []tarEntry{{Name: "h", Type: tar.TypeLink, Link: "../../etc/passwd"}}), 400, "bad_request", ".."},
		{"hard link to nothing", "t8", makeTar(t, []tarEntry{{Name: "h", Type: tar.TypeLink, Link: "nope"}}), 400, "bad_request", "hard link"},
		{"char device", "t9", makeTar(t, []tarEntry{{Name: "null", Type: tar.TypeChar}}), 400, "bad_request", "device"},
		{"block device", "t10", makeTar(t, []tarEntry{{Name: "sda", Type: tar.TypeBlock}}), 400, "bad_request", "device"},
		{"fifo", "t11", makeTar(t, []tarEntry{{Name: "p", Type: tar.TypeFifo}}), 400, "bad_request", "FIFO"},
		{"gzip", "t12", gz.Bytes(), 400, "bad_request", "compressed"},
		{"garbage", "t13", bytes.Repeat([]byte("not a tar "), 100), 400, "bad_request", "invalid tar"},
		{"onto a file", "exists/file", makeTar(t, []tarEntry{{Name: "a", Type: tar.TypeReg}}), 400, "invalid_target", "not a directory"},
		{"parent missing", "no/such/dir", makeTar(t, []tarEntry{{Name: "a", Type: tar.TypeReg}}), 404, "not_found", "does not exist"},
		{"merge dir over file", "exists", makeTar(t, []tarEntry{{Name: "file/", Type: tar.TypeDir}}), 400, "invalid_target", "not a directory"},
		{"outside root", "/tmp/fsplane-nope", makeTar(t, []tarEntry{{Name: "a", Type: tar.TypeReg}}), 403, "outside_root", "outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.c.PutTree(bg, client.TreeQuery{Path: tc.path}, bytes.NewReader(tc.archive))
			ce := wantErr(t, err, tc.status, tc.code)
			if !strings.Contains(ce.Message, tc.msg) {
				t.Errorf("message %q lacks %q", ce.Message, tc.msg)
			}
			if !strings.HasPrefix(tc.path, "exists") && !strings.HasPrefix(tc.path, "/") {
				if _, err := os.Lstat(e.path(tc.path)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s exists after a refused archive", tc.path)
				}
			}
		})
	}
	if got := tree(t, e.path("exists")); !cmp.Equal(got, map[string]string{"file": "file 644 x"}) {
		t.Errorf("merge target changed: %v", got)
	}
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

func TestTreeLimits(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	// Too many entries and too many bytes, with small limits through ops.
	many := make([]tarEntry, 11)
	for i := range many {
		many[i] = tarEntry{Name: fmt.Sprintf("f%d", i), Type: tar.TypeReg, Body: "x"}
	}
	_, err := e.eng.PutTree(bg, ops.TreeRequest{Path: "many", Body: bytes.NewReader(makeTar(t, many)), Limits: limits(1<<20, 10)})
	if err == nil || !strings.Contains(err.Error(), "more than 10 entries") {
		t.Fatalf("entries limit: %v", err)
	}
	big := []tarEntry{{Name: "a", Type: tar.TypeReg, Body: strings.Repeat("x", 600)}, {Name: "b", Type: tar.TypeReg, Body: strings.Repeat("x", 600)}}
	_, err = e.eng.PutTree(bg, ops.TreeRequest{Path: "big", Body: bytes.NewReader(makeTar(t, big)), Limits: limits(1000, 10)})
	if err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("size limit: %v", err)
	}
	// Over HTTP: a declared body over 4 GiB is 413 before any byte is read.
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /v2/fs/tree?path=huge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n", int64(5)<<30)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 {
		t.Fatalf("5 GiB body: status %d", resp.StatusCode)
	}
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

func TestTreeEntryCountOver100k(t *testing.T) {
	if testing.Short() || testenv.Race {
		t.Skip("100,001-entry archive skipped in -short mode and under the race detector")
	}
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		for i := range 100_001 {
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%06d/", i), Typeflag: tar.TypeDir, Mode: 0o755})
		}
		tw.Close()
		pw.Close()
	}()
	_, err := e.c.PutTree(bg, client.TreeQuery{Path: "many"}, pr)
	wantErr(t, err, 413, "too_large")
	if len(e.strays()) != 0 {
		t.Fatalf("strays: %v", e.strays())
	}
}

func limits(maxBytes int64, maxEntries int) transfer.Limits {
	return transfer.Limits{MaxBytes: maxBytes, MaxEntries: maxEntries}
}

var jsonUnmarshal = json.Unmarshal

// TestDownloadShrunkIsLogged: a file cut in place while it downloads
// under change_policy=ignore ends the body short of its Content-Length
// (the client sees the cut), and the server says so in its log instead
// of recording a plain success.
func TestDownloadShrunkIsLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	p := filepath.Join(e.root, "f.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// More than loopback buffers hold, so most of it is still to send.
	if err := f.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := e.c.Download(bg, "f.bin", client.DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Body.Close()
	if _, err := io.ReadFull(d.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, d.Body); err == nil {
		t.Fatalf("the body of a file cut to nothing ended cleanly after %d more bytes", n)
	}
	testenv.WaitFor(t, 10*time.Second, "Download cut in the log", func() bool {
		return strings.Contains(e.logBuf.String(), `msg="Download cut"`)
	})
	if !strings.Contains(e.logBuf.String(), "the file shrank while it was sent") {
		t.Errorf("the log does not say why:\n%s", e.logBuf.String())
	}
}

// TestUploadEndedEarlyHasAHint: an upload whose body ends before its
// Content-Length (the client half-closes) is refused with a hint saying
// to send it whole, whether the path came before the file (streamed into
// place) or after it (spooled first); it had none.
func TestUploadEndedEarlyHasAHint(t *testing.T) {
	t.Parallel()
	for _, pathFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("path first %v", pathFirst), func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			if pathFirst {
				mw.WriteField("path", "target.bin")
			}
			fw, _ := mw.CreateFormFile("file", "target.bin")
			fw.Write(bytes.Repeat([]byte("z"), 1<<20))
			if !pathFirst {
				mw.WriteField("path", "target.bin")
			}
			mw.Close()
			conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v2/fs/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", mw.FormDataContentType(), body.Len())
			conn.Write(body.Bytes()[:body.Len()/2])
			conn.(*net.TCPConn).CloseWrite()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(b), `"hint":"send the whole file again`) {
				t.Errorf("status %d %s, want 400 with a hint to send it whole", resp.StatusCode, b)
			}
			if _, err := os.Stat(e.path("target.bin")); err == nil {
				t.Error("the cut upload made target.bin")
			}
		})
	}
}
