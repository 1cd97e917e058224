package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/edit/patch"
	"github.com/fsplane/fsplane/internal/fserr"
)

// entries describes root: file content, or "-> target" for a link.
func entries(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range des {
		p := filepath.Join(root, d.Name())
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				t.Fatal(err)
			}
			out[d.Name()] = "-> " + target
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[d.Name()] = string(b)
	}
	return out
}

// TestPatchLinksUndo: a patch that deletes a link, or moves it away,
// removes the link and never the file it points to (it used to delete
// that file); the link's removal is recorded, so undo makes the link
// again, and undo of a moved link's destination brings back both sides.
func TestPatchLinksUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		patch string
		after map[string]string
		undo  string
		also  int // other files the undo reverts
	}{
		{name: "delete link", patch: "*** Delete File: alias.txt",
			after: map[string]string{"real.txt": "keep me\n", "escape": "-> ../outside.txt"}, undo: "alias.txt"},
		{name: "delete link leading out", patch: "*** Delete File: escape",
			after: map[string]string{"real.txt": "keep me\n", "alias.txt": "-> real.txt"}, undo: "escape"},
		{name: "move link", patch: "*** Update File: alias.txt\n*** Move to: moved.txt\n@@\n-keep me\n+moved",
			after: map[string]string{"real.txt": "keep me\n", "escape": "-> ../outside.txt", "moved.txt": "moved\n"}, undo: "moved.txt", also: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"real.txt": "keep me\n"}, Options{})
			for name, target := range map[string]string{"alias.txt": "real.txt", "escape": "../outside.txt"} {
				if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			before := entries(t, root)
			res, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n" + tt.patch + "\n*** End Patch"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.after, entries(t, root)); diff != "" {
				t.Fatalf("after the patch (-want +got):\n%s", diff)
			}
			for _, f := range res.Files {
				if !f.UndoRecorded {
					t.Errorf("%s (%s) not recorded for undo", f.Path, f.Action)
				}
			}
			u, err := e.Undo(ctx, UndoRequest{Path: tt.undo})
			if err != nil || len(u.Also) != tt.also {
				t.Fatalf("undo %s: %+v, %v", tt.undo, u, err)
			}
			if diff := cmp.Diff(before, entries(t, root)); diff != "" {
				t.Errorf("after undo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPatchReplacesNonTextFilesWithUndo: deleting a binary file, or
// writing text over one with Add, keeps the previous bytes for undo like
// any replaced file.
func TestPatchReplacesNonTextFilesWithUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	binary := "\x00\x01 binary \xff"
	for _, patch := range []string{"*** Delete File: bin.dat", "*** Add File: bin.dat\n+text"} {
		t.Run(patch, func(t *testing.T) {
			t.Parallel()
			e, root := newEngine(t, map[string]string{"bin.dat": binary}, Options{})
			res, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n" + patch + "\n*** End Patch", Diff: true})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Diff, "Binary files a/bin.dat and ") {
				t.Errorf("diff = %q, want it to say the file is binary", res.Diff)
			}
			if _, err := e.Undo(ctx, UndoRequest{Path: "bin.dat"}); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if got := readFile(t, root, "bin.dat"); got != binary {
				t.Errorf("bin.dat = %q after undo, want the binary bytes back", got)
			}
		})
	}
}

// TestPatchErrorHints: a Delete's cause goes to the hint, joined to the
// cause's own hint only when it has one (there used to be a stray ";").
func TestPatchErrorHints(t *testing.T) {
	t.Parallel()
	src := &patchSource{keys: map[string]string{}}
	for _, tt := range []struct {
		cause error
		hint  string
	}{
		{fserr.New(fserr.InvalidTarget, "read", "d", "d is a directory"), "d is a directory"},
		{fserr.New(fserr.InvalidTarget, "read", "d", "d is a directory").WithHint("use list"), "d is a directory; use list"},
	} {
		err := patchError("patch", patch.Codex, src, &patch.SourceError{Kind: patch.Delete, Path: "d", Err: tt.cause})
		e := wantCode(t, err, fserr.InvalidTarget)
		if e.Message != "Failed to delete file d" || e.Hint != tt.hint {
			t.Errorf("got %q, hint %q; want Codex's message, hint %q", e.Message, e.Hint, tt.hint)
		}
	}
}

// TestCommitErrorWording: a failure of the commit is framed as Codex
// frames a failed write or delete, names the file as the patch wrote it,
// and words a bare OS error as Rust does. It used to be the workspace's
// "<absolute path>: permission denied".
func TestCommitErrorWording(t *testing.T) {
	t.Parallel()
	plan := &patch.Plan{Changes: []patch.Change{
		{Path: "f.txt", Canonical: "/w/f.txt", Existed: true, New: []byte("x")},
		{Path: "gone.txt", Canonical: "/w/gone.txt", Existed: true, Delete: true},
	}}
	denied := func(p string) error {
		e := fserr.FromOS("patch", p, &os.PathError{Op: "rename", Path: p, Err: syscall.EACCES})
		e.Message = p + ": " + e.Message // as the workspace words it
		return e
	}
	for _, tt := range []struct {
		name      string
		err       error
		msg, hint string
	}{
		{name: "write", err: denied("/w/f.txt"), msg: "Failed to write file f.txt: Permission denied (os error 13)"},
		{name: "delete", err: denied("/w/gone.txt"), msg: "Failed to delete file gone.txt", hint: "Permission denied (os error 13)"},
		{name: "own words", err: fserr.New(fserr.StaleVersion, "patch", "/w/f.txt", "/w/f.txt changed: expected version a, current version b").WithHint("re-read the file"),
			msg: "Failed to write file f.txt: f.txt changed: expected version a, current version b", hint: "re-read the file"},
		{name: "not a file's", err: fserr.New(fserr.IOError, "patch", "", "state directory unwritable"), msg: "state directory unwritable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, ok := fserr.As(commitError("patch", patch.Codex, plan, tt.err))
			if !ok {
				t.Fatal("not an *fserr.Error")
			}
			if e.Message != tt.msg || e.Hint != tt.hint {
				t.Errorf("got %q (hint %q), want %q (hint %q)", e.Message, e.Hint, tt.msg, tt.hint)
			}
		})
	}
}

// TestPatchTrailingSlash: a patch makes no file at a path ending in "/",
// like every other write (TestTrailingSlashNamesADirectory).
func TestPatchTrailingSlash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "one\n"}, Options{})
	for _, p := range []string{
		"*** Add File: sub/\n+x",
		"*** Update File: f.txt\n*** Move to: newdir/\n@@\n-one\n+1",
	} {
		_, err := e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n" + p + "\n*** End Patch"})
		wantErr(t, err, fserr.InvalidTarget, "ends with /, which names a directory")
	}
	if diff := cmp.Diff(map[string]string{"f.txt": "one\n"}, entries(t, root)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}
