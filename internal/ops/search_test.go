package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"

	"github.com/fsplane/fsplane/internal/testenv"
)

// searchEngine returns an engine over a new root holding files, with the
// state directory inside the root (so searches must skip it).
func searchEngine(t *testing.T, files map[string]string) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	// Something the state directory could hold that a search must not show.
	if err := os.WriteFile(filepath.Join(root, "state", "journal.txt"), []byte("needle in the journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return New(ws, Options{ReadOnly: true}), root
}

var searchFiles = map[string]string{
	"a.go":          "package a\n\nvar ErrX = 1 // needle\n",
	"sub/b.py":      "def needle():\n    pass\n",
	"sub/big.txt":   strings.Repeat("needle padding\n", 100000),
	"sub/.hid.txt":  "needle\n",
	".gitignore":    "ignored.txt\n",
	"ignored.txt":   "needle\n",
	"deep/x/y.go":   "package y // needle\n",
	"deep/x/z.json": "{}\n",
}

func TestGrepOp(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, searchFiles)
	tests := []struct {
		name string
		req  GrepRequest
		want []GrepMatch
		size int
	}{
		{"defaults skip big files and the state dir", GrepRequest{Path: root, Pattern: "needle"}, []GrepMatch{
			{File: filepath.Join(root, "a.go"), LineNumber: 3, LineContent: "var ErrX = 1 // needle"},
			{File: filepath.Join(root, "deep/x/y.go"), LineNumber: 1, LineContent: "package y // needle"},
			{File: filepath.Join(root, "ignored.txt"), LineNumber: 1, LineContent: "needle"},
			{File: filepath.Join(root, "sub/b.py"), LineNumber: 1, LineContent: "def needle():"},
		}, 1},
		{"gitignore and type", GrepRequest{Path: ".", Pattern: "NEEDLE", CaseInsensitive: true, RespectGitignore: true, Type: "go"}, []GrepMatch{
			{File: filepath.Join(root, "a.go"), LineNumber: 3, LineContent: "var ErrX = 1 // needle"},
			{File: filepath.Join(root, "deep/x/y.go"), LineNumber: 1, LineContent: "package y // needle"},
		}, 0},
		{"not recursive, context", GrepRequest{Path: root, Pattern: "ErrX", Recursive: ptr(false), ContextBefore: 1}, []GrepMatch{
			{File: filepath.Join(root, "a.go"), LineNumber: 3, LineContent: "var ErrX = 1 // needle", ContextBefore: []string{""}},
		}, 0},
		{"one file", GrepRequest{Path: "sub/b.py", Pattern: "needle"}, []GrepMatch{
			{File: filepath.Join(root, "sub/b.py"), LineNumber: 1, LineContent: "def needle():"},
		}, 0},
		{"include exclude", GrepRequest{Path: root, Pattern: "needle", Include: []string{"*.go"}, Exclude: []string{"deep"}}, []GrepMatch{
			{File: filepath.Join(root, "a.go"), LineNumber: 3, LineContent: "var ErrX = 1 // needle"},
		}, 0},
		{"big file named", GrepRequest{Path: "sub/big.txt", Pattern: "needle", MaxResults: 1}, []GrepMatch{}, 1},
		{"big file named, unlimited", GrepRequest{Path: "sub/big.txt", Pattern: "needle", MaxResults: 1, NamedFileUnlimited: true}, []GrepMatch{
			{File: filepath.Join(root, "sub/big.txt"), LineNumber: 1, LineContent: "needle padding"},
		}, 0},
		{"big file in a tree, named unlimited", GrepRequest{Path: "sub", Pattern: "needle", NamedFileUnlimited: true}, []GrepMatch{
			{File: filepath.Join(root, "sub/b.py"), LineNumber: 1, LineContent: "def needle():"},
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Grep(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Matches); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if res.MatchCount != len(tt.want) || res.FilesSkippedSize != tt.size {
				t.Errorf("match_count %d, skipped %d", res.MatchCount, res.FilesSkippedSize)
			}
		})
	}
}

