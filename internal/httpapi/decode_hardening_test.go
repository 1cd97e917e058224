package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/hub"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// firstError returns errors[0]'s location (dotted) and message.
func firstError(t *testing.T, body map[string]any) (string, string) {
	t.Helper()
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("no errors in %v", body)
	}
	e := errs[0].(map[string]any)
	var loc []string
	for _, l := range e["location"].([]any) {
		loc = append(loc, l.(string))
	}
	msg, _ := e["message"].(string)
	return strings.Join(loc, "."), msg
}

// TestFieldNamesAreCaseSensitive: encoding/json matches keys without
// regard to case, so a second spelling of a field could silently choose
// the file a delete or write acts on; such keys are refused. Keys that
// resemble no field keep today's behaviour (ignored, or refused on the
// strict v2 write).
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	t.Parallel()
	files := map[string]string{"scratch.txt": "s", "important.txt": "keep", "a.txt": "a", "sub/": ""}
	tests := []struct {
		name, method, path, body string
		status                   int
		loc, msg                 string // of the first validation error
		intact                   []string
	}{
		{name: "delete with PATH", method: "POST", path: "/v2/fs/delete", body: `{"path":"scratch.txt","PATH":"important.txt"}`,
			status: 422, loc: "body.PATH", msg: `field "PATH" is not "path": field names are case-sensitive`, intact: []string{"scratch.txt", "important.txt"}},
		{name: "delete with only Path", method: "POST", path: "/v2/fs/delete", body: `{"Path":"important.txt"}`,
			status: 422, loc: "body.Path", msg: `field "Path" is not "path"`, intact: []string{"important.txt"}},
		{name: "v1 write with FILE", method: "POST", path: "/v1/file/write", body: `{"file":"a.txt","FILE":"sub/b.txt","content":"x"}`,
			status: 422, loc: "body.FILE", msg: `field "FILE" is not "file"`, intact: []string{"a.txt"}},
		{name: "Unicode folding (long s)", method: "POST", path: "/v2/fs/delete", body: `{"path":"scratch.txt","recur\u017five":true}`,
			status: 422, loc: "body.recurſive", msg: `is not "recursive"`, intact: []string{"scratch.txt"}},
		{name: "strict write names the field it resembles", method: "POST", path: "/v2/fs/write", body: `{"path":"n.txt","Content":"x","content":"y"}`,
			status: 422, loc: "body.Content", msg: `field "Content" is not "content"`},
		{name: "unknown keys are still ignored", method: "POST", path: "/v2/fs/delete", body: `{"path":"scratch.txt","force":true}`, status: 200},
		{name: "unknown keys are still refused on the v2 write", method: "POST", path: "/v2/fs/write", body: `{"path":"n.txt","content":"x","mode":"0644"}`,
			status: 422, loc: "body.mode", msg: "unknown field `mode`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, files, httpapi.Options{})
			status, body := e.raw(tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("status %d %v, want %d", status, body, tt.status)
			}
			if tt.loc != "" {
				loc, msg := firstError(t, body)
				if loc != tt.loc || !strings.Contains(msg, tt.msg) {
					t.Errorf("error at %s: %q; want at %s: %q", loc, msg, tt.loc, tt.msg)
				}
			}
			for _, f := range tt.intact {
				if got := e.file(f); got != files[f] {
					t.Errorf("%s = %q, want %q", f, got, files[f])
				}
			}
			if _, err := os.Stat(filepath.Join(e.root, "sub", "b.txt")); err == nil {
				t.Error("sub/b.txt was written")
			}
		})
	}
}

// TestNestedFieldNamesAreCaseSensitive: the check reaches objects inside
// the body, such as a text_editor patch's line edits.
func TestNestedFieldNamesAreCaseSensitive(t *testing.T) {
	t.Parallel()
	h := hub.New(hub.Options{Token: "tok"})
	t.Cleanup(h.Close)
	e := newEnv(t, nil, httpapi.Options{Hub: h})
	status, body := e.raw("POST", "/v2/hosts/-/text_editor", `{"action":"patch","path":"a.txt","edits":[{"from":1,"content":"x"},{"from":2,"FROM":9}]}`)
	if status != 422 {
		t.Fatalf("status %d %v, want 422", status, body)
	}
	if loc, msg := firstError(t, body); loc != "body.edits.1.FROM" || !strings.Contains(msg, `field "FROM" is not "from"`) {
		t.Errorf("error at %s: %q", loc, msg)
	}
}

