package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/testenv"
)

func grepTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"a.go":            "package a\n\nfunc Handler() {}\n// TODO: more\n",
		"b.py":            "def handler():\n    pass\n",
		"notes.txt":       "1\n2\nneedle three\n4\n5\n6\n7\nneedle eight\n9\n",
		"sub/c.go":        "package sub\nvar ErrNotExist = 1\n",
		".hidden/d.go":    "package hidden // needle\n",
		".gitignore":      "ignored/\n",
		"ignored/e.txt":   "needle ignored\n",
		"multi.txt":       "begin\nmiddle\nend\n",
		"big.txt":         strings.Repeat("filler\n", 200) + "needle big\n",
		"bin.dat":         "needle\x00",
		"-dash/file.txt":  "needle dash\n",
		"space dir/f.txt": "needle space\n",
		"bom.txt":         "\ufefftop\nworld\n",
	}
	testenv.WriteTree(t, dir, files)
	return dir
}

func TestGrepCommand(t *testing.T) {
	t.Parallel()
	dir := grepTree(t)
	tests := []struct {
		name string
		args []string
		out  string
		exit int
	}{
		{"literal", []string{"grep", "needle"}, "-dash/file.txt:1:needle dash\nbig.txt:201:needle big\nnotes.txt:3:needle three\nnotes.txt:8:needle eight\nspace dir/f.txt:1:needle space\n", 0},
		{"path given", []string{"grep", "needle", "notes.txt", "sub"}, "notes.txt:3:needle three\nnotes.txt:8:needle eight\n", 0},
		{"dot path", []string{"grep", "ErrNotExist", "."}, "./sub/c.go:2:var ErrNotExist = 1\n", 0},
		{"hidden and no-ignore", []string{"grep", "--hidden", "--no-ignore", "needle", ".hidden", "ignored"}, ".hidden/d.go:1:package hidden // needle\nignored/e.txt:1:needle ignored\n", 0},
		{"ignore case", []string{"grep", "-i", "HANDLER"}, "a.go:3:func Handler() {}\nb.py:1:def handler():\n", 0},
		{"type", []string{"grep", "-t", "py", "-i", "handler"}, "b.py:1:def handler():\n", 0},
		{"glob", []string{"grep", "-g", "*.go", "-g", "!sub/**", "package"}, "a.go:1:package a\n", 0},
		{"fixed", []string{"grep", "-F", "Handler()"}, "a.go:3:func Handler() {}\n", 0},
		{"glob alternatives", []string{"grep", "-l", "-i", "-g", "*.{py,go}", "handler"}, "a.go\nb.py\n", 0},
		{"glob alternatives, nested", []string{"grep", "-l", "-g", "{big,{notes,x}}.txt", "needle"}, "big.txt\nnotes.txt\n", 0},
		{"glob alternatives excluded", []string{"grep", "-l", "-g", "!{-dash,space dir}/**", "needle"}, "big.txt\nnotes.txt\n", 0},
		{"glob alternatives, files", []string{"files", "-g", "*.{py,go}", "-g", "!sub"}, "a.go\nb.py\n", 0},
		{"glob unclosed brace", []string{"grep", "-g", "*.{go", "package"}, "", 2},
		{"binary file named", []string{"grep", "needle", "bin.dat", "notes.txt"}, "bin.dat: binary file matches (found \"\\0\" byte around offset 6)\nnotes.txt:3:needle three\nnotes.txt:8:needle eight\n", 0},
		{"binary file named, count", []string{"grep", "-c", "needle", "bin.dat"}, "bin.dat:1\n", 0},
		{"binary file named, no match", []string{"grep", "zzzzqqq", "bin.dat"}, "", 1},
		{"regexp flags", []string{"grep", "-e", "TODO", "-e", "^def", "a.go", "b.py"}, "a.go:4:// TODO: more\nb.py:1:def handler():\n", 0},
		{"context", []string{"grep", "-C", "1", "needle", "notes.txt"}, "notes.txt-2-2\nnotes.txt:3:needle three\nnotes.txt-4-4\n--\nnotes.txt-7-7\nnotes.txt:8:needle eight\nnotes.txt-9-9\n", 0},
		{"after merges", []string{"grep", "-A", "5", "needle", "notes.txt"}, "notes.txt:3:needle three\nnotes.txt-4-4\nnotes.txt-5-5\nnotes.txt-6-6\nnotes.txt-7-7\nnotes.txt:8:needle eight\nnotes.txt-9-9\n", 0},
		// For each side the last of -A, -B and -C wins, an explicit 0
		// too (as in GNU grep and rg 14; rg 13 let -A or -B drop -C).
		{"context, then no after", []string{"grep", "-C", "1", "-A", "0", "needle", "notes.txt"}, "notes.txt-2-2\nnotes.txt:3:needle three\n--\nnotes.txt-7-7\nnotes.txt:8:needle eight\n", 0},
		{"context, then no before", []string{"grep", "-C1", "-B0", "needle", "notes.txt"}, "notes.txt:3:needle three\nnotes.txt-4-4\n--\nnotes.txt:8:needle eight\nnotes.txt-9-9\n", 0},
		{"after, then context", []string{"grep", "-A", "3", "-C", "1", "needle", "notes.txt"}, "notes.txt-2-2\nnotes.txt:3:needle three\nnotes.txt-4-4\n--\nnotes.txt-7-7\nnotes.txt:8:needle eight\nnotes.txt-9-9\n", 0},
		{"context, then after", []string{"grep", "--context=1", "--after-context=2", "needle", "notes.txt"}, "notes.txt-2-2\nnotes.txt:3:needle three\nnotes.txt-4-4\nnotes.txt-5-5\n--\nnotes.txt-7-7\nnotes.txt:8:needle eight\nnotes.txt-9-9\n", 0},
		{"multiline", []string{"grep", "-U", `begin\nmid`}, "multi.txt:1:begin\nmulti.txt:2:middle\n", 0},
		{"byte order mark", []string{"grep", "-e", "^top", "-e", "top$", "bom.txt"}, "bom.txt:1:top\n", 0},
		{"byte order mark multiline", []string{"grep", "-U", `^top\nworld`, "bom.txt"}, "bom.txt:1:top\nbom.txt:2:world\n", 0},
		{"max filesize", []string{"grep", "--max-filesize", "1K", "needle", "big.txt", "notes.txt"}, "notes.txt:3:needle three\nnotes.txt:8:needle eight\n", 0},
		{"whole words", []string{"grep", "-w", "Handler"}, "a.go:3:func Handler() {}\n", 0},
		{"whole words, case folded", []string{"grep", "-w", "-i", "handler"}, "a.go:3:func Handler() {}\nb.py:1:def handler():\n", 0},
		{"whole words, fixed", []string{"grep", "-w", "-F", "Handler()"}, "a.go:3:func Handler() {}\n", 0},
		{"whole words, fixed, inside a word", []string{"grep", "-w", "-F", "andler()"}, "", 1},
		{"part of a word", []string{"grep", "--word-regexp", "andle"}, "", 1},
		{"files with matches", []string{"grep", "-l", "needle"}, "-dash/file.txt\nbig.txt\nnotes.txt\nspace dir/f.txt\n", 0},
		{"files with matches, a file", []string{"grep", "--files-with-matches", "needle", "notes.txt"}, "notes.txt\n", 0},
		{"count", []string{"grep", "-c", "needle"}, "-dash/file.txt:1\nbig.txt:1\nnotes.txt:2\nspace dir/f.txt:1\n", 0},
		{"count ignores context", []string{"grep", "--count", "-C", "1", "needle", "notes.txt"}, "notes.txt:2\n", 0},
		{"count wins over files", []string{"grep", "-l", "-c", "needle", "notes.txt"}, "notes.txt:2\n", 0},
		{"count multiline", []string{"grep", "-c", "-U", `begin\nmid|end`}, "multi.txt:2\n", 0},
		{"count multiline, matches", []string{"grep", "-c", "-U", `d|e\n`, "multi.txt"}, "multi.txt:4\n", 0},
		{"count multiline, lines", []string{"grep", "-c", "-U", `d`, "multi.txt"}, "multi.txt:2\n", 0},
		{"count none", []string{"grep", "-c", "zzzzqqq"}, "", 1},
		// -H and --no-heading are what fsplane grep always does.
		{"with filename", []string{"grep", "-H", "needle", "notes.txt"}, "notes.txt:3:needle three\nnotes.txt:8:needle eight\n", 0},
		{"with filename and no heading", []string{"grep", "--with-filename", "--no-heading", "-e", "needle", "notes.txt", "sub"},
			"notes.txt:3:needle three\nnotes.txt:8:needle eight\n", 0},
		{"no heading, count", []string{"grep", "--no-heading", "-H", "-c", "needle", "notes.txt"}, "notes.txt:2\n", 0},
		{"only matching refused", []string{"grep", "-o", "needle", "notes.txt"}, "", 2},
		{"with filename off refused", []string{"grep", "--with-filename=false", "needle", "notes.txt"}, "", 2},
		{"no match", []string{"grep", "zzzzqqq"}, "", 1},
		// As rg: no PATH, and no file of the current directory to
		// search, is an error (rg: "No files were searched"; exit 2
		// with --no-messages too); with a PATH it is no match.
		{"nothing searched", []string{"grep", "-t", "rust", "x"}, "", 2},
		{"nothing searched, PATH given", []string{"grep", "-t", "rust", "x", "."}, "", 1},
		{"nothing searched, files", []string{"files", "-t", "rust"}, "", 1},
		{"bad regex", []string{"grep", "(x"}, "", 2},
		{"missing path", []string{"grep", "x", "nope"}, "", 2},
		{"files", []string{"files", "-g", "*.go"}, "a.go\nsub/c.go\n", 0},
		{"files hidden", []string{"files", "--hidden", "-t", "go", "."}, "./.hidden/d.go\n./a.go\n./sub/c.go\n", 0},
		{"files none", []string{"files", "-g", "*.rs"}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinary(t, dir, "", tt.args...)
			if diff := cmp.Diff(tt.out, got.Stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s\nstderr: %s", diff, got.Stderr)
			}
			if got.Exit != tt.exit {
				t.Errorf("exit %d, want %d; stderr: %s", got.Exit, tt.exit, got.Stderr)
			}
			if tt.exit == 2 && got.Stderr == "" {
				t.Error("exit 2 without a message")
			}
		})
	}
}

