package client_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestPollWatchSendsFractionalTimeout: a float query field must reach
// the server, here as a long-poll that waits instead of returning at once.
func TestPollWatchSendsFractionalTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t, map[string]string{"a.txt": "a\n"}, httpapi.Options{}, ops.Options{})
	w, err := s.c.CreateWatch(bg, client.CreateWatchRequest{Path: "."})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.c.PollWatch(bg, w.WatcherID, client.PollQuery{})
	if err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	timeout := wait.Seconds()
	start := time.Now()
	p, err := s.c.PollWatch(bg, w.WatcherID, client.PollQuery{Cursor: &first.Cursor, Timeout: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < wait-50*time.Millisecond || len(p.Events) != 0 {
		t.Fatalf("poll with timeout %gs returned after %v with %d events; the server did not get the timeout", timeout, elapsed, len(p.Events))
	}
}

// TestErrorKeepsHint: the server's hint reaches the *Error whichever way
// the failure came: an HTTP status (v2) or success:false in a 200 (v1), a
// JSON call or a streamed upload.
func TestErrorKeepsHint(t *testing.T) {
	t.Parallel()
	s := newServer(t, map[string]string{"a.txt": "a\n"}, httpapi.Options{}, ops.Options{ReadOnly: true})
	const hint = "only read, list, stat and search operations are available"
	for _, tt := range []struct {
		name   string
		status int
		call   func() error
	}{
		{"v2 JSON", 403, func() error {
			_, err := s.c.Write(bg, client.WriteRequest{Path: "b.txt", Content: "b"})
			return err
		}},
		{"v1 JSON", 200, func() error {
			_, err := s.c.V1Write(bg, client.V1WriteRequest{File: "b.txt", Content: "b"})
			return err
		}},
		{"v2 upload", 403, func() error {
			_, err := s.c.Upload(bg, "b.txt", strings.NewReader("b"), "")
			return err
		}},
		{"v1 upload", 200, func() error {
			_, err := s.c.V1Upload(bg, "b.txt", strings.NewReader("b"))
			return err
		}},
		{"tree", 403, func() error {
			_, err := s.c.PutTree(bg, client.TreeQuery{Path: "t"}, bytes.NewReader(tarOf(t, "f", "x")))
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.call()
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *client.Error", err)
			}
			if ce.Status != tt.status || ce.Code() != "read_only" || ce.Hint != hint {
				t.Fatalf("got status %d code %q hint %q, want %d read_only %q", ce.Status, ce.Code(), ce.Hint, tt.status, hint)
			}
			if !strings.Contains(err.Error(), "hint: "+hint) {
				t.Errorf("Error() = %q lacks the hint", err)
			}
		})
	}
}

// TestHintHandler: a successful call's hint (here grep's note that a file
// was too big to search) reaches WithHintHandler with its route; a call
// without a hint does not call it.
func TestHintHandler(t *testing.T) {
	t.Parallel()
	s := newServer(t, map[string]string{"big.log": strings.Repeat("line\n", 1000)}, httpapi.Options{}, ops.Options{})
	type seen struct{ route, hint string }
	var got []seen
	c, err := client.New(s.url, client.WithHintHandler(func(route, hint string) { got = append(got, seen{route, hint}) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Grep(bg, client.GrepRequest{Path: "big.log", Pattern: "line", MaxFileSize: "1K"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(bg, client.StatQuery{Path: "big.log"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].route != "POST /v2/fs/grep" || !strings.Contains(got[0].hint, "max_file_size") {
		t.Fatalf("hints seen: %+v, want one from grep about max_file_size", got)
	}
}

// TestHintHandlerStreamingCalls: the hint of a successful call whose
// request is not JSON (here a tree extraction into a new directory,
// which undo cannot revert) reaches WithHintHandler too.
func TestHintHandlerStreamingCalls(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		call  func(c *client.Client) error
		route string
		hint  string
	}{
		{"PutTree", func(c *client.Client) error {
			_, err := c.PutTree(bg, client.TreeQuery{Path: "t"}, bytes.NewReader(tarOf(t, "f", "x")))
			return err
		}, "PUT /v2/fs/tree", "no undo record"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, nil, httpapi.Options{}, ops.Options{})
			type seen struct{ route, hint string }
			var got []seen
			c, err := client.New(s.url, client.WithHintHandler(func(route, hint string) { got = append(got, seen{route, hint}) }))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].route != tt.route || !strings.Contains(got[0].hint, tt.hint) {
				t.Fatalf("hints seen: %+v, want one from %s saying %q", got, tt.route, tt.hint)
			}
		})
	}
}

// TestInvalidUTF8IsRefused: JSON cannot carry bytes that are not UTF-8
// (encoding/json sends each as U+FFFD), so a JSON call holding such a
// string fails before it is sent, rather than write other bytes or act on
// another file, here the one whose name has a literal U+FFFD.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	const other = "\uFFFD.txt"
	for _, tt := range []struct {
		name  string
		call  func(c *client.Client) error
		field string
	}{
		{"Write content", func(c *client.Client) error {
			_, err := c.Write(bg, client.WriteRequest{Path: "bin", Content: "\xff\xfe\x00a"})
			return err
		}, "content"},
		{"Delete path", func(c *client.Client) error {
			_, err := c.Delete(bg, client.DeleteRequest{Path: "\xff.txt"})
			return err
		}, "path"},
		{"V1Write file", func(c *client.Client) error {
			_, err := c.V1Write(bg, client.V1WriteRequest{File: "\xff.txt", Content: "x"})
			return err
		}, "file"},
		{"Edit new_str", func(c *client.Client) error {
			_, err := c.Edit(bg, client.EditRequest{Command: "str_replace", Path: other, OldStr: client.String("keep"), NewStr: client.String("\xff")})
			return err
		}, "new_str"},
		{"Patch expected_versions", func(c *client.Client) error {
			_, err := c.Patch(bg, client.PatchRequest{Patch: "*** Begin Patch\n*** End Patch", ExpectedVersions: map[string]string{"\xff.txt": "v"}})
			return err
		}, "expected_versions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, map[string]string{other: "keep\n"}, httpapi.Options{}, ops.Options{})
			err := tt.call(s.c)
			if err == nil || !strings.Contains(err.Error(), tt.field+" is not valid UTF-8") {
				t.Errorf("err = %v, want one naming %s", err, tt.field)
			}
			if n := s.requests.Load(); n != 0 {
				t.Errorf("%d requests sent", n)
			}
			if b, err := os.ReadFile(filepath.Join(s.root, other)); err != nil || string(b) != "keep\n" {
				t.Errorf("%s = %q, %v", other, b, err)
			}
		})
	}
}

