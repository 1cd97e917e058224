package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

func TestV2Read(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "l0\nl1\nl2\nl3\n", "bin.dat": "ab\x00cd", "latin.txt": "caf\xe9\n", "dir/": ""}, httpapi.Options{})
	r, err := e.c.Read(bg, client.ReadQuery{Path: "a.txt"})
	if err != nil || r.Content != "l0\nl1\nl2\nl3\n" || r.TotalLines != 4 || len(r.Version) != 32 {
		t.Fatalf("read: %+v %v", r, err)
	}
	r, err = e.c.Read(bg, client.ReadQuery{Path: "a.txt", StartLine: client.Int(1), EndLine: client.Int(3)})
	if err != nil || r.Content != "l1\nl2\n" {
		t.Fatalf("ranged read: %+v %v", r, err)
	}
	r, err = e.c.Read(bg, client.ReadQuery{Path: "a.txt", StartLine: client.Int(2)})
	if err != nil || r.Content != "l2\nl3\n" {
		t.Fatalf("open-ended read: %+v %v", r, err)
	}
	_, err = e.c.Read(bg, client.ReadQuery{Path: "missing.txt"})
	ce := wantErr(t, err, 404, "not_found")
	if ce.Data.ErrnoName == nil || *ce.Data.ErrnoName != "ENOENT" || *ce.Data.Errno != 2 || ce.Data.Operation != "read" || ce.Data.Path != "missing.txt" {
		t.Errorf("error data %+v", ce.Data)
	}
	wantErr(t, func() error { _, err := e.c.Read(bg, client.ReadQuery{Path: "dir"}); return err }(), 400, "invalid_target")
	wantErr(t, func() error { _, err := e.c.Read(bg, client.ReadQuery{Path: "bin.dat"}); return err }(), 422, "decode_error")
	wantErr(t, func() error { _, err := e.c.Read(bg, client.ReadQuery{Path: "latin.txt"}); return err }(), 422, "decode_error")
	wantErr(t, func() error { _, err := e.c.Read(bg, client.ReadQuery{Path: "/etc/passwd"}); return err }(), 403, "outside_root")
	wantErr(t, func() error { _, err := e.c.Read(bg, client.ReadQuery{Path: "../x"}); return err }(), 403, "outside_root")

	status, body := e.raw("GET", "/v2/fs/read", "")
	if status != 422 || body["message"] != "Request data validation failed" {
		t.Fatalf("missing path: %d %v", status, body)
	}
	errs := body["errors"].([]any)
	if loc := errs[0].(map[string]any)["location"]; !cmp.Equal(loc, []any{"query", "path"}) {
		t.Errorf("location %v", loc)
	}
	if status, _ := e.raw("GET", "/v2/fs/read?path=a.txt&start_line=-1", ""); status != 422 {
		t.Errorf("negative start_line: %d", status)
	}
}

// TestV2ReadBOM: the read routes show a leading byte order mark as U+FEFF
// when the range starts at the first line, as AIO does, and say so in
// bom; writing back what was read leaves the file's bytes as they were,
// and an edit whose old_str was copied with the mark applies.
func TestV2ReadBOM(t *testing.T) {
	t.Parallel()
	const file = "\ufefftop\r\nworld\r\n"
	e := newEnv(t, map[string]string{"bom.txt": file}, httpapi.Options{})
	r, err := e.c.Read(bg, client.ReadQuery{Path: "bom.txt"})
	if err != nil || r.Content != file || !r.BOM || r.TotalLines != 2 {
		t.Fatalf("read: %+v %v", r, err)
	}
	r, err = e.c.Read(bg, client.ReadQuery{Path: "bom.txt", StartLine: client.Int(1)})
	if err != nil || r.Content != "world\r\n" || !r.BOM {
		t.Fatalf("read from the second line: %+v %v", r, err)
	}
	v1, err := e.c.V1Read(bg, client.V1ReadRequest{File: "bom.txt"})
	if err != nil || v1.Content != file {
		t.Fatalf("v1 read: %+v %v", v1, err)
	}
	whole, _ := e.c.Read(bg, client.ReadQuery{Path: "bom.txt"})
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "bom.txt", Content: whole.Content}); err != nil {
		t.Fatal(err)
	}
	if got := e.file("bom.txt"); got != file {
		t.Fatalf("after writing back what was read: %q, want %q", got, file)
	}
	if _, err := e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "bom.txt", OldStr: client.String("\ufefftop"), NewStr: client.String("\ufeffTOP")}); err != nil {
		t.Fatalf("edit with the mark in old_str: %v", err)
	}
	if got := e.file("bom.txt"); got != "\ufeffTOP\r\nworld\r\n" {
		t.Fatalf("after the edit: %q", got)
	}
}

