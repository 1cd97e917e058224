package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

func TestStatAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"d/a.py": "a\n", "d/b.txt": "bb\n", "d/.hidden": "h", "d/sub/c.py": "c", "d/sub/deeper/x.go": "x"}, httpapi.Options{})
	if err := os.Symlink("a.py", filepath.Join(e.root, "d/link.py")); err != nil {
		t.Fatal(err)
	}
	st, err := e.c.Stat(bg, client.StatQuery{Path: "d/link.py"})
	if err != nil || !st.IsSymlink || st.Size != 2 || st.Version == "" {
		t.Fatalf("stat following the link: %+v %v", st, err)
	}
	no := false
	st, err = e.c.Stat(bg, client.StatQuery{Path: "d/link.py", FollowSymlinks: &no})
	if err != nil || !st.IsSymlink || st.Size != int64(len("a.py")) {
		t.Fatalf("stat of the link itself: %+v %v", st, err)
	}
	st, err = e.c.V1Stat(bg, client.V1StatRequest{Path: "d"})
	if err != nil || !st.IsDirectory || st.ModifiedTime == nil {
		t.Fatalf("v1 stat dir: %+v %v", st, err)
	}
	wantErr(t, func() error { _, err := e.c.Stat(bg, client.StatQuery{Path: "nope"}); return err }(), 404, "not_found")

	l, err := e.c.List(bg, client.ListQuery{Path: "d"})
	if err != nil || l.TotalCount != 5 || !hasName(l, ".hidden") {
		t.Fatalf("list (hidden shown by default): %+v %v", l, err)
	}
	l, err = e.c.List(bg, client.ListQuery{Path: "d", ShowHidden: &no, Recursive: true, MaxDepth: client.Int(2)})
	if err != nil || hasName(l, ".hidden") || !hasName(l, "c.py") || hasName(l, "x.go") {
		t.Fatalf("list without hidden, depth 2: %+v %v", names(l), err)
	}
	l, err = e.c.V1List(bg, client.V1ListRequest{Path: "d", Recursive: true, FileTypes: []string{".py"}, IncludePermissions: true, SortBy: "size", SortDesc: true})
	if err != nil {
		t.Fatal(err)
	}
	// Only .py files pass (directories always do), from every level;
	// largest first, the link sized as its 2-byte target, and directories,
	// which have no size, last.
	if want := []string{"a.py", "link.py", "c.py", "sub", "deeper"}; !cmp.Equal(names(l), want) {
		t.Errorf("v1 list .py by size desc = %v, want %v", names(l), want)
	}
	for _, f := range l.Files {
		if f.Permissions == nil {
			t.Errorf("%s lacks permissions", f.Name)
		}
	}
	wantErr(t, func() error { _, err := e.c.List(bg, client.ListQuery{Path: "d/a.py"}); return err }(), 400, "invalid_target")
	if status, _ := e.raw("POST", "/v1/file/list", `{"path":"d","sort_by":"colour"}`); status != 422 {
		t.Errorf("bad sort_by: %d", status)
	}
}

