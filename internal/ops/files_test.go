package ops

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
	"github.com/google/go-cmp/cmp"
)

// fixture is the tree most tests start from.
var fixture = map[string]string{
	"a.txt":         "alpha\n",
	"b.PY":          "print()\n",
	".env":          "SECRET=1\n",
	"src/main.go":   "package main\n",
	"src/util.py":   "x = 1\n",
	"src/deep/z.py": "z\n",
	"docs/":         "",
	"empty/":        "",
	"link":          "-> a.txt",
	"dirlink":       "-> src",
	"escape":        "-> /etc/passwd",
}

// newFixture is newEngine with directories ("name/") and links ("-> t").
func newFixture(t *testing.T, opts Options) (*Engine, string) {
	t.Helper()
	files := map[string]string{}
	for name, spec := range fixture {
		if !strings.HasSuffix(name, "/") && !strings.HasPrefix(spec, "-> ") {
			files[name] = spec
		}
	}
	e, root := newEngine(t, files, opts)
	for name, spec := range fixture {
		p := filepath.Join(root, name)
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(spec, "-> "):
			if err := os.Symlink(strings.TrimPrefix(spec, "-> "), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e, root
}

// tree describes every entry under root: content for files, the target
// for links, "dir" for directories.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".":
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertNoTemps fails when a temp or backup file is left under root.
func assertNoTemps(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".fsplane-") {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}

func wantErr(t *testing.T, err error, code fserr.Code, substr string) {
	t.Helper()
	e := wantCode(t, err, code)
	if !strings.Contains(e.Message, substr) {
		t.Errorf("message %q does not contain %q", e.Message, substr)
	}
}

func version(s string) string { return workspace.Version([]byte(s)) }

// TestStatVersionFollowsContent: stat versions come from a cache keyed
// on the file's state; a change of content gives the new content's
// version even when it keeps the inode and size and restores the mtime.
func TestStatVersionFollowsContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "one\n"}, Options{})
	p := filepath.Join(root, "f.txt")
	stat := func(content string) {
		t.Helper()
		for range 2 { // hashed, then (when cached) from the cache
			r, err := e.Stat(ctx, StatRequest{Path: "f.txt"})
			if err != nil || r.Version != version(content) {
				t.Fatalf("stat: %+v, %v; want the version of %q", r, err, content)
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // past the cache's racy margin
	stat("one\n")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	stat("two\n")
}

// TestStatDoesNotRereadUnchangedFiles: a stat's version of an unchanged
// file comes from the version cache, so stats do not read (or buffer) the
// file each time. Not parallel: it measures the process's allocations.
func TestStatDoesNotRereadUnchangedFiles(t *testing.T) {
	ctx := context.Background()
	const size = 8 << 20
	e, _ := newEngine(t, map[string]string{"big.bin": strings.Repeat("x", size)}, Options{})
	time.Sleep(100 * time.Millisecond) // past the cache's racy margin
	want := version(strings.Repeat("x", size))
	stat := func() {
		r, err := e.Stat(ctx, StatRequest{Path: "big.bin"})
		if err != nil || r.Version != want {
			t.Fatalf("stat: %+v, %v", r, err)
		}
	}
	stat()
	const n = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		stat()
	}
	runtime.ReadMemStats(&after)
	// A read allocates the file's 8 MiB, a hash its 256 KiB buffer.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Fatalf("a stat of an unchanged %d-byte file allocates %d bytes: it reads the file again", size, per)
	}
}

