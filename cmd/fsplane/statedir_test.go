package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDirTildeRefused: "~" is expanded by the shell only at the
// start of a word, so --state-dir=~/st, or FSPLANE_STATE_DIR=~/st from an
// env file, reached fsplane as is, and the undo journal (old contents of
// the files changed) went to a directory named "~" in the current
// directory, often inside the root it was changing. It is refused,
// nothing changed, with what to write instead.
func TestStateDirTildeRefused(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch"
	tests := []struct {
		name   string
		env    []string
		args   []string
		stderr string
	}{
		{"flag", nil, []string{"apply", "--state-dir=~/st", patch},
			"fsplane apply: invalid argument \"~/st\" for \"--state-dir\" flag: ~ is not expanded here (the shell expands it only at the start of a word): give the path as $HOME/st"},
		{"variable", []string{"FSPLANE_STATE_DIR=~/st"}, []string{"apply", patch},
			"fsplane apply: FSPLANE_STATE_DIR (for --state-dir): ~ is not expanded here (the shell expands it only at the start of a word): give the path as $HOME/st"},
		{"home alone", []string{"FSPLANE_STATE_DIR=~"}, []string{"apply", patch},
			"give the path as $HOME\n"},
		{"another user's", nil, []string{"apply", "--state-dir", "~bob/st", patch},
			"give the path without ~ (~bob/st: another user's home directory)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			got := runBinaryWith(t, dir, "", tt.env, tt.args...)
			if got.Exit != 2 || !strings.Contains(got.Stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", got.Exit, got.Stderr, tt.stderr)
			}
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) > 0 {
				t.Errorf("%s has %v (%v); want it empty", filepath.Base(dir), ents, err)
			}
		})
	}
}

// TestStateDirGivenTwice: pflag kept the last of two --state-dir, so the
// undo records went to one of the two directories silently, and an undo
// run with the other found none. As --root, it is given once.
func TestStateDirGivenTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	patch := "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch"
	got := runBinary(t, dir, "", "apply", "--state-dir", "s1", "--state-dir", "s2", patch)
	want := `invalid argument "s2" for "--state-dir" flag: given twice ("s1", "s2"): undo history lives in one state directory; give it once`
	if got.Exit != 2 || !strings.Contains(got.Stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", got.Exit, got.Stderr, want)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		t.Errorf("%v (%v); want nothing created", ents, err)
	}
}
