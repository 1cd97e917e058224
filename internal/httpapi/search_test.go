package httpapi_test

import (
	"fmt"
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
// on any search route, as ripgrep (AIO's grep) strips it: a first line
// "top" is found by ^top and reported as "top". Reads show the mark, as
// AIO's do (see TestV2ReadBOM).
func TestSearchRoutesBOM(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"bom.txt": "\ufefftop\nworld\n"}, httpapi.Options{})
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

// TestGrepSaysWhatItSkippedForSize: files over max_file_size are still
// skipped (AIO's default, 1M), but the envelope's hint says how many and
// how to search them, on v2 and v1 alike; without a skip there is no hint.
// A file named as path used to answer an empty matches list and a null
// hint, which reads as "the text is not there".
func TestGrepSaysWhatItSkippedForSize(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := range 300001 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	e := newEnv(t, map[string]string{"big.log": big.String(), "logs/a.log": "line 1\n", "logs/b.log": "line 2\n"}, httpapi.Options{})
	const more = `pass a larger max_file_size, e.g. "100M", or "0" for no limit`
	tests := []struct {
		name, body string
		matches    int
		hint       any // nil: no hint
	}{
		{"named file, default cap", `{"path":"big.log","pattern":"line 300000"}`, 0,
			`1 file over max_file_size (1M) was not searched: ` + more},
		{"tree, own cap", `{"path":"logs","pattern":"line","max_file_size":"3"}`, 0,
			`2 files over max_file_size (3) were not searched: ` + more},
		{"no cap", `{"path":"big.log","pattern":"line 300000","max_file_size":"0"}`, 1, nil},
		{"nothing skipped", `{"path":"logs","pattern":"line"}`, 2, nil},
	}
	for _, route := range []struct{ name, path string }{{"v2", "/v2/fs/grep"}, {"v1", "/v1/file/grep"}} {
		for _, tt := range tests {
			t.Run(route.name+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				status, body := e.raw("POST", route.path, tt.body)
				data, _ := body["data"].(map[string]any)
				matches, _ := data["matches"].([]any)
				if status != 200 || body["success"] != true || len(matches) != tt.matches {
					t.Fatalf("%d %v", status, body)
				}
				if body["hint"] != tt.hint {
					t.Errorf("hint = %v, want %v", body["hint"], tt.hint)
				}
			})
		}
	}
}

// TestSearchSaysWhatItLeftOut: binary files skipped and answers cut
// short come with a hint saying so and how to get the rest, and a result
// with nothing left out has none; include and exclude take {a,b}
// alternatives, and a malformed one is bad_request rather than no match.
func TestSearchSaysWhatItLeftOut(t *testing.T) {
	t.Parallel()
	files := map[string]string{"bin.dat": "foo\x00binary\n", "t/a.txt": "foo\n", "t/b.log": "foo\n", "t/c.md": "foo\n"}
	for i := range 3 {
		files[fmt.Sprintf("many/f%d.txt", i)] = "foo\nfoo\n"
	}
	e := newEnv(t, files, httpapi.Options{})
	tests := []struct {
		name, method, path, body string
		count                    string // the data field holding the count, and its value
		want                     float64
		hint                     string // "": no hint
	}{
		{"binary named", "POST", "/v2/fs/grep", `{"path":"bin.dat","pattern":"foo"}`, "files_skipped_binary", 1,
			"1 binary file (a NUL byte in its first 8 KiB) was not searched: grep searches text; download a binary file to look inside it"},
		{"binary in a tree", "POST", "/v1/file/grep", `{"path":".","pattern":"foo","include":["*.dat"]}`, "files_skipped_binary", 1, "1 binary file"},
		{"grep truncated", "POST", "/v2/fs/grep", `{"path":"many","pattern":"foo","max_results":2,"offset":1}`, "match_count", 2,
			"more matches exist after these 2: pass offset 3 for the next page (max_results sets its size), or narrow the search with path, include or type"},
		{"glob truncated", "POST", "/v1/file/glob", `{"path":"many","pattern":"*.txt","max_results":2}`, "total_count", 2,
			"more entries match than the 2 returned: raise max_results (at most 5000), or narrow the pattern or the path"},
		{"include alternatives", "POST", "/v2/fs/grep", `{"path":"t","pattern":"foo","include":["*.{txt,md}"]}`, "files_matched", 2, ""},
		{"exclude alternatives", "POST", "/v2/fs/grep", `{"path":"t","pattern":"foo","exclude":["*.{txt,md}"]}`, "files_matched", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw(tt.method, tt.path, tt.body)
			data, _ := body["data"].(map[string]any)
			if status != 200 || body["success"] != true || data[tt.count] != tt.want {
				t.Fatalf("%d %v: want %s %v", status, body, tt.count, tt.want)
			}
			hint, _ := body["hint"].(string)
			if tt.hint == "" && body["hint"] != nil || !strings.HasPrefix(hint, tt.hint) {
				t.Errorf("hint = %v, want %q", body["hint"], tt.hint)
			}
		})
	}
	status, body := e.raw("POST", "/v2/fs/grep", `{"path":"t","pattern":"foo","include":["*.{txt"]}`)
	if status != 400 || !strings.Contains(fmt.Sprint(body["message"]), `unclosed "{"`) || body["hint"] == nil {
		t.Errorf("malformed brace: %d %v", status, body)
	}
	status, body = e.raw("POST", "/v2/fs/grep", `{"path":"t","pattern":"foo","context_before":100000}`)
	if msg := fmt.Sprint(body["message"]); status != 400 || !strings.Contains(msg, "context_before: at most 1000") || !strings.Contains(fmt.Sprint(body["hint"]), "context_before") {
		t.Errorf("context: %d %v", status, body)
	}
}