func TestStat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newFixture(t, Options{})
	if err := os.Chmod(filepath.Join(root, "src/main.go"), 0o755|fs.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.txt", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		req  StatRequest
		want StatResult
		code fserr.Code
		msg  string
	}{
		{name: "file", req: StatRequest{Path: "a.txt", FollowSymlinks: true}, want: StatResult{
			Path: filepath.Join(root, "a.txt"), Size: 6, Permissions: "644", Version: version("alpha\n")}},
		{name: "setuid", req: StatRequest{Path: "src/main.go"}, want: StatResult{
			Path: filepath.Join(root, "src/main.go"), Size: 13, Permissions: "4755", Version: version("package main\n")}},
		{name: "directory", req: StatRequest{Path: "src", FollowSymlinks: true}, want: StatResult{
			Path: filepath.Join(root, "src"), IsDirectory: true, Permissions: "755"}},
		{name: "link followed", req: StatRequest{Path: "link", FollowSymlinks: true}, want: StatResult{
			Path: filepath.Join(root, "a.txt"), Size: 6, Permissions: "644", IsSymlink: true, Version: version("alpha\n")}},
		{name: "link itself", req: StatRequest{Path: "link"}, want: StatResult{
			Path: filepath.Join(root, "link"), Size: 5, Permissions: "777", IsSymlink: true, LinkTarget: "a.txt"}},
		{name: "escaping link itself", req: StatRequest{Path: "escape"}, want: StatResult{
			Path: filepath.Join(root, "escape"), Size: 11, Permissions: "777", IsSymlink: true, LinkTarget: "/etc/passwd"}},
		{name: "dangling link itself", req: StatRequest{Path: "dangling"}, want: StatResult{
			Path: filepath.Join(root, "dangling"), Size: 11, Permissions: "777", IsSymlink: true, LinkTarget: "missing.txt"}},
		{name: "dangling link followed", req: StatRequest{Path: "dangling", FollowSymlinks: true}, code: fserr.NotFound,
			msg: "dangling is a symbolic link to missing.txt, which does not exist"},
		{name: "missing through a link", req: StatRequest{Path: "dirlink/nope", FollowSymlinks: true}, code: fserr.NotFound,
			msg: "dirlink/nope does not exist"},
		{name: "link to a directory", req: StatRequest{Path: "dirlink", FollowSymlinks: true}, want: StatResult{
			Path: filepath.Join(root, "src"), IsDirectory: true, IsSymlink: true, Permissions: "755"}},
		{name: "missing", req: StatRequest{Path: "nope", FollowSymlinks: true}, code: fserr.NotFound, msg: "nope does not exist"},
		{name: "missing unfollowed", req: StatRequest{Path: "src/nope"}, code: fserr.NotFound, msg: "does not exist"},
		{name: "escaping link followed", req: StatRequest{Path: "escape", FollowSymlinks: true}, code: fserr.OutsideRoot, msg: "symbolic link"},
		{name: "outside", req: StatRequest{Path: "/etc/passwd"}, code: fserr.OutsideRoot, msg: "outside the workspace roots"},
		{name: "empty path", req: StatRequest{}, code: fserr.InvalidPath, msg: "empty path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := e.Stat(ctx, tc.req)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ModTime.IsZero() {
				t.Error("no modification time")
			}
			if got.IsDirectory != got.Mode.IsDir() || (got.Mode&fs.ModeSymlink != 0) != (tc.want.LinkTarget != "") {
				t.Errorf("mode %v", got.Mode)
			}
			got.ModTime, got.Mode = tc.want.ModTime, tc.want.Mode
			if tc.want.IsDirectory {
				tc.want.Size = got.Size
			}
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	for m, want := range map[fs.FileMode]string{
		0o644: "644", 0o755: "755", 0: "000", 0o7: "007",
		0o755 | fs.ModeSetuid: "4755", 0o775 | fs.ModeSetgid: "2775", 0o777 | fs.ModeSticky | fs.ModeDir: "1777",
	} {
		if got := Permissions(m); got != want {
			t.Errorf("Permissions(%v) = %q, want %q", m, got, want)
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newFixture(t, Options{})
	type row struct {
		Rel       string
		IsDir     bool
		IsSymlink bool
		Hidden    bool
		Extension string
	}
	cases := []struct {
		name      string
		req       ListRequest
		want      []row
		dirs      int
		files     int
		truncated bool
		code      fserr.Code
		msg       string
	}{
		{name: "flat with hidden", req: ListRequest{Path: ".", ShowHidden: true}, want: []row{
			{Rel: ".env", Hidden: true},
			{Rel: "a.txt", Extension: ".txt"},
			{Rel: "b.PY", Extension: ".PY"},
			{Rel: "dirlink", IsDir: true, IsSymlink: true},
			{Rel: "docs", IsDir: true},
			{Rel: "empty", IsDir: true},
			{Rel: "escape", IsSymlink: true},
			{Rel: "link", IsSymlink: true, Extension: ""},
			{Rel: "src", IsDir: true},
		}, dirs: 4, files: 5},
		{name: "recursive python files", req: ListRequest{Path: ".", Recursive: true, FileTypes: []string{".py", "GO"}}, want: []row{
			{Rel: "b.PY", Extension: ".PY"},
			{Rel: "dirlink", IsDir: true, IsSymlink: true},
			{Rel: "docs", IsDir: true},
			{Rel: "empty", IsDir: true},
			{Rel: "src", IsDir: true},
			{Rel: "src/deep", IsDir: true},
			{Rel: "src/deep/z.py", Extension: ".py"},
			{Rel: "src/main.go", Extension: ".go"},
			{Rel: "src/util.py", Extension: ".py"},
		}, dirs: 5, files: 4},
		{name: "depth 1", req: ListRequest{Path: "src", Recursive: true, MaxDepth: 1}, want: []row{
			{Rel: "src/deep", IsDir: true},
			{Rel: "src/main.go", Extension: ".go"},
			{Rel: "src/util.py", Extension: ".py"},
		}, dirs: 1, files: 2},
		// Cut shallowest first: the directory's own entries before deep/z.py.
		{name: "limit", req: ListRequest{Path: "src", Recursive: true, Limit: 2}, want: []row{
			{Rel: "src/deep", IsDir: true},
			{Rel: "src/main.go", Extension: ".go"},
		}, dirs: 1, files: 1, truncated: true},
		{name: "through a link", req: ListRequest{Path: "dirlink"}, want: []row{
			{Rel: "src/deep", IsDir: true},
			{Rel: "src/main.go", Extension: ".go"},
			{Rel: "src/util.py", Extension: ".py"},
		}, dirs: 1, files: 2},
		{name: "empty", req: ListRequest{Path: "empty", Recursive: true}, want: []row{}},
		{name: "a file", req: ListRequest{Path: "a.txt"}, code: fserr.InvalidTarget, msg: "a.txt is not a directory"},
		{name: "missing", req: ListRequest{Path: "nope"}, code: fserr.NotFound, msg: "nope does not exist"},
		{name: "outside", req: ListRequest{Path: "/"}, code: fserr.OutsideRoot, msg: "outside the workspace roots"},
		{name: "negative depth", req: ListRequest{Path: ".", MaxDepth: -1}, code: fserr.BadRequest, msg: "max depth"},
		{name: "negative limit", req: ListRequest{Path: ".", Limit: -5}, code: fserr.BadRequest, msg: "limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := e.List(ctx, tc.req)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := []row{}
			for _, en := range got.Entries {
				rel, _ := filepath.Rel(root, en.Path)
				rows = append(rows, row{Rel: rel, IsDir: en.IsDir, IsSymlink: en.IsSymlink, Hidden: en.Hidden, Extension: en.Extension})
				if en.Name != filepath.Base(en.Path) {
					t.Errorf("name %q path %q", en.Name, en.Path)
				}
			}
			if diff := cmp.Diff(tc.want, rows); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got.Dirs != tc.dirs || got.Files != tc.files || got.Truncated != tc.truncated {
				t.Errorf("dirs %d files %d truncated %v", got.Dirs, got.Files, got.Truncated)
			}
		})
	}
}

// mutation runs one mutating operation.
type mutation func(ctx context.Context, e *Engine) (any, error)

func TestMkdir(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  MkdirRequest
		want MkdirResult // Path relative to the root
		code fserr.Code
		msg  string
	}{
		{name: "new", req: MkdirRequest{Path: "new"}, want: MkdirResult{Path: "new", Created: true}},
		{name: "nested with parents", req: MkdirRequest{Path: "x/y/z", Parents: true}, want: MkdirResult{Path: "x/y/z", Created: true}},
		{name: "existing with parents", req: MkdirRequest{Path: "src", Parents: true}, want: MkdirResult{Path: "src"}},
		{name: "existing", req: MkdirRequest{Path: "src"}, code: fserr.AlreadyExists, msg: "already exists"},
		{name: "file in the way", req: MkdirRequest{Path: "a.txt", Parents: true}, code: fserr.AlreadyExists, msg: "not a directory"},
		{name: "missing parent", req: MkdirRequest{Path: "x/y"}, code: fserr.NotFound, msg: "parent directory"},
		{name: "under a file", req: MkdirRequest{Path: "a.txt/d", Parents: true}, code: fserr.InvalidTarget, msg: "not a directory"},
		{name: "outside", req: MkdirRequest{Path: "../up"}, code: fserr.OutsideRoot, msg: "outside"},
		{name: "unknown user", req: MkdirRequest{Path: "u", User: "no-such-user-fsplane"}, code: fserr.BadRequest, msg: "no such user: no-such-user-fsplane"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, root := newFixture(t, Options{})
			before := tree(t, root)
			got, err := e.Mkdir(context.Background(), tc.req)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Path = filepath.Join(root, tc.want.Path)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if fi, err := os.Stat(got.Path); err != nil || !fi.IsDir() {
				t.Errorf("no directory: %v", err)
			}
		})
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		req     CopyRequest
		want    CopyResult // Source and Destination relative to the root
		changed map[string]string
		code    fserr.Code
		msg     string
	}{
		{name: "file", req: CopyRequest{Source: "a.txt", Destination: "c.txt"},
			want:    CopyResult{Source: "a.txt", Destination: "c.txt", FilesCopied: 1, BytesCopied: 6, Version: version("alpha\n"), UndoRecorded: true},
			changed: map[string]string{"c.txt": "alpha\n"}},
		{name: "file into new dirs", req: CopyRequest{Source: "link", Destination: "n/m/c.txt"},
			want:    CopyResult{Source: "a.txt", Destination: "n/m/c.txt", FilesCopied: 1, BytesCopied: 6, Version: version("alpha\n"), UndoRecorded: true},
			changed: map[string]string{"n": "dir", "n/m": "dir", "n/m/c.txt": "alpha\n"}},
		{name: "file over a file", req: CopyRequest{Source: "a.txt", Destination: "b.PY", Overwrite: true},
			want:    CopyResult{Source: "a.txt", Destination: "b.PY", FilesCopied: 1, BytesCopied: 6, Version: version("alpha\n"), UndoRecorded: true},
			changed: map[string]string{"b.PY": "alpha\n"}},
		{name: "tree", req: CopyRequest{Source: "src", Destination: "docs/src"},
			want: CopyResult{Source: "src", Destination: "docs/src", IsDirectory: true, FilesCopied: 3, BytesCopied: 21},
			changed: map[string]string{"docs/src": "dir", "docs/src/deep": "dir", "docs/src/deep/z.py": "z\n",
				"docs/src/main.go": "package main\n", "docs/src/util.py": "x = 1\n"}},
		{name: "tree merged", req: CopyRequest{Source: "src", Destination: "empty", Overwrite: true},
			want: CopyResult{Source: "src", Destination: "empty", IsDirectory: true, FilesCopied: 3, BytesCopied: 21},
			changed: map[string]string{"empty/deep": "dir", "empty/deep/z.py": "z\n",
				"empty/main.go": "package main\n", "empty/util.py": "x = 1\n"}},
		{name: "file over a file without overwrite", req: CopyRequest{Source: "a.txt", Destination: "b.PY"}, code: fserr.AlreadyExists, msg: "already exists"},
		{name: "tree over a directory without overwrite", req: CopyRequest{Source: "src", Destination: "docs"}, code: fserr.AlreadyExists, msg: "already exists"},
		{name: "file over a directory", req: CopyRequest{Source: "a.txt", Destination: "docs", Overwrite: true}, code: fserr.InvalidTarget, msg: "is a directory"},
		{name: "tree over a file", req: CopyRequest{Source: "src", Destination: "a.txt", Overwrite: true}, code: fserr.InvalidTarget, msg: "not a directory"},
		{name: "tree into itself", req: CopyRequest{Source: "src", Destination: "src/deep/again"}, code: fserr.InvalidTarget, msg: "into itself"},
		{name: "tree into itself through a link", req: CopyRequest{Source: "dirlink", Destination: "src/again"}, code: fserr.InvalidTarget, msg: "into itself"},
		{name: "onto itself", req: CopyRequest{Source: "a.txt", Destination: "link", Overwrite: true}, code: fserr.BadRequest, msg: "same file"},
		{name: "missing", req: CopyRequest{Source: "nope", Destination: "x"}, code: fserr.NotFound, msg: "nope does not exist"},
		{name: "outside", req: CopyRequest{Source: "a.txt", Destination: "/tmp/x"}, code: fserr.OutsideRoot, msg: "outside"},
		{name: "escaping source", req: CopyRequest{Source: "escape", Destination: "x"}, code: fserr.OutsideRoot, msg: "symbolic link"},
		{name: "unknown user", req: CopyRequest{Source: "a.txt", Destination: "x", User: "no-such-user-fsplane"}, code: fserr.BadRequest, msg: "no such user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, root := newFixture(t, Options{})
			before := tree(t, root)
			got, err := e.Copy(context.Background(), tc.req)
			assertNoTemps(t, root)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source, tc.want.Destination = filepath.Join(root, tc.want.Source), filepath.Join(root, tc.want.Destination)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			want := before
			for k, v := range tc.changed {
				want[k] = v
			}
			if diff := cmp.Diff(want, tree(t, root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMove(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		req     MoveRequest
		want    MoveResult // Source and Destination relative to the root
		changed map[string]string
		removed []string
		code    fserr.Code
		msg     string
	}{
		{name: "file", req: MoveRequest{Source: "a.txt", Destination: "moved/a.txt"},
			want:    MoveResult{Source: "a.txt", Destination: "moved/a.txt", Version: version("alpha\n"), UndoRecorded: true},
			changed: map[string]string{"moved": "dir", "moved/a.txt": "alpha\n"}, removed: []string{"a.txt"}},
		{name: "file with version over a file", req: MoveRequest{Source: "a.txt", Destination: "b.PY", Overwrite: true, ExpectedVersion: version("alpha\n")},
			want:    MoveResult{Source: "a.txt", Destination: "b.PY", Version: version("alpha\n"), UndoRecorded: true},
			changed: map[string]string{"b.PY": "alpha\n"}, removed: []string{"a.txt"}},
		{name: "link itself", req: MoveRequest{Source: "link", Destination: "docs/link"},
			want:    MoveResult{Source: "link", Destination: "docs/link"},
			changed: map[string]string{"docs/link": "-> a.txt"}, removed: []string{"link"}},
		{name: "directory", req: MoveRequest{Source: "src", Destination: "lib"},
			want:    MoveResult{Source: "src", Destination: "lib", IsDirectory: true},
			changed: map[string]string{"lib": "dir", "lib/deep": "dir", "lib/deep/z.py": "z\n", "lib/main.go": "package main\n", "lib/util.py": "x = 1\n"},
			removed: []string{"src", "src/deep", "src/deep/z.py", "src/main.go", "src/util.py"}},
		{name: "directory over an empty one", req: MoveRequest{Source: "docs", Destination: "empty", Overwrite: true},
			want: MoveResult{Source: "docs", Destination: "empty", IsDirectory: true}, removed: []string{"docs"}},
		{name: "stale version", req: MoveRequest{Source: "a.txt", Destination: "c.txt", ExpectedVersion: version("beta")}, code: fserr.StaleVersion, msg: "expected version"},
		{name: "malformed version", req: MoveRequest{Source: "a.txt", Destination: "c.txt", ExpectedVersion: "v2"}, code: fserr.BadRequest, msg: "not a version"},
		{name: "version on a directory", req: MoveRequest{Source: "src", Destination: "x", ExpectedVersion: version("")}, code: fserr.BadRequest, msg: "regular files"},
		{name: "exists", req: MoveRequest{Source: "a.txt", Destination: "b.PY"}, code: fserr.AlreadyExists, msg: "already exists"},
		{name: "directory over a full one", req: MoveRequest{Source: "docs", Destination: "src", Overwrite: true}, code: fserr.AlreadyExists, msg: "not empty"},
		{name: "file over a directory", req: MoveRequest{Source: "a.txt", Destination: "docs", Overwrite: true}, code: fserr.InvalidTarget, msg: "directory"},
		{name: "directory into itself", req: MoveRequest{Source: "src", Destination: "src/deep/src"}, code: fserr.InvalidTarget, msg: "into itself"},
		{name: "same file", req: MoveRequest{Source: "a.txt", Destination: "./a.txt"}, code: fserr.BadRequest, msg: "same file"},
		{name: "missing", req: MoveRequest{Source: "nope", Destination: "x"}, code: fserr.NotFound, msg: "nope does not exist"},
		{name: "root", req: MoveRequest{Source: ".", Destination: "x"}, code: fserr.InvalidTarget, msg: "workspace root"},
		{name: "outside", req: MoveRequest{Source: "a.txt", Destination: "/tmp/x"}, code: fserr.OutsideRoot, msg: "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, root := newFixture(t, Options{})
			before := tree(t, root)
			got, err := e.Move(context.Background(), tc.req)
			assertNoTemps(t, root)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source, tc.want.Destination = filepath.Join(root, tc.want.Source), filepath.Join(root, tc.want.Destination)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			want := before
			for _, k := range tc.removed {
				delete(want, k)
			}
			for k, v := range tc.changed {
				want[k] = v
			}
			if diff := cmp.Diff(want, tree(t, root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		req     DeleteRequest
		want    DeleteResult // Path relative to the root
		removed []string
		code    fserr.Code
		msg     string
	}{
		{name: "file", req: DeleteRequest{Path: "a.txt"}, want: DeleteResult{Path: "a.txt", UndoRecorded: true}, removed: []string{"a.txt"}},
		{name: "file with version", req: DeleteRequest{Path: "a.txt", ExpectedVersion: version("alpha\n")}, want: DeleteResult{Path: "a.txt", UndoRecorded: true}, removed: []string{"a.txt"}},
		{name: "link itself", req: DeleteRequest{Path: "dirlink"}, want: DeleteResult{Path: "dirlink", UndoRecorded: true}, removed: []string{"dirlink"}},
		{name: "escaping link", req: DeleteRequest{Path: "escape"}, want: DeleteResult{Path: "escape", UndoRecorded: true}, removed: []string{"escape"}},
		{name: "empty directory", req: DeleteRequest{Path: "empty"}, want: DeleteResult{Path: "empty", IsDirectory: true}, removed: []string{"empty"}},
		{name: "tree", req: DeleteRequest{Path: "src", Recursive: true}, want: DeleteResult{Path: "src", IsDirectory: true},
			removed: []string{"src", "src/deep", "src/deep/z.py", "src/main.go", "src/util.py"}},
		{name: "non-empty directory", req: DeleteRequest{Path: "src"}, code: fserr.InvalidTarget, msg: "not empty; pass recursive"},
		{name: "stale version", req: DeleteRequest{Path: "a.txt", ExpectedVersion: version("other")}, code: fserr.StaleVersion, msg: "expected version"},
		{name: "version on a directory", req: DeleteRequest{Path: "empty", ExpectedVersion: version("")}, code: fserr.BadRequest, msg: "regular files"},
		{name: "missing", req: DeleteRequest{Path: "nope"}, code: fserr.NotFound, msg: "nope does not exist"},
		{name: "root", req: DeleteRequest{Path: ".", Recursive: true}, code: fserr.InvalidTarget, msg: "workspace root"},
		{name: "outside", req: DeleteRequest{Path: "/etc/passwd"}, code: fserr.OutsideRoot, msg: "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, root := newFixture(t, Options{})
			before := tree(t, root)
			got, err := e.Delete(context.Background(), tc.req)
			assertNoTemps(t, root)
			if tc.code != "" {
				wantErr(t, err, tc.code, tc.msg)
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Errorf("tree changed (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Path = filepath.Join(root, tc.want.Path)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			want := before
			for _, k := range tc.removed {
				delete(want, k)
			}
			if diff := cmp.Diff(want, tree(t, root)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeleteMoveUndo: a deleted file comes back with Undo, and a move is
// reverted as a whole; the history lists both.
func TestDeleteMoveUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newFixture(t, Options{})
	before := tree(t, root)
	if _, err := e.Delete(ctx, DeleteRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Move(ctx, MoveRequest{Source: "src/util.py", Destination: "lib/util.py"}); err != nil {
		t.Fatal(err)
	}
	h, err := e.UndoHistory(ctx, "lib/util.py")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 1 || h.Entries[0].Op != "move" || h.Entries[0].PrevExisted || h.Entries[0].AfterVersion != version("x = 1\n") {
		t.Errorf("history %+v", h)
	}
	u, err := e.Undo(ctx, UndoRequest{Path: "lib/util.py"})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Deleted || len(u.Also) != 1 || u.Also[0].Path != filepath.Join(root, "src/util.py") || u.Also[0].Version != version("x = 1\n") {
		t.Errorf("undo %+v", u)
	}
	if _, err := e.Undo(ctx, UndoRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	after := tree(t, root)
	delete(after, "lib") // the directory the move created stays
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("tree after undo (-want +got):\n%s", diff)
	}
	h, err = e.UndoHistory(ctx, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if h.Path != filepath.Join(root, "a.txt") || len(h.Entries) != 0 {
		t.Errorf("history after undo %+v", h)
	}
	_, err = e.UndoHistory(ctx, "/etc/passwd")
	wantCode(t, err, fserr.OutsideRoot)
}

// TestFreshnessAcrossMoves: the caller's view follows its file; a delete
// forgets it; a copy of a file the caller never read is not seen.
func TestFreshnessAcrossMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newFixture(t, Options{})
	edits := []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr("beta")}}
	if _, err := e.Read(ctx, ReadRequest{Path: "a.txt", Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Move(ctx, MoveRequest{Source: "a.txt", Destination: "m.txt", Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EditLines(ctx, EditLinesRequest{Path: "m.txt", Edits: edits, Caller: "c"}); err != nil {
		t.Fatalf("line edit after moving a read file: %v", err)
	}
	if _, err := e.Copy(ctx, CopyRequest{Source: "src/util.py", Destination: "u.py", Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.EditLines(ctx, EditLinesRequest{Path: "u.py", Edits: edits, Caller: "c"})
	wantCode(t, err, fserr.MustRead)
	if _, err := e.Delete(ctx, DeleteRequest{Path: "m.txt", Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Tracker().Seen("c", filepath.Join(root, "m.txt")); ok {
		t.Error("a deleted file is still tracked")
	}
}

func TestReadOnlyRefusesMutations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newFixture(t, Options{ReadOnly: true})
	before := tree(t, root)
	for name, run := range map[string]mutation{
		"mkdir": func(ctx context.Context, e *Engine) (any, error) { return e.Mkdir(ctx, MkdirRequest{Path: "d"}) },
		"copy": func(ctx context.Context, e *Engine) (any, error) {
			return e.Copy(ctx, CopyRequest{Source: "a.txt", Destination: "c"})
		},
		"move": func(ctx context.Context, e *Engine) (any, error) {
			return e.Move(ctx, MoveRequest{Source: "a.txt", Destination: "c"})
		},
		"delete": func(ctx context.Context, e *Engine) (any, error) { return e.Delete(ctx, DeleteRequest{Path: "a.txt"}) },
	} {
		_, err := run(ctx, e)
		if !fserr.Is(err, fserr.ReadOnly) {
			t.Errorf("%s: %v, want read_only", name, err)
		}
	}
	if _, err := e.Stat(ctx, StatRequest{Path: "a.txt"}); err != nil {
		t.Errorf("stat in read-only mode: %v", err)
	}
	if _, err := e.List(ctx, ListRequest{Path: "."}); err != nil {
		t.Errorf("list in read-only mode: %v", err)
	}
	if _, err := e.UndoHistory(ctx, "a.txt"); err != nil {
		t.Errorf("undo history in read-only mode: %v", err)
	}
	if diff := cmp.Diff(before, tree(t, root)); diff != "" {
		t.Errorf("tree changed (-before +after):\n%s", diff)
	}
}

// TestOneLogLinePerMutation: every successful mutation logs one line,
// and no line carries file content.
func TestOneLogLinePerMutation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var buf bytes.Buffer
	e, _ := newFixture(t, Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	steps := []mutation{
		func(ctx context.Context, e *Engine) (any, error) { return e.Mkdir(ctx, MkdirRequest{Path: "d"}) },
		func(ctx context.Context, e *Engine) (any, error) {
			return e.Write(ctx, WriteRequest{Path: "d/s.txt", Content: []byte("TOPSECRET")})
		},
		func(ctx context.Context, e *Engine) (any, error) {
			return e.Copy(ctx, CopyRequest{Source: "d/s.txt", Destination: "d/t.txt"})
		},
		func(ctx context.Context, e *Engine) (any, error) {
			return e.Move(ctx, MoveRequest{Source: "d/t.txt", Destination: "d/u.txt"})
		},
		func(ctx context.Context, e *Engine) (any, error) {
			return e.Delete(ctx, DeleteRequest{Path: "d/u.txt"})
		},
	}
	for i, run := range steps {
		buf.Reset()
		if _, err := run(ctx, e); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if n := strings.Count(buf.String(), "\n"); n != 1 {
			t.Errorf("step %d logged %d lines: %s", i, n, buf.String())
		}
		if strings.Contains(buf.String(), "TOPSECRET") {
			t.Errorf("step %d logged file content: %s", i, buf.String())
		}
	}
}

func TestWriteUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("unknown user", func(t *testing.T) {
		t.Parallel()
		e, root := newEngine(t, nil, Options{})
		_, err := e.Write(ctx, WriteRequest{Path: "f", Content: []byte("x"), User: "no-such-user-fsplane"})
		wantErr(t, err, fserr.BadRequest, "no such user: no-such-user-fsplane")
		if _, err := os.Stat(filepath.Join(root, "f")); !os.IsNotExist(err) {
			t.Error("written despite the unknown user")
		}
		assertNoTemps(t, root)
	})
	t.Run("unknown default user", func(t *testing.T) {
		t.Parallel()
		e, _ := newEngine(t, nil, Options{DefaultUser: "no-such-user-fsplane"})
		_, err := e.Mkdir(ctx, MkdirRequest{Path: "d"})
		wantErr(t, err, fserr.BadRequest, "no such user")
	})
	t.Run("owner", func(t *testing.T) {
		t.Parallel()
		if os.Getuid() != 0 {
			t.Skip("only root can give files away")
		}
		// "daemon" (uid 1) exists on every Linux system.
		e, root := newEngine(t, map[string]string{"old": "o"}, Options{DefaultUser: "daemon"})
		steps := []mutation{
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Write(ctx, WriteRequest{Path: "w/new", Content: []byte("n")})
			},
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Write(ctx, WriteRequest{Path: "r/new", Content: []byte("n"), User: "root"})
			},
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Write(ctx, WriteRequest{Path: "old", Content: []byte("n")})
			},
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Mkdir(ctx, MkdirRequest{Path: "m/n", Parents: true})
			},
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Copy(ctx, CopyRequest{Source: "old", Destination: "c/old"})
			},
			func(ctx context.Context, e *Engine) (any, error) {
				return e.Patch(ctx, PatchRequest{Patch: "*** Begin Patch\n*** Add File: p/new\n+x\n*** End Patch\n"})
			},
		}
		for i, run := range steps {
			if _, err := run(ctx, e); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		for name, uid := range map[string]uint32{
			"w": 1, "w/new": 1, "r": 0, "r/new": 0, "old": 0, "m": 1, "m/n": 1, "c": 1, "c/old": 1, "p": 1, "p/new": 1,
		} {
			fi, err := os.Lstat(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Sys().(*syscall.Stat_t).Uid; got != uid {
				t.Errorf("%s owned by uid %d, want %d", name, got, uid)
			}
		}
	})
}

// TestErrorsNameTheirOperation: an error carries the operation the caller
// asked for, whichever step failed.
func TestErrorsNameTheirOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newFixture(t, Options{})
	for op, run := range map[string]mutation{
		"stat":  func(ctx context.Context, e *Engine) (any, error) { return e.Stat(ctx, StatRequest{Path: "/etc"}) },
		"list":  func(ctx context.Context, e *Engine) (any, error) { return e.List(ctx, ListRequest{Path: "/etc"}) },
		"mkdir": func(ctx context.Context, e *Engine) (any, error) { return e.Mkdir(ctx, MkdirRequest{Path: "/etc/x"}) },
		"copy": func(ctx context.Context, e *Engine) (any, error) {
			return e.Copy(ctx, CopyRequest{Source: "a.txt", Destination: "/etc/x"})
		},
		"move": func(ctx context.Context, e *Engine) (any, error) {
			return e.Move(ctx, MoveRequest{Source: "/etc/passwd", Destination: "x"})
		},
		"delete": func(ctx context.Context, e *Engine) (any, error) {
			return e.Delete(ctx, DeleteRequest{Path: "/etc/passwd"})
		},
		"undo_history": func(ctx context.Context, e *Engine) (any, error) { return e.UndoHistory(ctx, "/etc/passwd") },
		"write": func(ctx context.Context, e *Engine) (any, error) {
			return e.Write(ctx, WriteRequest{Path: "x", User: "no-such-user-fsplane"})
		},
	} {
		_, err := run(ctx, e)
		if fe, ok := fserr.As(err); !ok || fe.Op != op {
			t.Errorf("%s: error %v, want one with op %q", op, err, op)
		}
	}
}

// TestTrailingSlashNamesADirectory: as in POSIX, "f.txt/" is not f.txt.
// Reading, writing, deleting or moving a file through such a path used to
// act on the file (the slash was cleaned away), and writing "new/" made a
// file named new. Now a file behind a slash is invalid_target and nothing
// changes; a slash on a directory, or on a directory to create, is fine.
func TestTrailingSlashNamesADirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, root := newEngine(t, map[string]string{"f.txt": "x\n", "d/g.txt": "y\n"}, Options{})
	refused := []struct {
		name string
		run  func() error
	}{
		{"read", func() error { _, err := e.Read(ctx, ReadRequest{Path: "f.txt/"}); return err }},
		{"write over", func() error { _, err := e.Write(ctx, WriteRequest{Path: "f.txt/", Content: []byte("z")}); return err }},
		{"write new", func() error { _, err := e.Write(ctx, WriteRequest{Path: "new/", Content: []byte("z")}); return err }},
		{"delete", func() error { _, err := e.Delete(ctx, DeleteRequest{Path: "f.txt/"}); return err }},
		{"copy to new", func() error {
			_, err := e.Copy(ctx, CopyRequest{Source: "f.txt", Destination: "copy/"})
			return err
		}},
		{"move to new", func() error {
			_, err := e.Move(ctx, MoveRequest{Source: "f.txt", Destination: "moved/"})
			return err
		}},
		{"upload new", func() error {
			_, err := e.Upload(ctx, UploadRequest{Path: "up/", Body: strings.NewReader("z")})
			return err
		}},
		// A last component "." names a directory too.
		{"read /.", func() error { _, err := e.Read(ctx, ReadRequest{Path: "f.txt/."}); return err }},
		{"write over /.", func() error { _, err := e.Write(ctx, WriteRequest{Path: "f.txt/.", Content: []byte("z")}); return err }},
		{"write new /.", func() error { _, err := e.Write(ctx, WriteRequest{Path: "new/.", Content: []byte("z")}); return err }},
		{"write new /./", func() error { _, err := e.Write(ctx, WriteRequest{Path: "new/./", Content: []byte("z")}); return err }},
		{"write new /..", func() error { _, err := e.Write(ctx, WriteRequest{Path: "d/new/..", Content: []byte("z")}); return err }},
	}
	for _, tt := range refused {
		if err := tt.run(); err == nil {
			t.Errorf("%s: accepted a file path ending in /", tt.name)
		} else if fe, ok := fserr.As(err); !ok || fe.Code != fserr.InvalidTarget {
			t.Errorf("%s: err = %v, want invalid_target", tt.name, err)
		}
	}
	if got := readFile(t, root, "f.txt"); got != "x\n" {
		t.Errorf("f.txt = %q after the refused operations", got)
	}
	for _, name := range []string{"new", "copy", "moved", "up"} {
		if _, err := os.Lstat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a refused operation (%v)", name, err)
		}
	}
	// Directories may carry the slash.
	if _, err := e.List(ctx, ListRequest{Path: "d/"}); err != nil {
		t.Errorf("list d/: %v", err)
	}
	if _, err := e.Mkdir(ctx, MkdirRequest{Path: "made/"}); err != nil {
		t.Errorf("mkdir made/: %v", err)
	}
	if _, err := e.List(ctx, ListRequest{Path: "d/."}); err != nil {
		t.Errorf("list d/.: %v", err)
	}
	if _, err := e.Mkdir(ctx, MkdirRequest{Path: "made2/."}); err != nil {
		t.Errorf("mkdir made2/.: %v", err)
	}
	if _, err := e.Move(ctx, MoveRequest{Source: "d/", Destination: "d2/"}); err != nil {
		t.Errorf("move d/ d2/: %v", err)
	}
}
