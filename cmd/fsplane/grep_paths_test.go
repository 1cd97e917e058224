package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// TestGrepIgnoreFilesAbovePath: as with rg, a PATH below a repository's
// top, or the current directory there, honours the ignore files above it:
// .gitignore and .git/info/exclude of the repository's directories,
// .ignore of every parent; not a .gitignore above the repository (or of
// an outer repository, or outside any repository).
func TestGrepIgnoreFilesAbovePath(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	testenv.WriteTree(t, top, map[string]string{
		".ignore":                  "top-ignored.txt\n",
		".gitignore":               "outer.txt\n",
		"repo/.git/info/exclude":   "excl.txt\n",
		"repo/.gitignore":          "*.log\nsub/anch.txt\n",
		"repo/sub/a.txt":           "foo\n",
		"repo/sub/x.log":           "foo\n",
		"repo/sub/anch.txt":        "foo\n",
		"repo/sub/excl.txt":        "foo\n",
		"repo/sub/top-ignored.txt": "foo\n",
		"repo/sub/outer.txt":       "foo\n",
		"repo/logs/ok.txt":         "foo\n",
		"repo/logs/y.log":          "foo\n",
		"repo/nested/.git/":        "",
		"repo/nested/z.log":        "foo\n",
		"plain/.gitignore":         "p.txt\n",
		"plain/sub/p.txt":          "foo\n",
	})
	tests := []struct {
		name, dir string
		args      []string
		out       string
	}{
		{"path below the top", "repo", []string{"grep", "foo", "sub/"}, "sub/a.txt:1:foo\nsub/outer.txt:1:foo\n"},
		{"current directory below the top", "repo/logs", []string{"grep", "foo"}, "ok.txt:1:foo\n"},
		{"nested repository", "repo", []string{"grep", "foo", "nested"}, "nested/z.log:1:foo\n"},
		{"outside a repository", "plain", []string{"grep", "foo", "sub"}, "sub/p.txt:1:foo\n"},
		{"no ignore", "repo", []string{"grep", "--no-ignore", "foo", "sub"},
			"sub/a.txt:1:foo\nsub/anch.txt:1:foo\nsub/excl.txt:1:foo\nsub/outer.txt:1:foo\nsub/top-ignored.txt:1:foo\nsub/x.log:1:foo\n"},
		{"a file named is searched", "repo", []string{"grep", "foo", "sub/x.log"}, "sub/x.log:1:foo\n"},
		{"files", "repo", []string{"files", "sub"}, "sub/a.txt\nsub/outer.txt\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinary(t, filepath.Join(top, filepath.FromSlash(tt.dir)), "", tt.args...)
			if diff := cmp.Diff(tt.out, got.Stdout); diff != "" || got.Exit != 0 {
				t.Errorf("exit %d, stdout (-want +got):\n%s\nstderr: %s", got.Exit, diff, got.Stderr)
			}
		})
	}
}

// TestGrepPathErrors: a symbolic link named as PATH is followed wherever
// it leads (as rg follows it), and a PATH that fails is reported as
// "fsplane grep: PATH: message" without stopping the PATHs after it; the
// exit status is then 2.
func TestGrepPathErrors(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	tree := filepath.Join(top, "tree")
	testenv.WriteTree(t, top, map[string]string{
		"outside/secret.txt": "foo secret\n",
		"tree/a.txt":         "foo\n",
		"tree/out_file":      "->../outside/secret.txt",
		"tree/abs_link":      "->" + filepath.Join(tree, "a.txt"),
		"tree/out_dir":       "->../outside",
	})
	tests := []struct {
		name     string
		args     []string
		out, err string
		exit     int
	}{
		{"links and a missing path", []string{"grep", "foo", "out_file", "nope", "abs_link", "out_dir", "a.txt"},
			"out_file:1:foo secret\nabs_link:1:foo\nout_dir/secret.txt:1:foo secret\na.txt:1:foo\n",
			"fsplane grep: nope: no such file or directory\n", 2},
		{"no messages", []string{"grep", "--no-messages", "foo", "nope", "out_file"}, "out_file:1:foo secret\n", "", 2},
		{"files", []string{"files", "out_file", "nope", "a.txt"}, "out_file\na.txt\n", "fsplane files: nope: no such file or directory\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinary(t, tree, "", tt.args...)
			if diff := cmp.Diff(tt.out, got.Stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if got.Stderr != tt.err || got.Exit != tt.exit {
				t.Errorf("exit %d, stderr %q; want %d, %q", got.Exit, got.Stderr, tt.exit, tt.err)
			}
		})
	}
}