func hasName(l *client.ListResult, name string) bool {
	for _, f := range l.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

func names(l *client.ListResult) []string {
	var out []string
	for _, f := range l.Files {
		out = append(out, f.Name)
	}
	return out
}

func TestMkdirCopyMoveDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"f.txt": "one\n", "g.txt": "two\n", "dir/x": "x"}, httpapi.Options{})
	wantErr(t, func() error { _, err := e.c.Mkdir(bg, client.MkdirRequest{Path: "a/b"}); return err }(), 404, "not_found")
	wantErr(t, func() error { _, err := e.c.Mkdir(bg, client.MkdirRequest{Path: "dir"}); return err }(), 409, "already_exists")
	if m, err := e.c.V1Mkdir(bg, client.MkdirRequest{Path: "dir", Parents: true}); err != nil || m.Created {
		t.Fatalf("mkdir -p of an existing dir: %+v %v", m, err)
	}
	wantErr(t, func() error {
		_, err := e.c.Move(bg, client.MoveRequest{Source: "f.txt", Destination: "g.txt"})
		return err
	}(), 409, "already_exists")
	r, _ := e.c.Read(bg, client.ReadQuery{Path: "f.txt"})
	wantErr(t, func() error {
		_, err := e.c.Move(bg, client.MoveRequest{Source: "f.txt", Destination: "h.txt", ExpectedVersion: "ffffffffffffffffffffffffffffffff"})
		return err
	}(), 409, "stale_version")
	if _, err := e.c.Move(bg, client.MoveRequest{Source: "f.txt", Destination: "g.txt", Overwrite: true, ExpectedVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
	if e.file("g.txt") != "one\n" {
		t.Fatalf("g.txt = %q", e.file("g.txt"))
	}
	// Undo of the move restores both files.
	if _, err := e.c.Undo(bg, "g.txt"); err != nil {
		t.Fatal(err)
	}
	if e.file("f.txt") != "one\n" || e.file("g.txt") != "two\n" {
		t.Fatalf("after undo: f=%q g=%q", e.file("f.txt"), e.file("g.txt"))
	}
	status, body := e.raw("POST", "/v1/file/delete", `{"path":"dir"}`)
	if status != 200 || body["success"] != false || !strings.Contains(body["message"].(string)+" "+strOr(body["hint"]), "recursive") {
		t.Fatalf("delete of a non-empty dir without recursive: %d %v", status, body)
	}
	if d, err := e.c.V1Delete(bg, client.DeleteRequest{Path: "dir", Recursive: true}); err != nil || !d.IsDirectory {
		t.Fatalf("recursive delete: %+v %v", d, err)
	}
	if _, err := e.c.Delete(bg, client.DeleteRequest{Path: "g.txt"}); err != nil {
		t.Fatal(err)
	}
	h, err := e.c.UndoHistory(bg, "g.txt")
	if err != nil || len(h.Entries) == 0 || h.Entries[0].Op != "delete" {
		t.Fatalf("undo history: %+v %v", h, err)
	}
	if _, err := e.c.Undo(bg, "g.txt"); err != nil || e.file("g.txt") != "two\n" {
		t.Fatalf("undo of delete: %v", err)
	}
	// expected_version holds an undo to the version read: another
	// agent's later write is not reverted unseen.
	read, err := e.c.Read(bg, client.ReadQuery{Path: "g.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Write(bg, client.WriteRequest{Path: "g.txt", Content: "theirs\n"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.UndoVersion(bg, "g.txt", read.Version)
	wantErr(t, err, 409, "stale_version")
	if e.file("g.txt") != "theirs\n" {
		t.Fatalf("a refused undo changed g.txt to %q", e.file("g.txt"))
	}
	now, err := e.c.Read(bg, client.ReadQuery{Path: "g.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.UndoVersion(bg, "g.txt", now.Version); err != nil || e.file("g.txt") != "two\n" {
		t.Fatalf("undo expecting the current version: %v, g.txt %q", err, e.file("g.txt"))
	}
}

func strOr(v any) string {
	s, _ := v.(string)
	return s
}

func TestWriteOwnership(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing ownership needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no nobody account")
	}
	e := newEnv(t, nil, httpapi.Options{})
	status, body := e.raw("POST", "/v2/fs/write?user=nobody", `{"path":"owned/f.txt","content":"x"}`)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	for _, p := range []string{"owned", "owned/f.txt"} {
		fi, err := os.Stat(filepath.Join(e.root, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := int(fi.Sys().(*syscall.Stat_t).Uid); got != uid {
			t.Errorf("%s owned by %d, want %d", p, got, uid)
		}
	}
	status, body = e.raw("POST", "/v2/fs/write?user=no-such-user-xyz", `{"path":"g.txt","content":"x"}`)
	if status != 400 || body["message"] != "no such user: no-such-user-xyz" {
		t.Fatalf("unknown user: %d %v", status, body)
	}
}

// TestCopySaysWhatItLeftOut: a tree copy that leaves out a link leading
// outside the workspace, or a FIFO, reports them in its data and its hint
// instead of a bare success.
func TestCopySaysWhatItLeftOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"lk/in.txt": "x\n", "whole/f.txt": "y\n"}, httpapi.Options{})
	if err := os.Symlink("/etc/passwd", filepath.Join(e.root, "lk", "pw")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in.txt", filepath.Join(e.root, "lk", "inl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(e.root, "lk", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tree copy has no undo record; the hint says that too.
	const noUndo = "this change has no undo record, so undo cannot revert it: undo does not record directories"
	tests := []struct {
		source, hint string
		data         map[string]any
	}{
		{source: "lk", hint: "not copied: 1 symbolic link leading outside the workspace and 1 socket, FIFO or device; copy their targets or recreate them separately if they are needed; " + noUndo,
			data: map[string]any{"files_copied": 1.0, "links_copied": 1.0, "links_skipped": 1.0, "other_skipped": 1.0}},
		{source: "whole", hint: noUndo, data: map[string]any{"files_copied": 1.0}},
	}
	for _, tt := range tests {
		status, body := e.raw("POST", "/v2/fs/copy", `{"source":"`+tt.source+`","destination":"`+tt.source+`-copy"}`)
		data, _ := body["data"].(map[string]any)
		got := map[string]any{}
		for _, k := range []string{"files_copied", "links_copied", "links_skipped", "other_skipped"} {
			if v, ok := data[k]; ok {
				got[k] = v
			}
		}
		if status != 200 || strOr(body["hint"]) != tt.hint || !cmp.Equal(got, tt.data) {
			t.Errorf("copy %s: %d hint %q data %v; want hint %q data %v", tt.source, status, strOr(body["hint"]), got, tt.hint, tt.data)
		}
	}
}

// sort_by modified orders by the times themselves: modified_time's text
// (RFC 3339 with the fraction's trailing zeros dropped) sorts a whole
// second after every fraction of it ("…05Z" > "…05.5Z"). sort_by size
// orders by size also when include_size leaves the sizes out.
func TestListSortsByTimeAndSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"d/whole": "1", "d/half": "22", "d/quarter": "333", "d/earlier": "4444"}, httpapi.Options{})
	base := time.Date(2024, 1, 1, 0, 0, 5, 0, time.UTC)
	for name, mod := range map[string]time.Time{
		"whole": base, "half": base.Add(500 * time.Millisecond), "quarter": base.Add(250 * time.Millisecond), "earlier": base.Add(-100 * time.Millisecond),
	} {
		if err := os.Chtimes(filepath.Join(e.root, "d", name), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	no := false
	tests := []struct {
		name string
		req  client.V1ListRequest
		want []string
	}{
		{"modified", client.V1ListRequest{Path: "d", SortBy: "modified"}, []string{"earlier", "whole", "quarter", "half"}},
		{"modified desc", client.V1ListRequest{Path: "d", SortBy: "modified", SortDesc: true}, []string{"half", "quarter", "whole", "earlier"}},
		{"size without sizes", client.V1ListRequest{Path: "d", SortBy: "size", IncludeSize: &no}, []string{"whole", "half", "quarter", "earlier"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := e.c.V1List(bg, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(l)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserQueryWhereApplied: v2's mkdir and copy own what they create by
// ?user= and their OpenAPI entries say so; v1's, which have no such
// parameter, ignore one sent.
func TestUserQueryWhereApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"f.txt": "x"}, httpapi.Options{})
	for _, tt := range []struct {
		path, body string
		status     int
	}{
		{"/v2/fs/mkdir?user=no-such-user-xyz", `{"path":"d1"}`, 400},
		{"/v2/fs/copy?user=no-such-user-xyz", `{"source":"f.txt","destination":"g1.txt"}`, 400},
		{"/v1/file/mkdir?user=no-such-user-xyz", `{"path":"d2"}`, 200},
		{"/v1/file/copy?user=no-such-user-xyz", `{"source":"f.txt","destination":"g2.txt"}`, 200},
	} {
		status, body := e.raw("POST", tt.path, tt.body)
		if status != tt.status || (status == 200) != (body["success"] == true) {
			t.Errorf("%s: %d %v, want %d", tt.path, status, body, tt.status)
		}
	}
	resp, err := http.Get(e.srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"/v2/fs/mkdir": true, "/v2/fs/copy": true, "/v2/fs/write": true, "/v1/file/mkdir": false, "/v1/file/copy": false} {
		got := slices.ContainsFunc(doc.Paths[path]["post"].Parameters, func(p struct{ Name, In string }) bool { return p.Name == "user" && p.In == "query" })
		if got != want {
			t.Errorf("POST %s documents ?user=: %v, want %v", path, got, want)
		}
	}
}

// TestUndoOfAMoveSaysBothFiles: undoing a move's destination brings its
// source back, and the answer says so (data.also; undo_edit's output),
// rather than only that the destination was removed.
func TestUndoOfAMoveSaysBothFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"}, httpapi.Options{})
	for _, mv := range []string{`{"source":"a.txt","destination":"b.txt"}`, `{"source":"c.txt","destination":"d.txt"}`} {
		if status, body := e.raw("POST", "/v2/fs/move", mv); status != 200 {
			t.Fatalf("move: %d %v", status, body)
		}
	}
	status, body := e.raw("POST", "/v2/fs/undo", `{"path":"b.txt"}`)
	data, _ := body["data"].(map[string]any)
	also, _ := data["also"].([]any)
	if status != 200 || data["deleted"] != true || len(also) != 1 || !strings.HasSuffix(also[0].(map[string]any)["path"].(string), "/a.txt") {
		t.Errorf("undo b.txt: %d %v, want the destination removed and a.txt in also", status, body)
	}
	status, body = e.raw("POST", "/v2/fs/edit", `{"command":"undo_edit","path":"d.txt"}`)
	out, _ := body["data"].(map[string]any)["output"].(string)
	if status != 200 || !strings.Contains(out, "it was moved here from ") || !strings.HasSuffix(out, "/c.txt, which has it back.") {
		t.Errorf("undo_edit d.txt: %d %q", status, out)
	}
	if _, err := os.Stat(filepath.Join(e.root, "c.txt")); err != nil {
		t.Errorf("c.txt not back: %v", err)
	}
}