// TestGrepOpBinaryCut: a file searched only up to a NUL byte past its
// first 8 KiB is counted and located with its absolute path, in a tree
// and named alike; a file binary from its first 8 KiB is skipped, not
// cut.
func TestGrepOpBinaryCut(t *testing.T) {
	t.Parallel()
	late := "needle 1\n" + strings.Repeat("x\n", 10_000) + "\x00needle 2\n"
	e, root := searchEngine(t, map[string]string{"logs/a.log": late, "logs/b.bin": "needle\x00", "logs/c.txt": "needle\n"})
	cut := []BinaryCut{{Path: filepath.Join(root, "logs/a.log"), Line: 10_002, Offset: 20_009}}
	tests := []struct {
		path    string
		want    []BinaryCut
		skipped int
	}{
		{"logs", cut, 1},
		{"logs/a.log", cut, 0},
		{"logs/c.txt", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			res, err := e.Grep(t.Context(), GrepRequest{Path: tt.path, Pattern: "needle"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.CutBinary); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if res.FilesCutBinary != len(tt.want) || res.FilesSkippedBinary != tt.skipped {
				t.Errorf("%d files cut, %d skipped; want %d, %d", res.FilesCutBinary, res.FilesSkippedBinary, len(tt.want), tt.skipped)
			}
		})
	}
}

func TestGrepOpLimits(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, searchFiles)
	res, err := e.Grep(context.Background(), GrepRequest{Path: root, Pattern: "padding", MaxFileSize: "0", Offset: 10, MaxResults: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 5 || !res.Truncated || res.Matches[0].LineNumber != 11 {
		t.Errorf("got %d matches from line %d, truncated %v", len(res.Matches), res.Matches[0].LineNumber, res.Truncated)
	}
	res, err = e.Grep(context.Background(), GrepRequest{Path: root, Pattern: "padding", MaxFileSize: "2M"})
	if err != nil || len(res.Matches) != DefaultGrepMaxResults || !res.Truncated {
		t.Errorf("default cap: %d matches, truncated %v, %v", len(res.Matches), res.Truncated, err)
	}
}

func TestGrepOpErrors(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, searchFiles)
	tests := []struct {
		req  GrepRequest
		code fserr.Code
		msg  string
	}{
		{GrepRequest{Path: root, Pattern: "(x"}, fserr.BadRequest, "missing closing )"},
		{GrepRequest{Path: root, Pattern: ""}, fserr.BadRequest, "pattern is required"},
		{GrepRequest{Path: root, Pattern: "x", MaxFileSize: "lots"}, fserr.BadRequest, "max_file_size"},
		{GrepRequest{Path: root, Pattern: "x", Type: "klingon"}, fserr.BadRequest, "unknown file type"},
		{GrepRequest{Path: "missing", Pattern: "x"}, fserr.NotFound, "does not exist"},
		{GrepRequest{Path: "/etc", Pattern: "x"}, fserr.OutsideRoot, ""},
		{GrepRequest{Path: "state", Pattern: "x"}, fserr.OutsideRoot, ""},
	}
	for _, tt := range tests {
		_, err := e.Grep(context.Background(), tt.req)
		fe := wantCode(t, err, tt.code)
		if fe != nil && !strings.Contains(fe.Message, tt.msg) {
			t.Errorf("%+v: message %q lacks %q", tt.req, fe.Message, tt.msg)
		}
		if tt.code == fserr.BadRequest && tt.msg == "missing closing )" && (fe == nil || fe.Hint == "") {
			t.Errorf("bad regex without a hint: %+v", fe)
		}
	}
}

func TestSearchOp(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, map[string]string{"f.txt": "alpha\nbeta\nalphabet\n", "bin": "a\x00b"})
	res, err := e.Search(context.Background(), FileSearchRequest{File: "f.txt", Regex: "^alpha"})
	if err != nil {
		t.Fatal(err)
	}
	want := &FileSearchResult{File: filepath.Join(root, "f.txt"), Matches: []string{"alpha", "alphabet"}, LineNumbers: []int{0, 2}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = e.Search(context.Background(), FileSearchRequest{File: "bin", Regex: "a"})
	wantCode(t, err, fserr.DecodeError)
	_, err = e.Search(context.Background(), FileSearchRequest{File: ".", Regex: "a"})
	wantCode(t, err, fserr.InvalidTarget)
}

