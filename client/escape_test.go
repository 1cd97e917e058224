package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestHostNamesAreOnePathSegment: a host name with a slash or other
// special characters stays one path segment of the route.
func TestHostNamesAreOnePathSegment(t *testing.T) {
	t.Parallel()
	uris := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uris <- r.RequestURI
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL + "/base")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Host("my/box?#%").Stat(bg, client.StatQuery{Path: "a.txt"})
	_, _ = c.TextEditor(bg, "my/box", client.TextEditorRequest{Action: "read", Path: "a.txt"})
	for _, want := range []string{"/base/v2/hosts/my%2Fbox%3F%23%25/fs/stat?path=a.txt", "/base/v2/hosts/my%2Fbox/text_editor"} {
		if got := <-uris; got != want {
			t.Errorf("request URI %q, want %q", got, want)
		}
	}
}

// blockingReader never returns until released.
type blockingReader struct{ release chan struct{} }

func (b blockingReader) Read([]byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// TestStreamingCallsStopWithTheirContext: an upload or tree extraction
// whose source blocks returns when its context ends, instead of waiting
// for the source.
func TestStreamingCallsStopWithTheirContext(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil, httpapi.Options{}, ops.Options{})
	for _, tt := range []struct {
		name string
		call func(ctx context.Context, src io.Reader) error
	}{
		{"Upload", func(ctx context.Context, src io.Reader) error {
			_, err := s.c.Upload(ctx, "a.txt", src, "")
			return err
		}},
		{"V1Upload", func(ctx context.Context, src io.Reader) error {
			_, err := s.c.V1Upload(ctx, "b.txt", src)
			return err
		}},
		{"PutTree", func(ctx context.Context, src io.Reader) error {
			_, err := s.c.PutTree(ctx, client.TreeQuery{Path: "t"}, src)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := blockingReader{release: make(chan struct{})}
			defer close(src.release)
			ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tt.call(ctx, src) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s = %v, want the context's deadline", tt.name, err)
				}
			case <-time.After(30 * time.Second): // a failure guard, not a timing assertion
				t.Fatalf("%s did not return after its context ended", tt.name)
			}
		})
	}
}

// TestHealth: the liveness probe decodes without an envelope.
func TestHealth(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil, httpapi.Options{Version: "1.2.3"}, ops.Options{})
	h, err := s.c.Health(bg)
	if err != nil || h.Status != "ok" || h.Server != "fsplane" || h.Version != "1.2.3" {
		t.Fatalf("Health = %+v, %v", h, err)
	}
}
