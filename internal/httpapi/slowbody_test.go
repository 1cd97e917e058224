package httpapi_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestRefusalsDoNotWaitForTheBody: a client that announces a body and
// then trickles it must not hold the connection once it is refused, nor
// through the routes that answer without the key. net/http otherwise
// reads the rest of the body with no deadline after the handler returned
// (before even sending the answer, unless it says Connection: close), and
// enough such clients used every descriptor of the server.
func TestRefusalsDoNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "tok"})
	t.Cleanup(h.Close)
	open := newEnv(t, nil, httpapi.Options{Hub: h})
	keyed := newEnv(t, nil, httpapi.Options{APIKey: "k", AllowOrigins: []string{"https://app.example"}})
	tests := []struct {
		name         string
		e            *env
		method, path string
		header       string // extra header lines, each ending in \r\n
		status       int
	}{
		{name: "no key", e: keyed, method: "POST", path: "/v2/fs/write", status: 401},
		{name: "wrong key", e: keyed, method: "POST", path: "/v2/fs/write", header: "X-Api-Key: nope\r\n", status: 401},
		{name: "browser origin", e: open, method: "POST", path: "/v2/fs/write", header: "Origin: https://evil.example\r\n", status: 403},
		{name: "Sec-Fetch-Site", e: open, method: "POST", path: "/v2/fs/write", header: "Sec-Fetch-Site: cross-site\r\n", status: 403},
		{name: "rebinding Host", e: open, method: "POST", path: "/v2/fs/write", header: "Host: rebind.evil.example\r\n", status: 403},
		{name: "public probe with a body", e: keyed, method: "GET", path: "/health", status: 200},
		{name: "public path, wrong method", e: keyed, method: "POST", path: "/health", status: 405},
		{name: "preflight with a body", e: keyed, method: "OPTIONS", path: "/v2/fs/write",
			header: "Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n", status: 204},
		{name: "connector without the token", e: open, method: "GET", path: "/v2/connector", status: 401},
		{name: "connector from a page", e: open, method: "GET", path: "/v2/connector",
			header: "Authorization: Bearer tok\r\nOrigin: https://evil.example\r\n", status: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", tt.e.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Hang guard only: the connection must end within Drain.
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			host := "Host: " + tt.e.srv.Listener.Addr().String() + "\r\n"
			if strings.HasPrefix(tt.header, "Host:") || strings.Contains(tt.header, "\r\nHost:") {
				host = ""
			}
			if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\n%s%sContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", tt.method, tt.path, host, tt.header); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			go func() { // a byte every 50 ms: the body would take over an hour
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer while the body trickles in: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !resp.Close {
				t.Fatalf("got %d (Connection: %q), want %d with Connection: close", resp.StatusCode, resp.Header.Get("Connection"), tt.status)
			}
			n, err := br.Read(make([]byte, 1))
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			case errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatal("the server kept the connection open, waiting for the rest of the body")
			default:
				t.Fatalf("after the answer: read %d bytes, %v; want the connection closed", n, err)
			}
		})
	}
}

// TestPublicPathsCloseWithoutTheKey: a public route answered without the
// key closes its connection, body or not; else one probe per idle timeout
// on each of --max-connections keep-alive connections would hold every
// slot, locking agents and hosts out. With the key it stays open.
func TestPublicPathsCloseWithoutTheKey(t *testing.T) {
	t.Parallel()
	keyed := newEnv(t, nil, httpapi.Options{APIKey: "k"})
	for _, tt := range []struct {
		name, header string
		close        bool
	}{
		{"no key", "", true},
		{"wrong key", "X-Api-Key: nope\r\n", true},
		{"the key", "X-Api-Key: k\r\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", keyed.srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(30 * time.Second)) // hang guard
			fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\n%s\r\n", keyed.srv.Listener.Addr(), tt.header)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Close != tt.close {
				t.Fatalf("status %d, Connection close %v; want 200, close %v", resp.StatusCode, resp.Close, tt.close)
			}
		})
	}
}
