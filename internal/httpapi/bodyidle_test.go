package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestStalledBodyIsCut: a client that sends part of a body and then
// nothing is answered once BodyIdleTimeout passes, its connection closed,
// and nothing written: before, the request and its connection waited for
// good.
func TestStalledBodyIsCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{BodyIdleTimeout: 200 * time.Millisecond})
	tests := []struct {
		name, head, part string
		status           int
		says             string
	}{
		{"JSON", "POST /v2/fs/write HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
			`{"path": "json.txt", "content": "ab`, 422, `"no part of the request body arrived for 200ms: send the body without long pauses"`},
		{"upload", "POST /v2/fs/upload?path=up.bin HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n",
			"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up.bin\"\r\n\r\nsome bytes", 400, `"retryable":true},"hint":"no part of the request body arrived for 200ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.head+tt.part); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang fails, not blocks, the test
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
				t.Errorf("%d %s; want %d saying %q", resp.StatusCode, body, tt.status, tt.says)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("the connection stays open after the cut (read: %v)", err)
			}
		})
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(e.root)
		for _, en := range entries {
			t.Errorf("left in the root: %s", filepath.Join(e.root, en.Name()))
		}
	})
}