func TestV2ReadTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"big.txt": strings.Repeat("x", 16<<20+1)}, httpapi.Options{})
	_, err := e.c.Read(bg, client.ReadQuery{Path: "big.txt"})
	ce := wantErr(t, err, 413, "too_large")
	if !strings.Contains(ce.Message, "file exceeds the 16 MiB buffered text limit") {
		t.Errorf("message %q", ce.Message)
	}
}

func TestV2Write(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"old.txt": "old\n"}, httpapi.Options{})
	w, err := e.c.Write(bg, client.WriteRequest{Path: "deep/new/f.txt", Content: "hi", TrailingNewline: true, LeadingNewline: true})
	if err != nil || w.BytesWritten != 4 || !w.Created {
		t.Fatalf("write: %+v %v", w, err)
	}
	if got := e.file("deep/new/f.txt"); got != "\nhi\n" {
		t.Fatalf("content %q", got)
	}
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "deep/new/f.txt", Content: "more\n", Append: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.file("deep/new/f.txt"); got != "\nhi\nmore\n" {
		t.Fatalf("append: %q", got)
	}
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "b.bin", Content: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255}), Encoding: client.String("base64")}); err != nil {
		t.Fatal(err)
	}
	if got := e.file("b.bin"); got != "\x00\x01\x02\xff" {
		t.Fatalf("base64: %q", got)
	}
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "r.bin", Content: "caf\u00e9\u00ff", Encoding: client.String("raw")}); err != nil {
		t.Fatal(err)
	}
	if got := e.file("r.bin"); got != "caf\xe9\xff" {
		t.Fatalf("raw: %q", got)
	}
	_, err = e.c.Write(bg, client.WriteRequest{Path: "r2.bin", Content: "\u0100", Encoding: client.String("raw")})
	wantErr(t, err, 422, "decode_error")
	_, err = e.c.Write(bg, client.WriteRequest{Path: "x.bin", Content: "!!!", Encoding: client.String("base64")})
	wantErr(t, err, 422, "decode_error")

	// expected_version guards the write.
	r, _ := e.c.Read(bg, client.ReadQuery{Path: "old.txt"})
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "old.txt", Content: "v2\n", ExpectedVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Write(bg, client.WriteRequest{Path: "old.txt", Content: "v3\n", ExpectedVersion: r.Version})
	wantErr(t, err, 409, "stale_version")
	if got := e.file("old.txt"); got != "v2\n" {
		t.Fatalf("stale write changed the file: %q", got)
	}

	for _, tt := range []struct{ body, field, typ string }{
		{`{"path":"x","content":"a","bogus":1}`, "bogus", "value_error.extra"},
		{`{"path":"x"}`, "content", "value_error.missing"},
		{`{"path":"x","content":5}`, "content", "type_error"},
		{`{"path":"x","content":"a","encoding":"latin9"}`, "encoding", "value_error.enum"},
	} {
		status, body := e.raw("POST", "/v2/fs/write", tt.body)
		if status != 422 {
			t.Errorf("%s: status %d", tt.body, status)
			continue
		}
		first := body["errors"].([]any)[0].(map[string]any)
		if !cmp.Equal(first["location"], []any{"body", tt.field}) || first["type"] != tt.typ {
			t.Errorf("%s: error %v", tt.body, first)
		}
	}
	if status, body := e.raw("POST", "/v2/fs/write", `{"path":`); status != 422 || body["errors"] == nil {
		t.Errorf("malformed JSON: %d %v", status, body)
	}
}

