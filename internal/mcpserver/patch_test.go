package mcpserver

import (
	"os"
	"strings"
	"testing"
)

func TestPatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"app.py":   "def greet():\n    print(\"hi\")\n\ndef bye():\n    print(\"bye\")\n",
		"old.txt":  "gone\n",
		"crlf.txt": "a\r\nb\r\nc\r\n",
		"dup.txt":  "x\ny\nx\ny\n",
	}, envOptions{})

	multi := `*** Begin Patch
*** Update File: app.py
@@ def bye():
-    print("bye")
+    print("goodbye")
*** Add File: pkg/new.py
+print("new")
*** Delete File: old.txt
*** Update File: crlf.txt
 a
-b
+B
*** End Patch`

	t.Run("dry run writes nothing", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("patch", args("patch", multi, "dry_run", true))
		wantContains(t, r.text, "Dry run: nothing was written", "M app.py", "A pkg/new.py", "D old.txt",
			"--- a/app.py\n+++ b/app.py\n", `+    print("goodbye")`)
		if r.out["dry_run"] != true || e.file("old.txt") != "gone\n" {
			t.Fatal(r.out)
		}
		if _, err := os.Stat(e.path("pkg/new.py")); err == nil {
			t.Fatal("dry run created a file")
		}
	})

	r := e.ok("patch", args("patch", multi))
	wantContains(t, r.text, "Success. Updated the following files:\n", "M app.py  (version ", "A pkg/new.py  (version ", "D old.txt\n",
		"--- /dev/null\n+++ b/pkg/new.py\n", "--- a/old.txt\n+++ /dev/null\n")
	files := r.out["files"].([]any)
	if len(files) != 4 {
		t.Fatalf("files = %v", files)
	}
	if f := files[0].(map[string]any); f["path"] != "app.py" || f["action"] != "M" || f["version"] == nil || f["prev_version"] == nil {
		t.Fatal(f)
	}
	if e.file("app.py") != "def greet():\n    print(\"hi\")\n\ndef bye():\n    print(\"goodbye\")\n" ||
		e.file("pkg/new.py") != "print(\"new\")\n" || e.file("crlf.txt") != "a\r\nB\r\nc\r\n" {
		t.Fatal("patch result wrong")
	}
	if _, err := os.Stat(e.path("old.txt")); !os.IsNotExist(err) {
		t.Fatal("old.txt not deleted")
	}

	t.Run("single file (patch_text with path)", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("patch", args("path", "app.py", "patch", "@@ def greet():\n-    print(\"hi\")\n+    print(\"hello\")\n"))
		wantContains(t, r.text, "M app.py", `+    print("hello")`)
		if e.file("app.py") != "def greet():\n    print(\"hello\")\n\ndef bye():\n    print(\"goodbye\")\n" {
			t.Fatal(e.file("app.py"))
		}
	})
	t.Run("all or nothing", func(t *testing.T) {
		e := e.on(t)
		bad := "*** Begin Patch\n*** Update File: app.py\n@@\n-def greet():\n+def greet(name):\n*** Update File: crlf.txt\n-nope\n+x\n*** End Patch"
		r := e.fail("patch", args("patch", bad), "no_match")
		wantContains(t, r.text, "crlf.txt")
		if e.file("app.py") != "def greet():\n    print(\"hello\")\n\ndef bye():\n    print(\"goodbye\")\n" {
			t.Fatal("first file changed by a failed patch")
		}
	})
	t.Run("ambiguous hunk refused", func(t *testing.T) {
		e := e.on(t)
		e.fail("patch", args("path", "dup.txt", "patch", "-x\n+z\n y\n"), "ambiguous_match")
		if e.file("dup.txt") != "x\ny\nx\ny\n" {
			t.Fatal("ambiguous patch wrote")
		}
	})
	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.fail("patch", args("patch", "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"), "bad_request").text,
			"Frobnicate")
		e.fail("patch", args("patch", "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch"), "not_found")
		e.fail("patch", args("patch", "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch"), "outside_root")
		e.fail("patch", args("path", "../x", "patch", "@@ a\n+x\n"), "outside_root")
	})
}

