package httpapi_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestUploadWithoutPath: AIO's form makes path optional; an upload
// without one (or with an empty one, in the form or the query) lands at
// /tmp/<filename> when /tmp is inside a root (AIO's own --root /), else
// at the top of the first root, replacing a file there, and file_path
// says where. A filename that leaves no name is 422 asking for path.
func TestUploadWithoutPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		route    string
		query    string
		parts    func(name string) []formPart
		filename string
		aioRoot  bool // the server runs with --root /
		status   int
	}{
		{name: "v2 file only", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "a.txt", status: 200},
		{name: "v1 file only", route: "/v1/file/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "a.txt", status: 200},
		{name: "v2 empty path before", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{pathPart(""), {"file", "body", n}} }, filename: "a.txt", status: 200},
		{name: "v2 empty path after", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}, pathPart(" ")} }, filename: "a.txt", status: 200},
		{name: "v2 empty query", route: "/v2/fs/upload", query: "?path=", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "a.txt", status: 200},
		{name: "v2 directories dropped", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: `C:\Users\me\sub/a.txt`, status: 200},
		{name: "v2 root /", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "fsplane-test-" + rand.Text() + ".txt", aioRoot: true, status: 200},
		{name: "v1 root /", route: "/v1/file/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "x/fsplane-test-" + rand.Text() + ".txt", aioRoot: true, status: 200},
		{name: "v2 filename ..", route: "/v2/fs/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "..", status: 422},
		{name: "v1 filename dir/.", route: "/v1/file/upload", parts: func(n string) []formPart { return []formPart{{"file", "body", n}} }, filename: "dir/.", status: 422},
		{name: "v2 no filename", route: "/v2/fs/upload", parts: func(string) []formPart { return []formPart{{name: "file", value: "body"}} }, status: 422},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e *xenv
			if tc.aioRoot {
				e = newXEnvRoots(t, ops.Options{}, "/")
			} else {
				e = newXEnv(t, ops.Options{})
			}
			base := tc.filename[strings.LastIndexAny(tc.filename, `/\`)+1:]
			want := filepath.Join(e.root, base)
			if tc.aioRoot {
				want = filepath.Join("/tmp", base)
				t.Cleanup(func() { os.Remove(want) })
			} else if tc.status == 200 {
				e.put(base, []byte("old")) // replaced, as with an explicit path
			}
			body, ct := multipartBody(tc.parts(tc.filename)...)
			status, m := e.rawCT("POST", tc.route+tc.query, string(body), ct)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, m)
			}
			if status == 422 {
				errs, _ := m["errors"].([]any)
				if len(errs) != 1 || fmt.Sprint(errs[0].(map[string]any)["location"]) != "[body path]" ||
					!strings.Contains(fmt.Sprint(errs[0].(map[string]any)["message"]), "pass `path`") {
					t.Fatalf("errors %v", m["errors"])
				}
				return
			}
			data, _ := m["data"].(map[string]any)
			if m["success"] != true || data["file_path"] != want {
				t.Fatalf("response %v, want file_path %s", m, want)
			}
			if b, err := os.ReadFile(want); err != nil || string(b) != "body" {
				t.Fatalf("%s holds %q %v", want, b, err)
			}
		})
	}
}

// TestV1EditorViewDirectory: view on a directory lists it as Anthropic's
// str_replace_editor does (find DIR -maxdepth 2 -not -path '*/.*'),
// sorted by path, confined to the roots, cut past ops.DirViewLimit;
// view_range on a directory is bad_request.
func TestV1EditorViewDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"d/a.txt": "a", "d/b-c.txt": "b", "d/b/x.txt": "x", "d/b/deep/y.txt": "y", "d/b/.h2": "h",
		"d/.hidden/z.txt": "z", "d/.h.txt": "h", "d/empty/": "",
	}, httpapi.Options{})
	if err := os.Symlink("b", filepath.Join(e.root, "d", "link")); err != nil {
		t.Fatal(err)
	}
	for i := range ops.DirViewLimit + 5 {
		e.putFile(fmt.Sprintf("big/f%04d", i))
	}
	head := func(dir string) string {
		return "Here's the files and directories up to 2 levels deep in " + dir + ", excluding hidden items:\n"
	}
	d := filepath.Join(e.root, "d")
	tests := []struct {
		name, path string
		want       string
	}{
		{"absolute", d, head(d) + d + "\n" + d + "/a.txt\n" + d + "/b\n" + d + "/b-c.txt\n" + d + "/b/deep\n" + d + "/b/x.txt\n" + d + "/empty\n" + d + "/link\n\n"},
		{"trailing slash", d + "/", head(d+"/") + d + "/\n" + d + "/a.txt\n" + d + "/b\n" + d + "/b-c.txt\n" + d + "/b/deep\n" + d + "/b/x.txt\n" + d + "/empty\n" + d + "/link\n\n"},
		{"relative", "d/b", head("d/b") + "d/b\nd/b/deep\nd/b/deep/y.txt\nd/b/x.txt\n\n"},
		{"through a link", "d/link", head("d/link") + "d/link\nd/link/deep\nd/link/deep/y.txt\nd/link/x.txt\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: tc.path})
			if err != nil {
				t.Fatal(err)
			}
			if v.Output != tc.want {
				t.Errorf("output\n%s\nwant\n%s", v.Output, tc.want)
			}
			if !v.PrevExist || !filepath.IsAbs(v.Path) {
				t.Errorf("result %+v", v)
			}
		})
	}
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		v, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "big"})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(v.Output, "\n\n"), "\n")
		// header, the directory, the entries, the note
		if len(lines) != ops.DirViewLimit+3 || !strings.Contains(lines[len(lines)-1], fmt.Sprintf("cut at %d entries", ops.DirViewLimit)) {
			t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
		}
		if lines[2] != "big/f0000" || lines[len(lines)-2] != fmt.Sprintf("big/f%04d", ops.DirViewLimit-1) {
			t.Errorf("first %q, last %q", lines[2], lines[len(lines)-2])
		}
	})
	t.Run("view_range", func(t *testing.T) {
		t.Parallel()
		_, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "d", ViewRange: []int{1, 2}})
		if ce := wantErr(t, err, 200, "bad_request"); !strings.Contains(ce.Message, "view_range only applies to files") {
			t.Errorf("message %q", ce.Message)
		}
	})
	t.Run("unreadable subdirectory", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root reads every directory")
		}
		e := newEnv(t, map[string]string{"u/a.txt": "a", "u/locked/x.txt": "x"}, httpapi.Options{})
		locked := filepath.Join(e.root, "u", "locked")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(locked, 0o755) })
		v, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "u"})
		if err != nil || v.Output != head("u")+"u\nu/a.txt\nu/locked\n\n" {
			t.Fatalf("%+v %v", v, err)
		}
	})
	t.Run("outside", func(t *testing.T) {
		t.Parallel()
		_, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "/etc"})
		wantErr(t, err, 200, "outside_root")
	})
}

// putFile creates an empty file under the root, with its directories.
func (e *env) putFile(name string) {
	e.t.Helper()
	p := filepath.Join(e.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
}