func TestV2Edit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"f.go":  "package f\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n",
		"g.txt": "alpha\nbeta\n",
	}, httpapi.Options{})
	res, err := e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "g.txt", OldStr: client.String("beta"), NewStr: client.String("BETA")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.PrevExist || *res.OldContent != "alpha\nbeta\n" || *res.NewContent != "alpha\nBETA\n" || res.MatchTier != "exact" || !strings.Contains(res.Output, "     2\tBETA") {
		t.Fatalf("result %+v", res)
	}
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: client.String("return 1"), NewStr: client.String("return 2")})
	ce := wantErr(t, err, 400, "ambiguous_match")
	if ce.Message != "old_str has multiple occurrences; replace_mode is required" || !cmp.Equal(ce.Data.Lines, []int{4, 8}) {
		t.Errorf("ambiguous: %q lines %v", ce.Message, ce.Data.Lines)
	}
	// The hint names this route's fields, not MCP's (old_text, replace_all).
	if want := "include more surrounding lines so old_str matches once, or set replace_mode to ALL, FIRST or LAST"; ce.Hint != want {
		t.Errorf("ambiguous hint %q, want %q", ce.Hint, want)
	}
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: client.String("return 3"), NewStr: client.String("x")})
	ce = wantErr(t, err, 400, "no_match")
	if ce.Message != "old_str not found in file" || !strings.Contains(ce.Hint, "closest match at line 4") {
		t.Errorf("no match: %q hint %q", ce.Message, ce.Hint)
	}
	res, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: client.String("return 1"), NewStr: client.String("return 2"), ReplaceMode: client.String("LAST")})
	if err != nil || res.StartLine != 8 {
		t.Fatalf("LAST: %+v %v", res, err)
	}
	// Exact (AIO's default) refuses whitespace differences; tolerant finds them.
	old := client.String("func A() int {\n    return 1\n}")
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: old, NewStr: client.String("func A() int {\n    return 7\n}")})
	wantErr(t, err, 400, "no_match")
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: client.String("func A() int {\n  return 1\n}"), NewStr: client.String("func A() int {\n  return 7\n}"), Match: client.String("tolerant")})
	wantErr(t, err, 400, "no_match") // tabs are never taken for spaces
	res, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "f.go", OldStr: client.String("func A() int {  \n\treturn 1\n}"), NewStr: client.String("func A() int {\n\treturn 7\n}"), Match: client.String("tolerant")})
	if err != nil || res.MatchTier != "trailing_whitespace" {
		t.Fatalf("tolerant: %+v %v", res, err)
	}
	res, err = e.c.Edit(bg, client.EditRequest{Command: "insert", Path: "g.txt", InsertLine: client.Int(1), NewStr: client.String("inserted")})
	if err != nil || e.file("g.txt") != "alpha\ninserted\nBETA\n" {
		t.Fatalf("insert: %+v %v %q", res, err, e.file("g.txt"))
	}
	if _, err := e.c.Edit(bg, client.EditRequest{Command: "undo_edit", Path: "g.txt"}); err != nil || e.file("g.txt") != "alpha\nBETA\n" {
		t.Fatalf("undo: %v %q", err, e.file("g.txt"))
	}
	for _, cmd := range []string{"view", "create", "frobnicate"} {
		_, err := e.c.Edit(bg, client.EditRequest{Command: cmd, Path: "g.txt"})
		ce := wantErr(t, err, 400, "bad_request")
		if !strings.Contains(ce.Hint, "/v2/fs/") {
			t.Errorf("%s: hint %q", cmd, ce.Hint)
		}
		if cmd == "frobnicate" && (!strings.Contains(ce.Message, "str_replace, insert, undo_edit") || strings.Contains(ce.Message, "view")) {
			t.Errorf("unknown command: %q lists what the route does not do", ce.Message)
		}
	}
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "nope.txt", OldStr: client.String("a"), NewStr: client.String("b")})
	wantErr(t, err, 404, "not_found")
	_, err = e.c.Edit(bg, client.EditRequest{Command: "insert", Path: "g.txt", InsertLine: client.Int(99), NewStr: client.String("x")})
	wantErr(t, err, 400, "bad_request")
	r, _ := e.c.Read(bg, client.ReadQuery{Path: "g.txt"})
	_, err = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "g.txt", OldStr: client.String("alpha"), NewStr: client.String("A"), ExpectedVersion: "0123456789abcdef0123456789abcdef"})
	wantErr(t, err, 409, "stale_version")
	if _, err := e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "g.txt", OldStr: client.String("alpha"), NewStr: client.String("A"), ExpectedVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
}

