package httpapi_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// openAPIDoc is GET /openapi.json as served, with a JSON Schema compiler
// over it: each response schema is compiled where it sits in the
// document, so its $refs resolve against the document's components.
type openAPIDoc struct {
	Paths map[string]map[string]struct {
		Responses map[string]struct {
			Content map[string]json.RawMessage `json:"content"`
		} `json:"responses"`
	} `json:"paths"`

	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // compiled, by location
}

const docURL = "mem:///openapi.json"

func loadOpenAPI(t *testing.T, e *env) *openAPIDoc {
	t.Helper()
	r := e.send("GET", "/openapi.json", "", "")
	if r.status != 200 || r.badJSON != nil {
		t.Fatalf("GET /openapi.json: %d %q", r.status, r.badJSON)
	}
	raw, err := json.Marshal(r.body)
	if err != nil {
		t.Fatal(err)
	}
	d := &openAPIDoc{compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(raw, d); err != nil {
		t.Fatal(err)
	}
	d.compiler.Draft = jsonschema.Draft2020 // OpenAPI 3.1's schema dialect
	if err := d.compiler.AddResource(docURL, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	return d
}

// pointerToken escapes s as one JSON pointer token, then for a URL
// fragment (path templates hold braces).
func pointerToken(s string) string {
	s = strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
	return url.PathEscape(s)
}

// schema compiles the schema the document gives for op's response with
// this status key and media type.
func (d *openAPIDoc) schema(op, key, media string) (*jsonschema.Schema, error) {
	method, path, _ := strings.Cut(op, " ")
	loc := fmt.Sprintf("%s#/paths/%s/%s/responses/%s/content/%s/schema", docURL,
		pointerToken(path), strings.ToLower(method), key, pointerToken(media))
	if s, ok := d.schemas[loc]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(loc)
	if err != nil {
		return nil, err
	}
	d.schemas[loc] = s
	return s, nil
}

// check reports how a response disagrees with the document: its status
// must be documented (or covered by "default"), its media type listed,
// and a JSON body valid against the schema given for it.
func (d *openAPIDoc) check(op string, status int, header http.Header, body []byte, head bool) error {
	method, path, _ := strings.Cut(op, " ")
	methods, ok := d.Paths[path]
	if !ok {
		return fmt.Errorf("path %s is not in the document", path)
	}
	opDoc, ok := methods[strings.ToLower(method)]
	if !ok {
		return fmt.Errorf("method %s of %s is not in the document", method, path)
	}
	key := strconv.Itoa(status)
	resp, ok := opDoc.Responses[key]
	if !ok {
		key = "default"
		if resp, ok = opDoc.Responses[key]; !ok {
			return fmt.Errorf("status %d is not documented", status)
		}
	}
	if len(resp.Content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("status %d is documented without content, got %q", status, body)
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return fmt.Errorf("Content-Type %q: %v", header.Get("Content-Type"), err)
	}
	if _, ok := resp.Content[mt]; !ok {
		return fmt.Errorf("status %d (%s): media type %s is not documented (have %v)", status, key, mt, slices.Sorted(maps.Keys(resp.Content)))
	}
	var media struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(resp.Content[mt], &media); err != nil {
		return err
	}
	switch {
	case mt != "application/json" || head:
		return nil
	case media.Schema == nil && strings.HasSuffix(path, "/openapi.json"):
		return nil // the document itself
	case media.Schema == nil:
		return fmt.Errorf("status %d (%s): JSON without a schema", status, key)
	}
	s, err := d.schema(op, key, mt)
	if err != nil {
		return fmt.Errorf("compiling the schema of %s: %v", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("body is not JSON: %v: %q", err, body)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("status %d (%s): body %s\n%v", status, key, body, err)
	}
	return nil
}

// exchange is one real request and the answer it is built to provoke.
type exchange struct {
	name string
	op   string // the documented operation, "METHOD /template"
	url  string // path and query; {name} is replaced by an id saved before
	body string
	// header holds name, value pairs; a JSON body gets its Content-Type.
	header []string
	status int
	failed bool   // the envelope says success:false (v1 failures are 200)
	stream bool   // an event stream: only the headers are read
	save   string // keep data.watcher_id under this name for later urls
	// during runs beside the request until it is answered.
	during func(stop <-chan struct{})
}

// do sends x to e and returns the status, headers and body.
func (x exchange) do(t *testing.T, e *env, ids map[string]string) (int, http.Header, []byte) {
	t.Helper()
	u := x.url
	for name, id := range ids {
		u = strings.ReplaceAll(u, "{"+name+"}", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if x.body != "" {
		rd = strings.NewReader(x.body)
	}
	method, _, _ := strings.Cut(x.op, " ")
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(x.body, "{") {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(x.header); i += 2 {
		req.Header.Set(x.header[i], x.header[i+1])
	}
	if x.during != nil {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { defer close(done); x.during(stop) }()
		defer func() { close(stop); <-done }()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if x.stream {
		return resp.StatusCode, resp.Header, nil
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func tarBody(t *testing.T, name, content string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// conformanceFiles are the workspace conformanceExchanges expect.
var conformanceFiles = map[string]string{
	"a.txt":       "hello\nworld\n",
	"e.txt":       "alpha\nbeta\ngamma\ndelta\ngamma\n",
	"bin.dat":     "\xff\xfe\x00binary",
	"dir/b.txt":   "bee\n",
	"w/.keep":     "",
	"up/.keep":    "",
	".hidden.txt": "hidden gamma\n",
	// Searched only up to its NUL byte: files_cut_binary, binary_cuts.
	"cut/late.log": "needle\n" + strings.Repeat("x\n", 5000) + "\x00needle\n",
}

// conformanceExchanges are the requests TestResponsesMatchOpenAPI sends,
// in order (later ones rely on what earlier ones did): success and
// failure on every route family, v1 and v2.
func conformanceExchanges(t *testing.T, root string) []exchange {
	form := func(parts ...formPart) (string, string) {
		b, ct := multipartBody(parts...)
		return string(b), ct
	}
	up, upType := form(pathPart("up/new.txt"), filePart("uploaded\n"))
	upOut, upOutType := form(pathPart("../escape.txt"), filePart("x"))
	upNoFile, upNoFileType := form(pathPart("up/x.txt"))
	v1Up, v1UpType := form(filePart("v1 upload\n"), pathPart("up/v1.txt")) // the TypeScript SDK's order
	v1UpBad, v1UpBadType := form(pathPart("a.txt/"), filePart("x"))
	upNoPath, upNoPathType := form(formPart{"file", "no path\n", "dir\\nopath.txt"})
	upNoName, upNoNameType := form(formPart{"file", "x", ".."})
	farFuture := time.Now().Add(24 * time.Hour).UTC().Format(http.TimeFormat)
	longAgo := time.Unix(0, 0).UTC().Format(http.TimeFormat)
	waitWrites := func(stop <-chan struct{}) {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = os.WriteFile(filepath.Join(root, "w/waited.txt"), []byte(time.Now().String()), 0o644)
			}
		}
	}
	return []exchange{
		// Meta.
		{name: "index", op: "GET /", url: "/", status: 200},
		{name: "health", op: "GET /health", url: "/health", status: 200},
		{name: "ping", op: "GET /v1/ping", url: "/v1/ping", status: 200},
		{name: "capabilities", op: "GET /v1/capabilities", url: "/v1/capabilities", status: 200},
		{name: "sandbox", op: "GET /v2/sandbox", url: "/v2/sandbox", status: 200},
		{name: "v1 sandbox", op: "GET /v1/sandbox", url: "/v1/sandbox", status: 200},
		{name: "openapi", op: "GET /openapi.json", url: "/openapi.json", status: 200},
		{name: "openapi v1", op: "GET /v1/openapi.json", url: "/v1/openapi.json", status: 200},
		{name: "openapi v2", op: "GET /v2/openapi.json", url: "/v2/openapi.json", status: 200},
		{name: "web page refused", op: "GET /v2/fs/read", url: "/v2/fs/read?path=a.txt", header: []string{"Origin", "https://evil.example"}, status: 403, failed: true},
		{name: "web page refused on a public route", op: "GET /health", url: "/health", header: []string{"Sec-Fetch-Site", "cross-site"}, status: 403, failed: true},

		// v2 files.
		{name: "v2 read", op: "GET /v2/fs/read", url: "/v2/fs/read?path=a.txt", status: 200},
		{name: "v2 read range", op: "GET /v2/fs/read", url: "/v2/fs/read?path=a.txt&start_line=1&end_line=2", status: 200},
		{name: "v2 read missing", op: "GET /v2/fs/read", url: "/v2/fs/read?path=nope", status: 404, failed: true},
		{name: "v2 read directory", op: "GET /v2/fs/read", url: "/v2/fs/read?path=dir", status: 400, failed: true},
		{name: "v2 read binary", op: "GET /v2/fs/read", url: "/v2/fs/read?path=bin.dat", status: 422, failed: true},
		{name: "v2 read outside", op: "GET /v2/fs/read", url: "/v2/fs/read?path=../x", status: 403, failed: true},
		{name: "v2 read no path", op: "GET /v2/fs/read", url: "/v2/fs/read", status: 422, failed: true},
		{name: "v2 write", op: "POST /v2/fs/write", url: "/v2/fs/write", body: `{"path":"w/new.txt","content":"one\ntwo\n"}`, status: 200},
		{name: "v2 write unknown field", op: "POST /v2/fs/write", url: "/v2/fs/write", body: `{"path":"w/x.txt","content":"x","nope":1}`, status: 422, failed: true},
		{name: "v2 write onto a directory", op: "POST /v2/fs/write", url: "/v2/fs/write", body: `{"path":"dir","content":"x"}`, status: 400, failed: true},
		{name: "v2 write stale", op: "POST /v2/fs/write", url: "/v2/fs/write", body: `{"path":"a.txt","content":"x","expected_version":"00000000000000000000000000000000"}`, status: 409, failed: true},
		{name: "v2 edit", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"e.txt","old_str":"alpha","new_str":"ALPHA"}`, status: 200},
		{name: "v2 edit tolerant", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"e.txt","old_str":"beta  ","new_str":"BETA","match":"tolerant"}`, status: 200},
		{name: "v2 edit insert", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"insert","path":"e.txt","insert_line":0,"new_str":"top\n"}`, status: 200},
		{name: "v2 edit undo", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"undo_edit","path":"e.txt"}`, status: 200},
		{name: "v2 edit no match", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"e.txt","old_str":"absent","new_str":"x"}`, status: 400, failed: true},
		{name: "v2 edit ambiguous", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"e.txt","old_str":"gamma","new_str":"x"}`, status: 400, failed: true},
		{name: "v2 edit view refused", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"view","path":"e.txt"}`, status: 400, failed: true},
		{name: "v2 edit missing", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"nope","old_str":"a"}`, status: 404, failed: true},
		{name: "v2 edit bad replace_mode", op: "POST /v2/fs/edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"e.txt","old_str":"a","replace_mode":"SOME"}`, status: 422, failed: true},
		{name: "v2 patch", op: "POST /v2/fs/patch", url: "/v2/fs/patch", body: `{"patch":"*** Begin Patch\n*** Add File: p/added.txt\n+added\n*** End Patch\n","diff":true}`, status: 200},
		{name: "v2 patch dry run", op: "POST /v2/fs/patch", url: "/v2/fs/patch", body: `{"patch":"*** Begin Patch\n*** Update File: p/added.txt\n@@\n-added\n+changed\n*** End Patch\n","dry_run":true}`, status: 200},
		{name: "v2 patch malformed", op: "POST /v2/fs/patch", url: "/v2/fs/patch", body: `{"patch":"not a patch"}`, status: 400, failed: true},
		{name: "v2 patch missing file", op: "POST /v2/fs/patch", url: "/v2/fs/patch", body: `{"patch":"*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch\n"}`, status: 404, failed: true},
		{name: "v2 undo history", op: "GET /v2/fs/undo", url: "/v2/fs/undo?path=w/new.txt", status: 200},
		{name: "v2 undo", op: "POST /v2/fs/undo", url: "/v2/fs/undo", body: `{"path":"p/added.txt"}`, status: 200},
		{name: "v2 undo nothing", op: "POST /v2/fs/undo", url: "/v2/fs/undo", body: `{"path":"a.txt"}`, status: 400, failed: true},
		{name: "v2 stat", op: "GET /v2/fs/stat", url: "/v2/fs/stat?path=a.txt", status: 200},
		{name: "v2 stat directory", op: "GET /v2/fs/stat", url: "/v2/fs/stat?path=dir", status: 200},
		{name: "v2 stat missing", op: "GET /v2/fs/stat", url: "/v2/fs/stat?path=nope", status: 404, failed: true},
		{name: "v2 stat bad bool", op: "GET /v2/fs/stat", url: "/v2/fs/stat?path=a.txt&follow_symlinks=maybe", status: 422, failed: true},
		{name: "v2 list", op: "GET /v2/fs/list", url: "/v2/fs/list?path=.&recursive=true", status: 200},
		{name: "v2 list missing", op: "GET /v2/fs/list", url: "/v2/fs/list?path=nope", status: 404, failed: true},
		{name: "v2 list a file", op: "GET /v2/fs/list", url: "/v2/fs/list?path=a.txt", status: 400, failed: true},
		{name: "v2 mkdir", op: "POST /v2/fs/mkdir", url: "/v2/fs/mkdir", body: `{"path":"m2"}`, status: 200},
		{name: "v2 mkdir exists", op: "POST /v2/fs/mkdir", url: "/v2/fs/mkdir", body: `{"path":"m2"}`, status: 409, failed: true},
		{name: "v2 mkdir no parent", op: "POST /v2/fs/mkdir", url: "/v2/fs/mkdir", body: `{"path":"no/such/dir"}`, status: 404, failed: true},
		{name: "v2 copy", op: "POST /v2/fs/copy", url: "/v2/fs/copy", body: `{"source":"dir","destination":"m2/dircopy"}`, status: 200},
		{name: "v2 copy onto existing", op: "POST /v2/fs/copy", url: "/v2/fs/copy", body: `{"source":"a.txt","destination":"e.txt"}`, status: 409, failed: true},
		{name: "v2 move", op: "POST /v2/fs/move", url: "/v2/fs/move", body: `{"source":"m2/dircopy","destination":"m2/moved"}`, status: 200},
		{name: "v2 move missing", op: "POST /v2/fs/move", url: "/v2/fs/move", body: `{"source":"nope","destination":"m2/x"}`, status: 404, failed: true},
		{name: "v2 delete", op: "POST /v2/fs/delete", url: "/v2/fs/delete", body: `{"path":"m2/moved","recursive":true}`, status: 200},
		{name: "v2 delete non-empty", op: "POST /v2/fs/delete", url: "/v2/fs/delete", body: `{"path":"dir"}`, status: 400, failed: true},
		{name: "v2 delete missing field", op: "POST /v2/fs/delete", url: "/v2/fs/delete", body: `{}`, status: 422, failed: true},

		// v1 files: expected failures answer 200 with success:false.
		{name: "v1 read", op: "POST /v1/file/read", url: "/v1/file/read", body: `{"file":"a.txt"}`, status: 200},
		{name: "v1 read missing", op: "POST /v1/file/read", url: "/v1/file/read", body: `{"file":"nope"}`, status: 200, failed: true},
		{name: "v1 read malformed", op: "POST /v1/file/read", url: "/v1/file/read", body: `{"file":`, status: 422, failed: true},
		{name: "v1 write", op: "POST /v1/file/write", url: "/v1/file/write", body: `{"file":"w/v1.txt","content":"v1\n"}`, status: 200},
		{name: "v1 write onto a directory", op: "POST /v1/file/write", url: "/v1/file/write", body: `{"file":"dir","content":"x"}`, status: 200, failed: true},
		{name: "v1 editor view", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"view","path":"e.txt"}`, status: 200},
		{name: "v1 editor view directory", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"view","path":"dir"}`, status: 200},
		{name: "v1 editor view directory range", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"view","path":"dir","view_range":[1,2]}`, status: 200, failed: true},
		{name: "v1 editor create", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"create","path":"w/created.txt","file_text":"made\n"}`, status: 200},
		{name: "v1 editor create existing", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"create","path":"w/created.txt","file_text":"x"}`, status: 200, failed: true},
		{name: "v1 editor str_replace", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"str_replace","path":"w/created.txt","old_str":"made","new_str":"MADE"}`, status: 200},
		{name: "v1 editor undo", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"undo_edit","path":"w/created.txt"}`, status: 200},
		{name: "v1 editor no match", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"str_replace","path":"e.txt","old_str":"absent"}`, status: 200, failed: true},
		{name: "v1 editor ambiguous", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"str_replace","path":"e.txt","old_str":"gamma"}`, status: 200, failed: true},
		{name: "v1 editor bad command", op: "POST /v1/file/str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"explode","path":"e.txt"}`, status: 422, failed: true},
		{name: "v1 replace", op: "POST /v1/file/replace", url: "/v1/file/replace", body: `{"file":"w/v1.txt","old_str":"v1","new_str":"V1"}`, status: 200},
		{name: "v1 replace missing", op: "POST /v1/file/replace", url: "/v1/file/replace", body: `{"file":"nope","old_str":"a","new_str":"b"}`, status: 200, failed: true},
		{name: "v1 stat", op: "POST /v1/file/stat", url: "/v1/file/stat", body: `{"path":"a.txt"}`, status: 200},
		{name: "v1 stat missing", op: "POST /v1/file/stat", url: "/v1/file/stat", body: `{"path":"nope"}`, status: 200, failed: true},
		{name: "v1 list", op: "POST /v1/file/list", url: "/v1/file/list", body: `{"path":".","include_permissions":true,"sort_by":"size"}`, status: 200},
		{name: "v1 list missing", op: "POST /v1/file/list", url: "/v1/file/list", body: `{"path":"nope"}`, status: 200, failed: true},
		{name: "v1 list bad sort", op: "POST /v1/file/list", url: "/v1/file/list", body: `{"path":".","sort_by":"colour"}`, status: 422, failed: true},
		{name: "v1 mkdir", op: "POST /v1/file/mkdir", url: "/v1/file/mkdir", body: `{"path":"m1"}`, status: 200},
		{name: "v1 mkdir exists", op: "POST /v1/file/mkdir", url: "/v1/file/mkdir", body: `{"path":"m1"}`, status: 200, failed: true},
		{name: "v1 copy", op: "POST /v1/file/copy", url: "/v1/file/copy", body: `{"source":"a.txt","destination":"m1/a.txt"}`, status: 200},
		{name: "v1 copy missing", op: "POST /v1/file/copy", url: "/v1/file/copy", body: `{"source":"nope","destination":"m1/x"}`, status: 200, failed: true},
		{name: "v1 move", op: "POST /v1/file/move", url: "/v1/file/move", body: `{"source":"m1/a.txt","destination":"m1/b.txt"}`, status: 200},
		{name: "v1 move onto existing", op: "POST /v1/file/move", url: "/v1/file/move", body: `{"source":"m1/b.txt","destination":"a.txt"}`, status: 200, failed: true},
		{name: "v1 delete", op: "POST /v1/file/delete", url: "/v1/file/delete", body: `{"path":"m1/b.txt"}`, status: 200},
		{name: "v1 delete missing", op: "POST /v1/file/delete", url: "/v1/file/delete", body: `{"path":"nope"}`, status: 200, failed: true},

		// Search.
		{name: "v2 grep", op: "POST /v2/fs/grep", url: "/v2/fs/grep", body: `{"path":".","pattern":"gamma","context_before":1,"context_after":1}`, status: 200},
		{name: "v2 grep no context", op: "POST /v2/fs/grep", url: "/v2/fs/grep", body: `{"path":"e.txt","pattern":"delta"}`, status: 200},
		{name: "v2 grep cut at a NUL", op: "POST /v2/fs/grep", url: "/v2/fs/grep", body: `{"path":"cut","pattern":"needle"}`, status: 200},
		{name: "v2 grep bad regex", op: "POST /v2/fs/grep", url: "/v2/fs/grep", body: `{"path":".","pattern":"("}`, status: 400, failed: true},
		{name: "v2 grep missing", op: "POST /v2/fs/grep", url: "/v2/fs/grep", body: `{"path":"nope","pattern":"x"}`, status: 404, failed: true},
		{name: "v2 find", op: "GET /v2/fs/search", url: "/v2/fs/search?path=.&pattern=**/*.txt", status: 200},
		{name: "v2 find missing", op: "GET /v2/fs/search", url: "/v2/fs/search?path=nope&pattern=*", status: 404, failed: true},
		{name: "v2 find no pattern", op: "GET /v2/fs/search", url: "/v2/fs/search?path=.", status: 422, failed: true},
		{name: "v1 grep", op: "POST /v1/file/grep", url: "/v1/file/grep", body: `{"path":".","pattern":"alpha|ALPHA"}`, status: 200},
		{name: "v1 grep cut at a NUL", op: "POST /v1/file/grep", url: "/v1/file/grep", body: `{"path":"cut","pattern":"needle"}`, status: 200},
		{name: "v1 grep bad regex", op: "POST /v1/file/grep", url: "/v1/file/grep", body: `{"path":".","pattern":"("}`, status: 200, failed: true},
		{name: "v1 search", op: "POST /v1/file/search", url: "/v1/file/search", body: `{"file":"e.txt","regex":"gamma"}`, status: 200},
		{name: "v1 search missing", op: "POST /v1/file/search", url: "/v1/file/search", body: `{"file":"nope","regex":"x"}`, status: 200, failed: true},
		{name: "v1 find", op: "POST /v1/file/find", url: "/v1/file/find", body: `{"path":".","glob":"*.txt"}`, status: 200},
		{name: "v1 find missing", op: "POST /v1/file/find", url: "/v1/file/find", body: `{"path":"nope","glob":"*"}`, status: 200, failed: true},
		{name: "v1 glob", op: "POST /v1/file/glob", url: "/v1/file/glob", body: `{"path":".","pattern":"**/*","files_only":false}`, status: 200},
		{name: "v1 glob no metadata", op: "POST /v1/file/glob", url: "/v1/file/glob", body: `{"path":".","pattern":"*.txt","include_metadata":false}`, status: 200},
		{name: "v1 glob missing", op: "POST /v1/file/glob", url: "/v1/file/glob", body: `{"path":"nope","pattern":"*"}`, status: 200, failed: true},

		// Transfer.
		{name: "v2 upload", op: "POST /v2/fs/upload", url: "/v2/fs/upload", body: up, header: []string{"Content-Type", upType}, status: 200},
		{name: "v2 upload outside", op: "POST /v2/fs/upload", url: "/v2/fs/upload", body: upOut, header: []string{"Content-Type", upOutType}, status: 403, failed: true},
		{name: "v2 upload no file", op: "POST /v2/fs/upload", url: "/v2/fs/upload", body: upNoFile, header: []string{"Content-Type", upNoFileType}, status: 422, failed: true},
		{name: "v2 upload without path", op: "POST /v2/fs/upload", url: "/v2/fs/upload", body: upNoPath, header: []string{"Content-Type", upNoPathType}, status: 200},
		{name: "v2 upload without path or name", op: "POST /v2/fs/upload", url: "/v2/fs/upload", body: upNoName, header: []string{"Content-Type", upNoNameType}, status: 422, failed: true},
		{name: "v1 upload without path", op: "POST /v1/file/upload", url: "/v1/file/upload", body: upNoPath, header: []string{"Content-Type", upNoPathType}, status: 200},
		{name: "v1 upload", op: "POST /v1/file/upload", url: "/v1/file/upload", body: v1Up, header: []string{"Content-Type", v1UpType}, status: 200},
		{name: "v1 upload bad target", op: "POST /v1/file/upload", url: "/v1/file/upload", body: v1UpBad, header: []string{"Content-Type", v1UpBadType}, status: 200, failed: true},
		{name: "v2 download", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", status: 200},
		{name: "v2 download range", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", header: []string{"Range", "bytes=0-2"}, status: 206},
		{name: "v2 download unsatisfiable", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", header: []string{"Range", "bytes=500-600"}, status: 416, failed: true},
		{name: "v2 download not modified", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", header: []string{"If-Modified-Since", farFuture}, status: 304},
		{name: "v2 download precondition", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", header: []string{"If-Unmodified-Since", longAgo}, status: 412, failed: true},
		{name: "v2 download missing", op: "GET /v2/fs/download", url: "/v2/fs/download?path=nope", status: 404, failed: true},
		{name: "v2 download bad policy", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt&change_policy=maybe", status: 422, failed: true},
		{name: "v2 download head", op: "HEAD /v2/fs/download", url: "/v2/fs/download?path=a.txt", status: 200},
		{name: "v2 download head missing", op: "HEAD /v2/fs/download", url: "/v2/fs/download?path=nope", status: 404},
		{name: "v1 download", op: "GET /v1/file/download", url: "/v1/file/download?path=a.txt", status: 200},
		{name: "v1 download missing", op: "GET /v1/file/download", url: "/v1/file/download?path=nope", status: 404, failed: true},
		{name: "v1 download head", op: "HEAD /v1/file/download", url: "/v1/file/download?path=a.txt", status: 200},
		{name: "tree get", op: "GET /v2/fs/tree", url: "/v2/fs/tree?path=dir", status: 200},
		{name: "tree get missing", op: "GET /v2/fs/tree", url: "/v2/fs/tree?path=nope", status: 404, failed: true},
		{name: "tree put", op: "PUT /v2/fs/tree", url: "/v2/fs/tree?path=t", body: tarBody(t, "x.txt", "x\n"), header: []string{"Content-Type", "application/x-tar"}, status: 200},
		{name: "tree put bad archive", op: "PUT /v2/fs/tree", url: "/v2/fs/tree?path=t2", body: strings.Repeat("not a tar ", 100), header: []string{"Content-Type", "application/x-tar"}, status: 400, failed: true},
		{name: "tree put no path", op: "PUT /v2/fs/tree", url: "/v2/fs/tree", status: 422, failed: true},

		// Watch, v2 then v1.
		{name: "v2 watch", op: "POST /v2/watch", url: "/v2/watch", body: `{"path":"w","debounce":50}`, status: 200, save: "w2"},
		{name: "v2 watch bad debounce", op: "POST /v2/watch", url: "/v2/watch", body: `{"path":"w","debounce":1}`, status: 400, failed: true},
		{name: "v2 watch missing", op: "POST /v2/watch", url: "/v2/watch", body: `{"path":"nope"}`, status: 404, failed: true},
		{name: "v2 watch list", op: "GET /v2/watch", url: "/v2/watch", status: 200},
		{name: "v2 poll", op: "GET /v2/watch/{id}/poll", url: "/v2/watch/{w2}/poll?timeout=1", status: 200,
			during: func(<-chan struct{}) { _ = os.WriteFile(filepath.Join(root, "w/polled.txt"), []byte("x"), 0o644) }},
		{name: "v2 poll bad limit", op: "GET /v2/watch/{id}/poll", url: "/v2/watch/{w2}/poll?limit=0", status: 400, failed: true},
		{name: "v2 poll bad cursor", op: "GET /v2/watch/{id}/poll", url: "/v2/watch/{w2}/poll?cursor=x", status: 422, failed: true},
		{name: "v2 poll unknown", op: "GET /v2/watch/{id}/poll", url: "/v2/watch/nope/poll", status: 404, failed: true},
		{name: "v2 events", op: "GET /v2/watch/{id}/events", url: "/v2/watch/{w2}/events", status: 200, stream: true},
		{name: "v2 events bad Last-Event-ID", op: "GET /v2/watch/{id}/events", url: "/v2/watch/{w2}/events", header: []string{"Last-Event-ID", "x:y"}, status: 400, failed: true},
		{name: "v2 events unknown", op: "GET /v2/watch/{id}/events", url: "/v2/watch/nope/events", status: 404, failed: true},
		{name: "v2 unwatch", op: "DELETE /v2/watch/{id}", url: "/v2/watch/{w2}", status: 200},
		{name: "v2 unwatch unknown", op: "DELETE /v2/watch/{id}", url: "/v2/watch/nope", status: 404, failed: true},
		{name: "v1 watch", op: "POST /v1/file/watch", url: "/v1/file/watch", body: `{"path":"w"}`, status: 200, save: "w1"},
		{name: "v1 watch outside", op: "POST /v1/file/watch", url: "/v1/file/watch", body: `{"path":"../x"}`, status: 403, failed: true},
		{name: "v1 watch list", op: "GET /v1/file/watch", url: "/v1/file/watch", status: 200},
		{name: "v1 poll", op: "POST /v1/file/watch/{id}/poll", url: "/v1/file/watch/{w1}/poll", body: `{"cursor":0}`, status: 200},
		{name: "v1 poll bad timeout", op: "POST /v1/file/watch/{id}/poll", url: "/v1/file/watch/{w1}/poll", body: `{"timeout":99}`, status: 400, failed: true},
		{name: "v1 poll unknown", op: "POST /v1/file/watch/{id}/poll", url: "/v1/file/watch/nope/poll", body: `{}`, status: 404, failed: true},
		{name: "v1 events", op: "GET /v1/file/watch/{id}/events", url: "/v1/file/watch/{w1}/events?cursor=0", status: 200, stream: true},
		{name: "v1 events unknown", op: "GET /v1/file/watch/{id}/events", url: "/v1/file/watch/nope/events", status: 404, failed: true},
		{name: "v1 unwatch", op: "DELETE /v1/file/watch/{id}", url: "/v1/file/watch/{w1}", status: 200},
		{name: "v1 wait", op: "POST /v1/file/watch/wait", url: "/v1/file/watch/wait", body: `{"path":"w/waited.txt","timeout":20}`, status: 200, during: waitWrites},
		{name: "v1 wait timeout", op: "POST /v1/file/watch/wait", url: "/v1/file/watch/wait", body: `{"path":"w/never.txt","timeout":1}`, status: 503, failed: true},
		{name: "v1 wait bad timeout", op: "POST /v1/file/watch/wait", url: "/v1/file/watch/wait", body: `{"path":"w/never.txt","timeout":0}`, status: 400, failed: true},

		// Hosts, none connected.
		{name: "hosts", op: "GET /v2/hosts", url: "/v2/hosts", status: 200},
		{name: "host read", op: "GET /v2/hosts/{host}/fs/read", url: "/v2/hosts/-/fs/read?path=a.txt", status: 503, failed: true},
		{name: "host read bad timeout", op: "GET /v2/hosts/{host}/fs/read", url: "/v2/hosts/-/fs/read?path=a.txt&timeout=x", status: 422, failed: true},
		{name: "host write", op: "POST /v2/hosts/{host}/fs/write", url: "/v2/hosts/-/fs/write", body: `{"path":"a.txt","content":"x"}`, status: 503, failed: true},
		{name: "host edit", op: "POST /v2/hosts/{host}/fs/edit", url: "/v2/hosts/-/fs/edit", body: `{"command":"str_replace","path":"a.txt","old_str":"a"}`, status: 503, failed: true},
		{name: "host patch", op: "POST /v2/hosts/{host}/fs/patch", url: "/v2/hosts/-/fs/patch", body: `{"patch":"*** Begin Patch\n*** End Patch\n"}`, status: 503, failed: true},
		{name: "host undo", op: "POST /v2/hosts/{host}/fs/undo", url: "/v2/hosts/-/fs/undo", body: `{"path":"a.txt"}`, status: 503, failed: true},
		{name: "host stat", op: "GET /v2/hosts/{host}/fs/stat", url: "/v2/hosts/-/fs/stat?path=a.txt", status: 503, failed: true},
		{name: "host list", op: "GET /v2/hosts/{host}/fs/list", url: "/v2/hosts/-/fs/list?path=.", status: 503, failed: true},
		{name: "host grep", op: "POST /v2/hosts/{host}/fs/grep", url: "/v2/hosts/-/fs/grep", body: `{"path":".","pattern":"x"}`, status: 503, failed: true},
		{name: "host search", op: "GET /v2/hosts/{host}/fs/search", url: "/v2/hosts/-/fs/search?path=.&pattern=*", status: 503, failed: true},
		{name: "host download", op: "GET /v2/hosts/{host}/fs/download", url: "/v2/hosts/-/fs/download?path=a.txt", status: 503, failed: true},
		{name: "host text_editor", op: "POST /v2/hosts/{host}/text_editor", url: "/v2/hosts/-/text_editor", body: `{"action":"read","path":"a.txt"}`, status: 503, failed: true},
		{name: "host text_editor bad action", op: "POST /v2/hosts/{host}/text_editor", url: "/v2/hosts/-/text_editor", body: `{"action":"explode","path":"a.txt"}`, status: 400, failed: true},
		{name: "host text_editor named host", op: "POST /v2/hosts/{host}/text_editor", url: "/v2/hosts/laptop/text_editor", body: `{"action":"write","path":"a.txt","content":"x"}`, status: 503, failed: true},
	}
}

// sendExchanges sends xs to e in order, checks each answer's status and
// success and validates it against doc, and returns the operations sent.
func sendExchanges(t *testing.T, e *env, doc *openAPIDoc, xs []exchange) map[string]bool {
	t.Helper()
	sent := map[string]bool{}
	ids := map[string]string{}
	for _, x := range xs {
		sent[x.op] = true
		status, header, body := x.do(t, e, ids)
		method, _, _ := strings.Cut(x.op, " ")
		if status != x.status {
			t.Errorf("%s: %s %s answered %d, want %d: %s", x.name, x.op, x.url, status, x.status, body)
			continue
		}
		if err := doc.check(x.op, status, header, body, method == http.MethodHead); err != nil {
			t.Errorf("%s: %s %s disagrees with the document: %v", x.name, x.op, x.url, err)
		}
		if x.stream || method == http.MethodHead || !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
			continue
		}
		var env struct {
			Success *bool           `json:"success"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Errorf("%s: %v", x.name, err)
			continue
		}
		if env.Success != nil && *env.Success == x.failed {
			t.Errorf("%s: success is %v, want %v: %s", x.name, *env.Success, !x.failed, body)
		}
		if x.save != "" {
			var w struct {
				WatcherID string `json:"watcher_id"`
			}
			if err := json.Unmarshal(env.Data, &w); err != nil || w.WatcherID == "" {
				t.Fatalf("%s: no watcher_id in %s", x.name, body)
			}
			ids[x.save] = w.WatcherID
		}
	}
	return sent
}

// notExercised are documented operations TestResponsesMatchOpenAPI does
// not send: their answers are another protocol's (MCP's JSON-RPC, the
// connector's WebSocket), described by their own documents.
var notExercised = map[string]bool{
	"POST /mcp": true, "GET /mcp": true, "DELETE /mcp": true, "GET /v2/connector": true,
}

// TestResponsesMatchOpenAPI sends real requests, succeeding and failing,
// on every route family and both planes, and validates each answer
// against the schema GET /openapi.json gives for its route and status, so
// that a client generated from the document can read what the server
// really sends. Every documented operation but notExercised must be sent.
func TestResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "t"})
	t.Cleanup(h.Close)
	mcp := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	e := newEnv(t, conformanceFiles, httpapi.Options{Hub: h, MCP: mcp})
	doc := loadOpenAPI(t, e)

	sent := sendExchanges(t, e, doc, conformanceExchanges(t, e.root))

	// An API key: 401 on every route that is not public.
	ke := newEnv(t, nil, httpapi.Options{APIKey: "k3y"})
	sendExchanges(t, ke, doc, []exchange{
		{name: "no key v2", op: "GET /v2/fs/read", url: "/v2/fs/read?path=a.txt", status: 401, failed: true},
		{name: "no key v1", op: "POST /v1/file/read", url: "/v1/file/read", body: `{"file":"a.txt"}`, status: 401, failed: true},
		{name: "no key watch", op: "GET /v2/watch", url: "/v2/watch", status: 401, failed: true},
		{name: "no key download", op: "GET /v2/fs/download", url: "/v2/fs/download?path=a.txt", status: 401, failed: true},
	})

	for path, methods := range doc.Paths {
		for m := range methods {
			op := strings.ToUpper(m) + " " + path
			if !sent[op] && !notExercised[op] {
				t.Errorf("%s is documented but no exchange sends it", op)
			}
		}
	}
}
