package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// twinEnv is a hub with a real host named laptop whose root holds the same
// file as the server's own root, so that the host route's answers can be
// compared with the local route's.
type twinEnv struct {
	*hubEnv
	hostRoot              string
	hostURL, localURL     string
	etag, lastMod         string
	mtime                 time.Time
	content               []byte
	past, future, garbage string // dates
}

func newTwinEnv(t *testing.T, content []byte, limits proto.Limits, small bool) *twinEnv {
	t.Helper()
	e := &twinEnv{hubEnv: newHubEnv(t, small), hostRoot: t.TempDir(), content: content,
		mtime: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	for _, dir := range []string{e.hostRoot, e.root} {
		p := filepath.Join(dir, "f.bin")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, e.mtime, e.mtime); err != nil {
			t.Fatal(err)
		}
	}
	e.connectHostRoot(t, e.hostRoot, limits)
	e.hostURL = e.url + "/v2/hosts/laptop/fs/download?path=f.bin"
	e.localURL = e.url + "/v2/fs/download?path=f.bin"
	resp, _ := getWith(t, e.localURL, nil)
	e.etag, e.lastMod = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if e.etag == "" || e.lastMod == "" {
		t.Fatalf("no validators from the local route: %v", resp.Header)
	}
	e.past = e.mtime.Add(-time.Hour).Format(http.TimeFormat)
	e.future = e.mtime.Add(time.Hour).Format(http.TimeFormat)
	e.garbage = "yesterday"
	return e
}

// sameHeaders reports the headers the two routes' answers disagree on.
func sameHeaders(host, local *http.Response) []string {
	var diff []string
	for _, k := range []string{"ETag", "Last-Modified", "Content-Range", "Content-Length"} {
		if h, l := host.Header.Get(k), local.Header.Get(k); h != l {
			diff = append(diff, fmt.Sprintf("%s: host %q, local %q", k, h, l))
		}
	}
	h, _, _ := mime.ParseMediaType(host.Header.Get("Content-Type"))
	l, _, _ := mime.ParseMediaType(local.Header.Get("Content-Type"))
	if h != l {
		diff = append(diff, fmt.Sprintf("Content-Type: host %q, local %q", host.Header.Get("Content-Type"), local.Header.Get("Content-Type")))
	}
	return diff
}