// TestAsSendsUser: a client from As sends its user (?user=) on every
// route that creates files owned by one, so the server applies it: here
// an unknown account, which the server refuses before creating anything.
func TestAsSendsUser(t *testing.T) {
	t.Parallel()
	s := newServer(t, map[string]string{"a.txt": "a\n"}, httpapi.Options{}, ops.Options{})
	c := s.c.As("no-such-user-fsplane")
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"Write", func() error { _, err := c.Write(bg, client.WriteRequest{Path: "w.txt", Content: "w"}); return err }},
		{"Mkdir", func() error { _, err := c.Mkdir(bg, client.MkdirRequest{Path: "d"}); return err }},
		{"Copy", func() error {
			_, err := c.Copy(bg, client.CopyRequest{Source: "a.txt", Destination: "c.txt"})
			return err
		}},
		{"Upload", func() error { _, err := c.Upload(bg, "u.txt", strings.NewReader("u"), ""); return err }},
		{"PutTree", func() error {
			_, err := c.PutTree(bg, client.TreeQuery{Path: "t"}, bytes.NewReader(tarOf(t, "f", "x")))
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.call()
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || !strings.Contains(ce.Message, "no such user: no-such-user-fsplane") {
				t.Errorf("%s as an unknown user: %v, want 400 no such user", tt.name, err)
			}
		})
	}
	if _, err := s.c.As("root").Upload(bg, "u.txt", strings.NewReader("u"), "no-such-user-fsplane"); err == nil {
		t.Error("Upload's own user did not take precedence over As's")
	}
}

