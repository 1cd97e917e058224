package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/applytest"
)

// TestApplyDashReadsStdin: "-" as the argument is standard input, as for
// most commands that take their input from a file or stdin; it was taken
// as the patch text "-" and refused as a patch whose first line is not
// '*** Begin Patch', with a hint to start it so. Whichever way the patch
// comes, the outcome is the same.
func TestApplyDashReadsStdin(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\n"
	tests := []struct {
		name, stdin string
		args        []string
	}{
		{"stdin", patch, nil},
		{"dash", patch, []string{"-"}},
		{"argument", "", []string{patch}},
	}
	want := applytest.Outcome{Stdout: "Success. Updated the following files:\nM a.txt\n"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got := runBinary(t, dir, tt.stdin, append([]string{"apply", "--state-dir", t.TempDir()}, tt.args...)...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("apply (-want +got):\n%s", diff)
			}
			b, err := os.ReadFile(filepath.Join(dir, "a.txt"))
			if err != nil || string(b) != "A\n" {
				t.Errorf("a.txt: %q, %v; want %q", b, err, "A\n")
			}
		})
	}
}

// failWriter fails every write, as standard output on a full disk
// (/dev/full) or a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestApplySummaryUnwritten: when the files changed but Codex's summary
// could not be written, the error said only "no space left on device",
// with the exit status 1 that otherwise means nothing changed, so the
// agent would apply the patch again; it says the patch was applied.
func TestApplySummaryUnwritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	patch := "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n"
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"apply", "--root", dir, "--state-dir", t.TempDir(), patch}, strings.NewReader(""), failWriter{}, &stderr)
	code := exitCode(err, &stderr)
	want := "fsplane apply: the patch was applied (the files changed), but its summary could not be written: no space left on device\nHint: do not apply it again; see what changed in the files\n"
	if diff := cmp.Diff(want, stderr.String()); diff != "" || code != 1 {
		t.Errorf("exit %d, stderr (-want +got):\n%s", code, diff)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("x.txt: %q, %v", b, err)
	}
}

// TestApplyStdinIsADirectory: "fsplane apply < dir" said "read
// /dev/stdin: is a directory", with no word of what to pass instead.
func TestApplyStdinIsADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(binary, "apply", "--state-dir", t.TempDir())
	cmd.Dir, cmd.Stdin = dir, in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	want := "fsplane apply: reading the patch from standard input: is a directory\nHint: redirect a patch file, not a directory: fsplane apply < change.patch\n"
	var ee *exec.ExitError
	if diff := cmp.Diff(want, stderr.String()); diff != "" || !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() > 0 {
		t.Errorf("exit %v, stdout %q, stderr (-want +got):\n%s", err, stdout.String(), diff)
	}
}

// TestApplyEmptyStdin: an empty standard input is a usage error, exit
// status 2 with a usage line, as Codex's apply_patch answers it; standard
// input of white space only is an empty patch (exit 1). Nothing changes
// either way. (A command-line matter, so not among the scenarios the
// library shares.)
func TestApplyEmptyStdin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stdin, usage string
		exit         int
	}{
		{"", "Usage: fsplane apply 'PATCH'", 2},
		{" \n\t\n", "", 1},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, "apply", "--state-dir", t.TempDir())
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(tc.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.exit || stdout.Len() > 0 ||
			!strings.Contains(stderr.String(), "no patch given") || !strings.Contains(stderr.String(), tc.usage) {
			t.Errorf("stdin %q: exit %v, stdout %q, stderr %q; want exit %d naming the missing patch", tc.stdin, err, stdout.String(), stderr.String(), tc.exit)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a\n" {
			t.Errorf("stdin %q: a.txt changed to %q", tc.stdin, b)
		}
	}
}
