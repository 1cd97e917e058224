package mcpserver

import (
	"os"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"README.md":       "hello\n",
		"src/main.go":     "package main\n",
		"src/lib/util.go": "package lib\n",
		".env":            "X=1\n",
	}, envOptions{})
	if err := os.Symlink("README.md", e.path("link.md")); err != nil {
		t.Fatal(err)
	}

	r := e.ok("list", args("path", "."))
	want := ".: 1 directory, 3 files\n.env  4 bytes\nREADME.md  6 bytes\nlink.md  6 bytes  (symlink)\nsrc/\n"
	if r.text != want {
		t.Fatalf("list:\n%s\nwant\n%s", r.text, want)
	}
	if r.out["dirs"] != 1.0 || r.out["files"] != 3.0 || len(r.out["entries"].([]any)) != 4 {
		t.Fatal(r.out)
	}

	r = e.ok("list", args("path", "src", "depth", 2))
	wantContains(t, r.text, "src: 1 directory, 2 files (depth 2)\nsrc/lib/\nsrc/lib/util.go  12 bytes\nsrc/main.go  13 bytes\n")
	r = e.ok("list", args("path", ""))
	wantContains(t, r.text, "README.md")
	r = e.ok("list", args("path", e.path("src")))
	wantContains(t, r.text, "src/lib/\n")

	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		e.fail("list", args("path", "nope"), "not_found")
		e.fail("list", args("path", "README.md"), "invalid_target")
		e.fail("list", args("path", ".."), "outside_root")
		e.fail("list", args("path", ".", "depth", -1), "bad_request")
	})
}

func TestStat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": "abc\n", "d/x": ""}, envOptions{})
	if err := os.Symlink("a.txt", e.path("l")); err != nil {
		t.Fatal(err)
	}
	r := e.ok("stat", args("path", "a.txt"))
	v := e.ok("read", args("path", "a.txt")).out["version"].(string)
	wantContains(t, r.text, "a.txt: file, 4 bytes, permissions 644, modified ", ", version "+v)
	if r.out["type"] != "file" || r.out["version"] != v || r.out["permissions"] != "644" {
		t.Fatal(r.out)
	}
	r = e.ok("stat", args("path", "d"))
	wantContains(t, r.text, "d: directory, permissions ")
	if r.out["type"] != "directory" || r.out["version"] != nil {
		t.Fatal(r.out)
	}
	r = e.ok("stat", args("path", "l"))
	wantContains(t, r.text, "a.txt: file (through a symbolic link), 4 bytes")

	e.fail("stat", args("path", "missing"), "not_found")
	e.fail("stat", args("path", "/etc/hostname"), "outside_root")
}