// TestGrepOptionErrorsNameFlags: an option the engine refuses is named by
// the flag that set it, and the hint says what to do with that flag.
func TestGrepOptionErrorsNameFlags(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"before", []string{"grep", "-B", "5000", "x"}, []string{"fsplane grep: -B (--before-context): at most 1000 lines of context (got 5000)", "Hint: pass at most 1000 to -B (--before-context)"}},
		{"after, negative", []string{"grep", "-A", "-1", "x"}, []string{"fsplane grep: -A (--after-context): context lines must not be negative"}},
		{"context", []string{"grep", "-C", "5000", "x"}, []string{"fsplane grep: -C (--context): at most 1000"}},
		{"context, negative", []string{"grep", "-C=-1", "x"}, []string{"fsplane grep: -C (--context): context lines must not be negative"}},
		{"context, then before", []string{"grep", "-C", "5000", "-B", "1", "x"}, []string{"fsplane grep: -C (--context): at most 1000 lines of context (got 5000)", "Hint: pass at most 1000 to -C (--context)"}},
		{"before, then context", []string{"grep", "-B", "1", "-C", "5000", "x"}, []string{"fsplane grep: -C (--context): at most 1000"}},
		{"line break without -U", []string{"grep", `a\nb`}, []string{"unless you turn on -U (--multiline)"}},
		{"unclosed brace", []string{"grep", "-g", "*.{txt", "x"}, []string{`fsplane grep: -g (--glob): invalid glob "*.{txt": unclosed "{"`, "Hint: close every"}},
		{"unclosed class", []string{"grep", "-g", "[a", "x"}, []string{`fsplane grep: -g (--glob): invalid glob "[a": unclosed or malformed character class at byte 0`, `Hint: close every "["`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinary(t, dir, "", tt.args...)
			if got.Exit != 2 {
				t.Errorf("exit %d, want 2", got.Exit)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Stderr, w) {
					t.Errorf("stderr %q lacks %q", got.Stderr, w)
				}
			}
		})
	}
}

// asNobody returns the command line that runs the fsplane binary as a
// user without privileges, and a directory (mode 0777) for its files: as
// root, which reads every file whatever its mode, setpriv to uid 65534
// with a copy of the binary that user can execute; otherwise the binary.
func asNobody(t *testing.T) (argv []string, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fsplane-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return []string{binary}, dir
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("running as root, which reads files of any mode, and setpriv (util-linux) is not installed to drop privileges")
	}
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fsplane")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin}, dir
}