func tarOf(t *testing.T, name, content string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHostClient: a host client reaches the host for the routes the hub
// serves for hosts, and refuses every other method before sending it, so
// nothing lands on the server's own workspace or comes back as a bare 404.
func TestHostClient(t *testing.T) {
	t.Parallel()
	s, hostRoot := newHostServer(t, map[string]string{"a.txt": "server\n"}, map[string]string{"a.txt": "host\n"})
	hc := s.c.Host("laptop")

	t.Run("served", func(t *testing.T) {
		r, err := hc.Read(bg, client.ReadQuery{Path: "a.txt"})
		if err != nil || r.Content != "host\n" {
			t.Fatalf("read: %+v %v", r, err)
		}
		for _, tt := range []struct {
			name string
			call func() error
		}{
			{"Write", func() error { _, err := hc.Write(bg, client.WriteRequest{Path: "w.txt", Content: "w\n"}); return err }},
			{"Edit", func() error {
				_, err := hc.Edit(bg, client.EditRequest{Command: "str_replace", Path: "a.txt", OldStr: client.String("host"), NewStr: client.String("edited")})
				return err
			}},
			{"Patch", func() error {
				_, err := hc.Patch(bg, client.PatchRequest{Path: "a.txt", Patch: "@@\n-edited\n+patched"})
				return err
			}},
			{"Stat", func() error { _, err := hc.Stat(bg, client.StatQuery{Path: "a.txt"}); return err }},
			{"List", func() error { _, err := hc.List(bg, client.ListQuery{Path: "."}); return err }},
			{"Grep", func() error { _, err := hc.Grep(bg, client.GrepRequest{Path: ".", Pattern: "patched"}); return err }},
			{"Find", func() error { _, err := hc.Find(bg, client.FindQuery{Path: ".", Pattern: "*.txt"}); return err }},
			{"Download", func() error {
				d, err := hc.Download(bg, "a.txt", client.DownloadOptions{})
				if err != nil {
					return err
				}
				defer d.Body.Close()
				b, err := io.ReadAll(d.Body)
				if err == nil && string(b) != "patched\n" {
					err = errors.New("downloaded " + string(b))
				}
				return err
			}},
			{"Download HEAD", func() error { _, err := hc.Download(bg, "a.txt", client.DownloadOptions{Head: true}); return err }},
			{"Download Range", func() error {
				d, err := hc.Download(bg, "a.txt", client.DownloadOptions{Range: "bytes=1-3"})
				if err != nil {
					return err
				}
				defer d.Body.Close()
				b, err := io.ReadAll(d.Body)
				if err == nil && (d.Status != http.StatusPartialContent || string(b) != "atc" || d.ContentRange != "bytes 1-3/8") {
					err = fmt.Errorf("ranged download: %d %q %q", d.Status, b, d.ContentRange)
				}
				return err
			}},
			{"TextEditor", func() error {
				_, err := hc.TextEditor(bg, "laptop", client.TextEditorRequest{Action: "read", Path: "a.txt"})
				return err
			}},
			{"Hosts", func() error { _, err := hc.Hosts(bg); return err }},
			{"Ping", func() error { return hc.Ping(bg) }},
		} {
			if err := tt.call(); err != nil {
				t.Errorf("%s through the host: %v", tt.name, err)
			}
		}
		for name, want := range map[string]string{"a.txt": "patched\n", "w.txt": "w\n"} {
			if b, err := os.ReadFile(filepath.Join(hostRoot, name)); err != nil || string(b) != want {
				t.Errorf("host's %s = %q, %v; want %q", name, b, err, want)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			method string
			call   func() error
		}{
			{"UndoHistory", func() error { _, err := hc.UndoHistory(bg, "a.txt"); return err }},
			{"Mkdir", func() error { _, err := hc.Mkdir(bg, client.MkdirRequest{Path: "d"}); return err }},
			{"Delete", func() error { _, err := hc.Delete(bg, client.DeleteRequest{Path: "a.txt"}); return err }},
			{"V1Delete", func() error { _, err := hc.V1Delete(bg, client.DeleteRequest{Path: "a.txt"}); return err }},
			{"V1Write", func() error { _, err := hc.V1Write(bg, client.V1WriteRequest{File: "a.txt", Content: "x"}); return err }},
			{"Upload", func() error { _, err := hc.Upload(bg, "u.txt", strings.NewReader("u"), ""); return err }},
			{"GetTree", func() error { _, err := hc.GetTree(bg, "."); return err }},
			{"Download", func() error { _, err := hc.Download(bg, "a.txt", client.DownloadOptions{V1: true}); return err }},
			{"Download", func() error {
				_, err := hc.Download(bg, "a.txt", client.DownloadOptions{ChangePolicy: "abort"})
				return err
			}},
			{"CreateWatch", func() error { _, err := hc.CreateWatch(bg, client.CreateWatchRequest{Path: "."}); return err }},
			{"Sandbox", func() error { _, err := hc.Sandbox(bg); return err }},
		} {
			before := s.requests.Load()
			err := tt.call()
			if !errors.Is(err, client.ErrNotOnHost) || !strings.HasPrefix(err.Error(), "client: ") ||
				!strings.Contains(err.Error(), "a host client serves Read, Write, Edit, Patch, Undo, Stat, List, Grep, Find, Download") {
				t.Errorf("%s through the host: %v, want ErrNotOnHost naming what hosts serve", tt.method, err)
			}
			if n := s.requests.Load() - before; n != 0 {
				t.Errorf("%s through the host sent %d requests", tt.method, n)
			}
		}
		if b, err := os.ReadFile(filepath.Join(s.root, "a.txt")); err != nil || string(b) != "server\n" {
			t.Errorf("the server's a.txt = %q, %v", b, err)
		}
	})

	t.Run("routes match the hub's", func(t *testing.T) {
		var served []string
		for _, r := range httpapi.New(nil, httpapi.Options{Hub: hub.New(hub.Options{})}).Routes() {
			method, path, _ := strings.Cut(r, " ")
			if rest, ok := strings.CutPrefix(path, "/v2/hosts/{host}/fs/"); ok {
				served = append(served, method+" /v2/fs/"+rest)
			}
		}
		slices.Sort(served)
		if diff := cmp.Diff(served, slices.Sorted(slices.Values(client.HostRoutes()))); diff != "" {
			t.Errorf("host routes (-hub +client):\n%s", diff)
		}
	})
}

// TestHeadFailureCarriesItsCode: a failed HEAD download, which has no body
// for the envelope, still gives the error's stable code (from
// client.ErrorHeader), as the GET does.
func TestHeadFailureCarriesItsCode(t *testing.T) {
	t.Parallel()
	s := newServer(t, map[string]string{"a.txt": "x"}, httpapi.Options{}, ops.Options{})
	for _, head := range []bool{false, true} {
		_, err := s.c.Download(bg, "missing.txt", client.DownloadOptions{Head: head})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 404 || ce.Code() != "not_found" {
			t.Errorf("head %v: %v, want a 404 not_found", head, err)
		}
	}
}
