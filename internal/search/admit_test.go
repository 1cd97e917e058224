package search

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSelectionOrderMatchesRipgrep: globs, ignore files, file types and
// hidden names decide in ripgrep's order (see walker.admit) — a matching
// glob beats the ignore files and un-hides, as do a file type and a "!"
// line. Each want is what rg --files lists for the same flags, and is
// checked against rg itself when it is installed.
func TestSelectionOrderMatchesRipgrep(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		".git/HEAD":      "",
		".gitignore":     "*.log\nbuild/\n.env*\n!.env.example\n",
		"a.go":           "",
		".dot.go":        "",
		"x.log":          "",
		".h.log":         "",
		".env":           "",
		".env.example":   "",
		".hidden/x.go":   "",
		"build/b.log":    "",
		"build/c.go":     "",
		"src/c.log":      "",
		"src/d.txt":      "",
		"src/.e.txt":     "",
		".github/ci.yml": "",
	})
	tests := []struct {
		name string
		opts Options
		rg   []string
		want []string
	}{
		{"defaults: a ! line un-hides", Options{RespectIgnore: true}, nil,
			[]string{".env.example", "a.go", "src/d.txt"}},
		{"a glob beats the ignore files and un-hides", Options{RespectIgnore: true, Globs: []string{"*.log"}}, []string{"-g", "*.log"},
			[]string{".h.log", "src/c.log", "x.log"}},
		{"a glob beats a type", Options{RespectIgnore: true, Globs: []string{"*.log"}, Types: []string{"txt"}}, []string{"-g", "*.log", "-t", "txt"},
			[]string{".h.log", "src/c.log", "x.log"}},
		{"an excluding glob alone decides nothing else", Options{RespectIgnore: true, Globs: []string{"!*.txt"}}, []string{"-g", "!*.txt"},
			[]string{".env.example", "a.go"}},
		{"a type un-hides", Options{RespectIgnore: true, Types: []string{"txt"}}, []string{"-t", "txt"},
			[]string{"src/.e.txt", "src/d.txt"}},
		{"a type does not beat the ignore files", Options{RespectIgnore: true, Types: []string{"go"}}, []string{"-t", "go"},
			[]string{".dot.go", "a.go"}},
		{"a glob on a hidden directory enters it", Options{RespectIgnore: true, Globs: []string{".github", ".github/**"}}, []string{"-g", ".github", "-g", ".github/**"},
			[]string{".github/ci.yml"}},
		{"without ignore files", Options{Globs: []string{"*.go"}}, []string{"--no-ignore", "-g", "*.go"},
			[]string{".dot.go", "a.go", "build/c.go"}},
	}
	rg, _ := exec.LookPath("rg")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, workers := range []int{1, 4} {
				tt.opts.Workers = workers
				got := listFiles(t, dir, ".", tt.opts)
				slices.Sort(got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("workers=%d (-want +got):\n%s", workers, diff)
				}
			}
			if rg == "" {
				return
			}
			cmd := exec.Command(rg, append([]string{"--no-config", "--files"}, tt.rg...)...)
			cmd.Dir = dir
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("rg: %v\n%s", err, errb.String())
			}
			got := strings.Fields(out.String())
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rg lists otherwise (-want +rg):\n%s", diff)
			}
		})
	}
}
