package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/google/go-cmp/cmp"
)

// makeTree creates files ("content"), directories (trailing "/") and
// symbolic links ("-> target") under root.
func makeTree(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for name, spec := range tree {
		p := filepath.Join(root, name)
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(spec, "-> "):
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(strings.TrimPrefix(spec, "-> "), p); err != nil {
				t.Fatal(err)
			}
		default:
			writeFile(t, p, spec, 0o644)
		}
	}
}

func wantMessage(t *testing.T, err error, code fserr.Code, substr string) {
	t.Helper()
	e := wantCode(t, err, code)
	if !strings.Contains(e.Message, substr) {
		t.Errorf("message %q does not contain %q", e.Message, substr)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{
		"a.txt":       "aaa",
		"b/c.txt":     "c",
		"b/d/e.txt":   "e",
		".hidden":     "h",
		".hdir/x":     "x",
		"empty/":      "",
		"link-b":      "-> b",
		"link-a":      "-> a.txt",
		"abs-link":    "-> " + filepath.Join(root, "b"),
		"dangling":    "-> nowhere",
		"escape":      "-> /etc",
		"b/d/up-link": "-> ../../a.txt",
	})
	type row struct {
		Rel       string
		IsDir     bool
		IsSymlink bool
		Hidden    bool
		Size      int64
	}
	rows := func(l *Listing) []row {
		var out []row
		for _, e := range l.Entries {
			r := row{Rel: e.Rel, IsDir: e.IsDir, IsSymlink: e.IsSymlink, Hidden: e.Hidden}
			if !e.IsDir && !e.IsSymlink {
				r.Size = e.Size
			}
			out = append(out, r)
			if e.Path != filepath.Join(l.Path.Abs, e.Rel) {
				t.Errorf("%s: path %s", e.Rel, e.Path)
			}
			if e.Name != filepath.Base(e.Rel) {
				t.Errorf("%s: name %s", e.Rel, e.Name)
			}
		}
		return out
	}
	top := []row{
		{Rel: ".hdir", IsDir: true, Hidden: true},
		{Rel: ".hidden", Hidden: true, Size: 1},
		{Rel: "a.txt", Size: 3},
		{Rel: "abs-link", IsDir: true, IsSymlink: true},
		{Rel: "b", IsDir: true},
		{Rel: "dangling", IsSymlink: true},
		{Rel: "empty", IsDir: true},
		{Rel: "escape", IsSymlink: true},
		{Rel: "link-a", IsSymlink: true},
		{Rel: "link-b", IsDir: true, IsSymlink: true},
	}
	cases := []struct {
		name      string
		path      string
		opts      ListOptions
		want      []row
		truncated bool
	}{
		{"flat", ".", ListOptions{}, top, false},
		{"flat ignores max depth", root, ListOptions{MaxDepth: 3}, top, false},
		{"recursive", ".", ListOptions{Recursive: true}, []row{
			{Rel: ".hdir", IsDir: true, Hidden: true},
			{Rel: ".hdir/x", Size: 1},
			{Rel: ".hidden", Hidden: true, Size: 1},
			{Rel: "a.txt", Size: 3},
			{Rel: "abs-link", IsDir: true, IsSymlink: true},
			{Rel: "b", IsDir: true},
			{Rel: "b/c.txt", Size: 1},
			{Rel: "b/d", IsDir: true},
			{Rel: "b/d/e.txt", Size: 1},
			{Rel: "b/d/up-link", IsSymlink: true},
			{Rel: "dangling", IsSymlink: true},
			{Rel: "empty", IsDir: true},
			{Rel: "escape", IsSymlink: true},
			{Rel: "link-a", IsSymlink: true},
			{Rel: "link-b", IsDir: true, IsSymlink: true},
		}, false},
		{"recursive depth 2 without hidden", ".", ListOptions{Recursive: true, MaxDepth: 2, SkipHidden: true}, []row{
			{Rel: "a.txt", Size: 3},
			{Rel: "abs-link", IsDir: true, IsSymlink: true},
			{Rel: "b", IsDir: true},
			{Rel: "b/c.txt", Size: 1},
			{Rel: "b/d", IsDir: true},
			{Rel: "dangling", IsSymlink: true},
			{Rel: "empty", IsDir: true},
			{Rel: "escape", IsSymlink: true},
			{Rel: "link-a", IsSymlink: true},
			{Rel: "link-b", IsDir: true, IsSymlink: true},
		}, false},
		{"through a link", "link-b", ListOptions{Recursive: true}, []row{
			{Rel: "c.txt", Size: 1},
			{Rel: "d", IsDir: true},
			{Rel: "d/e.txt", Size: 1},
			{Rel: "d/up-link", IsSymlink: true},
		}, false},
		// Cut shallowest first: the top level before .hdir's entries.
		{"limit", ".", ListOptions{Recursive: true, Limit: 3}, []row{
			{Rel: ".hdir", IsDir: true, Hidden: true},
			{Rel: ".hidden", Hidden: true, Size: 1},
			{Rel: "a.txt", Size: 3},
		}, true},
		{"limit exactly reached", "b/d", ListOptions{Limit: 2}, []row{
			{Rel: "e.txt", Size: 1},
			{Rel: "up-link", IsSymlink: true},
		}, false},
		{"include files only", ".", ListOptions{Recursive: true, Limit: 2, Include: func(e *Entry) bool { return !e.IsDir && !e.IsSymlink }}, []row{
			{Rel: ".hidden", Hidden: true, Size: 1},
			{Rel: "a.txt", Size: 3},
		}, true},
		{"empty directory", "empty", ListOptions{Recursive: true}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := w.List(tc.path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rows(l)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if l.Truncated != tc.truncated {
				t.Errorf("truncated = %v", l.Truncated)
			}
		})
	}
	t.Run("link classified by target", func(t *testing.T) {
		l, err := w.List(".", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Entries {
			switch e.Name {
			case "link-a":
				if e.Size != 3 || !e.Mode.IsRegular() {
					t.Errorf("link-a: size %d mode %v, want the target's", e.Size, e.Mode)
				}
			case "escape", "dangling":
				if e.Mode&fs.ModeSymlink == 0 {
					t.Errorf("%s: mode %v, want the link's own", e.Name, e.Mode)
				}
			}
		}
	})
	errCases := []struct {
		name, path string
		opts       ListOptions
		code       fserr.Code
		msg        string
	}{
		{"a file", "a.txt", ListOptions{}, fserr.InvalidTarget, "a.txt is not a directory"},
		{"a link to a file", "link-a", ListOptions{}, fserr.InvalidTarget, "is not a directory"},
		{"missing", "nope", ListOptions{}, fserr.NotFound, "nope does not exist"},
		{"outside", "/etc", ListOptions{}, fserr.OutsideRoot, "outside the workspace roots"},
		{"escaping link", "escape", ListOptions{}, fserr.OutsideRoot, "through the symbolic link"},
		{"negative depth", ".", ListOptions{MaxDepth: -1}, fserr.BadRequest, "max depth"},
		{"negative limit", ".", ListOptions{Limit: -1}, fserr.BadRequest, "limit"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.List(tc.path, tc.opts)
			wantMessage(t, err, tc.code, tc.msg)
		})
	}
}

func TestListSkipsStateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "f"), "x", 0o644)
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: filepath.Join(root, ".fsplane-state")})
	l, err := w.List(".", ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].Name != "f" {
		t.Errorf("entries %+v, want only f", l.Entries)
	}
	_, err = w.Remove(".fsplane-state", true, "")
	wantCode(t, err, fserr.OutsideRoot)
}

func TestMkdir(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		path    string
		parents bool
		created bool
		code    fserr.Code
		msg     string
	}{
		{"new", "new", false, true, "", ""},
		{"new with parents", "x/y/z", true, true, "", ""},
		{"existing with parents", "dir", true, false, "", ""},
		{"existing without parents", "dir", false, false, fserr.AlreadyExists, "directory dir already exists"},
		{"file in the way", "file", true, false, fserr.AlreadyExists, "file already exists and is not a directory"},
		{"missing parent", "x/y", false, false, fserr.NotFound, "parent directory"},
		{"parent is a file", "file/sub", true, false, fserr.InvalidTarget, "is not a directory"},
		{"outside", "../x", true, false, fserr.OutsideRoot, "outside"},
		{"through a link", "link/new", false, true, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			makeTree(t, root, map[string]string{"dir/": "", "file": "f", "link": "-> dir"})
			before := snapshot(t, root)
			created, err := w.Mkdir(tc.path, tc.parents, nil)
			if tc.code != "" {
				wantMessage(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if created != tc.created {
				t.Errorf("created = %v", created)
			}
			fi, err := os.Stat(filepath.Join(root, tc.path))
			if err != nil || !fi.IsDir() {
				t.Errorf("not a directory: %v", err)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"f.txt":      "content",
		"d/":         "",
		"full/a/b":   "b",
		"full/c":     "c",
		"link":       "-> f.txt",
		"dirlink":    "-> full",
		"escape":     "-> /etc/passwd",
		"sub/inner":  "i",
		"sub/l2":     "-> ../f.txt",
		"tree/x/y/z": "z",
	}
	cases := []struct {
		name      string
		path      string
		recursive bool
		version   string
		isDir     bool
		gone      []string
		kept      []string
		code      fserr.Code
		msg       string
		hint      string
	}{
		{name: "file", path: "f.txt", gone: []string{"f.txt"}, kept: []string{"link"}},
		{name: "file with version", path: "f.txt", version: Version([]byte("content")), gone: []string{"f.txt"}},
		{name: "stale version", path: "f.txt", version: Version([]byte("other")), code: fserr.StaleVersion, msg: "expected version"},
		{name: "malformed version", path: "f.txt", version: "v1", code: fserr.BadRequest, msg: "not a version"},
		{name: "link itself", path: "link", gone: []string{"link"}, kept: []string{"f.txt"}},
		{name: "link to a directory", path: "dirlink", gone: []string{"dirlink"}, kept: []string{"full/a/b"}},
		{name: "escaping link", path: "escape", gone: []string{"escape"}},
		{name: "link under a linked dir", path: "sub/l2", gone: []string{"sub/l2"}, kept: []string{"f.txt"}},
		{name: "empty directory", path: "d", isDir: true, gone: []string{"d"}},
		{name: "non-empty directory", path: "full", code: fserr.InvalidTarget, msg: "pass recursive", hint: "delete its entries first"},
		{name: "recursive", path: "tree", recursive: true, isDir: true, gone: []string{"tree"}},
		{name: "recursive file", path: "f.txt", recursive: true, gone: []string{"f.txt"}},
		{name: "version on a directory", path: "d", version: Version(nil), code: fserr.BadRequest, msg: "d is a directory"},
		{name: "version on a link", path: "link", version: Version([]byte("content")), code: fserr.BadRequest, msg: "a symbolic link"},
		{name: "missing", path: "nope", code: fserr.NotFound, msg: "nope does not exist"},
		{name: "root", path: ".", recursive: true, code: fserr.InvalidTarget, msg: "workspace root", hint: "delete the entries inside it instead"},
		{name: "outside", path: "/etc/passwd", code: fserr.OutsideRoot, msg: "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			makeTree(t, root, tree)
			before := snapshot(t, root)
			res, err := w.Remove(tc.path, tc.recursive, tc.version)
			if tc.code != "" {
				wantMessage(t, err, tc.code, tc.msg)
				if e, _ := fserr.As(err); tc.hint != "" && (e == nil || !strings.Contains(e.Hint, tc.hint)) {
					t.Errorf("hint %q, want it to say %q", e.Hint, tc.hint)
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				assertNoStrays(t, root)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.IsDir != tc.isDir {
				t.Errorf("isDir = %v", res.IsDir)
			}
			for _, n := range tc.gone {
				if _, err := os.Lstat(filepath.Join(root, n)); !isNotExist(err) {
					t.Errorf("%s still exists (%v)", n, err)
				}
			}
			for _, n := range tc.kept {
				if _, err := os.Lstat(filepath.Join(root, n)); err != nil {
					t.Errorf("%s is gone: %v", n, err)
				}
			}
			assertNoStrays(t, root)
		})
	}
}

func TestRemoveUndo(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	writeFile(t, filepath.Join(root, "f.txt"), "precious", 0o640)
	if _, err := w.Remove("f.txt", false, ""); err != nil {
		t.Fatal(err)
	}
	r, err := w.Undo("f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if r.Op != "delete" || !r.Restored {
		t.Errorf("undo result %+v", r)
	}
	if got := snapshot(t, root)["f.txt"]; got != "-rw-r----- precious" {
		t.Errorf("f.txt = %q", got)
	}
}

func TestRemoveRefusesRootsAndState(t *testing.T) {
	t.Parallel()
	outer := t.TempDir()
	inner := filepath.Join(outer, "nested", "root")
	state := filepath.Join(outer, "keep", "state")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	w := openTestWorkspace(t, Options{Roots: []string{outer, inner}, StateDir: state})
	_, err := w.Remove("nested", true, "")
	wantMessage(t, err, fserr.InvalidTarget, "contains the workspace root")
	_, err = w.Remove("keep", true, "")
	wantMessage(t, err, fserr.InvalidTarget, "state directory")
	_, err = w.Move("keep", "moved", false, "")
	wantMessage(t, err, fserr.InvalidTarget, "state directory")
	if _, err := os.Stat(state); err != nil {
		t.Fatal(err)
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"f.txt":         "hello",
		"old.txt":       "old",
		"dir/":          "",
		"src/a.txt":     "a",
		"src/sub/b.txt": "bb",
		"src/empty/":    "",
		"src/in-link":   "-> a.txt",
		"src/up-link":   "-> ../f.txt",
		"src/abs-link":  "-> /etc/passwd",
		"src/far-link":  "-> ../../x",
		"dst/keep.txt":  "keep",
		"dst/a.txt":     "old a",
		"link-to-f":     "-> f.txt",
	}
	type want struct {
		res   CopyResult
		files map[string]string // snapshot entries that must hold after
		gone  []string
	}
	cases := []struct {
		name      string
		src, dst  string
		overwrite bool
		want      want
		code      fserr.Code
		msg       string
	}{
		{name: "file", src: "f.txt", dst: "new.txt", want: want{
			res:   CopyResult{FilesCopied: 1, BytesCopied: 5, Version: Version([]byte("hello")), UndoRecorded: true},
			files: map[string]string{"new.txt": "-rwxr-x--- hello", "f.txt": "-rwxr-x--- hello"}}},
		{name: "file into new dirs", src: "f.txt", dst: "x/y/new.txt", want: want{
			res:   CopyResult{FilesCopied: 1, BytesCopied: 5, Version: Version([]byte("hello")), UndoRecorded: true},
			files: map[string]string{"x/y/new.txt": "-rwxr-x--- hello", "x/y": "dir -rwxr-xr-x"}}},
		{name: "file through a link", src: "link-to-f", dst: "new.txt", want: want{
			res:   CopyResult{FilesCopied: 1, BytesCopied: 5, Version: Version([]byte("hello")), UndoRecorded: true},
			files: map[string]string{"new.txt": "-rwxr-x--- hello"}}},
		// The overwritten file keeps its mode, as cp leaves it.
		{name: "file over a file", src: "f.txt", dst: "old.txt", overwrite: true, want: want{
			res:   CopyResult{FilesCopied: 1, BytesCopied: 5, Version: Version([]byte("hello")), UndoRecorded: true},
			files: map[string]string{"old.txt": "-rw-r--r-- hello"}}},
		{name: "file over a file without overwrite", src: "f.txt", dst: "old.txt", code: fserr.AlreadyExists, msg: "destination old.txt already exists"},
		{name: "file over a directory", src: "f.txt", dst: "dir", overwrite: true, code: fserr.InvalidTarget, msg: "is a directory"},
		{name: "file onto itself", src: "f.txt", dst: "link-to-f", overwrite: true, code: fserr.BadRequest, msg: "same file"},
		{name: "file under a file", src: "f.txt", dst: "old.txt/x", code: fserr.InvalidTarget, msg: "is not a directory"},
		{name: "missing", src: "nope", dst: "x", code: fserr.NotFound, msg: "nope does not exist"},
		{name: "outside", src: "f.txt", dst: "/etc/x", code: fserr.OutsideRoot, msg: "outside"},
		{name: "tree", src: "src", dst: "copy", want: want{
			res: CopyResult{IsDir: true, FilesCopied: 2, BytesCopied: 3, LinksCopied: 2, LinksSkipped: 2},
			files: map[string]string{
				"copy":           "dir -rwxr-xr-x",
				"copy/a.txt":     "-rw-r--r-- a",
				"copy/sub/b.txt": "-rw-r--r-- bb",
				"copy/empty":     "dir -rwxr-xr-x",
				"copy/in-link":   "link->a.txt",
				"copy/up-link":   "link->../f.txt",
			},
			gone: []string{"copy/abs-link", "copy/far-link"}}},
		{name: "tree deeper", src: "src", dst: "deep/copy", want: want{
			// ../f.txt from deep/copy/ is deep/f.txt: still inside.
			res:   CopyResult{IsDir: true, FilesCopied: 2, BytesCopied: 3, LinksCopied: 2, LinksSkipped: 2},
			files: map[string]string{"deep/copy/up-link": "link->../f.txt"}}},
		{name: "tree merged", src: "src", dst: "dst", overwrite: true, want: want{
			res: CopyResult{IsDir: true, FilesCopied: 2, BytesCopied: 3, LinksCopied: 2, LinksSkipped: 2},
			files: map[string]string{
				"dst/keep.txt":  "-rw-r--r-- keep",
				"dst/a.txt":     "-rw-r--r-- a",
				"dst/sub/b.txt": "-rw-r--r-- bb",
				"dst/in-link":   "link->a.txt",
			}}},
		{name: "tree over existing without overwrite", src: "src", dst: "dst", code: fserr.AlreadyExists, msg: "destination dst already exists"},
		{name: "tree over a file", src: "src", dst: "f.txt", overwrite: true, code: fserr.InvalidTarget, msg: "not a directory"},
		{name: "tree into itself", src: "src", dst: "src/sub/again", code: fserr.InvalidTarget, msg: "into itself"},
		{name: "tree onto itself", src: "src", dst: "src", overwrite: true, code: fserr.BadRequest, msg: "same file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			makeTree(t, root, tree)
			if err := os.Chmod(filepath.Join(root, "f.txt"), 0o750); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			res, err := w.Copy(tc.src, tc.dst, tc.overwrite, nil)
			assertNoStrays(t, root)
			if tc.code != "" {
				wantMessage(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.res.Source, tc.want.res.Destination = res.Source, res.Destination
			if diff := cmp.Diff(tc.want.res, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if res.Destination.Abs != filepath.Join(root, tc.dst) {
				t.Errorf("destination %s", res.Destination.Abs)
			}
			snap := snapshot(t, root)
			for name, want := range tc.want.files {
				if snap[name] != want {
					t.Errorf("%s = %q, want %q", name, snap[name], want)
				}
			}
			for _, name := range tc.want.gone {
				if _, ok := snap[name]; ok {
					t.Errorf("%s exists", name)
				}
			}
		})
	}
}

func TestCopyUndo(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{"a": "new", "b": "old", "src/x": "x1", "dst/x": "x0"})
	if _, err := w.Copy("a", "b", true, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Copy("a", "c", false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Copy("src", "dst", true, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b", "c", "dst/x"} {
		if _, err := w.Undo(n); err != nil {
			t.Fatalf("undo %s: %v", n, err)
		}
	}
	snap := snapshot(t, root)
	if snap["b"] != "-rw-r--r-- old" || snap["dst/x"] != "-rw-r--r-- x0" {
		t.Errorf("not restored: b=%q dst/x=%q", snap["b"], snap["dst/x"])
	}
	if _, ok := snap["c"]; ok {
		t.Error("undo of a copy to a new file left it")
	}
}

func TestCopySkipsSpecialFiles(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{"src/a": "a"})
	if err := syscall.Mkfifo(filepath.Join(root, "src", "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	res, err := w.Copy("src", "dst", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.OtherSkipped != 1 || res.FilesCopied != 1 {
		t.Errorf("result %+v", res)
	}
	// A move across file systems must not lose it: see TestMoveAcrossDevices.
}

func TestCopyAcrossRoots(t *testing.T) {
	t.Parallel()
	r1, r2 := t.TempDir(), t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: t.TempDir()})
	makeTree(t, r1, map[string]string{"src/a": "a", "src/l": "-> a", "src/out": "-> ../../x", "f": "ff"})
	res, err := w.Copy("src", filepath.Join(r2, "dst"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesCopied != 1 || res.LinksCopied != 1 || res.LinksSkipped != 1 {
		t.Errorf("result %+v", res)
	}
	if _, err := w.Copy("f", filepath.Join(r2, "f"), false, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{
		"dst": "dir -rwxr-xr-x", "dst/a": "-rw-r--r-- a", "dst/l": "link->a", "f": "-rw-r--r-- ff",
	}, withoutTop(snapshot(t, r2))); diff != "" {
		t.Errorf("r2 (-want +got):\n%s", diff)
	}
}

func TestMove(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"f.txt":       "hello",
		"g.txt":       "other",
		"d/a":         "a",
		"empty/":      "",
		"full/x":      "x",
		"link":        "-> f.txt",
		"escape":      "-> /etc/passwd",
		"dirlink":     "-> d",
		"dir-in-way/": "",
	}
	cases := []struct {
		name      string
		src, dst  string
		overwrite bool
		version   string
		isDir     bool
		undo      bool
		after     map[string]string
		gone      []string
		code      fserr.Code
		msg       string
		hint      string
	}{
		{name: "file", src: "f.txt", dst: "m.txt", undo: true,
			after: map[string]string{"m.txt": "-rw-r--r-- hello", "link": "link->f.txt"}, gone: []string{"f.txt"}},
		{name: "file into new dirs", src: "f.txt", dst: "x/y/m.txt", undo: true,
			after: map[string]string{"x/y/m.txt": "-rw-r--r-- hello"}, gone: []string{"f.txt"}},
		{name: "file with version", src: "f.txt", dst: "m.txt", version: Version([]byte("hello")), undo: true,
			after: map[string]string{"m.txt": "-rw-r--r-- hello"}},
		{name: "stale version", src: "f.txt", dst: "m.txt", version: Version([]byte("hi")), code: fserr.StaleVersion, msg: "expected version"},
		{name: "over a file", src: "f.txt", dst: "g.txt", overwrite: true, undo: true,
			after: map[string]string{"g.txt": "-rw-r--r-- hello"}, gone: []string{"f.txt"}},
		{name: "over a file without overwrite", src: "f.txt", dst: "g.txt", code: fserr.AlreadyExists, msg: "destination g.txt already exists"},
		{name: "file over a directory", src: "f.txt", dst: "empty", overwrite: true, code: fserr.InvalidTarget, msg: "directory"},
		{name: "link itself", src: "link", dst: "sub/link2",
			after: map[string]string{"sub/link2": "link->f.txt", "f.txt": "-rw-r--r-- hello"}, gone: []string{"link"}},
		{name: "escaping link itself", src: "escape", dst: "esc2", after: map[string]string{"esc2": "link->/etc/passwd"}},
		{name: "link to a directory", src: "dirlink", dst: "dl2", after: map[string]string{"dl2": "link->d", "d/a": "-rw-r--r-- a"}},
		{name: "over a link", src: "g.txt", dst: "link", overwrite: true,
			after: map[string]string{"link": "-rw-r--r-- other", "f.txt": "-rw-r--r-- hello"}},
		{name: "directory", src: "d", dst: "e", isDir: true, after: map[string]string{"e/a": "-rw-r--r-- a"}, gone: []string{"d"}},
		{name: "directory over an empty one", src: "d", dst: "empty", overwrite: true, isDir: true,
			after: map[string]string{"empty/a": "-rw-r--r-- a"}},
		{name: "directory over a full one", src: "d", dst: "full", overwrite: true, code: fserr.AlreadyExists, msg: "not empty"},
		{name: "directory over a file", src: "d", dst: "f.txt", overwrite: true, code: fserr.InvalidTarget, msg: "not a directory"},
		{name: "directory into itself", src: "d", dst: "d/sub", code: fserr.InvalidTarget, msg: "into itself"},
		{name: "directory into itself through a link", src: "d", dst: "dirlink/sub", code: fserr.InvalidTarget, msg: "into itself"},
		{name: "version on a directory", src: "d", dst: "e", version: Version(nil), code: fserr.BadRequest, msg: "directory"},
		{name: "same file", src: "f.txt", dst: "./f.txt", overwrite: true, code: fserr.BadRequest, msg: "same file"},
		{name: "missing", src: "nope", dst: "x", code: fserr.NotFound, msg: "nope does not exist"},
		{name: "root", src: ".", dst: "x", code: fserr.InvalidTarget, msg: "workspace root", hint: "move the entries inside it instead"},
		{name: "parent is a file", src: "f.txt", dst: "g.txt/x", code: fserr.InvalidTarget, msg: "not a directory"},
		{name: "outside", src: "f.txt", dst: "/tmp/elsewhere", code: fserr.OutsideRoot, msg: "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, root := newTestWorkspace(t)
			makeTree(t, root, tree)
			before := snapshot(t, root)
			res, err := w.Move(tc.src, tc.dst, tc.overwrite, tc.version)
			assertNoStrays(t, root)
			if tc.code != "" {
				wantMessage(t, err, tc.code, tc.msg)
				if e, _ := fserr.As(err); tc.hint != "" && (e == nil || !strings.Contains(e.Hint, tc.hint)) {
					t.Errorf("hint %q, want it to say %q", e.Hint, tc.hint)
				}
				if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.IsDir != tc.isDir || res.UndoRecorded != tc.undo || res.Copied {
				t.Errorf("result %+v", res)
			}
			snap := snapshot(t, root)
			for name, want := range tc.after {
				if snap[name] != want {
					t.Errorf("%s = %q, want %q", name, snap[name], want)
				}
			}
			for _, name := range append(tc.gone, tc.src) {
				if _, ok := snap[name]; ok {
					t.Errorf("%s still exists", name)
				}
			}
			if !tc.undo {
				return
			}
			// Undo from the destination reverts the whole move.
			u, err := w.Undo(tc.dst)
			if err != nil {
				t.Fatal(err)
			}
			if u.Op != "move" || len(u.Also) != 1 {
				t.Errorf("undo result %+v", u)
			}
			after := snapshot(t, root)
			for name := range after {
				if _, ok := before[name]; !ok && !strings.HasPrefix(tc.dst, name) {
					t.Errorf("%s left after undo", name)
				}
			}
			for name, want := range before {
				if after[name] != want {
					t.Errorf("after undo %s = %q, want %q", name, after[name], want)
				}
			}
		})
	}
}

func TestMoveUndo(t *testing.T) {
	t.Parallel()
	t.Run("from the source", func(t *testing.T) {
		t.Parallel()
		w, root := newTestWorkspace(t)
		makeTree(t, root, map[string]string{"a": "1"})
		commit(t, w, "edit", Change{Path: "a", Content: []byte("2")})
		if _, err := w.Move("a", "b", false, ""); err != nil {
			t.Fatal(err)
		}
		h, err := w.UndoHistory("a")
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].Op != "move" || h[0].AfterExists || h[1].Op != "edit" {
			t.Errorf("history of a: %+v", h)
		}
		u, err := w.Undo("a")
		if err != nil {
			t.Fatal(err)
		}
		if !u.Restored || len(u.Also) != 1 || !u.Also[0].Deleted || u.Also[0].Path.Abs != filepath.Join(root, "b") {
			t.Errorf("undo %+v", u)
		}
		// The history before the move is still there.
		if _, err := w.Undo("a"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{".": snapshot(t, root)["."], "a": "-rw-r--r-- 1"}, snapshot(t, root)); diff != "" {
			t.Errorf("tree (-want +got):\n%s", diff)
		}
	})
	t.Run("conflict when the destination changed", func(t *testing.T) {
		t.Parallel()
		w, root := newTestWorkspace(t)
		makeTree(t, root, map[string]string{"a": "1"})
		if _, err := w.Move("a", "b", false, ""); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "b"), "changed", 0o644)
		_, err := w.Undo("a")
		wantCode(t, err, fserr.Conflict)
		if _, err := os.Stat(filepath.Join(root, "a")); !isNotExist(err) {
			t.Error("undo restored the source despite the conflict")
		}
	})
	t.Run("conflict when the source came back", func(t *testing.T) {
		t.Parallel()
		w, root := newTestWorkspace(t)
		makeTree(t, root, map[string]string{"a": "1"})
		if _, err := w.Move("a", "b", false, ""); err != nil {
			t.Fatal(err)
		}
		commit(t, w, "write", Change{Path: "a", Content: []byte("new a")})
		_, err := w.Undo("b")
		wantCode(t, err, fserr.Conflict)
		if got := readFile(t, filepath.Join(root, "b")); got != "1" {
			t.Errorf("b = %q", got)
		}
	})
}

// sameDevice reports whether a and b are on one file system.
func sameDevice(t *testing.T, a, b string) bool {
	t.Helper()
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev
}

// TestMoveAcrossDevices moves within one root ("/") between two file
// systems, which rename(2) refuses with EXDEV.
func TestMoveAcrossDevices(t *testing.T) {
	t.Parallel()
	other, err := os.MkdirTemp("/dev/shm", "fsplane-test-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	here := t.TempDir()
	if sameDevice(t, here, other) {
		t.Skip("/dev/shm is on the same file system as", here)
	}
	w := openTestWorkspace(t, Options{Roots: []string{"/"}, StateDir: t.TempDir()})
	makeTree(t, here, map[string]string{
		"f.txt": "file", "old.txt": "old", "tree/a": "a", "tree/sub/b": "b", "tree/l": "-> /etc/passwd", "tree/empty/": "",
	})
	if err := os.Chmod(filepath.Join(here, "f.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(other, "old.txt"), "replaced", 0o644)

	res, err := w.Move(filepath.Join(here, "f.txt"), filepath.Join(other, "x", "f.txt"), false, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Copied || !res.UndoRecorded || res.Version != Version([]byte("file")) {
		t.Errorf("result %+v", res)
	}
	if _, err := w.Move(filepath.Join(here, "old.txt"), filepath.Join(other, "old.txt"), true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Move(filepath.Join(here, "tree"), filepath.Join(other, "tree"), false, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{
		"x":          "dir -rwxr-xr-x",
		"x/f.txt":    "-rw------- file",
		"old.txt":    "-rw-r--r-- old",
		"tree":       "dir -rwxr-xr-x",
		"tree/a":     "-rw-r--r-- a",
		"tree/sub":   "dir -rwxr-xr-x",
		"tree/sub/b": "-rw-r--r-- b",
		"tree/l":     "link->/etc/passwd",
		"tree/empty": "dir -rwxr-xr-x",
	}, withoutTop(snapshot(t, other))); diff != "" {
		t.Errorf("destination (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{}, withoutTop(snapshot(t, here))); diff != "" {
		t.Errorf("source (-want +got):\n%s", diff)
	}
	// Undo brings the overwritten file and the moved one back.
	if _, err := w.Undo(filepath.Join(other, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(other, "old.txt")); got != "replaced" {
		t.Errorf("old.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(here, "old.txt")); got != "old" {
		t.Errorf("source old.txt = %q", got)
	}

	// A FIFO cannot be moved across: nothing changes.
	makeTree(t, here, map[string]string{"special/a": "a"})
	if err := syscall.Mkfifo(filepath.Join(here, "special", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = w.Move(filepath.Join(here, "special"), filepath.Join(other, "special"), false, "")
	wantMessage(t, err, fserr.InvalidTarget, "socket, FIFO or device")
	if _, err := os.Stat(filepath.Join(other, "special")); !isNotExist(err) {
		t.Error("a failed move left its destination")
	}
	assertNoStrays(t, here, other)
}

func TestMoveAcrossRoots(t *testing.T) {
	t.Parallel()
	r1, r2 := t.TempDir(), t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{r1, r2}, StateDir: t.TempDir()})
	makeTree(t, r1, map[string]string{"f": "file", "d/a": "a", "d/l": "-> ../../anywhere"})
	res, err := w.Move("f", filepath.Join(r2, "f"), false, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Copied || !res.UndoRecorded {
		t.Errorf("result %+v", res)
	}
	if _, err := w.Move("d", filepath.Join(r2, "d"), false, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{
		"f": "-rw-r--r-- file", "d": "dir -rwxr-xr-x", "d/a": "-rw-r--r-- a", "d/l": "link->../../anywhere",
	}, withoutTop(snapshot(t, r2))); diff != "" {
		t.Errorf("r2 (-want +got):\n%s", diff)
	}
	if _, err := w.Undo(filepath.Join(r2, "f")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(r1, "f")); got != "file" {
		t.Errorf("f = %q", got)
	}
	assertNoStrays(t, r1, r2)
}

func TestUndoHistory(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	commit(t, w, "write", Change{Path: "f", Content: []byte("one")})
	commit(t, w, "edit", Change{Path: "f", Content: []byte("two!")})
	if _, err := w.Remove("f", false, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	h, err := w.UndoHistory("link")
	if err != nil {
		t.Fatal(err)
	}
	for i := range h {
		if h[i].Time.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
		h[i].Time = h[i].Time.Truncate(0)
	}
	want := []UndoEntry{
		{Op: "delete", PrevExisted: true, PrevSize: 4, PrevVersion: Version([]byte("two!"))},
		{Op: "edit", PrevExisted: true, PrevSize: 3, PrevVersion: Version([]byte("one")), AfterExists: true, AfterVersion: Version([]byte("two!"))},
		{Op: "write", AfterExists: true, AfterVersion: Version([]byte("one"))},
	}
	if diff := cmp.Diff(want, h, cmpIgnoreTime); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if !h[0].Time.After(h[2].Time) && !h[0].Time.Equal(h[2].Time) {
		t.Error("not newest first")
	}
	if h, err := w.UndoHistory("other"); err != nil || len(h) != 0 {
		t.Errorf("history of an unknown file: %v, %v", h, err)
	}
}

// withoutTop drops the snapshot's entry for its top directory.
func withoutTop(snap map[string]string) map[string]string {
	delete(snap, ".")
	return snap
}

var cmpIgnoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Time" }, cmp.Ignore())

func TestLstat(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{"f": "content", "link": "-> f", "escape": "-> /etc/passwd"})
	for _, tc := range []struct {
		path    string
		symlink bool
		size    int64
	}{{"f", false, 7}, {"link", true, 1}, {"escape", true, int64(len("/etc/passwd"))}} {
		info, err := w.Lstat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Exists || info.IsSymlink != tc.symlink || info.Size != tc.size || info.Path.Abs != filepath.Join(root, tc.path) {
			t.Errorf("%s: %+v", tc.path, info)
		}
	}
	if info, err := w.Lstat("nope"); err != nil || info.Exists {
		t.Errorf("missing: %+v %v", info, err)
	}
}

// TestMoveUndoHalfEvicted: when the per-file limit evicted the source's
// record of a move, undo of the destination refuses instead of deleting
// the only copy; undo of the source alone is harmless and allowed.
func TestMoveUndoHalfEvicted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: t.TempDir(), Undo: UndoLimits{PerFile: 1}})
	writeFile(t, filepath.Join(root, "a"), "moved", 0o644)
	writeFile(t, filepath.Join(root, "c"), "c", 0o644)
	if _, err := w.Move("a", "b", false, ""); err != nil {
		t.Fatal(err)
	}
	commit(t, w, "write", Change{Path: "a", Content: []byte("new a")}) // evicts a's move record
	_, err := w.Undo("b")
	wantMessage(t, err, fserr.Conflict, "undo would lose its content")
	if got := readFile(t, filepath.Join(root, "b")); got != "moved" {
		t.Errorf("b = %q", got)
	}

	if _, err := w.Move("c", "d", false, ""); err != nil {
		t.Fatal(err)
	}
	commit(t, w, "write", Change{Path: "d", Content: []byte("new d")}) // evicts d's move record
	if _, err := w.Undo("d"); err != nil {                             // the write
		t.Fatal(err)
	}
	if _, err := w.Undo("d"); err == nil {
		t.Fatal("undo of d found a move record")
	}
	if _, err := w.Undo("c"); err != nil {
		t.Fatalf("undo of the source alone: %v", err)
	}
	if got := readFile(t, filepath.Join(root, "c")); got != "c" {
		t.Errorf("c = %q", got)
	}
}

// TestCopySkipsLinksThatClimbThroughALink: a link whose target has ".."
// after a name reads as staying inside, but the name can be a link
// (loop -> "."), and each pass through it is one level the text does not
// show. Copied from deep in the tree to its top, such a link would lead
// out of the root; it is skipped instead.
func TestCopySkipsLinksThatClimbThroughALink(t *testing.T) {
	t.Parallel()
	w, root := newTestWorkspace(t)
	makeTree(t, root, map[string]string{"a/b/src/f": "f", "a/b/src/loop": "-> .", "a/b/src/climb": "-> loop/loop/../../f"})
	res, err := w.Copy("a/b/src", "copy", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.LinksSkipped != 1 || res.LinksCopied != 1 {
		t.Errorf("result %+v, want climb skipped and loop copied", res)
	}
	if _, err := os.Lstat(filepath.Join(root, "copy", "climb")); !os.IsNotExist(err) {
		t.Errorf("copy/climb: %v, want it skipped", err)
	}
}

func TestDotDotAfterName(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]bool{
		"../../lib/x": false, "./../x": false, "/abs/x": false, "x/./y": false, "..": false,
		"s/..": true, "s/s/../..": true, "/abs/../x": true, "../a/../b": true, "a//..": true,
	} {
		if got := DotDotAfterName(target); got != want {
			t.Errorf("DotDotAfterName(%q) = %v, want %v", target, got, want)
		}
	}
}
