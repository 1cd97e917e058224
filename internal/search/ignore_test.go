package search

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWildmatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, text string
		pathname      bool
		want          bool
	}{
		{"foo", "foo", true, true},
		{"foo", "bar", true, false},
		{"*", "foo", true, true},
		{"*", "foo/bar", true, false},
		{"*", "foo/bar", false, true},
		{"f*", "foo", true, true},
		{"*o", "foo", true, true},
		{"?oo", "foo", true, true},
		{"?", "/", true, false},
		{"foo/*", "foo/bar", true, true},
		{"foo/*", "foo/bar/baz", true, false},
		{"**", "a/b/c", true, true},
		{"**/c", "c", true, true},
		{"**/c", "a/b/c", true, true},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/x/a/b", true, true},
		{"a/**", "a/x/y", true, true},
		{"a/**", "a", true, false},
		{"a**b", "axb", true, true},
		{"a**b", "ax/b", true, false},
		{"**/a/b", "x/a/y/a/b", true, true},
		{"[ab]", "a", true, true},
		{"[ab]", "c", true, false},
		{"[!ab]", "c", true, true},
		{"[^ab]", "a", true, false},
		{"[a-c]x", "bx", true, true},
		{"[]a]", "]", true, true},
		{"[!]a]", "b", true, true},
		{"[[:alpha:]]", "q", true, true},
		{"[[:digit:]]", "q", true, false},
		{"[[:nope:]]", "q", true, false},
		{"[a", "a", true, false},
		{"\\*", "*", true, true},
		{"\\*", "x", true, false},
		{"a\\", "a", true, false},
		{"[\\]]", "]", true, true},
		{"a/[/]b", "a//b", true, false},
		{"*.go", "x.go", false, true},
		{"*.go", ".go", false, true},
	}
	for _, tt := range tests {
		if got := wildmatch(tt.pattern, tt.text, tt.pathname); got != tt.want {
			t.Errorf("wildmatch(%q, %q, %v) = %v, want %v", tt.pattern, tt.text, tt.pathname, got, tt.want)
		}
	}
}

func TestParsePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		ok   bool
		want ignorePattern
	}{
		{"", false, ignorePattern{}},
		{"# comment", false, ignorePattern{}},
		{`\#x`, true, ignorePattern{glob: `\#x`, baseName: true}},
		{"!x", true, ignorePattern{glob: "x", negate: true, baseName: true, kind: kindLiteral}},
		{`\!x`, true, ignorePattern{glob: `\!x`, baseName: true}},
		{"dir/", true, ignorePattern{glob: "dir", dirOnly: true, baseName: true, kind: kindLiteral}},
		{"/top", true, ignorePattern{glob: "top", kind: kindLiteral}},
		{"a/b", true, ignorePattern{glob: "a/b", kind: kindLiteral}},
		{"*.go", true, ignorePattern{glob: "*.go", baseName: true, kind: kindSuffix}},
		{"x   ", true, ignorePattern{glob: "x", baseName: true, kind: kindLiteral}},
		{`x\ `, true, ignorePattern{glob: `x\ `, baseName: true}},
		{"**/a", true, ignorePattern{glob: "**/a"}},
	}
	for _, tt := range tests {
		got, ok := parsePattern(tt.line)
		if ok != tt.ok {
			t.Errorf("parsePattern(%q) ok = %v", tt.line, ok)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(ignorePattern{})); ok && diff != "" {
			t.Errorf("parsePattern(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestIgnoreListLastMatchWins(t *testing.T) {
	t.Parallel()
	l := parseIgnore(".gitignore", []byte("*.log\n!keep.log\nbuild/\n/root.txt\ndocs/*.md\n"))
	tests := []struct {
		rel   string
		isDir bool
		want  decision
	}{
		{"a.log", false, ignored},
		{"sub/a.log", false, ignored},
		{"keep.log", false, included},
		{"build", true, ignored},
		{"build", false, noMatch},
		{"root.txt", false, ignored},
		{"sub/root.txt", false, noMatch},
		{"docs/x.md", false, ignored},
		{"docs/sub/x.md", false, noMatch},
	}
	for _, tt := range tests {
		if got := l.match(tt.rel, path.Base(tt.rel), tt.isDir); got != tt.want {
			t.Errorf("match(%q, dir=%v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
}

// TestGitignoreDifferential compares the walker's ignore decisions with
// `git check-ignore --no-index` on generated trees: every path of the
// tree is either listed by the walker (not ignored) or reported ignored
// by git, never both and never neither.
func TestGitignoreDifferential(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			gitignoreDifferential(t, seed)
		})
	}
}

var (
	treeNames = []string{"a", "b", "c", "foo", "bar", "x.go", "y.txt", "ab", "ba", "f.o", ".h", "[ab]", "*", "a b", "#c", "!d", "Foo"}
	globComps = []string{"a", "b", "foo", "bar", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "f*", "*o", "*.go", "x.go",
		`\*`, "[[:alpha:]]*", "[]a]", "*a*", "?o?", `\#c`, `\!d`, "a b", "[^f]*", ".h", "F*", "**a", "b**"}
)

// broad patterns match nearly everything on their own; they only appear
// inside longer patterns or negated.
var broad = map[string]bool{"*": true, "**": true, "?": true, "*a*": true, "[!a]": true, "[^f]*": true, "**a": true, "b**": true, "[[:alpha:]]*": true, "F*": false}

func randomPattern(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	comps := make([]string, n)
	for i := range comps {
		comps[i] = globComps[r.IntN(len(globComps))]
		if n == 1 && broad[comps[i]] && r.IntN(4) != 0 {
			comps[i] = treeNames[r.IntN(len(treeNames))]
		}
	}
	if n > 1 && !slices.ContainsFunc(comps, func(c string) bool { return !broad[c] }) {
		comps[0] = treeNames[r.IntN(len(treeNames))]
	}
	p := strings.Join(comps, "/")
	if r.IntN(4) == 0 {
		p = "/" + p
	}
	if r.IntN(4) == 0 {
		p += "/"
	}
	if r.IntN(3) == 0 {
		p = "!" + p
	}
	if r.IntN(10) == 0 {
		p += "  "
	}
	if r.IntN(20) == 0 {
		p = "# " + p
	}
	return p
}

func gitignoreDifferential(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 42))
	dir := t.TempDir()
	var paths []string // relative, slash-separated
	var mk func(rel string, depth int)
	mk = func(rel string, depth int) {
		for _, name := range treeNames {
			if r.IntN(3) != 0 {
				continue
			}
			p := name
			if rel != "" {
				p = rel + "/" + name
			}
			full := filepath.Join(dir, filepath.FromSlash(p))
			if depth < 3 && r.IntN(2) == 0 {
				if err := os.Mkdir(full, 0o755); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
				mk(p, depth+1)
				continue
			}
			if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	mk("", 0)
	git := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			return out // check-ignore: nothing matched
		} else if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git(nil, "init", "-q")
	// Ignore files: the root, a few directories, and .git/info/exclude.
	dirs := []string{""}
	for _, p := range paths {
		if fi, err := os.Stat(filepath.Join(dir, p)); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	npat := 0
	write := func(file string, n int) {
		var b strings.Builder
		for range n {
			b.WriteString(randomPattern(r))
			b.WriteByte('\n')
		}
		npat += n
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, ".gitignore"), 25)
	write(filepath.Join(dir, ".git", "info", "exclude"), 10)
	for _, d := range dirs[1:] {
		if r.IntN(2) == 0 {
			write(filepath.Join(dir, filepath.FromSlash(d), ".gitignore"), 12)
		}
	}
	// Paths include the ignore files themselves.
	paths = paths[:0]
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})

	// git's verdicts.
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := git(in.Bytes(), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	fields := strings.Split(string(out), "\x00")
	gitIgnored := map[string]bool{}
	for i := 0; i+3 < len(fields); i += 4 {
		source, pattern, p := fields[i], fields[i+2], fields[i+3]
		if source != "" && !strings.HasPrefix(pattern, "!") {
			gitIgnored[p] = true
		}
	}

	// The walker's: everything it lists is kept.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	kept := map[string]bool{}
	wo := &walkOptions{hidden: true, ignoreFiles: true, wantDirs: true}
	if _, _, err := walkTree(context.Background(), root, ".", wo, nil, func(n *node[struct{}]) error {
		kept[n.rel] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for _, p := range paths {
		if kept[p] == gitIgnored[p] {
			diffs = append(diffs, fmt.Sprintf("%s: walker kept=%v, git ignored=%v", p, kept[p], gitIgnored[p]))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
		t.Errorf("%d of %d paths disagree with git (%d patterns):\n%s\nroot .gitignore:\n%s",
			len(diffs), len(paths), npat, strings.Join(diffs[:min(len(diffs), 30)], "\n"), gi)
	}
	if len(paths) < 50 {
		t.Logf("only %d paths", len(paths))
	}
	t.Logf("%d paths, %d patterns, %d ignored", len(paths), npat, len(gitIgnored))
}

// TestGlobalIgnore: git's global excludes file ranks below every ignore
// file, applies only inside git repositories (a .git in the directory or
// above it, above the root included), not at all without RespectIgnore,
// and its anchored patterns match Base/rel as ripgrep matches them.
func TestGlobalIgnore(t *testing.T) {
	t.Parallel()
	top := makeTree(t, map[string]string{
		"repo/.git/info/exclude": "!x.tmp\n",
		"repo/.gitignore":        "!keep.log\n",
		"repo/a.log":             "",
		"repo/keep.log":          "",
		"repo/x.tmp":             "",
		"repo/top.txt":           "",
		"repo/sub/top.txt":       "",
		"repo/sub/b.log":         "",
		"repo/build/c.txt":       "",
		"plain/a.log":            "",
		"plain/inner/.git":       "gitdir: elsewhere\n",
		"plain/inner/b.log":      "",
		"plain/inner/ok.txt":     "",
	})
	top, err := filepath.EvalSymlinks(top)
	if err != nil {
		t.Fatal(err)
	}
	const patterns = "*.log\n*.tmp\n/top.txt\n/sub/top.txt\nbuild/\n"
	tests := []struct {
		name, dir, base string
		noIgnore        bool
		want            []string
	}{
		{"repository top", "repo", "", false, []string{"keep.log", "x.tmp"}},
		{"repository top named ./", "repo", "./", false, []string{"keep.log", "x.tmp"}},
		{"below the top: Ancestors say it is a repository", "repo/sub", "", false, []string{}},
		{"below the top, named as a PATH", "repo/sub", "sub", false, []string{}},
		{"below the top, named otherwise", "repo/sub", "../repo/sub", false, []string{"top.txt"}},
		{"absolute", "repo/sub", "/x/sub", false, []string{"top.txt"}},
		{"outside a repository", "plain", "", false, []string{"a.log", "inner/ok.txt"}},
		{"without RespectIgnore", "plain", "", true, []string{"a.log", "inner/b.log", "inner/ok.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(top, filepath.FromSlash(tt.dir))
			opts := Options{
				RespectIgnore: !tt.noIgnore,
				Ancestors:     ReadAncestorIgnores(root),
				GlobalIgnore:  &GlobalIgnore{Path: "global", Content: []byte(patterns), Base: tt.base},
			}
			if diff := cmp.Diff(tt.want, listFiles(t, root, ".", opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGlobalPrefix(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"":         "",
		".":        "",
		"./":       "",
		"./sub":    "sub/",
		"sub/":     "sub/",
		"././a":    "a/",
		"/abs/dir": "abs/dir/",
		"/":        "",
		"../x":     "../x/",
	} {
		if got := globalPrefix(base); got != want {
			t.Errorf("globalPrefix(%q) = %q, want %q", base, got, want)
		}
	}
}
