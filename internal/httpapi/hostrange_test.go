package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// getWith fetches url with headers and reads the whole body, giving up
// after 10 s.
func getWith(t *testing.T, url string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s %v: %v", url, headers, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s %v: reading the body: %v", url, headers, err)
	}
	return resp, body
}

// TestHostDownloadRange: the host route answers Range and If-Range as the
// local route does (206 with Content-Range, 416 with the same envelope),
// with Accept-Ranges on every answer, and the host sends only the bytes
// asked for. The same file sits in the server's root, so each answer is
// compared with the local route's.
func TestHostDownloadRange(t *testing.T) {
	t.Parallel()
	const content = "0123456789"
	e := newHubEnv(t, false)
	hostRoot := t.TempDir()
	mtime := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, dir := range []string{hostRoot, e.root} {
		p := filepath.Join(dir, "h.txt")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	e.connectHostRoot(t, hostRoot, proto.Limits{})
	hostURL := e.url + "/v2/hosts/laptop/fs/download?path=h.txt"
	localURL := e.url + "/v2/fs/download?path=h.txt"
	resp, _ := getWith(t, hostURL, nil)
	etag, lastMod := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if local, _ := getWith(t, localURL, nil); etag == "" || local.Header.Get("ETag") != etag {
		t.Fatalf("ETag from the host %q, locally %q: want one version", etag, local.Header.Get("ETag"))
	}
	for _, tc := range []struct {
		name         string
		rng, ifRange string
		status       int
		body         string // of a 200 or 206
		contentRange string
	}{
		{"first bytes", "bytes=0-3", "", 206, "0123", "bytes 0-3/10"},
		{"from an offset", "bytes=5-", "", 206, "56789", "bytes 5-9/10"},
		{"suffix", "bytes=-4", "", 206, "6789", "bytes 6-9/10"},
		{"end past the end", "bytes=8-100", "", 206, "89", "bytes 8-9/10"},
		{"suffix longer than the file", "bytes=-40", "", 206, content, "bytes 0-9/10"},
		{"the whole file as a range", "bytes=0-", "", 206, content, "bytes 0-9/10"},
		{"no range", "", "", 200, content, ""},
		{"start at the end", "bytes=10-", "", 416, "", "bytes */10"},
		{"start past the end", "bytes=100-200", "", 416, "", "bytes */10"},
		{"end before start", "bytes=3-1", "", 416, "", ""},
		{"another unit", "lines=0-3", "", 200, content, ""}, // RFC 9110 §14.2: ignored
		{"the unit in capitals", "Bytes=0-3", "", 206, "0123", "bytes 0-3/10"},
		{"an empty suffix", "bytes=-0", "", 416, "", "bytes */10"},
		{"If-Range with the ETag", "bytes=0-3", etag, 206, "0123", "bytes 0-3/10"},
		{"If-Range with another ETag", "bytes=0-3", `"other"`, 200, content, ""},
		{"If-Range with a weak ETag", "bytes=0-3", "W/" + etag, 200, content, ""},
		{"If-Range with Last-Modified", "bytes=0-3", lastMod, 206, "0123", "bytes 0-3/10"},
		{"If-Range with another date", "bytes=0-3", mtime.Add(-time.Hour).Format(http.TimeFormat), 200, content, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{}
			if tc.rng != "" {
				h["Range"] = tc.rng
			}
			if tc.ifRange != "" {
				h["If-Range"] = tc.ifRange
			}
			resp, body := getWith(t, hostURL, h)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != tc.contentRange {
				t.Fatalf("host: %d Content-Range %q (%.200q), want %d %q",
					resp.StatusCode, resp.Header.Get("Content-Range"), body, tc.status, tc.contentRange)
			}
			if got := resp.Header.Get("Accept-Ranges"); got != "bytes" {
				t.Errorf("host: Accept-Ranges %q, want bytes", got)
			}
			if tc.status == 416 {
				var env struct {
					Success bool `json:"success"`
					Data    struct {
						ErrorType string `json:"error_type"`
					} `json:"data"`
				}
				if err := json.Unmarshal(body, &env); err != nil || env.Success || env.Data.ErrorType != "bad_request" {
					t.Errorf("host: 416 body %.300q, want the bad_request envelope", body)
				}
			} else if string(body) != tc.body || resp.ContentLength != int64(len(tc.body)) {
				t.Errorf("host: body %q (Content-Length %d), want %q", body, resp.ContentLength, tc.body)
			}
			local, lbody := getWith(t, localURL, h)
			if local.StatusCode != resp.StatusCode || local.Header.Get("Content-Range") != resp.Header.Get("Content-Range") ||
				local.Header.Get("Content-Type") != resp.Header.Get("Content-Type") || !bytes.Equal(lbody, body) {
				t.Errorf("host: %d %q %q %.300q\nlocal: %d %q %q %.300q", resp.StatusCode, resp.Header.Get("Content-Range"), resp.Header.Get("Content-Type"), body,
					local.StatusCode, local.Header.Get("Content-Range"), local.Header.Get("Content-Type"), lbody)
			}
		})
	}
}