func TestMoveDeleteUndo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"a.txt":     "a\n",
		"b.txt":     "b\n",
		"dir/x.txt": "x\n",
		"empty/.k":  "",
	}, envOptions{})

	t.Run("move", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("move", args("source", "a.txt", "destination", "sub/a2.txt"))
		wantContains(t, r.text, "Moved a.txt to sub/a2.txt; undo sub/a2.txt reverts it")
		if e.file("sub/a2.txt") != "a\n" || r.out["destination"] != e.path("sub/a2.txt") {
			t.Fatal(r.out)
		}
		wantContains(t, e.fail("move", args("source", "sub/a2.txt", "destination", "b.txt"), "already_exists").text, "b.txt")
		e.ok("move", args("source", "sub/a2.txt", "destination", "b.txt", "overwrite", true))
		if e.file("b.txt") != "a\n" {
			t.Fatal(e.file("b.txt"))
		}
		e.fail("move", args("source", "nope", "destination", "x"), "not_found")
		e.fail("move", args("source", "dir", "destination", "dir/in"), "invalid_target")
		e.fail("move", args("source", "b.txt", "destination", "../out"), "outside_root")
		wantContains(t, e.ok("move", args("source", "dir", "destination", "dir2")).text, "Moved directory dir to dir2")
	})
	t.Run("undo", func(t *testing.T) {
		e := e.on(t)
		// b.txt was overwritten by the move: undo brings both sides back.
		r := e.ok("undo", args("path", "b.txt"))
		wantContains(t, r.text, "Undid the move of b.txt")
		if e.file("b.txt") != "b\n" || e.file("sub/a2.txt") != "a\n" {
			t.Fatalf("%q", e.file("b.txt"))
		}
		e.ok("write", args("path", "c.txt", "content", "new\n"))
		r = e.ok("undo", args("path", "c.txt"))
		wantContains(t, r.text, "it had created the file, so the file was removed")
		if _, err := os.Stat(e.path("c.txt")); !os.IsNotExist(err) {
			t.Fatal("undo of a create kept the file")
		}
		e.ok("edit", args("path", "b.txt", "old_text", "b", "new_text", "B"))
		e.write("b.txt", "changed by someone\n")
		e.fail("undo", args("path", "b.txt"), "conflict")
		e.fail("undo", args("path", "never.txt"), "bad_request")
	})
	t.Run("delete", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("delete", args("path", "b.txt"))
		wantContains(t, r.text, "Deleted b.txt; undo b.txt restores it")
		if r.out["undoable"] != true {
			t.Errorf("a deleted file not reported undoable: %v", r.out)
		}
		e.fail("delete", args("path", "b.txt"), "not_found")
		e.ok("undo", args("path", "b.txt"))
		if e.file("b.txt") != "changed by someone\n" {
			t.Fatal(e.file("b.txt"))
		}
		wantContains(t, e.fail("delete", args("path", "dir2"), "invalid_target").text, "not empty")
		r = e.ok("delete", args("path", "dir2", "recursive", true))
		if r.out["is_dir"] != true || !strings.Contains(r.text, "Deleted directory dir2") {
			t.Fatal(r.out)
		}
		e.fail("delete", args("path", "/tmp"), "outside_root")
		if r.out["undoable"] != false {
			t.Errorf("a deleted directory reported undoable: %v", r.out)
		}
		// A link is kept for undo as a link: undo makes it again, and the
		// file it points to is never touched.
		if err := os.Symlink("c.txt", e.path("link")); err != nil {
			t.Fatal(err)
		}
		r = e.ok("delete", args("path", "link"))
		wantContains(t, r.text, "Deleted link; undo link restores it")
		if r.out["undoable"] != true {
			t.Errorf("a deleted link not reported undoable: %v", r.out)
		}
		wantContains(t, e.ok("undo", args("path", "link")).text, "Undid the deletion of link: restored it.")
		if target, err := os.Readlink(e.path("link")); err != nil || target != "c.txt" {
			t.Errorf("after undo, link -> %q (%v), want c.txt", target, err)
		}
	})
}

// TestUndoAlreadyUndoneWording: a file already as the undo would leave
// it is said to be so, without inventing an earlier undo.
func TestUndoAlreadyUndoneWording(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"p.txt": "one\n"}, envOptions{})
	e.ok("write", args("path", "n.txt", "content", "new\n"))
	if err := os.Remove(e.path("n.txt")); err != nil {
		t.Fatal(err)
	}
	r := e.ok("undo", args("path", "n.txt"))
	wantContains(t, r.text, "Undid the write of n.txt: it had created the file, which is already gone, as undoing it would leave it; nothing changed.")
	if strings.Contains(r.text, "earlier undo") || r.out["already_undone"] != true {
		t.Fatalf("%s %v", r.text, r.out)
	}

	e.ok("edit", args("path", "p.txt", "old_text", "one", "new_text", "two"))
	e.write("p.txt", "one\n")
	r = e.ok("undo", args("path", "p.txt"))
	wantContains(t, r.text, "Undid the edit of p.txt: the file already has the content it had before the edit (version ")
}

// TestUndoRefusesLaterChmod: a chmod since the recorded change is later
// work; undo refuses it as it refuses a later content change, and goes
// ahead once the mode is put back.
func TestUndoRefusesLaterChmod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"p.txt": "one\n"}, envOptions{})
	if err := os.Chmod(e.path("p.txt"), 0o751); err != nil {
		t.Fatal(err)
	}
	e.ok("edit", args("path", "p.txt", "old_text", "one", "new_text", "two"))
	if err := os.Chmod(e.path("p.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.fail("undo", args("path", "p.txt"), "conflict")
	wantContains(t, r.text, "permissions changed since the recorded edit (now 0755, left at 0751)", "set the permissions back to 0751")
	if fi, _ := os.Stat(e.path("p.txt")); fi.Mode().Perm() != 0o755 || e.file("p.txt") != "two\n" {
		t.Fatalf("refused undo changed the file: %v %q", fi.Mode(), e.file("p.txt"))
	}
	if err := os.Chmod(e.path("p.txt"), 0o751); err != nil {
		t.Fatal(err)
	}
	e.ok("undo", args("path", "p.txt"))
	if fi, _ := os.Stat(e.path("p.txt")); fi.Mode().Perm() != 0o751 || e.file("p.txt") != "one\n" {
		t.Fatalf("undo: %v %q", fi.Mode(), e.file("p.txt"))
	}
}
