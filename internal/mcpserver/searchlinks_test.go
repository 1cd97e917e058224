package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchLinksStayInSessionRoots: symbolic links inside a session root
// that lead out of it (to another part of the allowed root) are not
// followed by grep or glob while they walk, and naming one, or a path
// through one, is outside_root, as read is.
func TestSearchLinksStayInSessionRoots(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"pub/a.txt":       "public text\n",
		"priv/secret.txt": "PRIVATEDATA\n",
		"priv/d/s2.txt":   "PRIVATEDATA in a directory\n",
	}, envOptions{})
	pub := e.path("pub")
	for link, target := range map[string]string{
		"lf":     "../priv/secret.txt", // a file outside the session root
		"ld":     "../priv/d",          // a directory outside it
		"in.txt": "a.txt",              // a file inside it
	} {
		if err := os.Symlink(target, filepath.Join(pub, link)); err != nil {
			t.Fatal(err)
		}
	}
	cs := e.connect(nil, fileURI(pub))
	call := func(name string, a map[string]any) result { return callOn(t, cs, name, a) }
	noPrivate := func(r result) {
		t.Helper()
		// (The pattern itself is echoed in "No matches for ...".)
		if strings.Contains(r.text, ":PRIVATEDATA") || strings.Contains(r.text, "s2.txt") {
			t.Fatalf("outside the session roots:\n%s", r.text)
		}
	}

	wantFail(t, call("read", args("path", "lf")), "read", "outside_root")

	r := call("grep", args("pattern", "PRIVATEDATA"))
	if r.err {
		t.Fatal(r.text)
	}
	noPrivate(r)
	wantContains(t, r.text, "No matches")
	// Links met while walking are not searched at all (ripgrep's default),
	// even one that stays inside: only a.txt is.
	r = call("grep", args("pattern", "."))
	noPrivate(r)
	wantContains(t, r.text, "a.txt:1:public text\n", "(1 file searched)")
	if strings.Contains(r.text, "in.txt") {
		t.Fatalf("a link met while walking was searched:\n%s", r.text)
	}

	// Named explicitly, a link is resolved and checked like any path.
	for _, p := range []string{"lf", "ld", "ld/s2.txt", filepath.Join(pub, "ld")} {
		wantFail(t, call("grep", args("pattern", "PRIVATEDATA", "path", p)), "grep", "outside_root")
	}
	r = call("grep", args("pattern", "public", "path", "in.txt"))
	wantContains(t, r.text, "a.txt:1:public text\n")

	// glob reports the links as what they are, without descending.
	r = call("glob", args("pattern", "**"))
	noPrivate(r)
	wantContains(t, r.text, "a.txt\n", "in.txt\n", "ld\n", "lf\n")
	wantFail(t, call("glob", args("pattern", "*", "path", "ld")), "glob", "outside_root")
	// A link among the pattern's literal directories is not followed
	// either: the walk would meet it.
	for _, pat := range []string{"ld/*", "ld/**", "ld/s?.txt"} {
		r = call("glob", args("pattern", pat))
		noPrivate(r)
		if r.err {
			t.Fatalf("glob %s: %s", pat, r.text)
		}
	}
}
