package mcpserver

import (
	"strings"
	"testing"
)

// TestPatchInClientRootNamesFilesAsWritten: in a session whose client
// root is not the workspace's first root, a Codex patch is applied with
// its relative paths made absolute; the result still names the files as
// the patch wrote them (files[].path is "the path as the patch wrote
// it"), in its listing and in its diff's headers.
func TestPatchInClientRootNamesFilesAsWritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"proj/a.go": "package a\n", "proj/b.go": "b\n"}, envOptions{})
	proj := e.path("proj")
	cs := e.connect(nil, fileURI(proj))
	r := callOn(t, cs, "patch", args("patch", "*** Begin Patch\n*** Add File: p.txt\n+p\n*** Update File: a.go\n*** Move to: c.go\n@@\n-package a\n+package c\n*** End Patch"))
	if r.err {
		t.Fatal(r.text)
	}
	wantContains(t, r.text, "A p.txt  (version ", "M c.go (moved from a.go)  (version ",
		"--- /dev/null\n+++ b/p.txt\n", "--- a/a.go\n+++ b/c.go\n")
	if strings.Contains(r.text, proj) {
		t.Fatalf("absolute paths in the result:\n%s", r.text)
	}
	files := r.out["files"].([]any)
	if f := files[1].(map[string]any); files[0].(map[string]any)["path"] != "p.txt" || f["path"] != "c.go" || f["from"] != "a.go" {
		t.Fatalf("files = %v", files)
	}
	if e.file("proj/c.go") != "package c\n" {
		t.Fatal(e.file("proj/c.go"))
	}
}