// TestHostDownloadConditional: If-Match, If-None-Match, If-Modified-Since
// and If-Unmodified-Since, alone, together and with Range and If-Range,
// get from the host route what they get from the local route: the status,
// the validators, Content-Range, Content-Type and Content-Length, and the
// body (empty, the bytes, or the same error envelope), decided on the
// host's file. Accept-Ranges is on every answer of the host route.
func TestHostDownloadConditional(t *testing.T) {
	t.Parallel()
	e := newTwinEnv(t, []byte("0123456789"), proto.Limits{}, false)
	etag, weak := e.etag, "W/"+e.etag
	for _, tc := range []struct {
		name   string
		file   string // default f.bin
		header map[string]string
		status int
		body   string // of a 200 or 206
	}{
		{name: "If-Match the ETag", header: map[string]string{"If-Match": etag}, status: 200, body: "0123456789"},
		{name: "If-Match another", header: map[string]string{"If-Match": `"other"`}, status: 412},
		{name: "If-Match weak is never strong", header: map[string]string{"If-Match": weak}, status: 412},
		{name: "If-Match *", header: map[string]string{"If-Match": "*"}, status: 200, body: "0123456789"},
		{name: "If-Match a list", header: map[string]string{"If-Match": `"other", ` + etag}, status: 200, body: "0123456789"},
		{name: "If-Match malformed", header: map[string]string{"If-Match": "nonsense"}, status: 412},
		{name: "If-None-Match the ETag", header: map[string]string{"If-None-Match": etag}, status: 304},
		{name: "If-None-Match weak matches", header: map[string]string{"If-None-Match": weak}, status: 304},
		{name: "If-None-Match another", header: map[string]string{"If-None-Match": `"other"`}, status: 200, body: "0123456789"},
		{name: "If-None-Match *", header: map[string]string{"If-None-Match": "*"}, status: 304},
		{name: "If-None-Match a list", header: map[string]string{"If-None-Match": `"other", ` + weak}, status: 304},
		{name: "If-Modified-Since Last-Modified", header: map[string]string{"If-Modified-Since": e.lastMod}, status: 304},
		{name: "If-Modified-Since earlier", header: map[string]string{"If-Modified-Since": e.past}, status: 200, body: "0123456789"},
		{name: "If-Modified-Since unparsable", header: map[string]string{"If-Modified-Since": e.garbage}, status: 200, body: "0123456789"},
		{name: "If-Unmodified-Since Last-Modified", header: map[string]string{"If-Unmodified-Since": e.lastMod}, status: 200, body: "0123456789"},
		{name: "If-Unmodified-Since earlier", header: map[string]string{"If-Unmodified-Since": e.past}, status: 412},
		{name: "If-Match before If-None-Match", header: map[string]string{"If-Match": `"other"`, "If-None-Match": etag}, status: 412},
		{name: "If-Match overrides If-Unmodified-Since", header: map[string]string{"If-Match": etag, "If-Unmodified-Since": e.past}, status: 200, body: "0123456789"},
		{name: "If-None-Match overrides If-Modified-Since", header: map[string]string{"If-None-Match": `"other"`, "If-Modified-Since": e.future}, status: 200, body: "0123456789"},
		{name: "Range, If-Match holds", header: map[string]string{"Range": "bytes=0-3", "If-Match": etag}, status: 206, body: "0123"},
		{name: "Range, If-Match fails", header: map[string]string{"Range": "bytes=0-3", "If-Match": `"other"`}, status: 412},
		{name: "Range, If-None-Match matches", header: map[string]string{"Range": "bytes=0-3", "If-None-Match": etag}, status: 304},
		{name: "Range, If-None-Match another", header: map[string]string{"Range": "bytes=0-3", "If-None-Match": `"other"`}, status: 206, body: "0123"},
		{name: "Range, If-Modified-Since earlier", header: map[string]string{"Range": "bytes=6-", "If-Modified-Since": e.past}, status: 206, body: "6789"},
		{name: "Range, If-Unmodified-Since earlier", header: map[string]string{"Range": "bytes=6-", "If-Unmodified-Since": e.past}, status: 412},
		{name: "Range past the end, If-Match *", header: map[string]string{"Range": "bytes=50-", "If-Match": "*"}, status: 416},
		{name: "Range, If-Range and If-Match hold", header: map[string]string{"Range": "bytes=0-3", "If-Range": etag, "If-Match": etag}, status: 206, body: "0123"},
		{name: "Range, If-Range fails, If-None-Match another", header: map[string]string{"Range": "bytes=0-3", "If-Range": `"other"`, "If-None-Match": `"other"`}, status: 200, body: "0123456789"},
		{name: "malformed Range, If-Match fails", header: map[string]string{"Range": "bytes=3-1", "If-Match": `"other"`}, status: 412},
		{name: "malformed Range, If-None-Match matches", header: map[string]string{"Range": "bytes=3-1", "If-None-Match": etag}, status: 304},
		{name: "malformed Range, If-Match holds", header: map[string]string{"Range": "bytes=3-1", "If-Match": etag}, status: 416},
		{name: "malformed Range, If-Range fails", header: map[string]string{"Range": "bytes=3-1", "If-Range": `"other"`}, status: 200, body: "0123456789"},
		{name: "missing file, If-None-Match *", file: "nope.bin", header: map[string]string{"If-None-Match": "*"}, status: 404},
		{name: "missing file, malformed Range", file: "nope.bin", header: map[string]string{"Range": "bytes=3-1"}, status: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hostURL, localURL := e.hostURL, e.localURL
			if tc.file != "" {
				hostURL = strings.Replace(hostURL, "f.bin", tc.file, 1)
				localURL = strings.Replace(localURL, "f.bin", tc.file, 1)
			}
			resp, body := getWith(t, hostURL, tc.header)
			if resp.StatusCode != tc.status {
				t.Fatalf("host: %d (%.300q), want %d", resp.StatusCode, body, tc.status)
			}
			if (tc.status == 200 || tc.status == 206) && string(body) != tc.body {
				t.Errorf("host: body %q, want %q", body, tc.body)
			}
			if got := resp.Header.Get("Accept-Ranges"); got != "bytes" {
				t.Errorf("host: Accept-Ranges %q, want bytes", got)
			}
			local, lbody := getWith(t, localURL, tc.header)
			if local.StatusCode != resp.StatusCode || !bytes.Equal(lbody, body) {
				t.Errorf("host: %d %.300q\nlocal: %d %.300q", resp.StatusCode, body, local.StatusCode, lbody)
			}
			if tc.status != 404 {
				for _, d := range sameHeaders(resp, local) {
					t.Error(d)
				}
			}
		})
	}
}

