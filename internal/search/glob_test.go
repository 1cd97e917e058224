package search

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func globTree(t *testing.T) string {
	t.Helper()
	return makeTree(t, map[string]string{
		"main.go":             "package main\n",
		"README.md":           "# r\n",
		"src/a.go":            "aaaa",
		"src/b.ts":            "b",
		"src/c.tsx":           "cc",
		"src/deep/d.go":       "d",
		"src/deep/e_test.go":  "e",
		"vendor/v.go":         "v",
		".github/ci.yml":      "ci",
		"src/.hidden/h.go":    "h",
		"docs/":               "",
		"docs/guide/intro.md": "i",
	})
}

func globPaths(t *testing.T, dir string, opts GlobOptions) []string {
	t.Helper()
	res, err := Glob(context.Background(), openRoot(t, dir), ".", opts)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range res.Entries {
		p := e.Path
		if e.IsDir {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}

func TestGlob(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	tests := []struct {
		name string
		opts GlobOptions
		want []string
	}{
		{"all go", GlobOptions{Pattern: "**/*.go", FilesOnly: true},
			[]string{"main.go", "src/a.go", "src/deep/d.go", "src/deep/e_test.go", "vendor/v.go"}},
		{"top level", GlobOptions{Pattern: "*.go", FilesOnly: true}, []string{"main.go"}},
		{"literal base", GlobOptions{Pattern: "src/deep/*", FilesOnly: true}, []string{"src/deep/d.go", "src/deep/e_test.go"}},
		{"braces", GlobOptions{Pattern: "src/*.{ts,tsx}", FilesOnly: true}, []string{"src/b.ts", "src/c.tsx"}},
		{"dirs too", GlobOptions{Pattern: "src/**"}, []string{"src/", "src/a.go", "src/b.ts", "src/c.tsx", "src/deep/", "src/deep/d.go", "src/deep/e_test.go"}},
		{"hidden", GlobOptions{Pattern: "**/*.go", FilesOnly: true, IncludeHidden: true},
			[]string{"main.go", "src/.hidden/h.go", "src/a.go", "src/deep/d.go", "src/deep/e_test.go", "vendor/v.go"}},
		{"hidden literal base", GlobOptions{Pattern: ".github/*.yml", FilesOnly: true}, []string{".github/ci.yml"}},
		{"exclude", GlobOptions{Pattern: "**/*.go", FilesOnly: true, Exclude: []string{"vendor/**", "*_test.go"}},
			[]string{"main.go", "src/a.go", "src/deep/d.go"}},
		{"exclude dir name", GlobOptions{Pattern: "**/*.go", FilesOnly: true, Exclude: []string{"deep"}},
			[]string{"main.go", "src/a.go", "vendor/v.go"}},
		{"exclude literal dir", GlobOptions{Pattern: "src/**/*.go", FilesOnly: true, Exclude: []string{"src"}}, []string{}},
		{"exclude literal subdir", GlobOptions{Pattern: "src/deep/*", Exclude: []string{"src/deep"}}, []string{}},
		{"exclude literal dir name", GlobOptions{Pattern: "src/deep/*.go", Exclude: []string{"deep"}}, []string{}},
		{"exclude literal dir glob", GlobOptions{Pattern: "src/**", Exclude: []string{"src/**"}}, []string{}},
		{"exclude other dir", GlobOptions{Pattern: "src/deep/*.go", Exclude: []string{"vendor", "src/x*", "sr"}},
			[]string{"src/deep/d.go", "src/deep/e_test.go"}},
		{"missing base", GlobOptions{Pattern: "nope/**/*.go"}, []string{}},
		{"cap", GlobOptions{Pattern: "**/*.go", FilesOnly: true, MaxResults: 2}, []string{"main.go", "src/a.go"}},
		{"sort by name desc", GlobOptions{Pattern: "src/*", FilesOnly: true, SortBy: "name", SortDesc: true},
			[]string{"src/c.tsx", "src/b.ts", "src/a.go"}},
		{"sort by size", GlobOptions{Pattern: "src/*", FilesOnly: true, SortBy: "size", Metadata: true},
			[]string{"src/b.ts", "src/c.tsx", "src/a.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, globPaths(t, dir, tt.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGlobTruncatedAndMetadata(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "src/a.go"), mt, mt)
	res, err := Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: "src/a.go", Metadata: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []GlobEntry{{Path: "src/a.go", Name: "a.go", Size: 4, ModTime: mt}}
	if diff := cmp.Diff(want, res.Entries, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" || res.Truncated {
		t.Errorf("truncated=%v (-want +got):\n%s", res.Truncated, diff)
	}
	res, err = Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: "**", MaxResults: 3})
	if err != nil || len(res.Entries) != 3 || !res.Truncated {
		t.Errorf("cap: %d entries, truncated %v, err %v", len(res.Entries), res.Truncated, err)
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	for _, opts := range []GlobOptions{{Pattern: ""}, {Pattern: "/abs/*"}, {Pattern: "[unclosed"}, {Pattern: "../*"},
		{Pattern: "*", SortBy: "color"}, {Pattern: "*", Exclude: []string{"{x"}},
		// Alternatives doublestar matches in time square in their number
		// and depth, for every entry: bounded.
		{Pattern: "**/" + strings.Repeat("{", 11) + "a" + strings.Repeat("}", 11)},
		{Pattern: "*", Exclude: []string{strings.Repeat("{", 1000) + "a" + strings.Repeat("}", 1000)}},
		{Pattern: "{" + strings.Repeat("a,", 300) + "b}"}} {
		_, err := Glob(context.Background(), openRoot(t, dir), ".", opts)
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Errorf("Glob(%+v) = %v, want InvalidError", opts, err)
		}
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	tests := []struct {
		opts FindOptions
		want []string
	}{
		{FindOptions{Pattern: "*.go"}, []string{"main.go", "src/a.go", "src/deep/d.go", "src/deep/e_test.go", "vendor/v.go"}},
		{FindOptions{Pattern: "deep"}, []string{"src/deep"}},
		{FindOptions{Pattern: "*.md", Hidden: true}, []string{"README.md", "docs/guide/intro.md"}},
		{FindOptions{Pattern: "src/**/*.go"}, []string{"src/a.go", "src/deep/d.go", "src/deep/e_test.go"}},
		{FindOptions{Pattern: "*", MaxResults: 2}, []string{"README.md", "docs"}},
	}
	for _, tt := range tests {
		res, err := Find(context.Background(), openRoot(t, dir), ".", tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, e := range res.Entries {
			got = append(got, e.Path)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.opts, diff)
		}
	}
}

func TestPrunerAndComparePaths(t *testing.T) {
	t.Parallel()
	p := newPruner("src/*/x/*.go")
	for dir, want := range map[string]bool{"src": true, "src/a": true, "src/a/x": true, "src/a/y": false, "lib": false, "src/a/x/z": false} {
		if got := p.canDescend(dir); got != want {
			t.Errorf("canDescend(%q) = %v", dir, got)
		}
	}
	if !newPruner("a/**/b").canDescend("a/q/r/s") || newPruner("a/**/b").canDescend("b") {
		t.Error("** pruning")
	}
	if comparePaths("a/b", "a-c") >= 0 || comparePaths("a", "a/b") >= 0 || comparePaths("b", "a/z") <= 0 {
		t.Error("comparePaths order")
	}
}

func TestSizeAndTypes(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{"1M": 1 << 20, "500K": 500 << 10, "4096": 4096, "2MiB": 2 << 20, " 1g ": 1 << 30, "10kb": 10 << 10, "0": 0} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "M", "-1", "1.5M", "1T", "iB", "12iB"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) accepted", s)
		}
	}
	if n := len(TypeNames()); n < 30 {
		t.Errorf("%d types, want at least 30", n)
	}
	for typ, name := range map[string]string{"go": "x.go", "py": "x.pyi", "js": "x.mjs", "python": "x.py", "make": "Makefile", "c": "x.h", "cpp": "x.cpp", "rust": "lib.rs", "ts": "a.tsx"} {
		f, err := newTypeFilter([]string{typ})
		if err != nil || !f.match(name) {
			t.Errorf("type %s does not match %s (%v)", typ, name, err)
		}
	}
	if f, _ := newTypeFilter([]string{"go"}); f.match("x.py") {
		t.Error("go matches x.py")
	}
}

// TestGlobFindSymlinks: links are reported as themselves, not
// directories, with their own size; nothing below a link to a directory
// is listed, in the walk or in the pattern's literal directories; a
// skipped directory is not entered through the pattern either.
func TestGlobFindSymlinks(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		"real/f.txt":     "ffff",
		"real/sub/g.txt": "g",
		"state/journal":  "j",
		"lf":             "->real/f.txt",
		"ld":             "->real",
		"ls":             "->state",
		"dangling":       "->nowhere",
		"real/up":        "->..",
	})
	skip := []string{"state"}
	tests := []struct {
		name string
		opts GlobOptions
		want []string
	}{
		{"all", GlobOptions{Pattern: "**", SkipDirs: skip},
			[]string{"dangling", "ld", "lf", "ls", "real/", "real/f.txt", "real/sub/", "real/sub/g.txt", "real/up"}},
		{"files only keeps links", GlobOptions{Pattern: "**", FilesOnly: true, SkipDirs: skip},
			[]string{"dangling", "ld", "lf", "ls", "real/f.txt", "real/sub/g.txt", "real/up"}},
		{"through a link", GlobOptions{Pattern: "ld/*", SkipDirs: skip}, []string{}},
		{"through a link, deeper", GlobOptions{Pattern: "ld/sub/*", SkipDirs: skip}, []string{}},
		{"through a nested link", GlobOptions{Pattern: "real/up/real/*", SkipDirs: skip}, []string{}},
		{"the link itself", GlobOptions{Pattern: "ld/**", SkipDirs: skip}, []string{"ld"}},
		{"into a skipped dir", GlobOptions{Pattern: "state/*", SkipDirs: skip}, []string{}},
		{"into a skipped dir, itself", GlobOptions{Pattern: "state/**", SkipDirs: skip}, []string{}},
		{"through a link to it", GlobOptions{Pattern: "ls/*", SkipDirs: skip}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, globPaths(t, dir, tt.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	res, err := Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: "l*", Metadata: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Path))
		if err != nil || e.IsDir || e.Size != fi.Size() || !e.ModTime.Equal(fi.ModTime()) {
			t.Errorf("%s: dir %v size %d time %v, want the link's own (%v)", e.Path, e.IsDir, e.Size, e.ModTime, err)
		}
	}
	fres, err := Find(context.Background(), openRoot(t, dir), ".", FindOptions{Pattern: "*", SkipDirs: skip})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, e := range fres.Entries {
		got = append(got, e.Path)
	}
	want := []string{"dangling", "ld", "lf", "ls", "real", "real/f.txt", "real/sub", "real/sub/g.txt", "real/up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("find (-want +got):\n%s", diff)
	}
}

