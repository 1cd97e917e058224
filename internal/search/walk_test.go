package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFilesFiltering(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		"a.go":               "",
		"a-b.go":             "",
		"a/b.go":             "",
		"a/z.txt":            "",
		".hidden/x.go":       "",
		".dot.go":            "",
		".git/config":        "",
		".gitignore":         "*.log\nbuild/\n!keep.log\n",
		"x.log":              "",
		"keep.log":           "",
		"build/out.go":       "",
		"sub/.ignore":        "secret.go\n",
		"sub/secret.go":      "",
		"sub/public.go":      "",
		"sub/deep/secret.go": "",
		"empty/":             "",
	})
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"defaults", Options{RespectIgnore: true},
			[]string{"a/b.go", "a/z.txt", "a-b.go", "a.go", "keep.log", "sub/public.go"}},
		{"hidden", Options{RespectIgnore: true, Hidden: true},
			[]string{".dot.go", ".gitignore", ".hidden/x.go", "a/b.go", "a/z.txt", "a-b.go", "a.go", "keep.log", "sub/.ignore", "sub/public.go"}},
		{"no ignore", Options{},
			[]string{"a/b.go", "a/z.txt", "a-b.go", "a.go", "build/out.go", "keep.log", "sub/deep/secret.go", "sub/public.go", "sub/secret.go", "x.log"}},
		{"glob include", Options{Globs: []string{"*.go"}},
			[]string{".dot.go", "a/b.go", "a-b.go", "a.go", "build/out.go", "sub/deep/secret.go", "sub/public.go", "sub/secret.go"}},
		{"glob exclude dir", Options{Globs: []string{"*.go", "!sub/"}},
			[]string{".dot.go", "a/b.go", "a-b.go", "a.go", "build/out.go"}},
		{"anchored glob", Options{Globs: []string{"/a.go", "a/*"}},
			[]string{"a/b.go", "a/z.txt", "a.go"}},
		{"include and exclude", Options{Include: []string{"*.go"}, Exclude: []string{"secret.go"}},
			[]string{".dot.go", "a/b.go", "a-b.go", "a.go", "build/out.go", "sub/public.go"}},
		{"type", Options{Types: []string{"txt"}}, []string{"a/z.txt"}},
		// With GlobPrefix (rg's PATH, relative to the current directory)
		// a glob with a '/' matches GlobPrefix+rel, as rg -g does.
		{"glob prefix", Options{Globs: []string{"src/a/*", "src/*.go"}, GlobPrefix: "src/"},
			[]string{".dot.go", "a/b.go", "a/z.txt", "a-b.go", "a.go"}},
		{"glob prefix, not anchored at the start", Options{Globs: []string{"a/*"}, GlobPrefix: "src/"}, []string{}},
		{"glob prefix, excluded", Options{Globs: []string{"!src/a", "!src/sub/**"}, GlobPrefix: "src/"},
			[]string{"a-b.go", "a.go", "build/out.go", "keep.log", "x.log"}},
		{"glob prefix, names", Options{Globs: []string{"*.txt"}, GlobPrefix: "../x/"}, []string{"a/z.txt"}},
		{"glob prefix, ignore files unchanged", Options{RespectIgnore: true, Globs: []string{"!src/sub/deep"}, GlobPrefix: "src/"},
			[]string{"a/b.go", "a/z.txt", "a-b.go", "a.go", "keep.log", "sub/public.go"}},
		{"depth", Options{MaxDepth: 1}, []string{"a-b.go", "a.go", "keep.log", "x.log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, workers := range []int{1, 4} {
				tt.opts.Workers = workers
				if diff := cmp.Diff(tt.want, listFiles(t, dir, ".", tt.opts)); diff != "" {
					t.Errorf("workers=%d (-want +got):\n%s", workers, diff)
				}
			}
		})
	}
}

