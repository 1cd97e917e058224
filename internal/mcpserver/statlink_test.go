package mcpserver

import (
	"os"
	"testing"
)

// TestStatDanglingLink checks that stat describes a symbolic link whose
// target is missing as the link it is, rather than calling it missing.
func TestStatDanglingLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "abc\n", "d/x": ""}, envOptions{})
	for link, target := range map[string]string{"gone": "missing.txt", "d/up": "../nowhere/f", "ok": "a.txt"} {
		if err := os.Symlink(target, e.path(link)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path, text, typ, target string
	}{
		{name: "dangling", path: "gone", text: "gone: symbolic link to missing.txt, which does not exist, permissions 777, modified ",
			typ: "symlink", target: "missing.txt"},
		{name: "dangling in a subdirectory", path: "d/up", text: "d/up: symbolic link to ../nowhere/f, which does not exist",
			typ: "symlink", target: "../nowhere/f"},
		{name: "link to a file", path: "ok", text: "a.txt: file (through a symbolic link), 4 bytes", typ: "file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e.on(t)
			r := e.ok("stat", args("path", tc.path))
			wantContains(t, r.text, tc.text)
			if r.out["type"] != tc.typ || r.out["symlink"] != true {
				t.Errorf("out %v", r.out)
			}
			if got, _ := r.out["link_target"].(string); got != tc.target {
				t.Errorf("link_target %q, want %q", got, tc.target)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		e := e.on(t)
		e.fail("stat", args("path", "missing.txt"), "not_found")
		e.fail("stat", args("path", "d/nope"), "not_found")
	})
}
