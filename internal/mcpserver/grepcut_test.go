package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cutTree has files searched only up to a NUL byte past their first
// 8 KiB: logs/a.log at line 10,002, logs/b.log at line 5,002 (each with
// a match before the NUL, one in its line and one after), and 12 in many;
// logs/bin.dat is binary from the start.
func cutTree() map[string]string {
	late := func(n int) string { return "needle 1\n" + strings.Repeat("x\n", n) + "\x00needle 2\nneedle 3\n" }
	files := map[string]string{"logs/a.log": late(10_000), "logs/b.log": late(5_000), "logs/bin.dat": "needle\x00", "logs/c.txt": "needle\n"}
	for i := range 12 {
		files[fmt.Sprintf("many/f%02d.log", i)] = late(5_000 + i)
	}
	return files
}

// TestGrepTellsOfABinaryCut: grep counts and locates the files it
// searched only up to a NUL byte (files_cut_binary, binary_cuts) and its
// text says where each stopped (the first 10), so that no match after
// the NUL is taken for absent; read shows those lines. Nothing is said
// when no file was cut.
func TestGrepTellsOfABinaryCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cutTree(), envOptions{})
	var many []any
	for i := range 10 {
		many = append(many, map[string]any{"path": fmt.Sprintf("many/f%02d.log", i), "line": float64(5002 + i)})
	}
	tests := []struct {
		name, path string
		cut        float64
		cuts       []any
		text       string // "": no word of a cut
	}{
		{name: "one file", path: "logs/a.log", cut: 1, cuts: []any{map[string]any{"path": "logs/a.log", "line": 10_002.0}},
			text: "[1 file searched only up to a NUL byte past the first 8 KiB; not searched: logs/a.log from line 10002 on. Read those lines with read (line_from).]\n"},
		{name: "a tree", path: "logs", cut: 2,
			cuts: []any{map[string]any{"path": "logs/a.log", "line": 10_002.0}, map[string]any{"path": "logs/b.log", "line": 5002.0}},
			text: "[2 files searched only up to a NUL byte past the first 8 KiB; not searched: logs/a.log from line 10002 on, logs/b.log from line 5002 on. Read those lines with read (line_from).]\n"},
		{name: "more than are listed", path: "many", cut: 12, cuts: many,
			text: "many/f09.log from line 5011 on (and 2 more). Read those lines with read (line_from).]\n"},
		{name: "none", path: "logs/c.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.on(t).ok("grep", args("pattern", "needle", "path", tt.path))
			if tt.cut > 0 && r.out["files_cut_binary"] != tt.cut {
				t.Errorf("files_cut_binary = %v, want %v", r.out["files_cut_binary"], tt.cut)
			}
			if diff := cmp.Diff(tt.cuts, r.out["binary_cuts"]); tt.cuts != nil && diff != "" {
				t.Errorf("binary_cuts (-want +got):\n%s", diff)
			}
			if tt.text == "" && (strings.Contains(r.text, "NUL") || r.out["files_cut_binary"] != nil || r.out["binary_cuts"] != nil) {
				t.Errorf("a cut told of with none:\n%s\n%v", r.text, r.out)
			}
			if !strings.Contains(r.text, tt.text) || strings.Contains(r.text, "needle 3") {
				t.Errorf("text lacks %q, or shows a match after a NUL:\n%s", tt.text, abbrev(r.text))
			}
		})
	}
	t.Run("read shows those lines", func(t *testing.T) {
		t.Parallel()
		wantContains(t, e.on(t).ok("read", args("path", "logs/a.log", "line_from", 10_002)).text, "needle 2", "needle 3")
	})
}

// TestRemoteGrepTellsOfABinaryCut: remote_grep says the same of a host's
// files, through the hub.
func TestRemoteGrepTellsOfABinaryCut(t *testing.T) {
	t.Parallel()
	r := newRemoteEnv(t, cutTree())
	r.waitTools(t, toolRemoteGrep)
	res := r.ok(toolRemoteGrep, args("pattern", "needle", "path", "logs"))
	want := []any{map[string]any{"path": "logs/a.log", "line": 10_002.0}, map[string]any{"path": "logs/b.log", "line": 5002.0}}
	if diff := cmp.Diff(want, res.out["binary_cuts"]); diff != "" || res.out["files_cut_binary"] != 2.0 {
		t.Errorf("files_cut_binary %v; binary_cuts (-want +got):\n%s", res.out["files_cut_binary"], diff)
	}
	wantContains(t, res.text, "not searched: logs/a.log from line 10002 on, logs/b.log from line 5002 on.")
}
