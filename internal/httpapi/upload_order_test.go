package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/ops"
)

// The AIO upload form has two fields, file and path, and clients send
// them in either order: fsplane's client and curl -F path=… -F file=@…
// send path first, the TypeScript SDK (@agent-infra/sandbox) appends the
// file first. These tests post real multipart bodies over loopback.

// formPart is one multipart field; a file part has a filename.
type formPart struct{ name, value, filename string }

func filePart(content string) formPart { return formPart{"file", content, "up.txt"} }
func pathPart(p string) formPart       { return formPart{name: "path", value: p} }

func multipartBody(parts ...formPart) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.filename != "" {
			w, _ := mw.CreateFormFile(p.name, p.filename)
			w.Write([]byte(p.value))
		} else {
			mw.WriteField(p.name, p.value)
		}
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

func (e *xenv) postForm(route string, parts ...formPart) (int, map[string]any) {
	e.t.Helper()
	body, ct := multipartBody(parts...)
	return e.rawCT("POST", route, string(body), ct)
}

// stateFiles lists the state directory's entries (relative paths).
func (e *xenv) stateFiles() []string {
	dir := e.eng.Workspace().StateDir()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// openSpools lists this process's descriptors on unlinked files in the
// state directory: an upload spool still open (Linux only; nil
// elsewhere).
func (e *xenv) openSpools() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	dir := e.eng.Workspace().StateDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, fd := range fds {
		l, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(l, dir+"/") && strings.HasSuffix(l, " (deleted)") {
			out = append(out, l)
		}
	}
	return out
}

// leftovers is everything an upload may leave behind: part files in the
// root, spool files in the state directory, open spools.
func (e *xenv) leftovers() []string {
	out := e.strays()
	for _, f := range e.stateFiles() {
		if strings.Contains(f, "upload") || strings.Contains(f, "spool") || strings.HasSuffix(f, ".part") {
			out = append(out, f)
		}
	}
	return append(out, e.openSpools()...)
}

