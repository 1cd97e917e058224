package httpapi_test

import (
	"archive/tar"
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/workspace"
)

// TestUndoRecordedReported: a change that commits without an undo record
// (here the file it replaces is over the undo entry limit, set low) says
// so on every route that records undo: undo_recorded false in its data
// and a hint; a change that was recorded carries neither, and its answer
// keeps AIO's shape.
func TestUndoRecordedReported(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	big := "big\n" + strings.Repeat("x", 2*limit) + "\n"
	names := []string{"w2", "w1", "ed", "ins", "sre", "rp", "pt", "del", "up", "mv", "cp", "small", "small-ed"}
	files := map[string]string{"dir/f.txt": "f\n", "src.txt": "copied\n"}
	for _, n := range names {
		files[n+".txt"] = big
		if strings.HasPrefix(n, "small") {
			files[n+".txt"] = "big\nsmall\n"
		}
	}
	e := newEnvUndo(t, files, workspace.UndoLimits{MaxEntryBytes: limit}, httpapi.Options{})

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("path", "up.txt")
	fw, _ := mw.CreateFormFile("file", "up.txt")
	_, _ = fw.Write([]byte("uploaded\n"))
	_ = mw.Close()
	archive := makeTar(t, []tarEntry{{Name: "a.txt", Type: tar.TypeReg, Body: "a\n"}})

	tests := []struct {
		name, method, url, body, ct string
		noUndo                      bool
		hint                        string // part of the hint when noUndo
	}{
		{name: "v2 write", url: "/v2/fs/write", body: `{"path":"w2.txt","content":"new\n"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v1 write", url: "/v1/file/write", body: `{"file":"w1.txt","content":"new\n"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 edit", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"ed.txt","old_str":"big","new_str":"BIG"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 insert", url: "/v2/fs/edit", body: `{"command":"insert","path":"ins.txt","insert_line":0,"new_str":"top"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v1 str_replace_editor", url: "/v1/file/str_replace_editor", body: `{"command":"str_replace","path":"sre.txt","old_str":"big","new_str":"BIG"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v1 replace", url: "/v1/file/replace", body: `{"file":"rp.txt","old_str":"big","new_str":"BIG"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 patch", url: "/v2/fs/patch", body: `{"patch":"*** Begin Patch\n*** Update File: pt.txt\n@@\n-big\n+BIG\n*** End Patch"}`, noUndo: true, hint: "the patch's change to pt.txt has no undo record"},
		{name: "v2 delete", url: "/v2/fs/delete", body: `{"path":"del.txt"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 delete directory", url: "/v2/fs/delete", body: `{"path":"dir","recursive":true}`, noUndo: true, hint: "undo does not record directories"},
		{name: "v2 move", url: "/v2/fs/move", body: `{"source":"mv.txt","destination":"moved.txt"}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 copy over", url: "/v2/fs/copy", body: `{"source":"src.txt","destination":"cp.txt","overwrite":true}`, noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 upload over", url: "/v2/fs/upload", body: form.String(), ct: mw.FormDataContentType(), noUndo: true, hint: "larger than undo keeps"},
		{name: "v2 tree", method: "PUT", url: "/v2/fs/tree?path=tree", body: string(archive), ct: "application/x-tar", noUndo: true, hint: "undo does not record a directory an archive created whole"},
		{name: "v2 write recorded", url: "/v2/fs/write", body: `{"path":"small.txt","content":"new\n"}`},
		{name: "v2 write created", url: "/v2/fs/write", body: `{"path":"created.txt","content":"new\n"}`},
		{name: "v2 edit recorded", url: "/v2/fs/edit", body: `{"command":"str_replace","path":"small-ed.txt","old_str":"small","new_str":"SMALL"}`},
		{name: "v1 create recorded", url: "/v1/file/str_replace_editor", body: `{"command":"create","path":"made.txt","file_text":"x\n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "POST"
			}
			ct := tt.ct
			if ct == "" {
				ct = "application/json"
			}
			r := e.send(method, tt.url, "", tt.body, "Content-Type", ct)
			data, _ := r.body["data"].(map[string]any)
			if r.status != 200 || r.body["success"] != true || data == nil {
				t.Fatalf("%d %v", r.status, r.body)
			}
			undo, present := data["undo_recorded"]
			hint := strOr(r.body["hint"])
			if !tt.noUndo {
				if present || strings.Contains(hint, "undo") {
					t.Fatalf("a recorded change answered undo_recorded %v, hint %q", undo, hint)
				}
				return
			}
			if undo != false || !strings.Contains(hint, "no undo record") || !strings.Contains(hint, tt.hint) {
				t.Fatalf("undo_recorded %v (present %v), hint %q; want false and a hint with %q", undo, present, hint, tt.hint)
			}
		})
	}
}