// TestTypesHaveRipgrepGlobs: a type selects what rg's type of that name
// selects (fsplane's may select more, from newer ripgrep tables): each
// name here, and where rg is installed a name made from each glob of
// rg --type-list for the types fsplane knows.
func TestTypesHaveRipgrepGlobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ   string
		names []string
	}{
		{"sh", []string{"x.sh", ".bashrc", "bashrc", "x.bashrc", ".profile", "profile", ".login", ".logout", ".tcshrc", "zshrc", "x.cshrc", "x.kshrc", "bash_profile"}},
		{"ruby", []string{"x.rb", "x.rbw", "config.ru", "Gemfile", "Rakefile", ".irbrc", "x.gemspec"}},
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		out, err := exec.Command(rg, "--no-config", "--type-list").Output()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			typ, globs, ok := strings.Cut(line, ": ")
			if _, known := fileTypes[typ]; !ok || !known {
				continue
			}
			var names []string
			for _, g := range strings.Split(globs, ", ") {
				if !strings.Contains(g, "[") {
					names = append(names, strings.ReplaceAll(g, "*", "x"))
				}
			}
			tests = append(tests, struct {
				typ   string
				names []string
			}{typ, names})
		}
	}
	for _, tt := range tests {
		f, err := newTypeFilter([]string{tt.typ})
		if err != nil {
			t.Fatal(err)
		}
		var missed []string
		for _, n := range tt.names {
			if !f.match(n) {
				missed = append(missed, n)
			}
		}
		if diff := cmp.Diff([]string(nil), missed); diff != "" {
			t.Errorf("type %s does not match (-want +got):\n%s", tt.typ, diff)
		}
	}
}

