package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/httpapi"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	const key = "s3cret-key-value"
	e := newEnv(t, map[string]string{"a.txt": "x\n"}, httpapi.Options{APIKey: key})
	status, body := e.raw("GET", "/v2/fs/read?path=a.txt", "")
	want := map[string]any{"success": false, "message": "Unauthorized", "data": nil, "hint": nil}
	if status != 401 || !cmp.Equal(body, want) {
		t.Fatalf("no key: %d %v", status, body)
	}
	for _, h := range [][]string{{"Authorization", "Bearer " + key}, {"X-Api-Key", key}} {
		if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt", "", h...); status != 200 {
			t.Errorf("%s: %d", h[0], status)
		}
	}
	if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt&api_key="+key, ""); status != 200 {
		t.Errorf("?api_key: %d", status)
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
	if status, _ := e.raw("GET", "/v1/capabilities", ""); status != 404 {
		t.Errorf("/v1/capabilities on the v2 surface: %d", status)
	}
	sb, err := e.c.Sandbox(bg)
	if err != nil || sb.Capabilities.Files["glob"] || !sb.Capabilities.Files["read"] {
		t.Errorf("capabilities on the v2 surface: %+v %v", sb, err)
	}
}

// TestRoutesMatchOpenAPI fails when the server and its OpenAPI document
// disagree: every documented operation must be served (not 404/405), and
// every served route must be documented.
func TestRoutesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
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
	served := httpapi.New(nil, httpapi.Options{}).Routes()
	for i, r := range served {
		served[i] = strings.TrimSuffix(r, "{$}")
	}
	sort.Strings(documented)
	sort.Strings(served)
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Fatalf("routes (-served +documented):\n%s", diff)
	}
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{id}", "x", "{host}", "x").Replace(path)
		req, _ := http.NewRequest(method, e.srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Message string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		// The dispatcher's own 404/405 means the route is not served; a
		// handler's 404 (file not found) is fine.
		if resp.StatusCode == 405 || strings.HasPrefix(body.Message, "Not Found: ") {
			t.Errorf("%s is documented but not served: %d %q", op, resp.StatusCode, body.Message)
		}
	}
}
