package mcpserver

import (
	"os"
	"testing"
)

// TestPatchHeaderSameFileOtherSpelling: a single-file patch whose
// envelope names path's file in another spelling (absolute against
// relative, "./", "..", a link to it) is that file's patch, as the
// engine's own check and HTTP's route take it; only another file is a
// mismatch. Models that use absolute paths (as most agent harnesses
// teach) write Codex envelopes with the relative name.
func TestPatchHeaderSameFileOtherSpelling(t *testing.T) {
	t.Parallel()
	for _, clientRoots := range []bool{false, true} {
		name := "all roots"
		if clientRoots {
			name = "client roots"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var o envOptions
			e := newEnv(t, map[string]string{"a.txt": "one\ntwo\n", "sub/b.txt": "x\n"}, o)
			if clientRoots {
				e.cs = e.connect(nil, "file://"+e.root)
			}
			e.ok("read", args("path", "sub/b.txt"))
			if err := os.Symlink("a.txt", e.path("link.txt")); err != nil {
				t.Fatal(err)
			}
			env := func(header string) string {
				return "*** Begin Patch\n*** Update File: " + header + "\n@@\n-two\n+TWO\n*** End Patch"
			}
			back := func(header string) string {
				return "*** Begin Patch\n*** Update File: " + header + "\n@@\n-TWO\n+two\n*** End Patch"
			}
			for _, c := range []struct{ path, header string }{
				{e.path("a.txt"), "a.txt"},
				{"a.txt", e.path("a.txt")},
				{"a.txt", "./a.txt"},
				{"sub/../a.txt", "a.txt"},
				{"link.txt", "a.txt"},
			} {
				e.ok("patch", args("path", c.path, "patch", env(c.header)))
				if got := e.file("a.txt"); got != "one\nTWO\n" {
					t.Fatalf("path %s, header %s: a.txt = %q", c.path, c.header, got)
				}
				e.ok("patch", args("path", c.path, "patch", back(c.header)))
			}
			r := e.fail("patch", args("path", e.path("a.txt"), "patch", env("sub/b.txt")), "bad_request")
			wantContains(t, r.text, "the patch updates sub/b.txt, but path names")
			if got := e.file("a.txt"); got != "one\ntwo\n" {
				t.Fatalf("a.txt = %q after a mismatched patch", got)
			}
		})
	}
}
