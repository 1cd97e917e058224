package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestWriterChainKeepsReaderFrom checks what the kernel's zero-copy path
// needs from the server's own handler chain (request log, auth, router):
// the writer a route handler gets implements io.ReaderFrom at every layer
// down to net/http's, so http.ServeContent's copy of the raw *os.File
// reaches TCPConn.ReadFrom, i.e. sendfile(2). TestDownloadUsesSendfile
// watches the syscall itself.
func TestWriterChainKeepsReaderFrom(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s := New(ops.New(ws, ops.Options{}), Options{APIKey: "k"})
	layers := make(chan []string, 1)
	s.handle(route{Method: "GET", Path: "/probe"}, func(w http.ResponseWriter, r *http.Request) {
		var seen []string
		for cur := w; cur != nil; {
			if _, ok := cur.(io.ReaderFrom); !ok {
				seen = append(seen, "MISSING")
			}
			seen = append(seen, typeName2(cur))
			u, ok := cur.(interface{ Unwrap() http.ResponseWriter })
			if !ok {
				break
			}
			cur = u.Unwrap()
		}
		layers <- seen
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/probe", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := <-layers
	for _, l := range got {
		if l == "MISSING" {
			t.Fatalf("a writer layer hides io.ReaderFrom: %v", got)
		}
	}
	if got[len(got)-1] != "*http.response" {
		t.Fatalf("chain does not end at net/http's writer: %v", got)
	}
	t.Logf("writer chain: %v", got)
}

func typeName2(w http.ResponseWriter) string { return fmt.Sprintf("%T", w) }