// nonRaceBinary builds fsplane without the race detector for the tests
// that search big trees (a race build is several times slower).
var nonRaceBinary = sync.OnceValues(func() (string, error) {
	if !testenv.Race {
		return binary, nil
	}
	out := filepath.Join(filepath.Dir(binary), "fsplane-norace")
	cmd := exec.Command("go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
})

// rgPatterns are the differential cases: fsplane grep and rg get the
// same arguments (after the common flags).
var rgPatterns = [][]string{
	{"ErrNotExist"},
	{`func main\(\)`},
	{`\w+Handler\(`},
	{"-i", "errnotexist"},
	{"-i", `http\.(get|post)`},
	{`\w{5}\s+\w{5}\(`},
	{`^package \w+$`},
	{`^\s*//\s*TODO`},
	{`\p{Greek}+`},
	{`\bfor\b.*\brange\b`},
	{`(Read|Write)(At|From|To)\b`},
	{"-F", "(*os.File)"},
	{`[A-Z]+_SUSPEND`},
	{`\d{4}-\d{2}-\d{2}`},
	{`^}$`},
	{`\t\t\t\t\t\t\t\t\t`},
	{`[À-ÿ]`},
	{"-i", "γ"},
	{`\bnil\b`},
	{"-e", "goto", "-e", "fallthrough"},
	{`\$GOROOT`},
	{"-i", `copyright \d+ the go authors`},
	{`é|ü|ñ`},
	{`[[:upper:]]{3,}[[:digit:]]+`},
	{`^\s+\w+\s*=\s*iota$`},
	{`\\n"`},
	{"-t", "go", `unsafe\.Pointer`},
	{"-g", "*.s", "MOVQ"},
	{"-t", "go", `\)\W$`},
	{"-i", `errors\.new\("\w+`},
	{"-U", `func \w+\(\)\s*\{\n\s*return`},
	{"-U", `\*/\n\npackage`},
	{"-U", `(?s)BEGIN.*?END`},
	{"-w", "nil"},
	{"-w", "-i", "err"},
	{"-w", "-F", "os.File"},
	{"-w", "-e", "goto", "-e", "fallthrough"},
	{"-w", `\w+_test`},
	{"-w", `\p{Greek}+`},
	{"-w", "-U", `return nil\n\s*}`},
	{"-H", "--no-heading", `func \(f \*File\) Read\(`},
}

// rgSummaries are the differential cases of -l and -c: the sets of lines
// printed must be the same.
var rgSummaries = [][]string{
	{"-l", "ErrNotExist"},
	{"-l", "-w", "-i", "errnotexist"},
	{"-c", `\bnil\b`},
	{"-c", "-w", "nil"},
	{"-c", "-F", "(*os.File)"},
	{"-c", "-i", "γ"},
	{"-c", "-U", `func \w+\(\)\s*\{\n\s*return`},
	{"-c", "-U", `err\n|return`},
	{"-l", "-c", "goto"},
}

// TestGrepMatchesRipgrep runs the built binary and rg over the Go source
// tree: the set of path:line each prints must be the same. Both search
// every file (--hidden --no-ignore: rg applies .gitignore only inside a
// git repository, fsplane in any directory). In multiline mode both print
// every line a match touches.
//
// Two known differences are kept out of the cases: \b and \B use ASCII
// word characters (Go's regexp has no Unicode word boundary), so
// `\bx\b` also matches after "é"; and bytes that are not valid UTF-8
// match as U+FFFD, so negated classes such as [^\x00-\x7F] or \W also
// match them (ripgrep's never match invalid UTF-8).
func TestGrepMatchesRipgrep(t *testing.T) {
	t.Parallel()
	rg, src, fsplane := ripgrepSetup(t)
	for _, args := range rgPatterns {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			want, wantN := lineSet(t, src, rg, ripgrepArgs("-n", args)...)
			got, gotN := lineSet(t, src, fsplane, append([]string{"grep", "--hidden", "--no-ignore", "--no-messages"}, args...)...)
			var missing, extra []string
			for k := range want {
				if !got[k] {
					missing = append(missing, k)
				}
			}
			for k := range got {
				if !want[k] {
					extra = append(extra, k)
				}
			}
			slices.Sort(missing)
			slices.Sort(extra)
			if len(missing)+len(extra) > 0 {
				t.Errorf("%d lines from rg, %d from fsplane; missing %d %v; extra %d %v",
					wantN, gotN, len(missing), missing[:min(10, len(missing))], len(extra), extra[:min(10, len(extra))])
			}
			if wantN == 0 {
				t.Errorf("rg found nothing: not a useful case")
			}
		})
	}
}