// TestBodyMustBeValidUTF8: encoding/json replaces invalid UTF-8 and lone
// surrogate escapes with U+FFFD, which would be written to disk in place
// of what the caller sent; such bodies are refused instead.
func TestBodyMustBeValidUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, body string
		status           int
		loc, msg         string
	}{
		{name: "invalid byte", path: "/v2/fs/write", body: "{\"path\":\"inv.txt\",\"content\":\"a\xffb\"}",
			status: 422, loc: "body.content", msg: "offset 30"},
		{name: "lone high surrogate", path: "/v2/fs/write", body: `{"path":"inv.txt","content":"a\ud800b"}`,
			status: 422, loc: "body.content", msg: "surrogate"},
		{name: "lone low surrogate", path: "/v1/file/write", body: `{"file":"inv.txt","content":"\udc00"}`,
			status: 422, loc: "body.content", msg: "surrogate"},
		{name: "high surrogate then a non-surrogate escape", path: "/v2/fs/write", body: `{"path":"inv.txt","content":"\ud83d\u0041"}`,
			status: 422, loc: "body.content", msg: "surrogate"},
		{name: "invalid byte in a key", path: "/v2/fs/write", body: "{\"path\":\"inv.txt\",\"content\":\"x\",\"k\xc3\":1}",
			status: 422, loc: "body", msg: "UTF-8"},
		{name: "a surrogate pair is fine", path: "/v2/fs/write", body: `{"path":"ok.txt","content":"\ud83d\ude00"}`, status: 200},
		{name: "an escaped backslash before u is fine", path: "/v2/fs/write", body: `{"path":"ok.txt","content":"\\ud800"}`, status: 200},
		{name: "raw UTF-8 is fine", path: "/v2/fs/write", body: `{"path":"ok.txt","content":"café 😀"}`, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil, httpapi.Options{})
			status, body := e.raw("POST", tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("status %d %v, want %d", status, body, tt.status)
			}
			if tt.status == 200 {
				return
			}
			loc, msg := firstError(t, body)
			if loc != tt.loc || !strings.Contains(msg, tt.msg) || !strings.Contains(msg, "valid UTF-8") || !strings.Contains(msg, "base64") {
				t.Errorf("error at %s: %q; want at %s: %q, naming valid UTF-8 and base64", loc, msg, tt.loc, tt.msg)
			}
			if _, err := os.Stat(filepath.Join(e.root, "inv.txt")); err == nil {
				t.Errorf("inv.txt was written: %q", e.file("inv.txt"))
			}
		})
	}
}

// TestBodyNestingBounded: segmentio/encoding/json decodes nesting by
// recursion without a bound, so a body of a few megabytes of "[" (even
// in a field nobody reads) overflowed the stack and killed the server; a
// body nested past jsonx.MaxDepth is refused and nothing is written.
func TestBodyNestingBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, path := range []string{"/v2/fs/write", "/v1/file/write"} {
		status, body := e.raw("POST", path, `{"path":"n.txt","file":"n.txt","content":"x","zz":`+deep+`}`)
		if status != 422 {
			t.Fatalf("%s: status %d %v, want 422", path, status, body)
		}
		if _, msg := firstError(t, body); !strings.Contains(msg, "nests deeper than 10000") {
			t.Errorf("%s: message %q", path, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "n.txt")); err == nil {
		t.Errorf("n.txt was written")
	}
	if status, body := e.raw("POST", "/v1/file/write", `{"file":"ok.txt","content":"x","zz":[[[1]]]}`); status != 200 || body["success"] != true {
		t.Errorf("a shallow body: %d %v", status, body)
	}
}

