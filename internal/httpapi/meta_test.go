package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	const key = "s3cret-key-value"
	e := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{APIKey: key})
	// AIO's 401 (status, success, message) with fsplane's error data and
	// a hint, on every plane; neither the key nor the one sent comes back.
	// The hint tells a missing key from a wrong one.
	const how = ": send Authorization: Bearer <key> (or x-api-key: <key>), the key given to fsplane serve --api-key or FSPLANE_API_KEY (or AIO_API_KEY)"
	const missing, wrong = "no key was sent" + how, "the key sent is not this server's" + how
	for _, tt := range []struct {
		method, path, body string
		header             []string
		hint               string
	}{
		{"GET", "/v2/fs/read?path=a.txt", "", nil, missing},
		{"GET", "/v2/fs/read?path=a.txt&api_key=wrong-key-sent", "", nil, wrong},
		{"POST", "/v1/file/read", `{"file":"a.txt"}`, []string{"Authorization", "Bearer wrong-key-sent"}, wrong},
		{"POST", "/mcp", `{}`, []string{"X-Api-Key", "wrong-key-sent"}, wrong},
	} {
		r := e.send(tt.method, tt.path, "", tt.body, tt.header...)
		want := map[string]any{"success": false, "message": "Unauthorized", "hint": tt.hint, "data": map[string]any{
			"error_type": "unauthorized", "message": "Unauthorized", "operation": "request", "path": strings.Split(tt.path, "?")[0],
			"retryable": false, "exception_type": "PermissionError", "errno": nil, "errno_name": nil}}
		if diff := cmp.Diff(want, r.body); r.status != 401 || diff != "" {
			t.Errorf("%s %s: status %d, body (-want +got):\n%s", tt.method, tt.path, r.status, diff)
		}
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="fsplane"` {
			t.Errorf("%s %s: WWW-Authenticate %q", tt.method, tt.path, got)
		}
		raw, _ := json.Marshal(r.body)
		if strings.Contains(string(raw), key) || strings.Contains(string(raw), "wrong-key-sent") {
			t.Errorf("%s %s: the answer names a key: %s", tt.method, tt.path, raw)
		}
	}
	// The scheme's name is case-insensitive (RFC 9110 §11.1).
	for _, h := range [][]string{{"Authorization", "Bearer " + key}, {"Authorization", "bearer " + key}, {"Authorization", "BEARER  " + key}, {"X-Api-Key", key}} {
		if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt", "", h...); status != 200 {
			t.Errorf("%s: %d", h, status)
		}
	}
	if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt&api_key="+key, ""); status != 200 {
		t.Errorf("?api_key: %d", status)
	}
	// ?api_key= is decoded as every other query parameter (queryValues'
	// rules): a ';' in the key, sent as it is, is part of it.
	semi := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{APIKey: "k;ey"})
	if status, _ := semi.raw("GET", "/v2/fs/read?path=a.txt&api_key=k;ey", ""); status != 200 {
		t.Errorf("?api_key=k;ey: %d", status)
	}
	if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt", "", "Authorization", "Bearer wrong"); status != 401 {
		t.Errorf("wrong key: %d", status)
	}
	for _, p := range []string{"/", "/health", "/v1/ping", "/openapi.json", "/v1/openapi.json", "/v2/openapi.json"} {
		if status, _ := e.raw("GET", p, ""); status != 200 {
			t.Errorf("public %s: %d", p, status)
		}
	}
	if status, _ := e.raw("GET", "/v1/capabilities", ""); status != 401 {
		t.Errorf("capabilities without key: %d", status)
	}
	// The client sends the key; the key never reaches the log.
	if err := e.c.Ping(bg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.logBuf.String(), key) {
		t.Fatalf("the API key appears in the log:\n%s", e.logBuf.String())
	}
	if !strings.Contains(e.logBuf.String(), `route="GET /v2/fs/read"`) || !strings.Contains(e.logBuf.String(), "status=401") {
		t.Errorf("request log lacks route/status:\n%s", e.logBuf.String())
	}
}

func TestMetaRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{Version: "1.2.3"})
	status, body := e.raw("GET", "/health", "")
	if status != 200 || body["status"] != "ok" || body["version"] != "1.2.3" {
		t.Errorf("health %d %v", status, body)
	}
	caps, err := e.c.Capabilities(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !caps.Files["read"] || !caps.Files["write"] || !caps.Files["str_replace_editor"] || caps.Exec["bash"] {
		t.Errorf("capabilities %+v", caps.Files)
	}
	sb, err := e.c.Sandbox(bg)
	if err != nil || sb.Workspace != e.root || sb.Version != "1.2.3" || sb.Detail.System.OS == "" {
		t.Errorf("sandbox %+v %v", sb, err)
	}
	// AIO 1.x's SDKs read /v1/sandbox (get_context) for home_dir and
	// build absolute paths from it: they must land in the root.
	status, body = e.raw("GET", "/v1/sandbox", "")
	sys, _ := body["detail"].(map[string]any)["system"].(map[string]any)
	if status != 200 || body["success"] != true || body["home_dir"] != e.root || body["version"] != "1.2.3" ||
		sys["home_dir"] != e.root || sys["os"] == "" || body["data"] == "" {
		t.Errorf("v1 sandbox %d %v", status, body)
	}
	if status, body := e.raw("GET", "/nope", ""); status != 404 || body["success"] != false {
		t.Errorf("unknown route %d %v", status, body)
	}
	if status, body := e.raw("GET", "/v2/fs/write", ""); status != 405 || !strings.Contains(body["message"].(string), "POST") {
		t.Errorf("wrong method %d %v", status, body)
	}
}

func TestSurfaceV2Only(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "x"}, httpapi.Options{Surface: "v2"})
	if status, _ := e.raw("POST", "/v1/file/read", `{"file":"a.txt"}`); status != 404 {
		t.Errorf("v1 on the v2 surface: %d", status)
	}
	for _, p := range []string{"/v1/capabilities", "/v1/sandbox"} {
		if status, _ := e.raw("GET", p, ""); status != 404 {
			t.Errorf("%s on the v2 surface: %d", p, status)
		}
	}
	sb, err := e.c.Sandbox(bg)
	if err != nil || sb.Capabilities.Files["glob"] || !sb.Capabilities.Files["read"] {
		t.Errorf("capabilities on the v2 surface: %+v %v", sb, err)
	}
}

// wantRoutes is the whole API surface (every optional group enabled),
// written out rather than read from the server under test: the document
// and Routes() are both built from the server's route table, so comparing
// them with each other cannot catch a route that went missing or appeared
// in both. Changing the surface means changing this list.
var wantRoutes = []string{
	"GET /{$}", "GET /health", "GET /openapi.json", "GET /v1/openapi.json", "GET /v2/openapi.json",
	"GET /v1/ping", "GET /v1/capabilities", "GET /v1/sandbox", "GET /v2/sandbox",
	"DELETE /mcp", "GET /mcp", "POST /mcp",
	// v2
	"GET /v2/fs/read", "POST /v2/fs/write", "POST /v2/fs/edit", "POST /v2/fs/patch",
	"POST /v2/fs/undo", "GET /v2/fs/undo", "GET /v2/fs/stat", "GET /v2/fs/list",
	"POST /v2/fs/mkdir", "POST /v2/fs/copy", "POST /v2/fs/move", "POST /v2/fs/delete",
	"POST /v2/fs/grep", "GET /v2/fs/search",
	"POST /v2/fs/upload", "GET /v2/fs/download", "HEAD /v2/fs/download", "GET /v2/fs/tree", "PUT /v2/fs/tree",
	"POST /v2/watch", "GET /v2/watch", "GET /v2/watch/{id}/poll", "GET /v2/watch/{id}/events", "DELETE /v2/watch/{id}",
	// hosts
	"GET /v2/connector", "GET /v2/hosts",
	"GET /v2/hosts/{host}/fs/read", "POST /v2/hosts/{host}/fs/write", "POST /v2/hosts/{host}/fs/edit",
	"POST /v2/hosts/{host}/fs/patch",
	"POST /v2/hosts/{host}/fs/undo", "GET /v2/hosts/{host}/fs/stat", "GET /v2/hosts/{host}/fs/list",
	"POST /v2/hosts/{host}/fs/grep", "GET /v2/hosts/{host}/fs/search", "GET /v2/hosts/{host}/fs/download",
	"POST /v2/hosts/{host}/text_editor",
	// v1
	"POST /v1/file/read", "POST /v1/file/write", "POST /v1/file/str_replace_editor", "POST /v1/file/replace",
	"POST /v1/file/stat", "POST /v1/file/list", "POST /v1/file/mkdir", "POST /v1/file/copy",
	"POST /v1/file/move", "POST /v1/file/delete",
	"POST /v1/file/grep", "POST /v1/file/search", "POST /v1/file/find", "POST /v1/file/glob",
	"POST /v1/file/upload", "GET /v1/file/download", "HEAD /v1/file/download",
	"POST /v1/file/watch", "GET /v1/file/watch", "POST /v1/file/watch/{id}/poll",
	"GET /v1/file/watch/{id}/events", "DELETE /v1/file/watch/{id}", "POST /v1/file/watch/wait",
}

// TestRoutesMatchOpenAPI fails when the served routes, the OpenAPI
// document and wantRoutes disagree: every route is documented, registered
// and answered by its own handler (the request log names the pattern that
// served each probe; the dispatcher's 404/405 names none).
func TestRoutesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "t"})
	t.Cleanup(h.Close)
	mcp := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	e := newEnv(t, nil, httpapi.Options{Hub: h, MCP: mcp})
	want := slices.Sorted(slices.Values(wantRoutes))

	resp, err := http.Get(e.srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document: %v %q", err, doc.OpenAPI)
	}
	var documented []string
	for p, methods := range doc.Paths {
		for m := range methods {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(documented)
	wantDoc := make([]string, len(want))
	for i, r := range want {
		wantDoc[i] = strings.TrimSuffix(r, "{$}") // the document's path has no {$}
	}
	slices.Sort(wantDoc)
	if diff := cmp.Diff(wantDoc, documented); diff != "" {
		t.Errorf("documented routes (-want +got):\n%s", diff)
	}
	registered := e.srv.Config.Handler.(*httpapi.Server).Routes()
	slices.Sort(registered)
	if diff := cmp.Diff(want, registered); diff != "" {
		t.Errorf("registered routes (-want +got):\n%s", diff)
	}

	for _, op := range want {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{id}", "x", "{host}", "x", "{$}", "").Replace(path)
		req, _ := http.NewRequest(method, e.srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	e.srv.Close() // waits for the handlers, so every request is logged
	log := e.logBuf.String()
	for _, op := range want {
		if !strings.Contains(log, `route="`+op+`"`) {
			t.Errorf("%s is not served by its own pattern", op)
		}
	}
}