// byteRangeParts reads a multipart/byteranges body: each part's
// Content-Range and bytes, and the boundary.
func byteRangeParts(t *testing.T, resp *http.Response, body []byte) (boundary string, parts []string) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("Content-Type %q, want multipart/byteranges", resp.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return params["boundary"], parts
		}
		if err != nil {
			t.Fatalf("multipart body: %v", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatalf("multipart part: %v", err)
		}
		if ct := p.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("part Content-Type %q", ct)
		}
		parts = append(parts, p.Header.Get("Content-Range")+" "+string(b))
	}
}

// TestHostDownloadSeveralRanges: a Range with several ranges gets from the
// host route what it gets from the local route: multipart/byteranges with
// the same parts (Content-Range, Content-Type, bytes, in the order asked,
// overlaps included), a boundary of the same form, an exact
// Content-Length (HEAD too), and the same fallbacks: one satisfiable range
// is a plain 206, none a 416, more bytes than the file a 200 with the
// file, a failing If-Range a 200, and preconditions first.
func TestHostDownloadSeveralRanges(t *testing.T) {
	t.Parallel()
	const content = "0123456789abcdefghijklmnopqrstuvwxyz"
	e := newTwinEnv(t, []byte(content), proto.Limits{}, false)
	part := func(first, last int) string {
		return fmt.Sprintf("bytes %d-%d/%d %s", first, last, len(content), content[first:last+1])
	}
	for _, tc := range []struct {
		name         string
		header       map[string]string
		status       int
		parts        []string // of a multipart answer
		body         string   // of another 200 or 206
		contentRange string
	}{
		{name: "two", header: map[string]string{"Range": "bytes=0-3,10-12"}, status: 206, parts: []string{part(0, 3), part(10, 12)}},
		{name: "in the order asked", header: map[string]string{"Range": "bytes=20-22,0-1,-2"}, status: 206, parts: []string{part(20, 22), part(0, 1), part(34, 35)}},
		{name: "overlapping", header: map[string]string{"Range": "bytes=0-5,3-8"}, status: 206, parts: []string{part(0, 5), part(3, 8)}},
		{name: "spaces and empty elements", header: map[string]string{"Range": "bytes= 1-2 , ,9-9,"}, status: 206, parts: []string{part(1, 2), part(9, 9)}},
		{name: "clipped to the end", header: map[string]string{"Range": "bytes=0-0,30-99"}, status: 206, parts: []string{part(0, 0), part(30, 35)}},
		{name: "one satisfiable", header: map[string]string{"Range": "bytes=0-1,100-200"}, status: 206, body: "01", contentRange: "bytes 0-1/36"},
		{name: "none satisfiable", header: map[string]string{"Range": "bytes=100-,200-300"}, status: 416, contentRange: "bytes */36"},
		{name: "more bytes than the file", header: map[string]string{"Range": "bytes=0-,-3"}, status: 200, body: content},
		{name: "one malformed", header: map[string]string{"Range": "bytes=0-1,x-5"}, status: 416},
		{name: "If-Range holds", header: map[string]string{"Range": "bytes=0-1,4-5", "If-Range": e.etag}, status: 206, parts: []string{part(0, 1), part(4, 5)}},
		{name: "If-Range date holds", header: map[string]string{"Range": "bytes=0-1,4-5", "If-Range": e.lastMod}, status: 206, parts: []string{part(0, 1), part(4, 5)}},
		{name: "If-Range fails", header: map[string]string{"Range": "bytes=0-1,4-5", "If-Range": `"other"`}, status: 200, body: content},
		{name: "If-None-Match another", header: map[string]string{"Range": "bytes=0-1,4-5", "If-None-Match": `"other"`}, status: 206, parts: []string{part(0, 1), part(4, 5)}},
		{name: "If-None-Match the ETag", header: map[string]string{"Range": "bytes=0-1,4-5", "If-None-Match": e.etag}, status: 304},
		{name: "If-Match another", header: map[string]string{"Range": "bytes=0-1,4-5", "If-Match": `"other"`}, status: 412},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := getWith(t, e.hostURL, tc.header)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != tc.contentRange {
				t.Fatalf("host: %d Content-Range %q (%.300q), want %d %q", resp.StatusCode, resp.Header.Get("Content-Range"), body, tc.status, tc.contentRange)
			}
			if resp.ContentLength != int64(len(body)) && tc.status != 304 {
				t.Errorf("host: Content-Length %d, body %d bytes", resp.ContentLength, len(body))
			}
			local, lbody := getWith(t, e.localURL, tc.header)
			for _, d := range sameHeaders(resp, local) {
				if tc.parts == nil || !strings.HasPrefix(d, "Content-Length") { // the boundaries are random
					t.Error(d)
				}
			}
			if tc.parts == nil {
				if (tc.status == 200 || tc.status == 206) && string(body) != tc.body {
					t.Errorf("host: body %q, want %q", body, tc.body)
				}
				if local.StatusCode != resp.StatusCode || !bytes.Equal(lbody, body) {
					t.Errorf("host: %d %.300q\nlocal: %d %.300q", resp.StatusCode, body, local.StatusCode, lbody)
				}
				return
			}
			boundary, parts := byteRangeParts(t, resp, body)
			lboundary, lparts := byteRangeParts(t, local, lbody)
			if !slices.Equal(parts, tc.parts) || !slices.Equal(lparts, tc.parts) {
				t.Errorf("host parts %q\nlocal parts %q\nwant %q", parts, lparts, tc.parts)
			}
			if len(boundary) != len(lboundary) || strings.Trim(boundary, "0123456789abcdef") != "" {
				t.Errorf("host boundary %q, local %q", boundary, lboundary)
			}
			if len(body) != len(lbody) {
				t.Errorf("host body %d bytes, local %d", len(body), len(lbody))
			}
			req, _ := http.NewRequest(http.MethodHead, e.hostURL, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			head, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			head.Body.Close()
			if head.StatusCode != 206 || head.ContentLength != int64(len(body)) || !strings.HasPrefix(head.Header.Get("Content-Type"), "multipart/byteranges; boundary=") {
				t.Errorf("HEAD: %d Content-Length %d %q, want 206 %d multipart/byteranges", head.StatusCode, head.ContentLength, head.Header.Get("Content-Type"), len(body))
			}
		})
	}
}