// TestSandboxCapabilitiesKey: AIO's GET /v2/sandbox names the field
// "capabilities".
func TestSandboxCapabilitiesKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	status, body := e.raw("GET", "/v2/sandbox", "")
	data, _ := body["data"].(map[string]any)
	if _, ok := data["capabilities"].(map[string]any); status != 200 || !ok {
		t.Fatalf("GET /v2/sandbox: %d, data keys %v", status, keys(data))
	}
	if _, bad := data["Capabilities"]; bad {
		t.Errorf("data still has \"Capabilities\"")
	}
	sb, err := e.c.Sandbox(bg)
	if err != nil || !sb.Capabilities.Files["read"] {
		t.Errorf("client: %+v %v", sb, err)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestOutOfRangeParameters: values that pass a naive range check (NaN
// compares false both ways; -1 means "no limit" to a cap; MaxInt+1
// overflows) are refused or clamped.
func TestOutOfRangeParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "l0\nl1\n", "w/": ""}, httpapi.Options{})
	w, err := e.c.CreateWatch(bg, client.CreateWatchRequest{Path: "w"})
	if err != nil {
		t.Fatal(err)
	}
	poll := "/v2/watch/" + w.WatcherID + "/poll?timeout="
	tests := []struct {
		name, method, path, body string
		status                   int
		msg                      string // substring of message or first error
	}{
		{name: "poll timeout NaN", method: "GET", path: poll + "NaN", status: 400, msg: "timeout must be between 0 and 60"},
		{name: "poll timeout +Inf", method: "GET", path: poll + "%2BInf", status: 400, msg: "timeout must be between 0 and 60"},
		{name: "poll timeout -Inf", method: "GET", path: poll + "-Inf", status: 400, msg: "timeout must be between 0 and 60"},
		{name: "poll timeout 0.5", method: "GET", path: poll + "0.5", status: 200},
		{name: "glob max_results -1", method: "POST", path: "/v1/file/glob", body: `{"path":".","pattern":"*","max_results":-1}`, status: 422, msg: "max_results must be >= 0"},
		{name: "grep max_results -1", method: "POST", path: "/v2/fs/grep", body: `{"path":".","pattern":"l","max_results":-1}`, status: 422, msg: "max_results must be >= 0"},
		{name: "v1 grep max_results -1", method: "POST", path: "/v1/file/grep", body: `{"path":".","pattern":"l","max_results":-1}`, status: 422, msg: "max_results must be >= 0"},
		{name: "glob max_results 0 is the default", method: "POST", path: "/v1/file/glob", body: `{"path":".","pattern":"*","max_results":0}`, status: 200},
		{name: "v2 start_line MaxInt", method: "GET", path: "/v2/fs/read?path=a.txt&start_line=9223372036854775807", status: 200},
		{name: "v2 start_line MaxInt with end_line", method: "GET", path: "/v2/fs/read?path=a.txt&start_line=9223372036854775807&end_line=9223372036854775807", status: 200},
		{name: "v1 start_line MaxInt", method: "POST", path: "/v1/file/read", body: `{"file":"a.txt","start_line":9223372036854775807}`, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw(tt.method, tt.path, tt.body)
			if status != tt.status || body["success"] != (tt.status == 200) {
				t.Fatalf("%d %v, want %d", status, body, tt.status)
			}
			msg, _ := body["message"].(string)
			if status == 422 {
				_, msg = firstError(t, body)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q lacks %q", msg, tt.msg)
			}
			if strings.Contains(tt.path, "read") {
				// Past the end, as Python slicing: nothing, not an error.
				if c := body["data"].(map[string]any)["content"]; c != "" {
					t.Errorf("content %q, want empty", c)
				}
			}
		})
	}
}

// TestOversizedBodyIs413: a JSON body over the limit is refused with 413,
// as AIO answers a body too large, not 422, and says to use upload.
func TestOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	body := `{"path":"big.txt","content":"` + strings.Repeat("x", 64<<20) + `"}`
	status, m := e.raw("POST", "/v2/fs/write", body)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(fmt.Sprint(m["errors"]), "use upload") {
		t.Fatalf("status %d, body %v", status, m)
	}
	if _, err := os.Stat(filepath.Join(e.root, "big.txt")); !os.IsNotExist(err) {
		t.Fatalf("an oversized write left big.txt (%v)", err)
	}
}

