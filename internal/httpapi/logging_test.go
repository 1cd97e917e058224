package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/testenv"
)

// TestLogRequestsAborted: the access log says aborted=true when the
// connection ended before the handler did, so that a response that never
// arrived is not logged as a plain success; a response delivered whole
// is logged without it. The handlers write their answer after failing,
// as the upload handler does when the server closes a stalled upload's
// connection at the end of its shutdown grace.
func TestLogRequestsAborted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		request string // sent raw; the client then closes its end
		read    bool   // read the whole response before closing
		aborted bool
	}{
		{"complete", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", true, false},
		{"body cut short", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhello", false, true},
		{"gone during the response", "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs testenv.SyncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			handled := make(chan struct{})
			srv := httptest.NewServer(logRequests(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(handled)
				_, err := io.ReadAll(r.Body)
				if r.URL.Path == "/big" {
					// Write until the connection fails.
					chunk := bytes.Repeat([]byte("x"), 64<<10)
					for err == nil {
						_, err = w.Write(chunk)
					}
					return
				}
				fmt.Fprintf(w, "read error: %v", err)
			})))
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(conn, tt.request); err != nil {
				t.Fatal(err)
			}
			if tt.read {
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
			} else {
				time.Sleep(50 * time.Millisecond)
			}
			conn.Close()
			select {
			case <-handled:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler did not return")
			}
			srv.Close() // waits for the handler's log line
			line := logs.String()
			if !strings.Contains(line, "msg=Request") {
				t.Fatalf("no access log line:\n%s", line)
			}
			if got := strings.Contains(line, "aborted=true"); got != tt.aborted {
				t.Errorf("aborted=true logged: %v, want %v:\n%s", got, tt.aborted, line)
			}
		})
	}
}

// blockedWriter holds every Write until release is closed: a log
// destination that is slow to drain.
type blockedWriter struct{ release chan struct{} }

func (b blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	return len(p), nil
}

// TestLogRequestsAfterResponse: a response with a Content-Length reaches
// the client whole before its access log line is written, so a slow log
// destination does not hold back the response's last bytes (net/http
// keeps up to 4 KiB of it until the handler returns); one without a
// Content-Length still gets the length net/http works out, not chunked
// encoding.
func TestLogRequestsAfterResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		size          int
		contentLength bool
	}{
		{"larger than net/http's buffer", 10 << 10, true},
		{"smaller than it", 100, true},
		{"no Content-Length", 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := blockedWriter{release: make(chan struct{})}
			log := slog.New(slog.NewTextHandler(logs, nil))
			if !tt.contentLength {
				// Without a Content-Length the response ends when the
				// handler returns, after its line: that write goes through.
				close(logs.release)
			}
			body := bytes.Repeat([]byte("y"), tt.size)
			srv := httptest.NewServer(logRequests(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentLength {
					w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				}
				w.Write(body)
			})))
			defer srv.Close()
			if tt.contentLength {
				defer close(logs.release) // before srv.Close, which waits for the handler
			}
			client := &http.Client{Timeout: 5 * time.Second}
			resp, err := client.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading the response while its log line is held: %v", err)
			}
			if !bytes.Equal(got, body) {
				t.Errorf("got %d bytes, want %d", len(got), len(body))
			}
			if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
				t.Errorf("Content-Length %d, Transfer-Encoding %q; want %d, none", resp.ContentLength, resp.TransferEncoding, len(body))
			}
		})
	}
}