// TestHostDownloadSeveralRangesFileChanges: a file rewritten while its
// parts are sent cuts the multipart answer (no closing boundary, the
// connection ends short of Content-Length); every byte the client got is
// the version the answer began with, never the new one's. The window of
// 64 KiB and small socket buffers keep the host well behind the second
// part when the client, having read the first, changes the file.
func TestHostDownloadSeveralRangesFileChanges(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i % 251)
	}
	e := newTwinEnv(t, content, proto.Limits{WindowBytes: proto.MinWindowBytes}, true)
	req, _ := http.NewRequest(http.MethodGet, e.hostURL, nil)
	req.Header.Set("Range", "bytes=0-65535,262144-")
	req.Header.Set("If-Match", e.etag)
	resp, err := smallReadBufferClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("%s, want 206", resp.Status)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	mr := multipart.NewReader(resp.Body, params["boundary"])
	first, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(first); err != nil || !bytes.Equal(b, content[:65536]) {
		t.Fatalf("first part: %v, %d bytes", err, len(b))
	}
	if err := os.WriteFile(filepath.Join(e.hostRoot, "f.bin"), bytes.Repeat([]byte("n"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(second)
	if err == nil {
		t.Fatalf("the second part came whole (%d bytes) after the file changed", len(b))
	}
	if !bytes.Equal(b, content[262144:262144+len(b)]) {
		t.Fatalf("the second part holds bytes of the new content")
	}
	if _, err := mr.NextPart(); err == nil || err == io.EOF {
		t.Fatalf("after the cut part: %v, want an error", err)
	}
	t.Logf("cut after %d bytes of the second part: %v", len(b), err)
}

// oldHost connects a fake host named laptop that downloads as hosts from
// before Conditional did: it honours the legacy Range (with its If-Range)
// and otherwise sends the whole file, and says nothing of conditions. It
// reports each request it gets on asked.
func oldHost(t *testing.T, e *hubEnv, content, version string, mod time.Time, asked chan<- proto.DownloadRequest) {
	fakeHost(t, e, func(c *connector.Conn, op *proto.Op) {
		var req proto.DownloadRequest
		if err := json.Unmarshal(op.Args, &req); err != nil {
			t.Errorf("download args %s: %v", op.Args, err)
		}
		asked <- req
		res := proto.DownloadResult{Size: int64(len(content)), Version: version, ModTime: mod}
		data := content
		if req.Range != nil {
			if part, ok := req.Range.Part(res.Size, version, mod); ok {
				res.Range = &part
				data = content[part.Offset : part.Offset+part.Length]
			}
		}
		b, _ := json.Marshal(res)
		if err := c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: b}); err != nil {
			t.Error(err)
			return
		}
		// The hub drops a transfer it does not want; that ends this.
		_ = c.SendData(context.Background(), op.OpID, strings.NewReader(data), int64(len(data)))
	})
}

