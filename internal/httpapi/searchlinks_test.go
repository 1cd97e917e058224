package httpapi_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestSearchLinksIntoStateDir: with the state directory inside the root
// (as with --root / and the default state directory), links uploaded in
// a tar that point into it stay inside the root and are accepted; grep,
// search, find and glob must still not show what the state directory
// holds (the undo log, blobs with old file contents), neither through a
// link met while walking nor through a link named as the path.
func TestSearchLinksIntoStateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: filepath.Join(root, ".st")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	eng := ops.New(ws, ops.Options{})
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	// Overwriting a file keeps its old content in an undo blob (when over
	// the 4 KiB kept inline in the undo log).
	for _, content := range []string{"OLDSECRET first version\n" + strings.Repeat("x", 5000) + "\n", "new\n"} {
		if _, err := c.Write(bg, client.WriteRequest{Path: "a.txt", Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	// A link to every file of the state directory, and to the directory.
	entries := []tarEntry{
		{Name: "plain.txt", Type: tar.TypeReg, Body: "plain\n"},
		{Name: "sd", Type: tar.TypeSymlink, Link: "../.st"},
		{Name: "su", Type: tar.TypeSymlink, Link: "../.st/undo"},
	}
	var links []string
	stateDir := filepath.Join(root, ".st")
	filepath.WalkDir(stateDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(stateDir, p)
			name := fmt.Sprintf("j%d", len(links))
			links = append(links, "t/"+name)
			entries = append(entries, tarEntry{Name: name, Type: tar.TypeSymlink, Link: "../.st/" + filepath.ToSlash(rel)})
		}
		return nil
	})
	var blobs bool
	for _, en := range entries {
		blobs = blobs || strings.Contains(en.Link, "blob")
	}
	if !blobs {
		t.Fatalf("no undo blob in the state directory: %v", entries)
	}
	if _, err := c.PutTree(bg, client.TreeQuery{Path: "t"}, bytes.NewReader(makeTar(t, entries))); err != nil {
		t.Fatal(err)
	}
	// As read refuses them.
	_, err = c.Read(bg, client.ReadQuery{Path: links[0]})
	wantErr(t, err, http.StatusForbidden, "outside_root")

	leaks := func(what string, texts ...string) {
		t.Helper()
		for _, s := range texts {
			if strings.Contains(s, "OLDSECRET") || strings.Contains(s, ".st") || strings.Contains(s, "/sd/") ||
				strings.Contains(s, "/su/") || strings.Contains(s, `"path"`) {
				t.Errorf("%s shows the state directory: %q", what, s)
			}
		}
	}
	all := 0
	for _, req := range []client.GrepRequest{
		{Path: "t", Pattern: "."},
		{Path: "t", Pattern: ".", IncludeHidden: true, MaxFileSize: "0"},
		{Path: ".", Pattern: "OLDSECRET|version", IncludeHidden: true, MaxFileSize: "0"},
	} {
		res, err := c.Grep(bg, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Matches {
			leaks("grep "+req.Path, m.File, m.LineContent)
			if m.File != filepath.Join(root, "t", "plain.txt") {
				t.Errorf("grep %s matched %s:%d: %q", req.Path, m.File, m.LineNumber, m.LineContent)
			}
		}
		all += len(res.Matches)
	}
	if all != 2 {
		t.Errorf("grep found %d matches, want t/plain.txt twice", all)
	}

	// Named as the path, a link into the state directory, or a path
	// through one, is refused.
	for _, p := range append([]string{"t/sd", "t/sd/undo", "t/su", "t/su/log"}, links...) {
		_, err := c.Grep(bg, client.GrepRequest{Path: p, Pattern: "."})
		wantErr(t, err, http.StatusForbidden, "outside_root")
		if !strings.HasSuffix(p, "sd") && !strings.HasSuffix(p, "su") && !strings.HasSuffix(p, "undo") {
			_, err = c.V1Search(bg, client.V1SearchRequest{File: p, Regex: "."})
			wantErr(t, err, http.StatusOK, "outside_root") // v1 errors are 200, as AIO's
		}
	}
	for _, p := range []string{"t/sd", "t/su"} {
		_, err := c.Find(bg, client.FindQuery{Path: p, Pattern: "*"})
		wantErr(t, err, http.StatusForbidden, "outside_root")
	}

	// find and glob report the links as links: names only, nothing below.
	fr, err := c.Find(bg, client.FindQuery{Path: "t", Pattern: "*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Files) != len(entries) {
		t.Errorf("find: %v, want the %d members", fr.Files, len(entries))
	}
	for _, f := range fr.Files {
		leaks("find", f)
	}
	// Nor through the pattern's literal directories: a link among them,
	// or the state directory itself, is not entered.
	for _, q := range []client.GlobRequest{
		{Path: "t", Pattern: "sd/**"}, {Path: "t", Pattern: "su/*"}, {Path: "t", Pattern: "sd/undo/*"},
		{Path: ".", Pattern: ".st/**", IncludeHidden: true}, {Path: ".", Pattern: ".st/undo/*", IncludeHidden: true},
	} {
		r, err := c.V1Glob(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Files {
			leaks("glob "+q.Pattern, f.Path)
		}
		if len(r.Files) > 1 {
			t.Errorf("glob %s: %d entries", q.Pattern, len(r.Files))
		}
	}
	for _, q := range []client.FindQuery{{Path: "t", Pattern: "sd/*"}, {Path: ".", Pattern: ".st/undo/*"}} {
		r, err := c.Find(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) > 0 {
			t.Errorf("find %s: %v", q.Pattern, r.Files)
		}
	}
	gr, err := c.V1Glob(bg, client.GlobRequest{Path: "t", Pattern: "**", IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Files) != len(entries) {
		t.Errorf("glob: %d entries, want the %d members", len(gr.Files), len(entries))
	}
	for _, f := range gr.Files {
		leaks("glob", f.Path)
		if f.IsDirectory {
			t.Errorf("glob: %s reported as a directory", f.Path)
		}
		// The link's own size (its target's length), not the target's.
		if fi, err := os.Lstat(f.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 && (f.Size == nil || *f.Size != fi.Size()) {
			t.Errorf("glob: %s size %v, want the link's %d", f.Path, f.Size != nil && *f.Size == fi.Size(), fi.Size())
		}
	}
}
