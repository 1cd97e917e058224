package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
)

func TestGrep(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	e := newEnv(t, map[string]string{
		"src/a.go":       "package a\n\nfunc Hello() {}\n// hello again\n",
		"src/b.py":       "def hello():\n    pass\n",
		"docs/x.md":      "Hello docs\n",
		"many.txt":       many.String(),
		"ctx.txt":        "1\n2\nmatch one\n4\nmatch two\n6\n7\n8\n9\nmatch three\n",
		"vendor/skip.go": "func Hello() {}\n",
		".gitignore":     "vendor/\n",
		".hidden/h.go":   "func Hello() {}\n",
		"bin.dat":        "Hello\x00",
	}, envOptions{})

	r := e.ok("grep", args("pattern", "Hello"))
	wantContains(t, r.text, "2 matches in 2 files under ", "docs/x.md:1:Hello docs\n", "src/a.go:3:func Hello() {}\n")
	for _, no := range []string{"vendor", ".hidden", "bin.dat"} {
		if strings.Contains(r.text, no) {
			t.Fatalf("%s searched:\n%s", no, r.text)
		}
	}
	m := r.out["matches"].([]any)[0].(map[string]any)
	if m["path"] != "docs/x.md" || m["line"] != 1.0 || m["text"] != "Hello docs" {
		t.Fatal(m)
	}

	t.Run("options", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("grep", args("pattern", "hello", "case_insensitive", true, "path", "src"))
		wantContains(t, r.text, "3 matches in 2 files under src (2 files searched):\n", "src/b.py:1:def hello():")
		r = e.ok("grep", args("pattern", "hello", "case_insensitive", true, "glob", "*.py"))
		if r.out["files_matched"] != 1.0 || !strings.Contains(r.text, "src/b.py:1:") {
			t.Fatal(r.text)
		}
		r = e.ok("grep", args("pattern", "hello", "case_insensitive", true, "glob", "!*.py", "path", "src"))
		if strings.Contains(r.text, "b.py") || r.out["files_matched"] != 1.0 {
			t.Fatal(r.text)
		}
		r = e.ok("grep", args("pattern", "Hello", "type", "go"))
		if r.out["files_matched"] != 1.0 || !strings.Contains(r.text, "src/a.go") {
			t.Fatal(r.text)
		}
		r = e.ok("grep", args("pattern", "Hello()", "fixed_strings", true))
		wantContains(t, r.text, "src/a.go:3:")
		r = e.ok("grep", args("pattern", "Hello", "path", "src/a.go"))
		wantContains(t, r.text, "src/a.go:3:")
	})
	t.Run("context", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("grep", args("pattern", "match", "path", "ctx.txt", "context", 1))
		want := "ctx.txt-2-2\nctx.txt:3:match one\nctx.txt-4-4\nctx.txt:5:match two\nctx.txt-6-6\n--\nctx.txt-9-9\nctx.txt:10:match three\n"
		wantContains(t, r.text, want)
	})
	t.Run("max_results", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("grep", args("pattern", "hit", "path", "many.txt"))
		if len(r.out["matches"].([]any)) != 100 || r.out["truncated"] != true {
			t.Fatal(r.out["truncated"])
		}
		wantContains(t, r.text, "[More matches exist beyond these 100")
		r = e.ok("grep", args("pattern", "hit", "path", "many.txt", "max_results", 5))
		if len(r.out["matches"].([]any)) != 5 || !strings.Contains(r.text, "many.txt:5:hit 5\n") {
			t.Fatal(r.text)
		}
	})
	t.Run("no match", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("grep", args("pattern", "zebra"))
		wantContains(t, r.text, `No matches for "zebra" in `)
		if len(r.out["matches"].([]any)) != 0 {
			t.Fatal(r.out)
		}
	})
	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.fail("grep", args("pattern", "func("), "bad_request").text, "fixed_strings")
		e.fail("grep", args("pattern", "x", "type", "nosuchtype"), "bad_request")
		e.fail("grep", args("pattern", "x", "path", "nowhere"), "not_found")
		e.fail("grep", args("pattern", "x", "path", "/etc"), "outside_root")
		e.fail("grep", args("pattern", "x", "context", 99), "bad_request")
		e.fail("grep", args("pattern", ""), "bad_request")
	})
}

