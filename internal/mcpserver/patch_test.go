package mcpserver

import (
	"os"
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
