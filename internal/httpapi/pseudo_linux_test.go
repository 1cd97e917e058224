package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
)

// TestDownloadPseudoFiles: with --root / (AIO's setup), files on procfs
// and sysfs, whose stat sizes are 0 and 4096 whatever they hold, download
// whole on both planes with a Content-Length that matches the body, and
// HEAD says the same length; they used to answer 500 "seeker can't seek"
// (procfs) or promise 4096 bytes and send 23 (sysfs).
func TestDownloadPseudoFiles(t *testing.T) {
	t.Parallel()
	e := newXEnvRoots(t, ops.Options{}, "/")
	for _, p := range []string{"/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled"} {
		for _, route := range []string{"/v2/fs/download", "/v1/file/download"} {
			t.Run(route+p, func(t *testing.T) {
				t.Parallel()
				want, err := os.ReadFile(p)
				if err != nil {
					t.Skip(err)
				}
				u := e.srv.URL + route + "?path=" + url.QueryEscape(p)
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("status %d, %d bytes, err %v: %q", resp.StatusCode, len(body), err, body)
				}
				if resp.ContentLength != int64(len(body)) || len(body) == 0 {
					t.Fatalf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
				}
				if strings.HasPrefix(p, "/sys/") && string(body) != string(want) {
					t.Fatalf("body %q, file holds %q", body, want)
				}
				if strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(string(body), "Name:") {
					t.Fatalf("body %q", body)
				}
				head, err := http.Head(u)
				if err != nil {
					t.Fatal(err)
				}
				head.Body.Close()
				n, _ := strconv.Atoi(head.Header.Get("Content-Length"))
				if head.StatusCode != 200 || n == 0 || (strings.HasPrefix(p, "/sys/") && n != len(want)) {
					t.Fatalf("HEAD %d, Content-Length %q", head.StatusCode, head.Header.Get("Content-Length"))
				}
			})
		}
	}
}