// waitNoLeftovers polls until nothing is left, for up to 10s: the
// handler may still be unwinding after the client gave up. It does not
// fail; assertClean, called next, reports whatever stays.
func (e *xenv) waitNoLeftovers() {
	deadline := time.Now().Add(10 * time.Second)
	for len(e.leftovers()) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// assertClean fails t if an upload left anything behind (leftovers) and,
// given the state directory's listing from before it (stateFiles), if
// that listing changed at all, which also catches a spool under a name
// leftovers does not know. Pass a nil before after a successful upload:
// it legitimately records undo state there. (After Open the listing is
// never empty, so nil cannot stand for a real one.)
func (e *xenv) assertClean(t *testing.T, before []string) {
	t.Helper()
	if before != nil {
		if after := e.stateFiles(); !slices.Equal(after, before) {
			t.Errorf("state directory changed: %v → %v", before, after)
		}
	}
	if l := e.leftovers(); len(l) != 0 {
		t.Fatalf("left behind: %v", l)
	}
}

func TestUploadFieldOrder(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 200<<10) // 3.2 MiB: several spool buffers
	tests := []struct {
		name      string
		route     string
		fileFirst bool
		target    string // the path field
		content   string
		existing  bool   // target exists (mode 0600) and is replaced
		want      string // the stored file, relative to the root
	}{
		{"v2 path then file", "/v2/fs/upload", false, "sub/ord.txt", "hello", false, "sub/ord.txt"},
		{"v2 file then path", "/v2/fs/upload", true, "sub/ord.txt", "hello", false, "sub/ord.txt"},
		{"v1 path then file", "/v1/file/upload", false, "sub/ord.txt", "hello", false, "sub/ord.txt"},
		{"v1 file then path", "/v1/file/upload", true, "sub/ord.txt", "hello", false, "sub/ord.txt"},
		{"v2 file then path large", "/v2/fs/upload", true, "sub/big.bin", big, false, "sub/big.bin"},
		{"v1 file then path large", "/v1/file/upload", true, "sub/big.bin", big, false, "sub/big.bin"},
		{"v2 file then path replaces", "/v2/fs/upload", true, "sub/old.txt", "new", true, "sub/old.txt"},
		{"v1 file then path replaces", "/v1/file/upload", true, "sub/old.txt", "new", true, "sub/old.txt"},
		{"v2 file then directory", "/v2/fs/upload", true, "sub", "into dir", false, "sub/up.txt"},
		{"v2 file then empty file", "/v2/fs/upload", true, "sub/empty.txt", "", false, "sub/empty.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			if err := os.Mkdir(e.path("sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.existing {
				e.put(tc.target, []byte("old content"))
				if err := os.Chmod(e.path(tc.target), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			parts := []formPart{pathPart(tc.target), filePart(tc.content)}
			if tc.fileFirst {
				parts[0], parts[1] = parts[1], parts[0]
			}
			status, m := e.postForm(tc.route, parts...)
			data, _ := m["data"].(map[string]any)
			if status != 200 || m["success"] != true || data == nil {
				t.Fatalf("status %d: %v", status, m)
			}
			if data["file_path"] != e.path(tc.want) || data["file_size"] != float64(len(tc.content)) ||
				data["version"] != version([]byte(tc.content)) || data["created"] != !tc.existing || data["success"] != true {
				t.Errorf("data %v", data)
			}
			got, err := os.ReadFile(e.path(tc.want))
			if err != nil || string(got) != tc.content {
				t.Fatalf("stored %d bytes (%v), want %d", len(got), err, len(tc.content))
			}
			if tc.existing {
				if fi, _ := os.Stat(e.path(tc.want)); fi.Mode().Perm() != 0o600 {
					t.Errorf("replaced file's mode %v, want 0600 kept", fi.Mode().Perm())
				}
			}
			e.assertClean(t, nil)
		})
	}
}

// TestUploadPathSources: the target comes from the form's path field (AIO)
// or ?path= (fsplane's extension); both may be given only when they agree,
// in any order of the parts. A disagreement is a 400 and writes nothing.
func TestUploadPathSources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		route  string
		query  string
		parts  []formPart
		status int    // HTTP status
		code   string // error_type on failure; "" on success
		want   string // the stored file on success
	}{
		{"query only", "/v2/fs/upload", "q.txt", []formPart{filePart("x")}, 200, "", "q.txt"},
		{"query and same path before", "/v2/fs/upload", "q.txt", []formPart{pathPart("q.txt"), filePart("x")}, 200, "", "q.txt"},
		{"query and same path after", "/v2/fs/upload", "q.txt", []formPart{filePart("x"), pathPart("q.txt")}, 200, "", "q.txt"},
		{"same path spelled differently", "/v2/fs/upload", "sub/./q.txt", []formPart{filePart("x"), pathPart("sub/q.txt")}, 200, "", "sub/q.txt"},
		{"query and empty path after", "/v2/fs/upload", "q.txt", []formPart{filePart("x"), pathPart(" ")}, 200, "", "q.txt"},
		{"query and other path before", "/v2/fs/upload", "other.txt", []formPart{pathPart("sub/ord.txt"), filePart("x")}, 400, "bad_request", ""},
		{"query and other path after", "/v2/fs/upload", "other.txt", []formPart{filePart("x"), pathPart("sub/ord.txt")}, 400, "bad_request", ""},
		{"two paths after", "/v2/fs/upload", "", []formPart{filePart("x"), pathPart("a.txt"), pathPart("b.txt")}, 400, "bad_request", ""},
		{"two paths before", "/v2/fs/upload", "", []formPart{pathPart("a.txt"), pathPart("b.txt"), filePart("x")}, 400, "bad_request", ""},
		{"paths around the file", "/v2/fs/upload", "", []formPart{pathPart("a.txt"), filePart("x"), pathPart("b.txt")}, 400, "bad_request", ""},
		{"v1 query and other path after", "/v1/file/upload", "other.txt", []formPart{filePart("x"), pathPart("sub/ord.txt")}, 200, "bad_request", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			if err := os.Mkdir(e.path("sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := e.stateFiles()
			route := tc.route
			if tc.query != "" {
				route += "?path=" + url.QueryEscape(tc.query)
			}
			status, m := e.postForm(route, tc.parts...)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, m)
			}
			data, _ := m["data"].(map[string]any)
			if tc.code == "" {
				if m["success"] != true || data["file_path"] != e.path(tc.want) {
					t.Fatalf("response %v, want %s stored", m, tc.want)
				}
				e.assertClean(t, nil)
				return
			}
			if m["success"] != false || data["error_type"] != tc.code {
				t.Fatalf("response %v, want error_type %s", m, tc.code)
			}
			if msg, _ := m["message"].(string); !strings.Contains(msg, "path") {
				t.Errorf("message %q does not name the path", msg)
			}
			for _, p := range []string{"q.txt", "other.txt", "sub/ord.txt", "a.txt", "b.txt"} {
				if _, err := os.Lstat(e.path(p)); err == nil {
					t.Errorf("%s written on a conflict", p)
				}
			}
			e.assertClean(t, before)
		})
	}
}

// TestUploadTwoFileParts: a form with two file parts is refused and writes
// nothing, wherever its path is; the second part was dropped silently
// (AIO's Python server keeps the last, so a client could not tell which
// file it stored).
func TestUploadTwoFileParts(t *testing.T) {
	t.Parallel()
	for name, parts := range map[string][]formPart{
		"path first":   {pathPart("q.txt"), filePart("one"), filePart("two")},
		"path last":    {filePart("one"), filePart("two"), pathPart("q.txt")},
		"path between": {filePart("one"), pathPart("q.txt"), filePart("two")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			before := e.stateFiles()
			status, m := e.postForm("/v2/fs/upload", parts...)
			data, _ := m["data"].(map[string]any)
			if msg, _ := m["message"].(string); status != 400 || data["error_type"] != "bad_request" || !strings.Contains(msg, "more than one file part") {
				t.Fatalf("status %d %v, want 400 bad_request naming the second file part", status, m)
			}
			if _, err := os.Lstat(e.path("q.txt")); err == nil {
				t.Error("q.txt written")
			}
			e.assertClean(t, before)
		})
	}
}