// ripgrepArgs is rg's command line for a differential case: no config,
// hidden and ignored files searched as fsplane's cases ask, flag (-n or
// -H) for the output fsplane always gives, and with -U the dot matching
// line breaks as fsplane's multiline mode does.
func ripgrepArgs(flag string, args []string) []string {
	out := append([]string{"--no-config", "--hidden", "--no-ignore", "--no-messages", flag}, args...)
	if slices.Contains(args, "-U") {
		out = append(out, "--multiline-dotall")
	}
	return out
}

// TestGrepSummariesMatchRipgrep runs -l and -c as TestGrepMatchesRipgrep
// runs searches (rg with -H: fsplane always prints the path) and compares
// the lines printed.
func TestGrepSummariesMatchRipgrep(t *testing.T) {
	t.Parallel()
	rg, src, fsplane := ripgrepSetup(t)
	for _, args := range rgSummaries {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			want := outputLines(t, src, rg, ripgrepArgs("-H", args)...)
			got := outputLines(t, src, fsplane, append([]string{"grep", "--hidden", "--no-ignore", "--no-messages"}, args...)...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-rg +fsplane):\n%s", diff)
			}
			if len(want) == 0 {
				t.Errorf("rg found nothing: not a useful case")
			}
		})
	}
}

// outputLines runs a search and returns the lines it printed, sorted.
func outputLines(t *testing.T, dir, bin string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, errb.String())
	}
	if out.Len() == 0 {
		return nil // not [""]: a case that finds nothing must read as empty
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// lineSet runs a search and returns its "path:line" set and the number of
// output lines.
func lineSet(t *testing.T, dir, bin string, args ...string) (map[string]bool, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, errb.String())
	}
	set := map[string]bool{}
	n := 0
	for line := range strings.SplitSeq(out.String(), "\n") {
		if line == "" {
			continue
		}
		n++
		// path:line:content; paths here contain no ':'.
		i := strings.IndexByte(line, ':')
		j := strings.IndexByte(line[i+1:], ':')
		if i < 0 || j < 0 {
			t.Fatalf("%s: unexpected line %q", bin, line)
		}
		set[line[:i+1+j]] = true
	}
	return set, n
}

// ripgrepSetup finds rg (skipping when it is missing), GOROOT/src to
// search, and an fsplane binary built without the race detector.
func ripgrepSetup(t *testing.T) (rg, src, fsplane string) {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg (ripgrep) not installed")
	}
	src = filepath.Join(testenv.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		t.Skip("GOROOT/src not found")
	}
	if fsplane, err = nonRaceBinary(); err != nil {
		t.Fatal(err)
	}
	return rg, src, fsplane
}
