package httpapi_test

import (
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

func TestSearchRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"src/main.go":   "package main\n\nfunc main() {\n\tHandleRequest()\n}\n",
		"src/util.go":   "package main\n\nfunc HandleRequest() {}\n",
		"src/app.py":    "def handle_request():\n    pass\n",
		".hidden/x.go":  "func HandleRequest()\n",
		"docs/guide.md": "Call HandleRequest to serve.\n",
	}, httpapi.Options{})
	g, err := e.c.Grep(bg, client.GrepRequest{Path: ".", Pattern: `Handle\w+\(`, Type: "go", ContextBefore: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.MatchCount != 2 || len(g.Matches) != 2 || !strings.HasSuffix(g.Matches[0].File, "src/main.go") || g.Matches[0].LineNumber != 4 ||
		g.Matches[0].LineContent != "\tHandleRequest()" || len(g.Matches[0].ContextBefore) != 1 || g.FilesMatched != 2 {
		t.Fatalf("grep: %+v", g)
	}
	g, err = e.c.V1Grep(bg, client.GrepRequest{Path: ".", Pattern: "handlerequest", CaseInsensitive: true, FixedStrings: true, MaxResults: client.Int(2)})
	if err != nil || g.MatchCount != 2 || !g.Truncated {
		t.Fatalf("v1 grep capped: %+v %v", g, err)
	}
	_, err = e.c.Grep(bg, client.GrepRequest{Path: ".", Pattern: "("})
	wantErr(t, err, 400, "bad_request")
	_, err = e.c.Grep(bg, client.GrepRequest{Path: "nowhere", Pattern: "x"})
	wantErr(t, err, 404, "not_found")

	f, err := e.c.Find(bg, client.FindQuery{Path: ".", Pattern: "**/*.go"})
	if err != nil || len(f.Files) != 2 || f.Truncated {
		t.Fatalf("find: %+v %v", f, err)
	}
	f, err = e.c.V1Find(bg, client.V1FindRequest{Path: "src", Glob: "*.py"})
	if err != nil || len(f.Files) != 1 || !strings.HasSuffix(f.Files[0], "src/app.py") {
		t.Fatalf("v1 find: %+v %v", f, err)
	}
	gl, err := e.c.V1Glob(bg, client.GlobRequest{Path: ".", Pattern: "src/*", SortBy: "name"})
	if err != nil || gl.TotalCount != 3 || gl.Files[0].Name != "app.py" || gl.Files[0].Size == nil || gl.Files[0].ModifiedTime == nil {
		t.Fatalf("glob: %+v %v", gl, err)
	}
	sr, err := e.c.V1Search(bg, client.V1SearchRequest{File: "src/main.go", Regex: "main"})
	if err != nil || len(sr.Matches) != 2 || sr.LineNumbers[0] != 0 || sr.LineNumbers[1] != 2 {
		t.Fatalf("v1 search: %+v %v", sr, err)
	}
	caps, _ := e.c.Capabilities(bg)
	for _, k := range []string{"grep", "find", "glob", "search"} {
		if !caps.Files[k] {
			t.Errorf("capability %s is false although its route is served", k)
		}
	}
}

// TestSearchRoutesBOM: a file's leading UTF-8 BOM is not part of line 1
// on any search route, as /v2/fs/read strips it: a line read as "top" is
// found by ^top and reported as "top".
func TestSearchRoutesBOM(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"bom.txt": "\ufefftop\nworld\n"}, httpapi.Options{})
	r, err := e.c.Read(bg, client.ReadQuery{Path: "bom.txt"})
	if err != nil || !strings.HasPrefix(r.Content, "top\n") {
		t.Fatalf("read: %+v %v", r, err)
	}
	grep := map[string]func(client.GrepRequest) (*client.GrepResult, error){
		"v2 grep": func(q client.GrepRequest) (*client.GrepResult, error) { return e.c.Grep(bg, q) },
		"v1 grep": func(q client.GrepRequest) (*client.GrepResult, error) { return e.c.V1Grep(bg, q) },
	}
	for _, route := range []string{"v2 grep", "v1 grep"} {
		for _, q := range []client.GrepRequest{
			{Path: "bom.txt", Pattern: "^top"},
			{Path: "bom.txt", Pattern: "top"},
			{Path: ".", Pattern: `^top\nworld`, Multiline: true},
		} {
			g, err := grep[route](q)
			if err != nil || len(g.Matches) != 1 || g.Matches[0].LineNumber != 1 || !strings.HasPrefix(g.Matches[0].LineContent, "top") {
				t.Errorf("%s %q: %+v %v", route, q.Pattern, g, err)
			}
		}
	}
	sr, err := e.c.V1Search(bg, client.V1SearchRequest{File: "bom.txt", Regex: "^top$"})
	if err != nil || len(sr.Matches) != 1 || sr.Matches[0] != "top" || sr.LineNumbers[0] != 0 {
		t.Errorf("v1 search: %+v %v", sr, err)
	}
}