// TestQueryDecodedAsAIO: query strings are decoded as AIO's servers decode
// them (Python's parse_qsl, Rust's form_urlencoded): ';' is part of a
// value and a '%' without two hex digits after it stands for itself.
// url.ParseQuery drops such a parameter whole, so a file named with either
// read as "missing query parameter path", and follow_symlinks=false;…
// as the default true.
func TestQueryDecodedAsAIO(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"notes;v2.txt": "semi\n", "100%.txt": "pct\n", "a b.txt": "space\n", "t.txt": "t\n"}, httpapi.Options{})
	if err := os.Symlink("t.txt", filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url    string
		status int
		want   string // data.content, or data.is_symlink for a stat
	}{
		{"/v2/fs/read?path=notes;v2.txt", 200, "semi\n"},
		{"/v2/fs/read?path=notes%3Bv2.txt", 200, "semi\n"},
		{"/v2/fs/read?path=100%.txt", 200, "pct\n"},
		{"/v2/fs/read?path=100%25.txt", 200, "pct\n"},
		{"/v2/fs/read?path=a+b.txt", 200, "space\n"},
		{"/v2/fs/read?path=a%20b.txt&start_line=0;", 422, ""},
		{"/v2/fs/stat?path=link&follow_symlinks=false;x=1", 422, ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw("GET", tt.url, "")
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, body)
			}
			if tt.want != "" {
				if got := body["data"].(map[string]any)["content"]; got != tt.want {
					t.Errorf("content %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// TestManyUnknownFieldsAnswerQuickly: a body with tens of thousands of
// refused keys (unknown ones on the strict v2 write, snake_case
// variants of a guard field on any route) is answered in time linear in
// its size (checked by the size, not a clock: quadratic, the test takes
// minutes). Sorting the errors by insertion, joining each location at
// every comparison, and looking each key up in the list of misspelt ones
// took minutes of CPU for half a megabyte, and the work went on after
// the client gave up.
func TestManyUnknownFieldsAnswerQuickly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	const n = 40000 // under 6^6, so the guard variants below are distinct
	unknown := make([]string, n)
	guards := make([]string, n)
	for i := range n {
		unknown[i] = fmt.Sprintf(`"k%d":1`, i)
		// dry_run with underscores spread through it: all normalise to
		// "dryrun", and each is refused as the guard field.
		var b strings.Builder
		for j, c := range "dryrun" {
			b.WriteRune(c)
			b.WriteString(strings.Repeat("_", i/pow(6, j)%6))
		}
		guards[i] = fmt.Sprintf(`%q:1`, b.String())
	}
	for _, tc := range []struct{ path, body string }{
		{"/v2/fs/write", `{"path":"n.txt","content":"x",` + strings.Join(unknown, ",") + `}`},
		{"/v1/file/write", `{"file":"n.txt","content":"x",` + strings.Join(guards, ",") + `}`},
	} {
		req, err := http.NewRequest("POST", e.srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var body struct {
			Errors []client.ValidationError `json:"errors"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		// All n are found and sorted; the first 100 are listed, and one
		// more error says how many were left out.
		if err != nil || resp.StatusCode != 422 || len(body.Errors) != 101 || !strings.Contains(body.Errors[100].Message, fmt.Sprintf("and %d more", n-100)) {
			t.Fatalf("%s: status %d, %d errors (%v), want 422 and 101 (100 of %d, then how many more)", tc.path, resp.StatusCode, len(body.Errors), err, n)
		}
		if !slices.IsSortedFunc(body.Errors[:100], func(a, b client.ValidationError) int {
			return strings.Compare(strings.Join(a.Location, "."), strings.Join(b.Location, "."))
		}) {
			t.Errorf("%s: errors not sorted by location", tc.path)
		}
	}
}

func pow(b, e int) int {
	p := 1
	for range e {
		p *= b
	}
	return p
}

// TestValidationErrorsAreBounded: a body with thousands of refused keys
// gets the first 100 errors and one saying how many more there were, not
// one each (a million keys were answered with about 8 times the body's
// size, built in memory). The status is decided on all of them.
func TestValidationErrorsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	var b strings.Builder
	b.WriteString(`{"path":"n.txt","content":"x"`)
	for i := range 5000 {
		fmt.Fprintf(&b, `,"k%05d":1`, i)
	}
	b.WriteString("}")
	status, body := e.raw("POST", "/v2/fs/write", b.String())
	errs, _ := body["errors"].([]any)
	if status != 422 || len(errs) != 101 {
		t.Fatalf("status %d with %d errors, want 422 with 101", status, len(errs))
	}
	last, _ := errs[100].(map[string]any)
	if msg, _ := last["message"].(string); !strings.Contains(msg, "and 4900 more errors") {
		t.Errorf("last error %v, want it to say how many more", last)
	}
	if _, err := os.Stat(filepath.Join(e.root, "n.txt")); err == nil {
		t.Error("the refused write made n.txt")
	}
}
