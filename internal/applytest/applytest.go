// Package applytest runs the patch scenarios in internal/ops/testdata/apply
// against any implementation of `fsplane apply`: the library (ops) and the
// real binary share them. It is imported only by tests.
//
// A scenario is a txtar archive: input/<path> files form the initial tree,
// patch is the patch text, want/<path> the complete tree expected after
// success (absent: the tree must stay byte-identical), stdout the exact
// standard output, stderr text the standard error must contain (empty:
// must be empty), exit the status, and args optional extra arguments. A
// file name ending in " [noeol]" stands for its content without the final
// newline, a name ending in "/" for an empty directory, and a name ending
// in " [symlink]" for a symbolic link whose target is the content's first
// line (the link is never followed when trees are compared).
package applytest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// Dir is the scenario directory, relative to the repository root.
const Dir = "internal/ops/testdata/apply"

// symlinkSuffix marks a symbolic link in a scenario's file names.
const symlinkSuffix = " [symlink]"

// Outcome is what one run of an apply implementation produced.
type Outcome struct {
	Stdout, Stderr string
	Exit           int
}

// Applier applies patch in root (with stateDir for undo and journals) and
// reports what a user of `fsplane apply` would see.
type Applier func(t *testing.T, root, stateDir, patch string, args []string) Outcome

// Scenario is one parsed scenario.
type Scenario struct {
	Name   string
	Input  map[string][]byte // "dir/" keys are empty directories
	Patch  string
	Want   map[string][]byte // nil: the tree must not change
	Stdout string
	Stderr string
	Exit   int
	Args   []string
}

// Load parses every scenario in dir.
func Load(t *testing.T, dir string) []Scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
	sort.Strings(files)
	var out []Scenario
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := Scenario{Name: strings.TrimSuffix(filepath.Base(f), ".txtar"), Input: map[string][]byte{}}
		for _, file := range a.Files {
			name, data := file.Name, file.Data
			if n, ok := strings.CutSuffix(name, " [noeol]"); ok {
				name, data = n, bytes.TrimSuffix(data, []byte("\n"))
			}
			switch {
			case strings.HasPrefix(name, "input/"):
				s.Input[strings.TrimPrefix(name, "input/")] = data
			case strings.HasPrefix(name, "want/"):
				if s.Want == nil {
					s.Want = map[string][]byte{}
				}
				s.Want[strings.TrimPrefix(name, "want/")] = data
			case name == "patch":
				s.Patch = string(data)
			case name == "stdout":
				s.Stdout = string(data)
			case name == "stderr":
				s.Stderr = strings.TrimSpace(string(data))
			case name == "exit":
				if s.Exit, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
					t.Fatalf("%s: exit: %v", f, err)
				}
			case name == "args":
				s.Args = strings.Fields(string(data))
			default:
				t.Fatalf("%s: unknown section %q", f, name)
			}
		}
		out = append(out, s)
	}
	return out
}

// Run runs every scenario in dir through apply, in parallel subtests.
func Run(t *testing.T, dir string, apply Applier) {
	for _, s := range Load(t, dir) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write(t, root, s.Input)
			got := apply(t, root, t.TempDir(), s.Patch, s.Args)
			if got.Exit != s.Exit {
				t.Errorf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", got.Exit, s.Exit, got.Stdout, got.Stderr)
			}
			if diff := cmp.Diff(s.Stdout, got.Stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if s.Stderr == "" && got.Stderr != "" {
				t.Errorf("stderr = %q, want empty", got.Stderr)
			}
			if !strings.Contains(got.Stderr, s.Stderr) {
				t.Errorf("stderr = %q\nwant it to contain %q", got.Stderr, s.Stderr)
			}
			want := s.Want
			if want == nil {
				want = s.Input
			}
			if diff := cmp.Diff(stringMap(want), stringMap(Tree(t, root))); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

func stringMap(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func write(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		if link, ok := strings.CutSuffix(name, symlinkSuffix); ok {
			p := filepath.Join(root, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			target, _, _ := strings.Cut(string(data), "\n")
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Tree returns every file under root (slash paths → content); an empty
// directory appears as "dir/" with no content, a symbolic link as
// "name [symlink]" with its target and a newline. Temp and backup files
// would show up here too, so comparing trees also proves none were left
// behind.
func Tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			entries, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				out[rel+"/"] = nil
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel+symlinkSuffix] = []byte(target + "\n")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
