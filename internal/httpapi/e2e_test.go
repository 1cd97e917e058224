package httpapi_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestFileOperationsFlow follows AIO's "File Operations" example end to end
// through the Go client: mkdir with parents, two writes, a recursive list,
// a multi-line str_replace, a ranged read with exact text, copy, move,
// delete, and a missing file reported as not_found with ENOENT.
func TestFileOperationsFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, httpapi.Options{})
	c := e.c
	mk, err := c.Mkdir(bg, client.MkdirRequest{Path: "project/src/pkg", Parents: true})
	if err != nil || !mk.Created {
		t.Fatalf("mkdir: %+v %v", mk, err)
	}
	main := "def main():\n    print('hello')\n    return 0\n\n\nif __name__ == '__main__':\n    main()\n"
	if _, err := c.Write(bg, client.WriteRequest{Path: "project/src/main.py", Content: main}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(bg, client.WriteRequest{Path: "project/src/pkg/util.py", Content: "X = 1\n"}); err != nil {
		t.Fatal(err)
	}
	l, err := c.List(bg, client.ListQuery{Path: "project", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range l.Files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"main.py", "pkg", "src", "util.py"}, names); diff != "" || l.FileCount != 2 || l.DirectoryCount != 2 {
		t.Fatalf("recursive list (-want +got):\n%s\n%+v", diff, l)
	}
	ed, err := c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "project/src/main.py",
		OldStr: client.String("    print('hello')\n    return 0\n"), NewStr: client.String("    print('hello, world')\n    return 1\n")})
	if err != nil || ed.StartLine != 2 {
		t.Fatalf("str_replace: %+v %v", ed, err)
	}
	r, err := c.Read(bg, client.ReadQuery{Path: "project/src/main.py", StartLine: client.Int(1), EndLine: client.Int(3)})
	if err != nil || r.Content != "    print('hello, world')\n    return 1\n" {
		t.Fatalf("ranged read: %q %v", r.Content, err)
	}
	cp, err := c.Copy(bg, client.CopyRequest{Source: "project/src", Destination: "backup/src"})
	if err != nil || cp.FilesCopied != 2 {
		t.Fatalf("copy: %+v %v", cp, err)
	}
	if _, err := c.Copy(bg, client.CopyRequest{Source: "project/src", Destination: "backup/src"}); err == nil {
		t.Fatal("copy onto an existing destination without overwrite succeeded")
	} else {
		wantErr(t, err, 409, "already_exists")
	}
	if _, err := c.Move(bg, client.MoveRequest{Source: "backup/src/main.py", Destination: "backup/app.py"}); err != nil {
		t.Fatal(err)
	}
	if e.file("backup/app.py") != e.file("project/src/main.py") {
		t.Fatal("moved file differs")
	}
	del, err := c.Delete(bg, client.DeleteRequest{Path: "backup", Recursive: true})
	if err != nil || !del.IsDirectory {
		t.Fatalf("delete: %+v %v", del, err)
	}
	_, err = c.Read(bg, client.ReadQuery{Path: "backup/app.py"})
	ce := wantErr(t, err, 404, "not_found")
	if ce.Data.ErrnoName == nil || *ce.Data.ErrnoName != "ENOENT" {
		t.Fatalf("missing file error data %+v", ce.Data)
	}
	st, err := c.Stat(bg, client.StatQuery{Path: "project/src/main.py"})
	if err != nil || st.IsDirectory || st.Permissions != "644" || st.Version != r.Version || st.Size != int64(len(e.file("project/src/main.py"))) {
		t.Fatalf("stat: %+v %v", st, err)
	}
}