func TestFilesParentIgnoreAndSkipDirs(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		".gitignore":         "*.tmp\n/sub/only-top.go\n",
		"sub/a.go":           "",
		"sub/b.tmp":          "",
		"sub/only-top.go":    "",
		"sub/state/journal":  "",
		"sub/inner/only.tmp": "",
	})
	got := listFiles(t, dir, "sub", Options{RespectIgnore: true, SkipDirs: []string{"sub/state"}})
	if diff := cmp.Diff([]string{"a.go"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWalkSymlinks(t *testing.T) {
	t.Parallel()
	outside := makeTree(t, map[string]string{"secret.txt": "needle outside\n", "d/f.txt": "needle outside dir\n"})
	dir := makeTree(t, map[string]string{
		"real/f.txt":        "needle\n",
		"link-in.txt":       "->real/f.txt",
		"link-out.txt":      "->" + filepath.Join(outside, "secret.txt"),
		"link-rel-out.txt":  "->../../../../../../../" + filepath.Join(outside, "secret.txt"),
		"linkdir":           "->real",
		"linkdir-out":       "->" + filepath.Join(outside, "d"),
		"dangling.txt":      "->nowhere",
		"real/loop":         "->..",
		"real/sub/deep.txt": "needle deep\n",
	})
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		// As rg without -L: links met while walking are skipped, to
		// files as to directories.
		{"no follow", Options{}, []string{"real/f.txt", "real/sub/deep.txt"}},
		{"follow", Options{FollowLinks: true}, []string{
			"link-in.txt",
			"linkdir/f.txt", "linkdir/sub/deep.txt",
			"real/f.txt", "real/sub/deep.txt",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, listFiles(t, dir, ".", tt.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			lines, res := grepLines(t, dir, ".", Options{Pattern: "needle", FollowLinks: tt.opts.FollowLinks})
			if res.FilesSearched != len(tt.want) {
				t.Errorf("searched %d files, want %d: %v", res.FilesSearched, len(tt.want), lines)
			}
			for _, l := range lines {
				if l == "link-out.txt:1:needle outside" || l == "linkdir-out/f.txt:1:needle outside dir" {
					t.Errorf("read outside the root: %s", l)
				}
			}
		})
	}
	// A link named as the start is followed (its caller checked it).
	lines, _ := grepLines(t, dir, "link-in.txt", Options{Pattern: "needle"})
	if diff := cmp.Diff([]string{":1:needle"}, lines); diff != "" {
		t.Errorf("named link (-want +got):\n%s", diff)
	}
	lines, _ = grepLines(t, dir, "linkdir", Options{Pattern: "needle"})
	if diff := cmp.Diff([]string{"f.txt:1:needle", "sub/deep.txt:1:needle deep"}, lines); diff != "" {
		t.Errorf("named link to a directory (-want +got):\n%s", diff)
	}
}

// TestFollowLinksRefusesSkipDirs: a followed link could lead into a
// skipped directory by a path the walk never compares.
func TestFollowLinksRefusesSkipDirs(t *testing.T) {
	t.Parallel()
	opts := Options{Pattern: "x", FollowLinks: true, SkipDirs: []string{"state"}}
	if _, err := Compile(opts); err == nil {
		t.Error("Compile accepted FollowLinks with SkipDirs")
	}
	dir := makeTree(t, map[string]string{"a.txt": "x\n"})
	if _, err := Files(t.Context(), openRoot(t, dir), ".", opts, func(string) error { return nil }); err == nil {
		t.Error("Files accepted FollowLinks with SkipDirs")
	}
}

func TestWalkDeterministicOrder(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, d := range []string{"a", "a-b", "a.b", "b", "a/x", "a/x-y", "c/d/e"} {
		for _, f := range []string{"1", "2", "10", "a", "B"} {
			files[d+"/"+f] = "hit\n"
		}
	}
	dir := makeTree(t, files)
	want := listFiles(t, dir, ".", Options{Workers: 1})
	for i := range 20 {
		got := listFiles(t, dir, ".", Options{Workers: 1 + i%5})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("order changed (-want +got):\n%s", diff)
		}
		lines, _ := grepLines(t, dir, ".", Options{Pattern: "hit", Workers: 1 + i%5})
		if len(lines) != len(want) {
			t.Fatalf("grep found %d, want %d", len(lines), len(want))
		}
		for k, l := range lines {
			if l != want[k]+":1:hit" {
				t.Fatalf("grep line %d = %q, want %q", k, l, want[k]+":1:hit")
			}
		}
	}
	// Path order is component-wise: a/... before a-b.
	if want[0] != "a/1" || want[len(want)-1] != "c/d/e/a" {
		t.Errorf("unexpected order: %v", want)
	}
}

func TestWalkUnreadableDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := makeTree(t, map[string]string{"ok/a.txt": "x\n", "locked/b.txt": "x\n"})
	os.Chmod(filepath.Join(dir, "locked"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	st, err := Files(t.Context(), openRoot(t, dir), ".", Options{}, func(string) error { return nil })
	if err != nil || st.ErrorCount != 1 {
		t.Errorf("ErrorCount = %d, err = %v; want 1 error", st.ErrorCount, err)
	}
}

// TestWalkStopsBetweenEntries: a walk whose context is cancelled while a
// directory's entries are being judged judges no more of them.
func TestWalkStopsBetweenEntries(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("f%03d.txt", i)] = ""
	}
	dir := makeTree(t, files)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int32
	wo := &walkOptions{workers: 1, filter: func(rel, name string, isDir bool) (bool, bool) {
		calls.Add(1)
		cancel()
		return true, isDir
	}}
	_, _, err := walkTree(ctx, openRoot(t, dir), ".", wo, nil, func(*node[struct{}]) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("filter ran %d times, want 1 (it cancelled)", n)
	}
}

// TestWalkErrorsInPathOrder: the directories a search could not read are
// counted and named as its files are, in path order and up to where the
// search stopped, so that the same search says the same: workers list
// directories ahead of the emission, and their errors were counted as
// they came, beyond the stop too (a page of max_results 3 said 13, 26 or
// 40 unreadable, and named any of them first). Runs unprivileged only.
func TestWalkErrorsInPathOrder(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%02d/x.txt", i)] = "hit\n"
		files[fmt.Sprintf("d%02d/locked/y.txt", i)] = "hit\n"
	}
	dir := makeTree(t, files)
	var locked []string
	for i := range 40 {
		locked = append(locked, fmt.Sprintf("d%02d/locked", i))
		os.Chmod(filepath.Join(dir, locked[i]), 0)
	}
	t.Cleanup(func() {
		for _, l := range locked {
			os.Chmod(filepath.Join(dir, l), 0o755)
		}
	})
	tests := []struct {
		max       int
		wantCount int // d00/locked .. d03/locked come before d03/x.txt, the match one more
		wantPaths []string
	}{
		{3, 4, locked[:4]},
		{0, 40, locked},
	}
	for _, tt := range tests {
		for range 10 {
			_, res := grepLines(t, dir, ".", Options{Pattern: "hit", MaxResults: tt.max, Workers: 4})
			var paths []string
			for _, e := range res.Errors {
				paths = append(paths, e.Path)
			}
			if diff := cmp.Diff(tt.wantPaths, paths); diff != "" || res.ErrorCount != tt.wantCount {
				t.Fatalf("max %d: ErrorCount %d, want %d; errors (-want +got):\n%s", tt.max, res.ErrorCount, tt.wantCount, diff)
			}
		}
	}
}