func TestGlob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"a_test.go":            "",
		"pkg/b_test.go":        "",
		"pkg/b.go":             "",
		"pkg/sub/c_test.go":    "",
		"cmd/tool/main.go":     "",
		"node_modules/x.js":    "",
		".gitignore":           "node_modules/\n",
		"web/src/app.ts":       "",
		"web/src/deep/util.ts": "",
	}, envOptions{})

	r := e.ok("glob", args("pattern", "*_test.go"))
	want := "a_test.go\npkg/b_test.go\npkg/sub/c_test.go\n"
	wantContains(t, r.text, `3 entries match "*_test.go" under `, want)
	if len(r.out["entries"].([]any)) != 3 {
		t.Fatal(r.out)
	}

	t.Run("paths", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.ok("glob", args("pattern", "cmd/*/main.go")).text, "cmd/tool/main.go\n")
		r := e.ok("glob", args("pattern", "src/**/*.ts", "path", "web"))
		wantContains(t, r.text, "web/src/app.ts\nweb/src/deep/util.ts\n")
		r = e.ok("glob", args("pattern", "sub", "path", "pkg"))
		wantContains(t, r.text, "pkg/sub/\n")
		if r.out["entries"].([]any)[0].(map[string]any)["is_dir"] != true {
			t.Fatal(r.out)
		}
		if strings.Contains(e.ok("glob", args("pattern", "*.js")).text, "node_modules") {
			t.Fatal("gitignored entries listed")
		}
		if strings.Contains(e.ok("glob", args("pattern", "*")).text, ".gitignore") {
			t.Fatal("hidden entries listed")
		}
		wantContains(t, e.ok("glob", args("pattern", ".gitignore")).text, "1 entry matches \".gitignore\" under .:\n.gitignore\n")
	})
	t.Run("none", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.ok("glob", args("pattern", "*.rs")).text, `No files match "*.rs"`)
	})
	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		e.fail("glob", args("pattern", "[", "path", "pkg"), "bad_request")
		e.fail("glob", args("pattern", "*", "path", "missing"), "not_found")
		e.fail("glob", args("pattern", "*", "path", "pkg/b.go"), "invalid_target")
		e.fail("glob", args("pattern", "*", "path", "/"), "outside_root")
	})
}

func TestGrepLargeFile(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("filler line\n", 100_000) + "needle here\n" // 1.2 MB
	e := newEnv(t, map[string]string{"big.log": big, "small.txt": "needle\n"}, envOptions{})
	r := e.ok("grep", args("pattern", "needle"))
	wantContains(t, r.text, "small.txt:1:needle", "[1 file over 1 MiB not searched; pass one as path to search it.]")
	// Named as the path, the file is searched whatever its size.
	r = e.ok("grep", args("pattern", "needle", "path", "big.log"))
	wantContains(t, r.text, "big.log:100001:needle here\n")
}

// countingEngine counts the greps that reach the engine.
type countingEngine struct {
	placeEngine
	greps atomic.Int32
}

func (c *countingEngine) Grep(ctx context.Context, req ops.GrepRequest) (*ops.GrepResult, error) {
	c.greps.Add(1)
	return c.placeEngine.Grep(ctx, req)
}

// TestGrepRunsOnce: one grep call is one search, also when the path names
// a file over the tree search's size cap.
func TestGrepRunsOnce(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("filler line\n", 100_000) + "needle here\n" // 1.2 MB
	root, eng := newEngine(t, map[string]string{"big.log": big, "dir/big.log": big}, ops.Options{})
	tests := []struct {
		name, path, want string
	}{
		{name: "large file named", path: "big.log", want: "big.log:100001:needle here\n"},
		{name: "large file in a tree", path: "dir", want: "[1 file over 1 MiB not searched; pass one as path to search it.]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ce := &countingEngine{placeEngine: eng}
			pl := place{
				eng:     ce,
				path:    func(_, p string) (string, error) { return filepath.Join(root, p), nil },
				display: func(abs string) string { rel, _ := filepath.Rel(root, abs); return rel },
				base:    ".",
			}
			text, _, err := grepIn(context.Background(), pl, grepArgs{Pattern: "needle", Path: tt.path})
			if err != nil {
				t.Fatal(err)
			}
			wantContains(t, text, tt.want)
			if n := ce.greps.Load(); n != 1 {
				t.Fatalf("%d greps for one call", n)
			}
		})
	}
}