// TestPatchMoveDeleteVersions: patch, move and delete take the versions
// DESIGN §3 promises every change takes, and a single-file patch whose
// envelope names another file than path is refused rather than applied
// to path.
func TestPatchMoveDeleteVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "a\nfoo\n", "b.txt": "b\nfoo\n", "c.txt": "c\n", "d.txt": "d\n", "m.txt": "m\n", "h.txt": "*** Update File: other.txt\nx\n"}, envOptions{})
	version := func(name string) string {
		r := e.ok("read", args("path", name))
		return r.out["version"].(string)
	}
	const stale = "0123456789abcdef0123456789abcdef"
	update := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n"

	e.fail("patch", args("patch", update, "expected_versions", map[string]any{"a.txt": stale}), "stale_version")
	e.fail("patch", args("path", "a.txt", "patch", "@@\n-a\n+A\n", "expected_version", stale), "stale_version")
	e.fail("patch", args("patch", update, "expected_version", version("a.txt")), "bad_request")
	e.fail("move", args("source", "m.txt", "destination", "n.txt", "expected_version", stale), "stale_version")
	e.fail("delete", args("path", "d.txt", "expected_version", stale), "stale_version")
	if e.file("a.txt") != "a\nfoo\n" || e.file("m.txt") != "m\n" || e.file("d.txt") != "d\n" {
		t.Fatal("a change with a stale version was applied")
	}
	e.ok("patch", args("patch", update, "expected_versions", map[string]any{"a.txt": version("a.txt")}))
	e.ok("patch", args("path", "c.txt", "patch", "@@\n-c\n+C\n", "expected_version", version("c.txt")))
	e.ok("move", args("source", "m.txt", "destination", "n.txt", "expected_version", version("m.txt")))
	e.ok("delete", args("path", "d.txt", "expected_version", version("d.txt")))
	if e.file("a.txt") != "A\nfoo\n" || e.file("c.txt") != "C\n" || e.file("n.txt") != "m\n" {
		t.Fatal("a change with the current version was not applied")
	}

	r := e.fail("patch", args("path", "a.txt", "patch", "*** Begin Patch\n*** Update File: b.txt\n@@\n-foo\n+FOO\n*** End Patch\n"), "bad_request")
	wantContains(t, r.text, "the patch updates b.txt, but path names a.txt")
	if e.file("a.txt") != "A\nfoo\n" || e.file("b.txt") != "b\nfoo\n" {
		t.Fatal("a patch for b.txt given with path a.txt changed a file")
	}
	e.ok("patch", args("path", "b.txt", "patch", "*** Begin Patch\n*** Update File: b.txt\n@@\n-foo\n+FOO\n*** End Patch\n"))
	// A context line that reads like a header is the file's text, not one.
	e.ok("patch", args("path", "h.txt", "patch", "@@\n *** Update File: other.txt\n-x\n+X\n"))
	if e.file("h.txt") != "*** Update File: other.txt\nX\n" {
		t.Fatalf("h.txt = %q", e.file("h.txt"))
	}
}

// TestPatchMoveIsModified: an Update with Move to is one modified file at
// its destination, as Codex reports it, with the diff of its content.
func TestPatchMoveIsModified(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, envOptions{})
	e.ok("read", args("path", "a.txt"))
	r := e.ok("patch", args("patch", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n-two\n+TWO\n+2\n three\n*** End Patch"))
	wantContains(t, r.text, "M b.txt (moved from a.txt)  (version ", "--- a/a.txt\n+++ b/b.txt\n", "-two\n+TWO\n+2\n",
		"Note: in b.txt (numbered as a.txt was), lines from line 3 on moved by +1 (line 3 is now line 4)")
	for _, bad := range []string{"D a.txt", "A b.txt", "/dev/null"} {
		if strings.Contains(r.text, bad) {
			t.Fatalf("result has %q:\n%s", bad, r.text)
		}
	}
	files := r.out["files"].([]any)
	if len(files) != 1 {
		t.Fatalf("files = %v", files)
	}
	if f := files[0].(map[string]any); f["path"] != "b.txt" || f["from"] != "a.txt" || f["action"] != "M" || f["prev_version"] == nil {
		t.Fatal(f)
	}
	if _, err := os.Stat(e.path("a.txt")); !os.IsNotExist(err) || e.file("b.txt") != "one\nTWO\n2\nthree\n" {
		t.Fatal("move not applied")
	}
}

// TestPatchReportsLineShifts: a patch result says, per file, how lines
// moved.
func TestPatchReportsLineShifts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "1\n2\n3\n4\n", "b.txt": "x\ny\n"}, envOptions{})
	r := e.ok("patch", args("patch", "*** Begin Patch\n*** Update File: a.txt\n@@\n 1\n+1.5\n 2\n*** Update File: b.txt\n-x\n+X\n*** End Patch"))
	wantContains(t, r.text, "Note: in a.txt, lines from line 2 on moved by +1 (line 2 is now line 3); use the new numbers for line edits.")
	if strings.Contains(r.text, "in b.txt") {
		t.Fatalf("b.txt's lines did not move:\n%s", r.text)
	}
}

// TestPatchMoveDestinationError: a refused "*** Move to:" names the
// destination as what it is, not as a file read for update.
func TestPatchMoveDestinationError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "one\n"}, envOptions{})
	r := e.fail("patch", args("patch", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../escape.txt\n@@\n-one\n+1\n*** End Patch"), "outside_root")
	wantContains(t, r.text, "Failed to write file ../escape.txt (the move destination of a.txt): ")
	if strings.Contains(r.text, "read file to update") {
		t.Fatal(r.text)
	}
	if e.file("a.txt") != "one\n" {
		t.Fatal("refused patch changed a.txt")
	}
}