// TestHostDownloadConditionalOldHost: with a host from before Conditional,
// which ignores it, the hub decides on the host's result, which describes
// the file whose bytes follow: a 304 or 412 only when that file's version
// or time calls for it (the client's copy is "v1", the host's file "v2"),
// never because of a version the bytes are not; several ranges get the
// whole file (a 200, as HTTP allows); a single range keeps working as the
// host resolves it. The hub sends both the legacy Range and Conditional.
func TestHostDownloadConditionalOldHost(t *testing.T) {
	t.Parallel()
	const content = "0123456789"
	mod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	lastMod := mod.Format(http.TimeFormat)
	for _, tc := range []struct {
		name         string
		header       map[string]string
		status       int
		body         string
		contentRange string
		legacy       bool // the hub sends a legacy Range
	}{
		{name: "If-None-Match the old version", header: map[string]string{"If-None-Match": `"v1"`}, status: 200, body: content},
		{name: "If-None-Match the host's version", header: map[string]string{"If-None-Match": `"v2"`}, status: 304},
		{name: "If-Match the old version", header: map[string]string{"If-Match": `"v1"`}, status: 412},
		{name: "If-Match the host's version", header: map[string]string{"If-Match": `"v2"`}, status: 200, body: content},
		{name: "If-Modified-Since the host's time", header: map[string]string{"If-Modified-Since": lastMod}, status: 304},
		{name: "If-Unmodified-Since the host's time", header: map[string]string{"If-Unmodified-Since": lastMod}, status: 200, body: content},
		{name: "Range, If-None-Match the old version", header: map[string]string{"Range": "bytes=0-3", "If-None-Match": `"v1"`}, status: 206, body: "0123", contentRange: "bytes 0-3/10", legacy: true},
		{name: "Range, If-Range the old version", header: map[string]string{"Range": "bytes=0-3", "If-Range": `"v1"`}, status: 200, body: content, legacy: true},
		{name: "Range past the end", header: map[string]string{"Range": "bytes=20-"}, status: 416, contentRange: "bytes */10", legacy: true},
		{name: "several ranges", header: map[string]string{"Range": "bytes=0-1,4-5"}, status: 200, body: content},
		{name: "several ranges, If-None-Match the host's version", header: map[string]string{"Range": "bytes=0-1,4-5", "If-None-Match": `"v2"`}, status: 304},
		{name: "several ranges past the end", header: map[string]string{"Range": "bytes=20-,30-"}, status: 416, contentRange: "bytes */10"},
		{name: "malformed Range", header: map[string]string{"Range": "bytes=3-1"}, status: 416},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, false)
			asked := make(chan proto.DownloadRequest, 1)
			oldHost(t, e, content, "v2", mod, asked)
			resp, body := getWith(t, e.url+"/v2/hosts/laptop/fs/download?path=f.bin", tc.header)
			select {
			case req := <-asked:
				if req.Conditional == nil || (req.Range != nil) != tc.legacy {
					t.Errorf("the hub asked %+v, want Conditional, and a legacy Range: %v", req, tc.legacy)
				}
			default:
				t.Errorf("the hub answered %d without asking the host", resp.StatusCode)
			}
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != tc.contentRange {
				t.Fatalf("%d Content-Range %q (%.300q), want %d %q", resp.StatusCode, resp.Header.Get("Content-Range"), body, tc.status, tc.contentRange)
			}
			if (tc.status == 200 || tc.status == 206) && string(body) != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			if tc.status != 416 && resp.Header.Get("ETag") != `"v2"` {
				t.Errorf("ETag %q, want the host's \"v2\"", resp.Header.Get("ETag"))
			}
		})
	}
}

