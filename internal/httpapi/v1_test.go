package httpapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// v1 answers expected file failures with 200 and success:false.
func TestV1FilesFailWith200(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	status, body := e.raw("POST", "/v1/file/read", `{"file":"missing.txt"}`)
	if status != 200 || body["success"] != false {
		t.Fatalf("%d %v", status, body)
	}
	data := body["data"].(map[string]any)
	if data["error_type"] != "not_found" || data["errno_name"] != "ENOENT" || data["exception_type"] != "FileNotFoundError" || data["operation"] != "read" {
		t.Errorf("data %v", data)
	}
	// Schema failures stay 422 on v1.
	if status, _ := e.raw("POST", "/v1/file/read", `{}`); status != 422 {
		t.Errorf("missing file field: %d", status)
	}
	// Unknown fields are ignored on v1 bodies.
	if status, body := e.raw("POST", "/v1/file/write", `{"file":"w.txt","content":"x","extra":true}`); status != 200 || body["success"] != true {
		t.Errorf("extra field: %d %v", status, body)
	}
}

func TestV1ReadWriteReplace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, httpapi.Options{})
	r, err := e.c.V1Read(bg, client.V1ReadRequest{File: "a.txt", StartLine: client.Int(1), EndLine: client.Int(2)})
	if err != nil || r.Content != "two\n" || !strings.HasSuffix(r.File, "/a.txt") {
		t.Fatalf("read %+v %v", r, err)
	}
	w, err := e.c.V1Write(bg, client.V1WriteRequest{File: "b.txt", Content: "x\nx\n"})
	if err != nil || w.BytesWritten != 4 {
		t.Fatalf("write %+v %v", w, err)
	}
	rr, err := e.c.V1Replace(bg, client.V1ReplaceRequest{File: "b.txt", OldStr: "x", NewStr: "y"})
	if err != nil || rr.ReplacedCount != 2 || e.file("b.txt") != "y\ny\n" {
		t.Fatalf("replace %+v %v %q", rr, err, e.file("b.txt"))
	}
	_, err = e.c.V1Replace(bg, client.V1ReplaceRequest{File: "b.txt", OldStr: "zzz", NewStr: "y"})
	ce := wantErr(t, err, 200, "no_match")
	if ce.Message != "old_str not found in file" {
		t.Errorf("message %q", ce.Message)
	}
}

func TestV1Editor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"e.txt": "a\nb\nc\n"}, httpapi.Options{})
	v, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "e.txt", ViewRange: []int{2, -1}})
	if err != nil || v.Output != "Here's the result of running `cat -n` on e.txt:\n     2\tb\n     3\tc\n" {
		t.Fatalf("view %+v %v", v, err)
	}
	_, err = e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "e.txt", ViewRange: []int{5, -1}})
	ce := wantErr(t, err, 200, "bad_request")
	if !strings.Contains(ce.Message, "Its first element `5` should be within the range of lines of the file: [1, 3]") {
		t.Errorf("view_range message %q", ce.Message)
	}
	_, err = e.c.V1Editor(bg, client.V1EditorRequest{Command: "create", Path: "e.txt", FileText: client.String("x")})
	ce = wantErr(t, err, 200, "already_exists")
	if ce.Message != "File already exists at: e.txt. Cannot overwrite files using command `create`." {
		t.Errorf("create message %q", ce.Message)
	}
	c, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "create", Path: "new/n.txt", FileText: client.String("fresh\n")})
	if err != nil || c.PrevExist || e.file("new/n.txt") != "fresh\n" {
		t.Fatalf("create %+v %v", c, err)
	}
	// undo_edit after create deletes the file (AIO left it behind).
	u, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "undo_edit", Path: "new/n.txt"})
	if err != nil || !strings.Contains(u.Output, "removed") {
		t.Fatalf("undo create %+v %v", u, err)
	}
	if _, err := e.c.V1Read(bg, client.V1ReadRequest{File: "new/n.txt"}); err == nil {
		t.Fatal("file still exists after undo of create")
	}
	s, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "str_replace", Path: "e.txt", OldStr: client.String("b\n"), NewStr: client.String("")})
	if err != nil || e.file("e.txt") != "a\nc\n" || *s.OldContent != "a\nb\nc\n" {
		t.Fatalf("delete via str_replace %+v %v", s, err)
	}
	if status, _ := e.raw("POST", "/v1/file/str_replace_editor", `{"command":"explode","path":"e.txt"}`); status != 422 {
		t.Errorf("unknown command: %d", status)
	}
	// Document-format fields of AIO 1.x are accepted and ignored.
	if _, err := e.c.V1Editor(bg, client.V1EditorRequest{Command: "view", Path: "e.txt", PageRange: []int{1, 2}}); err != nil {
		t.Errorf("page_range: %v", err)
	}
}

// str_replace_editor's command is an enum in AIO's schema: an empty one is
// a validation failure (422), as an unknown one is, not a failed command
// answered 200; a missing or null one is reported once, as missing.
func TestV1EditorCommandValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"e.txt": "a\n"}, httpapi.Options{})
	tests := []struct {
		body string
		want []string // the errors' types
	}{
		{`{"command":"","path":"e.txt"}`, []string{"value_error.enum"}},
		{`{"command":"explode","path":"e.txt"}`, []string{"value_error.enum"}},
		{`{"path":"e.txt"}`, []string{"value_error.missing"}},
		{`{"command":null,"path":"e.txt"}`, []string{"value_error.missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw("POST", "/v1/file/str_replace_editor", tt.body)
			var got []string
			errs, _ := body["errors"].([]any)
			for _, x := range errs {
				got = append(got, x.(map[string]any)["type"].(string))
			}
			if status != 422 || !cmp.Equal(got, tt.want) {
				t.Errorf("status %d, error types %v; want 422 %v (%v)", status, got, tt.want, body)
			}
		})
	}
}