// unreadableTree writes a tree whose locked.txt and locked/ the user of
// asNobody cannot read.
func unreadableTree(t *testing.T, dir string) {
	t.Helper()
	testenv.WriteTree(t, dir, map[string]string{"a.txt": "foo\n", "locked.txt": "foo\n", "locked/b.txt": "foo\n", "z.txt": "foo\n"})
	for _, p := range []string{"locked.txt", "locked"} {
		if err := os.Chmod(filepath.Join(dir, p), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGrepUnreadablePath: a file that cannot be read, named as PATH or
// met in a walk, is reported (unless --no-messages) and the search goes
// on; the exit status is 2, as rg's.
func TestGrepUnreadablePath(t *testing.T) {
	t.Parallel()
	argv, dir := asNobody(t)
	tree := filepath.Join(dir, "tree")
	unreadableTree(t, tree)
	tests := []struct {
		name     string
		args     []string
		out, err string
	}{
		{"named", []string{"grep", "foo", "a.txt", "locked.txt", "z.txt"}, "a.txt:1:foo\nz.txt:1:foo\n", "fsplane grep: locked.txt: permission denied\n"},
		{"named, no messages", []string{"grep", "--no-messages", "foo", "a.txt", "locked.txt", "z.txt"}, "a.txt:1:foo\nz.txt:1:foo\n", ""},
		{"walked", []string{"grep", "foo"}, "a.txt:1:foo\nz.txt:1:foo\n", "fsplane grep: locked: permission denied\nfsplane grep: locked.txt: permission denied\n"},
		{"walked, no messages", []string{"grep", "--no-messages", "foo"}, "a.txt:1:foo\nz.txt:1:foo\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(argv[0], append(argv[1:], tt.args...)...)
			cmd.Dir = tree
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Errorf("err %v, want exit status 2", err)
			}
			if diff := cmp.Diff(tt.out, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			// A walk's file and directory errors come in no set order.
			if got := sortedLines(errb.String()); got != sortedLines(tt.err) {
				t.Errorf("stderr %q, want %q", errb.String(), tt.err)
			}
		})
	}
}

// TestServeSearchReportsUnreadable: HTTP grep and find count what they
// could not read, and their hint names an example, instead of a plain
// success that reads as "nothing there".
func TestServeSearchReportsUnreadable(t *testing.T) {
	t.Parallel()
	argv, dir := asNobody(t)
	tree := filepath.Join(dir, "tree")
	unreadableTree(t, tree)
	cmd := exec.Command(argv[0], append(argv[1:], "serve", "--listen", "127.0.0.1:0", "--state-dir", filepath.Join(dir, "state"), "--root", tree)...)
	s := tryStartServerCmd(t, cmd)
	if s == nil {
		t.Fatal("server did not start")
	}
	url := s.url
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return decodeEnvelope(t, resp)
	}
	grep := post("/v2/fs/grep", `{"path":".","pattern":"foo"}`)
	data := grep["data"].(map[string]any)
	if data["files_unreadable"] != 2.0 || data["files_matched"] != 2.0 {
		t.Errorf("grep data %v: want files_unreadable 2, files_matched 2", data)
	}
	if h, _ := grep["hint"].(string); !strings.Contains(h, "2 files or directories could not be read") || !strings.Contains(h, filepath.Join(tree, "locked")) {
		t.Errorf("grep hint %q", h)
	}
	resp, err := http.Get(url + "/v2/fs/search?path=.&pattern=*.txt")
	if err != nil {
		t.Fatal(err)
	}
	find := decodeEnvelope(t, resp)
	if d := find["data"].(map[string]any); d["entries_unreadable"] != 1.0 {
		t.Errorf("find data %v: want entries_unreadable 1", d)
	}
	if h, _ := find["hint"].(string); !strings.Contains(h, "1 directory could not be read") || !strings.Contains(h, filepath.Join(tree, "locked")+": permission denied") {
		t.Errorf("find hint %q", h)
	}
}

func decodeEnvelope(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil || env["success"] != true {
		t.Fatalf("%s: %v", b, err)
	}
	return env
}

func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// TestGrepGlobsAnchoredLikeRipgrep: as rg matches its -g globs, one with
// a '/' matches the path walked (PATH as given joined with the entry's,
// relative to the current directory), not the path below PATH: with PATH
// src, `src/*.go` selects src/a.go and `a/*.go` nothing. Each case is
// checked against the list written here and, where rg is installed,
// against rg's; "ABS" in an argument stands for the scratch directory.
func TestGrepGlobsAnchoredLikeRipgrep(t *testing.T) {
	t.Parallel()
	rg, _ := exec.LookPath("rg")
	top := t.TempDir()
	testenv.WriteTree(t, top, map[string]string{
		"src/a.go":     "x\n",
		"src/a/b.go":   "x\n",
		"src/a/c.txt":  "x\n",
		"src/doc.txt":  "x\n",
		"other/a/d.go": "x\n",
	})
	tests := []struct {
		name string
		dir  string // where to run, below the scratch directory
		args []string
		want []string
	}{
		{"a glob of PATH's files", ".", []string{"-g", "src/*.go", "src"}, []string{"src/a.go"}},
		{"a glob below PATH is not anchored there", ".", []string{"-g", "a/*.go", "src"}, nil},
		{"PATH/**", ".", []string{"-g", "src/**", "src"}, []string{"src/a.go", "src/a/b.go", "src/a/c.txt", "src/doc.txt"}},
		{"excluding PATH/**", ".", []string{"-g", "!src/**", "src", "other"}, []string{"other/a/d.go"}},
		{"excluding a directory", ".", []string{"-g", "!src/a", "src"}, []string{"src/a.go", "src/doc.txt"}},
		{"excluding a directory not anchored at PATH", ".", []string{"-g", "!a/", "src"}, []string{"src/a.go", "src/doc.txt"}},
		{"anchored glob", ".", []string{"-g", "/src/a/*", "src/"}, []string{"src/a/b.go", "src/a/c.txt"}},
		{"./PATH", ".", []string{"-g", "src/a/*.go", "./src"}, []string{"./src/a/b.go"}},
		{"PATH .", "src", []string{"-g", "a/*.go", "."}, []string{"./a/b.go"}},
		{"no PATH", "src", []string{"-g", "a/*.go"}, []string{"a/b.go"}},
		{"../PATH", "src", []string{"-g", "../other/**", "../other"}, []string{"../other/a/d.go"}},
		{"absolute PATH inside the current directory", ".", []string{"-g", "src/a/*", "ABS/src"}, []string{"ABS/src/a/b.go", "ABS/src/a/c.txt"}},
		{"absolute PATH outside the current directory", "other", []string{"-g", "a/*", "ABS/src"}, nil},
		{"absolute PATH, ** glob", "other", []string{"-g", "**/src/a/*.go", "ABS/src"}, []string{"ABS/src/a/b.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(top, tt.dir)
			args := slices.Clone(tt.args)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "ABS", top)
			}
			var want, wantLines []string
			for _, f := range tt.want {
				f = strings.ReplaceAll(f, "ABS", top)
				want = append(want, f)
				wantLines = append(wantLines, f+":1:x")
			}
			exit := 0
			if len(want) == 0 {
				exit = 1
			}
			files := runBinary(t, dir, "", append([]string{"files"}, args...)...)
			if diff := cmp.Diff(want, sortedOutput(files.Stdout)); diff != "" || files.Exit != exit {
				t.Errorf("fsplane files: exit %d (-want +got):\n%s\nstderr: %s", files.Exit, diff, files.Stderr)
			}
			grep := runBinary(t, dir, "", append([]string{"grep", "x"}, args...)...)
			if diff := cmp.Diff(wantLines, sortedOutput(grep.Stdout)); diff != "" || grep.Exit != exit {
				t.Errorf("fsplane grep: exit %d (-want +got):\n%s\nstderr: %s", grep.Exit, diff, grep.Stderr)
			}
			if rg == "" {
				return
			}
			if diff := cmp.Diff(want, runRipgrep(t, rg, dir, nil, append([]string{"--files"}, args...)...)); diff != "" {
				t.Errorf("rg --files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantLines, runRipgrep(t, rg, dir, nil, append([]string{"-n", "-H", "--no-heading", "x"}, args...)...)); diff != "" {
				t.Errorf("rg (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRgGlobPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, cwd, want string
	}{
		{"", "/w", ""},
		{".", "/w", ""},
		{"./", "/w", ""},
		{"src", "/w", "src/"},
		{"src/", "/w", "src/"},
		{"./src", "/w", "src/"},
		{"././src", "/w", "src/"}, // rg drops "./" twice
		{"../src", "/w", "../src/"},
		{"/w/src", "/w", "src/"},
		{"/w", "/w", ""},
		{"/w/", "/w", ""},
		{"/wx/src", "/w", "/wx/src/"},
		{"/other/src", "/w", "/other/src/"},
		{"/other/src", "/", "other/src/"},
		{"/other/src", "", "/other/src/"},
	}
	for _, tt := range tests {
		if got := rgGlobPrefix(tt.path, tt.cwd); got != tt.want {
			t.Errorf("rgGlobPrefix(%q, %q) = %q, want %q", tt.path, tt.cwd, got, tt.want)
		}
	}
}

// TestMaxDepthZeroLikeRipgrep: --max-depth 0 searches only the files
// named as PATH, a directory PATH counting as no file searched (exit 2
// with no PATH, 1 with one, as rg). Each case is checked against the
// output written here and, where rg is installed, against rg's.
func TestMaxDepthZeroLikeRipgrep(t *testing.T) {
	t.Parallel()
	rg, _ := exec.LookPath("rg")
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"a.txt": "x\n", "d/b.txt": "x\n"})
	tests := []struct {
		args []string
		want string
		exit int
	}{
		{[]string{"grep", "--max-depth", "0", "x"}, "", 2},
		{[]string{"grep", "--max-depth", "0", "x", "."}, "", 1},
		{[]string{"grep", "--max-depth", "0", "x", "a.txt", "d"}, "a.txt:1:x\n", 0},
		{[]string{"grep", "--max-depth", "1", "x"}, "a.txt:1:x\n", 0},
		{[]string{"grep", "--max-depth", "1", "x", "d"}, "d/b.txt:1:x\n", 0},
		{[]string{"files", "--max-depth", "0"}, "", 1},
		{[]string{"files", "--max-depth", "0", "a.txt", "d"}, "a.txt\n", 0},
	}
	for _, tt := range tests {
		name := strings.Join(tt.args, " ")
		got := runBinary(t, dir, "", tt.args...)
		if got.Stdout != tt.want || got.Exit != tt.exit {
			t.Errorf("fsplane %s: exit %d, stdout %q; want %d, %q (stderr %s)", name, got.Exit, got.Stdout, tt.exit, tt.want, got.Stderr)
		}
		if rg == "" {
			continue
		}
		rgArgs := []string{"--no-config", "-n", "-H", "--no-heading"}
		if tt.args[0] == "files" {
			rgArgs = []string{"--no-config", "--files"}
		}
		cmd := exec.Command(rg, append(rgArgs, tt.args[1:]...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		exit := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			exit = ee.ExitCode()
		}
		if string(out) != tt.want || exit != tt.exit {
			t.Errorf("rg %s: exit %d, stdout %q; want %d, %q", name, exit, out, tt.exit, tt.want)
		}
	}
	// rg would search only empty files; fsplane refuses, saying what to do.
	got := runBinary(t, dir, "", "grep", "--max-filesize", "0", "x")
	if got.Exit != 2 || got.Stdout != "" || !strings.Contains(got.Stderr, "give a size of at least 1") {
		t.Errorf("--max-filesize 0: exit %d, stdout %q, stderr %q", got.Exit, got.Stdout, got.Stderr)
	}
}