// TestHostDownloadOutcomeChecked: the outcome a host says it decided is
// checked against its own result, so a host that errs (or lies) cannot put
// a 304, a 412 or a Content-Range on bytes that do not call for it: the
// client gets a 500 instead.
func TestHostDownloadOutcomeChecked(t *testing.T) {
	t.Parallel()
	const content = "0123456789"
	for _, tc := range []struct {
		name   string
		header map[string]string
		out    proto.Outcome
	}{
		{"304 for another version", map[string]string{"If-None-Match": `"v1"`}, proto.Outcome{Status: 304}},
		{"412 for its own version", map[string]string{"If-Match": `"v2"`}, proto.Outcome{Status: 412}},
		{"other parts", map[string]string{"Range": "bytes=0-1,4-5"}, proto.Outcome{Status: 206, Parts: []proto.ByteRange{{Offset: 0, Length: 2}, {Offset: 5, Length: 2}}}},
		{"200 for several ranges", map[string]string{"Range": "bytes=0-1,4-5"}, proto.Outcome{Status: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, false)
			fakeHost(t, e, func(c *connector.Conn, op *proto.Op) {
				b, _ := json.Marshal(proto.DownloadResult{Size: int64(len(content)), Version: "v2", ModTime: time.Now(), Status: tc.out.Status, Parts: tc.out.Parts})
				if err := c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: b}); err != nil {
					t.Error(err)
					return
				}
				_ = c.SendData(context.Background(), op.OpID, strings.NewReader(content), int64(len(content)))
			})
			resp, body := getWith(t, e.url+"/v2/hosts/laptop/fs/download?path=f.bin", tc.header)
			if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("ETag") != "" {
				t.Fatalf("%d ETag %q (%.300q), want 500 without", resp.StatusCode, resp.Header.Get("ETag"), body)
			}
		})
	}
}

// TestHostDownloadMatchesOpenAPI: the host route's answers to ranges and
// conditional requests (206, multipart/byteranges, 304, 412, 416) are as
// the OpenAPI document gives them; TestResponsesMatchOpenAPI has no host
// to download from.
func TestHostDownloadMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "t"})
	t.Cleanup(h.Close)
	doc := loadOpenAPI(t, newEnv(t, nil, httpapi.Options{Hub: h}))
	e := newTwinEnv(t, []byte("0123456789"), proto.Limits{}, false)
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"whole", nil, 200},
		{"range", map[string]string{"Range": "bytes=0-3"}, 206},
		{"several ranges", map[string]string{"Range": "bytes=0-1,4-5"}, 206},
		{"not modified", map[string]string{"If-None-Match": e.etag}, 304},
		{"precondition failed", map[string]string{"If-Unmodified-Since": e.past}, 412},
		{"unsatisfiable", map[string]string{"Range": "bytes=50-"}, 416},
	} {
		resp, body := getWith(t, e.hostURL, tc.header)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d (%.300q), want %d", tc.name, resp.StatusCode, body, tc.status)
			continue
		}
		if err := doc.check("GET /v2/hosts/{host}/fs/download", resp.StatusCode, resp.Header, body, false); err != nil {
			t.Errorf("%s: disagrees with the document: %v", tc.name, err)
		}
	}
}