func TestFindAndGlobOps(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, searchFiles)
	find, err := e.Find(context.Background(), FindRequest{Path: root, Pattern: "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(root, "a.go"), filepath.Join(root, "deep/x/y.go")}, find.Files); diff != "" || find.Truncated {
		t.Errorf("find (-want +got):\n%s", diff)
	}
	all, err := e.Find(context.Background(), FindRequest{Path: root, Pattern: "*", IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all.Files {
		if strings.Contains(f, "journal") || strings.HasSuffix(f, "/state") {
			t.Errorf("find shows the state directory: %s", f)
		}
	}
	glob, err := e.Glob(context.Background(), GlobRequest{Path: root, Pattern: "**/*.{go,py}", SortBy: "size", SortDesc: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range glob.Files {
		names = append(names, f.Name)
		if f.Size == nil || f.ModifiedTime == nil || f.IsDirectory {
			t.Errorf("metadata missing: %+v", f)
		}
	}
	if diff := cmp.Diff([]string{"a.go", "b.py", "y.go"}, names); diff != "" || glob.TotalCount != 3 {
		t.Errorf("glob (-want +got):\n%s", diff)
	}
	g2, err := e.Glob(context.Background(), GlobRequest{Path: root, Pattern: "deep/**", FilesOnly: ptr(false), IncludeMetadata: ptr(false), MaxResults: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(g2.Files) != 2 || !g2.Truncated || g2.Files[0].Size != nil || !g2.Files[0].IsDirectory {
		t.Errorf("glob cap: %+v", g2)
	}
	_, err = e.Glob(context.Background(), GlobRequest{Path: "a.go", Pattern: "*"})
	wantCode(t, err, fserr.InvalidTarget)
	_, err = e.Glob(context.Background(), GlobRequest{Path: root, Pattern: "[x"})
	wantCode(t, err, fserr.BadRequest)
}

// BenchmarkGrepGoroot is the warm daemon figure: the literal search of
// bench/search.sh through the engine, in process, repeated.
func BenchmarkGrepGoroot(b *testing.B) {
	src := filepath.Join(testenv.GOROOT(), "src")
	ws, err := workspace.Open(workspace.Options{Roots: []string{src}, StateDir: b.TempDir()})
	if err != nil {
		b.Skip(err)
	}
	defer ws.Close()
	e := New(ws, Options{ReadOnly: true})
	req := GrepRequest{Path: src, Pattern: "ErrNotExist", MaxResults: 100000, MaxFileSize: "0", IncludeHidden: true}
	for b.Loop() {
		res, err := e.Grep(context.Background(), req)
		if err != nil || res.MatchCount == 0 {
			b.Fatal(err)
		}
	}
}

// TestSearchRefusesFIFOs: opening a named pipe blocks until a writer
// comes, deaf to any context, so a grep or file search of one used to hang
// its request (and a thread) forever. Such a target is refused at once; a
// link to one too; a directory walk passes over it.
func TestSearchRefusesFIFOs(t *testing.T) {
	t.Parallel()
	e, root := searchEngine(t, map[string]string{"d/a.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "d", "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := os.Symlink("d/fifo", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		run  func() error
		code fserr.Code // "" when the call must succeed
	}{
		{"grep fifo", func() error {
			_, err := e.Grep(context.Background(), GrepRequest{Path: "d/fifo", Pattern: "x"})
			return err
		}, fserr.InvalidTarget},
		{"grep link to fifo", func() error {
			_, err := e.Grep(context.Background(), GrepRequest{Path: "link", Pattern: "x"})
			return err
		}, fserr.InvalidTarget},
		{"file search fifo", func() error {
			_, err := e.Search(context.Background(), FileSearchRequest{File: "d/fifo", Regex: "x"})
			return err
		}, fserr.InvalidTarget},
		{"grep dir with fifo", func() error {
			res, err := e.Grep(context.Background(), GrepRequest{Path: "d", Pattern: "needle"})
			if err == nil && len(res.Matches) != 1 {
				return fmt.Errorf("matches %+v, want the one in a.txt", res.Matches)
			}
			return err
		}, ""},
	} {
		done := make(chan error, 1)
		go func() { done <- tt.run() }()
		select {
		case err := <-done:
			if tt.code == "" {
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
				}
				continue
			}
			if fe, ok := fserr.As(err); !ok || fe.Code != tt.code {
				t.Errorf("%s: err = %v, want code %s", tt.name, err, tt.code)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still waiting after 5 s (blocked opening the FIFO)", tt.name)
		}
	}
}