func TestTooLargeHint(t *testing.T) {
	t.Parallel()
	// One 17 MiB line: over what one read returns, whatever the range.
	e := newEnv(t, map[string]string{"huge.txt": strings.Repeat("a", 17<<20)}, envOptions{})
	for _, call := range []map[string]any{args("path", "huge.txt"), args("path", "huge.txt", "line_from", 1, "line_to", 1)} {
		r := e.fail("read", call, "too_large")
		wantContains(t, r.text, "Hint: too large for this tool: read returns at most 16 MiB of lines per call (ask for fewer)")
		if strings.Contains(r.text, "download") {
			t.Fatalf("hint names another front's route: %s", r.text)
		}
	}
	// A file over 16 MiB is read by range.
	e.write("big.log", strings.Repeat("a log line\n", 2<<20))
	r := e.ok("read", args("path", "big.log", "line_from", 2097151))
	wantContains(t, r.text, "big.log — lines 2097151-2097152 of 2097152", "2097152\ta log line\n")
	// Edits take files up to 256 MiB whole.
	g, err := os.Create(e.path("huger.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Truncate(257 << 20); err != nil {
		t.Fatal(err)
	}
	g.Close()
	e.fail("edit", args("path", "huger.txt", "old_text", "a", "new_text", "b"), "too_large")
}

// TestNamesWithControlCharacters: a file name with a newline cannot add a
// line of its own making to a grep's or a listing's text: it is shown
// quoted, Go-style. The structured output keeps the name as it is.
func TestNamesWithControlCharacters(t *testing.T) {
	t.Parallel()
	evil := "x\na.go:1:fake match"
	e := newEnv(t, map[string]string{evil: "real match\n", "ok.txt": "plain\n"}, envOptions{})
	quoted := strconv.Quote(evil)
	for _, r := range []result{
		e.ok("grep", args("pattern", "match")),
		e.ok("list", args("path", ".")),
		e.ok("glob", args("pattern", "*")),
	} {
		for _, line := range strings.Split(r.text, "\n") {
			if strings.HasPrefix(line, "a.go:1:fake") {
				t.Errorf("a name made a line of its own:\n%s", r.text)
			}
		}
		wantContains(t, r.text, quoted)
	}
	m := e.ok("grep", args("pattern", "match")).out["matches"].([]any)[0].(map[string]any)
	if m["path"] != evil {
		t.Errorf("structured path = %q, want the name as it is", m["path"])
	}
}

// TestGrepCountsWhatItShows: files_matched and "N matches in M files"
// count the files the returned matches are in, also when max_results cuts
// the answer short; multiline lets a match span lines, and without it the
// hint names that parameter; skipped binary files are told.
func TestGrepCountsWhatItShows(t *testing.T) {
	t.Parallel()
	files := map[string]string{"bin.dat": "needle\x00"}
	for i := range 5 {
		files[fmt.Sprintf("f%d.txt", i)] = "needle\nneedle\n"
	}
	e := newEnv(t, files, envOptions{})
	tests := []struct {
		max, files int
		text       string
	}{
		{2, 1, "2 matches in 1 file under "},
		{3, 2, "3 matches in 2 files under "},
		{100, 5, "10 matches in 5 files under "},
	}
	for _, tt := range tests {
		r := e.ok("grep", args("pattern", "needle", "max_results", tt.max))
		if r.out["files_matched"] != float64(tt.files) || !strings.Contains(r.text, tt.text) {
			t.Errorf("max_results %d: files_matched %v, text:\n%s", tt.max, r.out["files_matched"], r.text)
		}
		if r.out["files_skipped_binary"] != 1.0 || !strings.Contains(r.text, "[1 binary file not searched: grep searches text only.]") {
			t.Errorf("binary skip not told: %v\n%s", r.out["files_skipped_binary"], r.text)
		}
	}
	r := e.ok("grep", args("pattern", `needle\nneedle`, "multiline", true, "path", "f0.txt"))
	wantContains(t, r.text, "f0.txt:1:needle\nf0.txt:2:needle\n")
	r = e.fail("grep", args("pattern", `needle\nneedle`, "path", "f0.txt"), "bad_request")
	wantContains(t, r.text, "unless you turn on multiline")
}
