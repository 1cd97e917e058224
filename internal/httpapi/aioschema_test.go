package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/ops"
)

// TestGrepBoundsAre422: AIO's FileGrepRequest gives offset,
// context_before and context_after a minimum of 0, so a negative one is a
// validation failure, 422 with errors naming the field, on both planes
// (v1 answers 422 for a body that fails its schema too), as a negative
// max_results already is; not a 200 success:false (v1) or 400 (v2)
// grep failure.
func TestGrepBoundsAre422(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "l0\nl1\n"}, httpapi.Options{})
	for _, route := range []string{"/v1/file/grep", "/v2/fs/grep"} {
		for _, field := range []string{"offset", "context_before", "context_after", "max_results"} {
			t.Run(route+" "+field, func(t *testing.T) {
				t.Parallel()
				status, body := e.raw("POST", route, `{"path":"a.txt","pattern":"l","`+field+`":-1}`)
				if status != 422 || body["success"] != false {
					t.Fatalf("%d %v, want 422", status, body)
				}
				loc, msg := firstError(t, body)
				if loc != "body."+field || !strings.Contains(msg, field+" must be >= 0") {
					t.Errorf("first error at %q: %q, want body.%s: %s must be >= 0", loc, msg, field, field)
				}
			})
		}
		t.Run(route+" zeros", func(t *testing.T) {
			t.Parallel()
			status, body := e.raw("POST", route, `{"path":"a.txt","pattern":"l","offset":0,"context_before":0,"context_after":0}`)
			if status != 200 || body["success"] != true {
				t.Fatalf("%d %v, want 200", status, body)
			}
		})
	}
}

// TestListTruncatedHasHint: a listing cut at AIO's 10,000 entries says
// truncated, as AIO does, and like find, glob and grep cut short it has a
// hint saying how to get the rest, naming this plane's routes.
func TestListTruncatedHasHint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"small/a.txt": "a"}, httpapi.Options{})
	dir := filepath.Join(e.root, "many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 10_001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, method, path, body string
		truncated                bool
		hint                     string // substring; "" means no hint
	}{
		{name: "v2 cut", method: "GET", path: "/v2/fs/list?path=many", truncated: true, hint: "GET /v2/fs/search"},
		{name: "v2 recursive cut", method: "GET", path: "/v2/fs/list?path=.&recursive=true", truncated: true, hint: "set a lower max_depth"},
		{name: "v1 cut", method: "POST", path: "/v1/file/list", body: `{"path":"many"}`, truncated: true, hint: "POST /v1/file/find"},
		{name: "v2 whole", method: "GET", path: "/v2/fs/list?path=small"},
		{name: "v1 whole", method: "POST", path: "/v1/file/list", body: `{"path":"small"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw(tt.method, tt.path, tt.body)
			data, _ := body["data"].(map[string]any)
			if status != 200 || data == nil {
				t.Fatalf("%d %v", status, body)
			}
			if data["truncated"] != tt.truncated {
				t.Errorf("truncated %v, want %v", data["truncated"], tt.truncated)
			}
			hint, _ := body["hint"].(string)
			if tt.hint == "" {
				if body["hint"] != nil {
					t.Errorf("hint %q, want null", hint)
				}
				return
			}
			if !strings.Contains(hint, tt.hint) || !strings.Contains(hint, "10000") {
				t.Errorf("hint %q, want one naming %q and the 10000 entries returned", hint, tt.hint)
			}
		})
	}
}

// TestRepeatedQueryParameters: a query parameter given twice with
// different values is refused (422, naming it), as two different upload
// targets from the form already are: the first value used to win
// silently, where AIO's Python server takes the last and serde, under
// its Rust one, refuses a duplicate field, so the same request reached
// another file. The same value twice is one value.
func TestRepeatedQueryParameters(t *testing.T) {
	t.Parallel()
	e := newXEnv(t, ops.Options{})
	e.put("a.txt", []byte("a\n"))
	e.put("b.txt", []byte("b\n"))
	tests := []struct {
		name, method, url string
		form              bool
		status            int
		loc               string // the first error's location, for a 422
	}{
		{name: "upload two targets", method: "POST", url: "/v2/fs/upload?path=q1.txt&path=q2.txt", form: true, status: 422, loc: "query.path"},
		{name: "v1 upload two targets", method: "POST", url: "/v1/file/upload?path=q1.txt&path=q2.txt", form: true, status: 422, loc: "query.path"},
		{name: "upload one target twice", method: "POST", url: "/v2/fs/upload?path=q3.txt&path=q3.txt", form: true, status: 200},
		{name: "read", method: "GET", url: "/v2/fs/read?path=a.txt&path=b.txt", status: 422, loc: "query.path"},
		{name: "read same path twice", method: "GET", url: "/v2/fs/read?path=a.txt&path=a.txt", status: 200},
		{name: "download", method: "GET", url: "/v2/fs/download?path=a.txt&path=b.txt", status: 422, loc: "query.path"},
		{name: "download policies", method: "GET", url: "/v2/fs/download?path=a.txt&change_policy=abort&change_policy=ignore", status: 422, loc: "query.change_policy"},
		{name: "poll limits", method: "GET", url: "/v2/watch/{id}/poll?limit=1&limit=1000", status: 422, loc: "query.limit"},
		{name: "stat follow", method: "GET", url: "/v2/fs/stat?path=a.txt&follow_symlinks=true&follow_symlinks=false", status: 422, loc: "query.follow_symlinks"},
	}
	w, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "."})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := strings.Replace(tt.url, "{id}", w.WatcherID, 1)
			body, ct := "", "application/json"
			if tt.form {
				b, c := multipartBody(filePart("up\n"))
				body, ct = string(b), c
			}
			status, m := e.rawCT(tt.method, url, body, ct)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, m)
			}
			if status != 422 {
				return
			}
			if loc, msg := firstError(t, m); loc != tt.loc || !strings.Contains(msg, "different values") {
				t.Errorf("first error at %s: %q", loc, msg)
			}
			for _, name := range []string{"q1.txt", "q2.txt"} {
				if _, err := os.Stat(filepath.Join(e.root, name)); !os.IsNotExist(err) {
					t.Errorf("a refused upload left %s (%v)", name, err)
				}
			}
		})
	}
}
