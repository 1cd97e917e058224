package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// TestGlobalGitignoreMatchesRipgrep: fsplane files and grep honour git's
// global excludes file as rg does, in a scratch HOME and XDG_CONFIG_HOME
// given to the child processes only. Each case's files are checked
// against the list written here and, where rg is installed, against
// rg --files and rg's matches.
func TestGlobalGitignoreMatchesRipgrep(t *testing.T) {
	t.Parallel()
	rg, _ := exec.LookPath("rg")
	// repo is a git repository (a .git directory is what rg and fsplane
	// look for) holding one file of every kind the cases ignore.
	repo := map[string]string{
		"repo/.git/":         "",
		"repo/a.log":         "x\n",
		"repo/top.txt":       "x\n",
		"repo/keep.txt":      "x\n",
		"repo/build/b.txt":   "x\n",
		"repo/sub/c.log":     "x\n",
		"repo/sub/top.txt":   "x\n",
		"repo/sub/keep.txt":  "x\n",
		"plain/a.log":        "x\n",
		"plain/keep.txt":     "x\n",
		"plain/inner/.git/":  "",
		"plain/inner/a.log":  "x\n",
		"plain/inner/ok.txt": "x\n",
	}
	const patterns = "*.log\n/top.txt\nbuild/\n"
	all := []string{"a.log", "build/b.txt", "keep.txt", "sub/c.log", "sub/keep.txt", "sub/top.txt", "top.txt"}
	kept := []string{"keep.txt", "sub/keep.txt", "sub/top.txt"}
	tests := []struct {
		name string
		// tree is written over repo's files: home/ is the scratch HOME,
		// xdg/ the XDG_CONFIG_HOME when xdg is set (otherwise it is
		// empty, which git and rg take as unset).
		tree map[string]string
		xdg  bool
		// rgDiffers: rg is not compared, for it reads the config with a
		// regexp, keeping quotes and comments in the value; fsplane
		// reads it as git does.
		rgDiffers bool
		dir       string // where to run, below the scratch directory
		args      []string
		want      []string
	}{
		{name: "core.excludesFile in ~/.gitconfig",
			tree: map[string]string{"home/.gitconfig": "[user]\n\tname = x\n[core]\n\texcludesFile = ~/global-ignore\n", "home/global-ignore": patterns},
			dir:  "repo", want: kept},
		{name: "core.excludesFile in the XDG config",
			tree: map[string]string{"xdg/git/config": "[Core]\nexcludesfile = ~/g\n", "home/g": patterns},
			xdg:  true, dir: "repo", want: kept},
		{name: "quoted, with a comment, as git reads it",
			tree: map[string]string{"xdg/git/config": "[core]\nexcludesfile = \"~/my ignore\" # comment\n", "home/my ignore": patterns},
			xdg:  true, rgDiffers: true, dir: "repo", want: kept},
		{name: "~/.gitconfig wins over the XDG config",
			tree: map[string]string{"xdg/git/config": "[core]\nexcludesfile = ~/none\n", "home/.gitconfig": "[core]\nexcludesfile = ~/g\n", "home/g": patterns},
			xdg:  true, dir: "repo", want: kept},
		{name: "unset: XDG_CONFIG_HOME/git/ignore",
			tree: map[string]string{"xdg/git/ignore": patterns},
			xdg:  true, dir: "repo", want: kept},
		{name: "unset, no XDG_CONFIG_HOME: ~/.config/git/ignore",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "repo", want: kept},
		{name: "set to a missing file: the default is not read",
			tree: map[string]string{"home/.gitconfig": "[core]\nexcludesfile = ~/missing\n", "home/.config/git/ignore": patterns},
			dir:  "repo", want: all},
		{name: "--no-ignore-global",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "repo", args: []string{"--no-ignore-global"}, want: all},
		{name: "--no-ignore",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "repo", args: []string{"--no-ignore"}, want: all},
		{name: "a negation in the repository's .gitignore re-includes",
			tree: map[string]string{"home/.config/git/ignore": patterns, "repo/.gitignore": "!a.log\n"},
			dir:  "repo", want: []string{"a.log", "keep.txt", "sub/keep.txt", "sub/top.txt"}},
		{name: "below .git/info/exclude",
			tree: map[string]string{"home/.config/git/ignore": patterns, "repo/.git/info/exclude": "!sub/c.log\n"},
			dir:  "repo", want: []string{"keep.txt", "sub/c.log", "sub/keep.txt", "sub/top.txt"}},
		{name: "anchored at the current directory, as rg anchors it",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "repo/sub", want: []string{"keep.txt"}},
		{name: "a PATH below the top",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "repo", args: []string{"sub"}, want: []string{"sub/keep.txt", "sub/top.txt"}},
		{name: "./PATH",
			tree: map[string]string{"home/.config/git/ignore": patterns + "/sub/keep.txt\n"},
			dir:  "repo", args: []string{"./sub"}, want: []string{"./sub/top.txt"}},
		{name: "outside a git repository only inside nested ones",
			tree: map[string]string{"home/.config/git/ignore": patterns},
			dir:  "plain", want: []string{"a.log", "inner/ok.txt", "keep.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			testenv.WriteTree(t, top, repo)
			testenv.WriteTree(t, top, tt.tree)
			if err := os.MkdirAll(filepath.Join(top, "home"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + filepath.Join(top, "home"), "XDG_CONFIG_HOME="}
			if tt.xdg {
				env[1] = "XDG_CONFIG_HOME=" + filepath.Join(top, "xdg")
			}
			dir := filepath.Join(top, filepath.FromSlash(tt.dir))
			var wantLines []string
			for _, f := range tt.want {
				wantLines = append(wantLines, f+":1:x")
			}
			files := runBinaryWith(t, dir, "", env, append([]string{"files"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, sortedOutput(files.Stdout)); diff != "" || files.Exit != 0 {
				t.Errorf("fsplane files: exit %d (-want +got):\n%s\nstderr: %s", files.Exit, diff, files.Stderr)
			}
			grep := runBinaryWith(t, dir, "", env, append([]string{"grep", "x"}, tt.args...)...)
			if diff := cmp.Diff(wantLines, sortedOutput(grep.Stdout)); diff != "" || grep.Exit != 0 {
				t.Errorf("fsplane grep: exit %d (-want +got):\n%s\nstderr: %s", grep.Exit, diff, grep.Stderr)
			}
			if rg == "" || tt.rgDiffers {
				return
			}
			rgFiles := runRipgrep(t, rg, dir, env, append([]string{"--files"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, rgFiles); diff != "" {
				t.Errorf("rg --files (-want +got):\n%s", diff)
			}
			rgGrep := runRipgrep(t, rg, dir, env, append([]string{"-n", "-H", "--no-heading", "x"}, tt.args...)...)
			if diff := cmp.Diff(wantLines, rgGrep); diff != "" {
				t.Errorf("rg (-want +got):\n%s", diff)
			}
		})
	}
}

// runRipgrep runs rg (without a config file) in dir with env added and
// returns its output lines, sorted.
func runRipgrep(t *testing.T, rg, dir string, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(rg, append([]string{"--no-config"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("rg %v: %v\n%s", args, err, errb.String())
		}
	}
	return sortedOutput(out.String())
}

// sortedOutput is the lines of s, sorted; nil when s is empty.
func sortedOutput(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// TestReadGlobalIgnore: where the excludes file is found, with the
// environment a test gives (no process environment is touched), and
// what is said of a config git would refuse: a warning, the values
// before the bad line still counting.
func TestReadGlobalIgnore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tree     map[string]string
		xdg      bool
		wantPath string // relative to the scratch directory; "" for none
		warning  string
	}{
		{name: "nothing", wantPath: ""},
		{name: "default", tree: map[string]string{"home/.config/git/ignore": "x\n"}, wantPath: "home/.config/git/ignore"},
		{name: "XDG", tree: map[string]string{"xdg/git/ignore": "x\n", "home/.config/git/ignore": "x\n"}, xdg: true, wantPath: "xdg/git/ignore"},
		{name: "~ alone is HOME's", tree: map[string]string{"home/.gitconfig": "[core]\nexcludesfile = ~/a/b\n", "home/a/b": ""}, wantPath: "home/a/b"},
		{name: "a directory is none", tree: map[string]string{"home/.config/git/ignore/": ""}, wantPath: ""},
		{name: "empty value: none", tree: map[string]string{"home/.gitconfig": "[core]\nexcludesfile =\n", "home/.config/git/ignore": "x\n"}, wantPath: ""},
		{name: "bad line after the value",
			tree:     map[string]string{"home/.gitconfig": "[core]\nexcludesfile = ~/g\n[bad\n", "home/g": "x\n"},
			wantPath: "home/g", warning: "home/.gitconfig: bad config line 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			testenv.WriteTree(t, top, tt.tree)
			env := map[string]string{"HOME": filepath.Join(top, "home")}
			if tt.xdg {
				env["XDG_CONFIG_HOME"] = filepath.Join(top, "xdg")
			}
			var warnings []string
			g := readGlobalIgnore(func(k string) string { return env[k] }, func(err error) {
				warnings = append(warnings, strings.TrimPrefix(err.Error(), top+"/"))
			})
			got := ""
			if g != nil {
				got = strings.TrimPrefix(g.Path, top+"/")
			}
			if got != tt.wantPath {
				t.Errorf("path %q, want %q", got, tt.wantPath)
			}
			var want []string
			if tt.warning != "" {
				want = []string{tt.warning}
			}
			if diff := cmp.Diff(want, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandHome(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"~":                "/h",
		"~/x":              "/h/x",
		"a/~/x":            "a/~/x",
		"/abs":             "/abs",
		"~no-such-user9/x": "~no-such-user9/x",
	}
	if u, err := user.Current(); err == nil && u.Username != "" && u.HomeDir != "" {
		tests["~"+u.Username+"/x"] = filepath.Join(u.HomeDir, "x")
	}
	for in, want := range tests {
		if got := expandHome(in, "/h"); got != want {
			t.Errorf("expandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