// TestGlobMetadataOfUnreadable: a file the server may not read still has
// a size and a modification time (its directory entry's, as ls shows
// them); a glob reported 0 and the zero time, as if it were an empty
// file from year 1, having tried to open it to ask. Runs unprivileged
// only (root opens everything).
func TestGlobMetadataOfUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := makeTree(t, map[string]string{"ok.txt": "abc", "secret.env": "0123456789"})
	mt := time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, name := range []string{"ok.txt", "secret.env"} {
		os.Chtimes(filepath.Join(dir, name), mt, mt)
	}
	if err := os.Chmod(filepath.Join(dir, "secret.env"), 0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pattern string
		want    []GlobEntry
	}{
		{"*", []GlobEntry{{Path: "ok.txt", Name: "ok.txt", Size: 3, ModTime: mt}, {Path: "secret.env", Name: "secret.env", Size: 10, ModTime: mt}}},
		{"secret.env", []GlobEntry{{Path: "secret.env", Name: "secret.env", Size: 10, ModTime: mt}}},
	}
	for _, tt := range tests {
		res, err := Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: tt.pattern, Metadata: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, res.Entries, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.pattern, diff)
		}
	}
}

// TestGlobBraceBounds: patterns at the bounds are searched.
func TestGlobBraceBounds(t *testing.T) {
	t.Parallel()
	dir := globTree(t)
	for _, p := range []string{
		"**/" + strings.Repeat("{", 10) + "main.go" + strings.Repeat("}", 10),
		"{" + strings.Repeat("x,", 254) + "main.go}",
		`\{\{\{\{\{\{\{\{\{\{\{*`, // escaped braces are no alternatives
	} {
		if _, err := Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: p}); err != nil {
			t.Errorf("Glob(%q): %v", p, err)
		}
	}
	res, err := Glob(context.Background(), openRoot(t, dir), ".", GlobOptions{Pattern: "{" + strings.Repeat("x,", 254) + "main.go}"})
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Path != "main.go" {
		t.Errorf("255 alternatives: %+v, %v", res, err)
	}
}