// TestUploadFileFirstFailures: a file sent before its path is held until
// the path arrives; every way the upload can then fail answers as the
// path-first upload would and leaves nothing behind.
func TestUploadFileFirstFailures(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("z", 3<<20)
	tests := []struct {
		name   string
		route  string
		parts  []formPart
		status int
		code   string // error_type, or the location for a 422
	}{
		{"no path, filename ..", "/v2/fs/upload", []formPart{{"file", big, ".."}}, 422, "body.path"},
		{"empty path after, filename dir/..", "/v2/fs/upload", []formPart{{"file", big, "dir/.."}, pathPart("  ")}, 422, "body.path"},
		{"oversized path after", "/v2/fs/upload", []formPart{filePart(big), pathPart(strings.Repeat("a", 9<<10))}, 422, "body.path"},
		{"v1 no path, filename a\\.", "/v1/file/upload", []formPart{{"file", big, `a\.`}}, 422, "body.path"},
		{"outside the roots", "/v2/fs/upload", []formPart{filePart(big), pathPart("/etc/fsplane-order-test")}, 403, "outside_root"},
		{"missing directory", "/v2/fs/upload", []formPart{filePart(big), pathPart("nodir/x.txt")}, 404, "not_found"},
		{"v1 missing directory", "/v1/file/upload", []formPart{filePart(big), pathPart("nodir/x.txt")}, 200, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			before := e.stateFiles()
			status, m := e.postForm(tc.route, tc.parts...)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, m)
			}
			if status == 422 {
				errs, _ := m["errors"].([]any)
				if len(errs) != 1 {
					t.Fatalf("errors %v", m["errors"])
				}
				ve := errs[0].(map[string]any)
				if loc := fmt.Sprint(ve["location"]); loc != "[body path]" {
					t.Errorf("location %s, want [body path]", loc)
				}
				if msg, _ := ve["message"].(string); !strings.Contains(msg, "path") {
					t.Errorf("message %q", msg)
				}
			} else if data, _ := m["data"].(map[string]any); m["success"] != false || data["error_type"] != tc.code {
				t.Fatalf("response %v, want error_type %s", m, tc.code)
			}
			if ents, _ := os.ReadDir(e.root); len(ents) != 0 {
				t.Errorf("root not empty: %v", ents)
			}
			e.assertClean(t, before)
		})
	}
}

// TestUploadAbortMidFile drops the connection halfway through the file in
// each order of the fields: no part file, no spool, the target unchanged.
func TestUploadAbortMidFile(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("y", 8<<20)
	tests := []struct {
		name  string
		query string
		parts []formPart
		// spooled: the file is held in the state directory (file first,
		// no ?path=); else it streams to a part file beside the target.
		spooled bool
	}{
		{"path then file", "", []formPart{pathPart("target.bin"), filePart(content)}, false},
		{"file then path", "", []formPart{filePart(content), pathPart("target.bin")}, true},
		{"query, file then path", "?path=target.bin", []formPart{filePart(content), pathPart("target.bin")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newXEnv(t, ops.Options{})
			e.put("target.bin", []byte("original"))
			before := e.stateFiles()
			body, ct := multipartBody(tc.parts...)
			addr := e.srv.Listener.Addr().String()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "POST /v2/fs/upload%s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", tc.query, addr, ct, len(body))
			conn.Write(body[:len(body)/2])
			// Wait until the file is being written, so the cut lands
			// mid-spool.
			started := func() bool {
				if tc.spooled {
					return len(e.openSpools()) != 0
				}
				return len(e.strays()) != 0
			}
			if tc.spooled && runtime.GOOS != "linux" {
				time.Sleep(200 * time.Millisecond) // no /proc to watch the spool by
			} else {
				deadline := time.Now().Add(10 * time.Second)
				for !started() && time.Now().Before(deadline) {
					time.Sleep(2 * time.Millisecond)
				}
				if !started() {
					t.Fatal("the upload never started writing")
				}
			}
			conn.Close()
			e.waitNoLeftovers()
			e.assertClean(t, before)
			if got, _ := os.ReadFile(e.path("target.bin")); string(got) != "original" {
				t.Fatalf("target changed: %.20q", got)
			}
		})
	}
}

// BenchmarkUploadFileFirst is BenchmarkUpload in the TypeScript SDK's
// order (file, then path): the file is spooled in the state directory,
// then placed like a path-first upload, so it is written twice.
func BenchmarkUploadFileFirst(b *testing.B) {
	e := newXEnv(b, ops.Options{})
	const size = 256 << 20
	b.SetBytes(size)
	for b.Loop() {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			w, err := mw.CreateFormFile("file", "bench.bin")
			if err == nil {
				_, err = io.Copy(w, &patterned{n: size})
			}
			if err == nil {
				err = mw.WriteField("path", "bench.bin")
			}
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		resp, err := http.Post(e.srv.URL+"/v2/fs/upload", mw.FormDataContentType(), pr)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