func TestV2PatchAndUndo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "x\ny\nx\ny\n", "b.txt": "keep\n"}, httpapi.Options{})
	patch := "*** Begin Patch\n*** Update File: b.txt\n*** Move to: moved/b.txt\n@@\n-keep\n+kept\n*** Add File: n.txt\n+new\n*** End Patch"
	dry, err := e.c.Patch(bg, client.PatchRequest{Patch: patch, DryRun: true})
	if err != nil || !dry.DryRun || !strings.Contains(dry.Diff, "+kept") || e.file("b.txt") != "keep\n" {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	res, err := e.c.Patch(bg, client.PatchRequest{Patch: patch, Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []client.PatchFile{{Path: "moved/b.txt", From: "b.txt", Action: "move"}, {Path: "n.txt", Action: "add"}}
	for i := range res.Files {
		if res.Files[i].Version == "" || res.Files[i].Diff == "" {
			t.Errorf("file %d lacks version or diff: %+v", i, res.Files[i])
		}
		res.Files[i].Version, res.Files[i].Diff = "", ""
	}
	if diff := cmp.Diff(want, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if res.Output != "Success. Updated the following files:\nA n.txt\nM moved/b.txt\n" || e.file("moved/b.txt") != "kept\n" {
		t.Fatalf("output %q", res.Output)
	}
	_, err = e.c.Patch(bg, client.PatchRequest{Patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n x\n-y\n+z\n*** End Patch"})
	ce := wantErr(t, err, 400, "ambiguous_match")
	if !cmp.Equal(ce.Data.Lines, []int{1, 3}) {
		t.Errorf("lines %v", ce.Data.Lines)
	}
	_, err = e.c.Patch(bg, client.PatchRequest{Patch: "@@ x\n-y\n+z", Path: "a.txt", ExpectedVersions: map[string]string{"a.txt": "00000000000000000000000000000000"}})
	wantErr(t, err, 409, "stale_version")
	r, _ := e.c.Read(bg, client.ReadQuery{Path: "a.txt"})
	if _, err := e.c.Patch(bg, client.PatchRequest{Patch: "@@ x\n-y\n+z", Path: "a.txt", ExpectedVersions: map[string]string{"a.txt": r.Version}}); err != nil {
		t.Fatal(err)
	}
	if e.file("a.txt") != "x\nz\nx\ny\n" {
		t.Fatalf("agent zero patch: %q", e.file("a.txt"))
	}
	// With path, an envelope must name that file (Agent Zero would apply
	// hunks written for n.txt to a.txt).
	_, err = e.c.Patch(bg, client.PatchRequest{Patch: "*** Begin Patch\n*** Update File: n.txt\n@@ x\n-z\n+w\n*** End Patch", Path: "a.txt"})
	if ce := wantErr(t, err, 400, "bad_request"); !strings.Contains(ce.Message, "the patch updates n.txt, but path names a.txt") || e.file("a.txt") != "x\nz\nx\ny\n" {
		t.Fatalf("mismatched header: %q, a.txt %q", ce.Message, e.file("a.txt"))
	}
	u, err := e.c.Undo(bg, "a.txt")
	if err != nil || u.Undone != "patch" || e.file("a.txt") != "x\ny\nx\ny\n" {
		t.Fatalf("undo: %+v %v", u, err)
	}
	_, err = e.c.Patch(bg, client.PatchRequest{Patch: "nonsense"})
	ce = wantErr(t, err, 400, "bad_request")
	if !strings.Contains(ce.Message, "Invalid patch: The first line of the patch must be '*** Begin Patch'") {
		t.Errorf("message %q", ce.Message)
	}
}

// TestUndoEditReportsSuccessWhenContentUnreadable: undo_edit restores the
// file and only then reads it back to show it; when the restored content
// cannot be read as text, the undo still happened and must say so.
func TestUndoEditReportsSuccessWhenContentUnreadable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, route, content, why string
	}{
		{"v2 binary", "/v2/fs/edit", "ab\x00cd", "binary"},
		{"v2 not utf-8", "/v2/fs/edit", "caf\xe9\n", "UTF-8"},
		{"v1 binary", "/v1/file/str_replace_editor", "ab\x00cd", "binary"},
		{"v1 not utf-8", "/v1/file/str_replace_editor", "caf\xe9\n", "UTF-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"f.dat": tt.content}, httpapi.Options{})
			st, err := e.c.Stat(bg, client.StatQuery{Path: "f.dat"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.c.Write(bg, client.WriteRequest{Path: "f.dat", Content: "text\n"}); err != nil {
				t.Fatal(err)
			}
			status, body := e.raw("POST", tt.route, `{"command":"undo_edit","path":"f.dat"}`)
			if status != 200 || body["success"] != true {
				t.Fatalf("undo reported as failed: %d %v", status, body)
			}
			if got := e.file("f.dat"); got != tt.content {
				t.Fatalf("file after undo = %q, want %q", got, tt.content)
			}
			data := body["data"].(map[string]any)
			out, _ := data["output"].(string)
			if !strings.HasPrefix(out, "Last edit to f.dat undone successfully. Its content cannot be shown: ") || !strings.Contains(out, tt.why) {
				t.Errorf("output %q", out)
			}
			if data["version"] != st.Version || data["new_content"] != nil || data["prev_exist"] != true {
				t.Errorf("data %v, want version %s and no content", data, st.Version)
			}
			if strOr(body["hint"]) == "" {
				t.Errorf("no hint on how to get the content: %v", body)
			}
		})
	}
}

// TestHostEditHintsNameTheHost: the hints of /v2/hosts/{host}/fs/edit
// name the host's routes, never the hub's own /v2/fs/ ones, which would
// read or write the hub's files instead of the host's.
func TestHostEditHintsNameTheHost(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	for _, cmd := range []string{"view", "create", "frobnicate"} {
		resp, err := http.Post(e.url+"/v2/hosts/pc/fs/edit", "application/json", strings.NewReader(`{"command":"`+cmd+`","path":"a.txt"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Message string
			Hint    string
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 400 || !strings.Contains(body.Hint, "/v2/hosts/pc/fs/") || strings.Contains(body.Hint, "/v2/fs/") ||
			!strings.Contains(body.Message, "/v2/hosts/pc/fs/edit") {
			t.Errorf("%s: %d %+v %v", cmd, resp.StatusCode, body, err)
		}
	}
}

// TestEditNoMatchHints: a str_replace that exact matching (the default)
// refuses for a difference tolerant matching accepts says what differs
// and names this front's match field; a difference no matching accepts
// (tabs for spaces) is named too. No hint shows an empty diff.
func TestEditNoMatchHints(t *testing.T) {
	t.Parallel()
	files := map[string]string{"crlf.txt": "x\r\ny\r\n", "ws.txt": "foo  \nbar\n", "tabs.go": "if a {\n\tb()\n}\n"}
	tests := []struct {
		name     string
		path     string
		old      string
		match    string
		v1       bool // POST /v1/file/replace instead of /v2/fs/edit
		hint     []string
		tolerant string // the match tier "match": "tolerant" then uses; "" when it fails too
	}{
		{name: "line endings", path: "crlf.txt", old: "x\ny",
			hint:     []string{"old_str uses LF line endings, the file uses CRLF", `send "match": "tolerant" to accept it`},
			tolerant: "line_ending"},
		{name: "line endings v1", path: "crlf.txt", old: "x\ny", v1: true,
			hint:     []string{"old_str uses LF line endings, the file uses CRLF", `send "match": "tolerant"`},
			tolerant: "line_ending"},
		{name: "trailing whitespace", path: "ws.txt", old: "foo\nbar",
			hint:     []string{"differ only in spaces or tabs at the ends of lines", `send "match": "tolerant"`},
			tolerant: "trailing_whitespace"},
		{name: "spaces for tabs", path: "tabs.go", old: "if a {\n    b()\n}", match: "tolerant",
			hint: []string{"old_str indents with spaces where the file has tabs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, files, httpapi.Options{})
			replace := func(match string) (string, error) {
				if tt.v1 {
					_, err := e.c.V1Replace(bg, client.V1ReplaceRequest{File: tt.path, OldStr: tt.old, NewStr: "z", Match: match})
					return "", err
				}
				req := client.EditRequest{Command: "str_replace", Path: tt.path, OldStr: client.String(tt.old), NewStr: client.String("z")}
				if match != "" {
					req.Match = client.String(match)
				}
				res, err := e.c.Edit(bg, req)
				if err != nil {
					return "", err
				}
				return res.MatchTier, nil
			}
			_, err := replace(tt.match)
			status := 400
			if tt.v1 {
				status = 200
			}
			ce := wantErr(t, err, status, "no_match")
			for _, h := range tt.hint {
				if !strings.Contains(ce.Hint, h) {
					t.Errorf("hint %q does not contain %q", ce.Hint, h)
				}
			}
			if strings.Contains(ce.Hint, "{--}{++}") {
				t.Errorf("hint shows an empty diff: %q", ce.Hint)
			}
			if tt.tolerant == "" {
				return
			}
			tier, err := replace("tolerant")
			if err != nil || (!tt.v1 && tier != tt.tolerant) {
				t.Errorf("tolerant: tier %q, %v; want %q", tier, err, tt.tolerant)
			}
		})
	}
}

// undo_edit's new_content is the whole file, byte order mark included, as
// str_replace's old_content and new_content are: an agent writing it back
// keeps the mark.
func TestUndoEditNewContentKeepsBOM(t *testing.T) {
	t.Parallel()
	const before = "\uFEFFa\nb\n"
	tests := []struct {
		name string
		undo func(e *env) (*client.EditorResult, error)
	}{
		{"v2", func(e *env) (*client.EditorResult, error) {
			return e.c.Edit(bg, client.EditRequest{Command: "undo_edit", Path: "bom.txt"})
		}},
		{"v1", func(e *env) (*client.EditorResult, error) {
			return e.c.V1Editor(bg, client.V1EditorRequest{Command: "undo_edit", Path: "bom.txt"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"bom.txt": before}, httpapi.Options{})
			ed, err := e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "bom.txt", OldStr: client.String("b"), NewStr: client.String("c")})
			if err != nil || deref(ed.OldContent) != before {
				t.Fatalf("str_replace: %+v %v", ed, err)
			}
			u, err := tt.undo(e)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, deref(u.NewContent)); diff != "" || e.file("bom.txt") != before {
				t.Errorf("undo_edit new_content (-want +got):\n%s", diff)
			}
		})
	}
}