// TestHostDownloadRangeOfABigFile: a range from the middle of a 32 MiB
// file comes whole and exact (SHA-256), and only it crosses the
// connection: a 1 MiB transfer limit refuses the file but not the range.
func TestHostDownloadRangeOfABigFile(t *testing.T) {
	t.Parallel()
	const size, first, last = 32 << 20, 12<<20 + 12345, 12<<20 + 12345 + 1<<20 - 1
	data := make([]byte, size)
	rand.Read(data)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newHubEnv(t, false)
	e.connectHostRoot(t, root, proto.Limits{MaxTransferBytes: 1 << 20})
	url := e.url + "/v2/hosts/laptop/fs/download?path=big.bin"
	if resp, body := getWith(t, url, nil); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("the whole file over the limit: %d %.200q, want 413", resp.StatusCode, body)
	}
	resp, body := getWith(t, url, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", first, last)})
	want := fmt.Sprintf("bytes %d-%d/%d", first, last, size)
	if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("Content-Range") != want {
		t.Fatalf("range: %d Content-Range %q (%.200q), want 206 %q", resp.StatusCode, resp.Header.Get("Content-Range"), body, want)
	}
	if got, want := sha256.Sum256(body), sha256.Sum256(data[first:last+1]); got != want || resp.ContentLength != last-first+1 {
		t.Fatalf("range: %d bytes (Content-Length %d), SHA-256 %x, want %d bytes, %x", len(body), resp.ContentLength, got, last-first+1, want)
	}
}

// TestHostDownloadRangeFromAnotherHost: the hub asks the host for the
// range; a host from before ranges ignores it and sends the whole file,
// which the client then gets as a 200 (HTTP lets a server ignore Range),
// never as a 206 of the wrong bytes. A host that says it sent another
// range than asked is not trusted with a Content-Range.
func TestHostDownloadRangeFromAnotherHost(t *testing.T) {
	t.Parallel()
	const content = "0123456789"
	for _, tc := range []struct {
		name   string
		served *proto.ByteRange // the range the host's result names
		data   string           // the bytes it sends
		status int
		body   string
	}{
		{"host from before ranges", nil, content, 200, content},
		{"host sending another range", &proto.ByteRange{Offset: 0, Length: 2}, "01", 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, false)
			asked := make(chan *proto.RangeRequest, 1)
			fakeHost(t, e, func(c *connector.Conn, op *proto.Op) {
				var req proto.DownloadRequest
				if err := json.Unmarshal(op.Args, &req); err != nil {
					t.Errorf("download args %s: %v", op.Args, err)
				}
				asked <- req.Range
				res, _ := json.Marshal(proto.DownloadResult{Size: int64(len(content)), Version: "v1", ModTime: time.Now(), Range: tc.served})
				if err := c.Send(context.Background(), &proto.Result{OpID: op.OpID, OK: true, Result: res}); err != nil {
					t.Error(err)
					return
				}
				// The hub may drop a transfer it refuses; that ends this.
				_ = c.SendData(context.Background(), op.OpID, bytes.NewReader([]byte(tc.data)), int64(len(tc.data)))
			})
			resp, body := getWith(t, e.url+"/v2/hosts/laptop/fs/download?path=f.bin", map[string]string{"Range": "bytes=4-5"})
			if rng := <-asked; rng == nil || rng.First == nil || *rng.First != 4 || rng.Last == nil || *rng.Last != 5 {
				t.Errorf("the hub asked the host for %+v, want bytes 4 to 5", rng)
			}
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != "" {
				t.Fatalf("%d Content-Range %q (%.200q), want %d without", resp.StatusCode, resp.Header.Get("Content-Range"), body, tc.status)
			}
			if tc.status == 200 && (string(body) != tc.body || resp.Header.Get("Accept-Ranges") != "bytes") {
				t.Errorf("body %q, Accept-Ranges %q; want %q, bytes", body, resp.Header.Get("Accept-Ranges"), tc.body)
			}
		})
	}
}
