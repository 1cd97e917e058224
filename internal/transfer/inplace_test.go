package transfer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsplane/fsplane/internal/workspace"
)

// smallBuffers keeps what a connection holds in flight small (the
// kernel would otherwise grow it to megabytes), so that a server
// downloading a few MiB is still reading the file when the client
// pauses early.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// TestServeIgnoreInPlaceRewrite: under Ignore, a file with several hard
// links rewritten in place during its download (what workspace does to
// keep its links) must reach the client cut short, never complete with
// the new bytes after the old ones under the old ETag; a replacement of
// its path, or another link's removal, leaves the opened file whole, and
// it is served whole.
func TestServeIgnoreInPlaceRewrite(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	old := bytes.Repeat([]byte("O"), size)
	tests := []struct {
		name   string
		links  bool
		change func(t *testing.T, p, link string)
		cut    bool
	}{
		{name: "linked, rewritten in place", links: true, cut: true, change: func(t *testing.T, p, _ string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bytes.Repeat([]byte("N"), size), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "linked, path replaced", links: true, change: replacePath},
		{name: "linked, other link removed", links: true, change: func(t *testing.T, _, link string) {
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "one link, path replaced", change: replacePath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p, link := filepath.Join(dir, "f"), filepath.Join(dir, "g")
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.links {
				if err := os.Link(p, link); err != nil {
					t.Fatal(err)
				}
			}
			s := openSource(t, p, NewVersionCache(8))
			served := make(chan error, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, err := s.Serve(w, r, Ignore)
				served <- err
			}))
			srv.Listener = smallBuffers{srv.Listener}
			srv.Start()
			defer srv.Close()
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetReadBuffer(32 << 10)
				}
				return c, err
			}}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ContentLength != size || resp.Header.Get("ETag") != `"`+workspace.Version(old)+`"` {
				t.Fatalf("Content-Length %d, ETag %s", resp.ContentLength, resp.Header.Get("ETag"))
			}
			head := make([]byte, 64<<10)
			if _, err := io.ReadFull(resp.Body, head); err != nil {
				t.Fatal(err)
			}
			tc.change(t, p, link)
			rest, err := io.ReadAll(resp.Body)
			body := append(head, rest...)
			if n := bytes.Count(body, []byte("O")); n != len(body) {
				t.Fatalf("the body mixes contents: %d of %d bytes old (read error %v)", n, len(body), err)
			}
			serr := <-served
			if !tc.cut {
				if err != nil || len(body) != size || serr != nil {
					t.Fatalf("got %d of %d bytes, read error %v, Serve error %v; want the old content whole", len(body), size, err, serr)
				}
				return
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) >= size {
				t.Fatalf("got %d of %d bytes, read error %v; want a cut transfer", len(body), size, err)
			}
			if serr == nil {
				t.Fatal("Serve reported no error for a cut transfer")
			}
		})
	}
}

// replacePath renames a new file over p, as fsplane's own writes do.
func replacePath(t *testing.T, p, _ string) {
	t.Helper()
	tmp := p + ".new"
	if err := os.WriteFile(tmp, bytes.Repeat([]byte("N"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}
