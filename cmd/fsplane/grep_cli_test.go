package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGrepStoppedIsNotNoMatch: a search that a signal stopped was not
// finished, so neither "no match" (exit 1, which a file named as PATH
// gave, silently) nor a generic error ("context canceled", exit 2, for a
// directory): it exits with 128 plus the signal's number, as rg killed by
// SIGINT does, and says it was stopped. ctx is stopped before the search
// begins, as by a SIGINT that came first.
func TestGrepStoppedIsNotNoMatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("foo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"directory", []string{"grep", "foo", dir}},
		{"file", []string{"grep", "foo", filepath.Join(dir, "a.txt")}},
		{"file, no match", []string{"grep", "zzz", filepath.Join(dir, "a.txt")}},
		{"files", []string{"files", dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var sig atomic.Int32
			sig.Store(int32(syscall.SIGINT))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			ctx = context.WithValue(ctx, firstKey{}, &sig)
			var stdout, stderr bytes.Buffer
			err := run(ctx, tt.args, strings.NewReader(""), &stdout, &stderr)
			code := exitCode(err, &stderr)
			if code != 130 || !strings.Contains(stderr.String(), "stopped (SIGINT)") {
				t.Errorf("exit %d, stderr %q; want 130 and a word that the search was stopped", code, stderr.String())
			}
		})
	}
}

// TestGrepSIGINTBinary: the real binary, stopped by SIGINT in the middle
// of a search whose output nobody reads yet (so it cannot have finished),
// exits 130, not 2 with "context canceled".
func TestGrepSIGINTBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := strings.Repeat("foo ", 16) + "\n"
	for i := range 64 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat(line, 2000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, "grep", "foo", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// Output is far more than a pipe holds: the search is blocked
	// writing it until the rest is read.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteTo(new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, stderr %q; want 130", err, stderr.String())
	}
}

// TestGrepUnsearchablePaths: "-" (rg's standard input) and a pipe such as
// bash's <(cmd) cannot be searched (the engine searches files through
// os.Root): each is refused with exit status 2 and a message that says
// so and what to do, not "no such file or directory" (which the pipe, a
// /dev/fd link to "pipe:[N]", got although it exists).
func TestGrepUnsearchablePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() }) // after the parallel subtests
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, stderr string
	}{
		{"dash", "-", ": -: standard input cannot be searched: fsplane searches files and directories\nHint: save the input to a file and name that file\n"},
		{"pipe", "/dev/fd/3", ": /dev/fd/3: not a regular file or directory (a pipe or FIFO): fsplane searches files and directories\nHint: save the output to a file and name that file\n"},
		{"fifo", "fifo", ": fifo: not a regular file or directory (a pipe or FIFO): fsplane searches files and directories\nHint: save the output to a file and name that file\n"},
	}
	for _, tt := range tests {
		for _, c := range []string{"grep", "files"} {
			t.Run(tt.name+" "+c, func(t *testing.T) {
				t.Parallel()
				args := []string{tt.path}
				if c == "grep" {
					args = []string{"foo", tt.path}
				}
				cmd := exec.Command(binary, append([]string{c}, args...)...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=")
				cmd.ExtraFiles = []*os.File{pr}
				cmd.Stdin = strings.NewReader("foo\n")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 {
					t.Errorf("exit %v, want 2", err)
				}
				if diff := cmp.Diff("fsplane "+c+tt.stderr, stderr.String()); diff != "" || stdout.Len() > 0 {
					t.Errorf("stdout %q, stderr (-want +got):\n%s", stdout.String(), diff)
				}
			})
		}
	}
}

// TestMaxFilesizeErrorNamesTheFlag: a bad --max-filesize was reported as
// 'invalid size "1X"', naming no flag, on a line of its own among
// commands with a dozen options.
func TestMaxFilesizeErrorNamesTheFlag(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), "", "grep", "--max-filesize", "1X", "foo")
	want := `fsplane grep: --max-filesize: invalid size "1X": want a number with an optional K, M or G suffix` + "\n"
	if diff := cmp.Diff(want, got.Stderr); diff != "" || got.Exit != 2 {
		t.Errorf("exit %d, stderr (-want +got):\n%s", got.Exit, diff)
	}
}

// TestNegativeThreadsRefused: -j -5 was taken silently (as the number of
// CPUs); rg refuses it. A bad value is an error that says what to pass.
func TestNegativeThreadsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("foo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		n    string
	}{
		{[]string{"grep", "-j", "-5", "foo"}, "-5"},
		{[]string{"files", "--threads=-1"}, "-1"},
	}
	for _, tt := range tests {
		got := runBinary(t, dir, "", tt.args...)
		want := "fsplane " + tt.args[0] + ": -j (--threads) must not be negative (got " + tt.n + ")\nHint: pass 0 (one per CPU, the default) or more\n"
		if diff := cmp.Diff(want, got.Stderr); diff != "" || got.Exit != 2 || got.Stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr (-want +got):\n%s", tt.args, got.Exit, got.Stdout, diff)
		}
	}
}

// TestEmptyPathRefused: an empty PATH ("$DIR" with DIR unset) searched
// the current directory, silently; rg reports it. It is reported, the
// other PATHs searched all the same, exit status 2.
func TestEmptyPathRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"top.txt": "foo\n", "d/x.txt": "foo\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args   []string
		stdout string
	}{
		{[]string{"grep", "foo", "", "d"}, "d/x.txt:1:foo\n"},
		{[]string{"files", "", "d"}, "d/x.txt\n"},
		{[]string{"grep", "foo", ""}, ""},
	}
	for _, tt := range tests {
		got := runBinary(t, dir, "", tt.args...)
		want := "fsplane " + tt.args[0] + `: "": an empty PATH names no file (an unset variable?)` + "\nHint: name a file or directory; . is the current one\n"
		if diff := cmp.Diff(want, got.Stderr); diff != "" || got.Exit != 2 || got.Stdout != tt.stdout {
			t.Errorf("%q: exit %d, stdout %q, stderr (-want +got):\n%s", tt.args, got.Exit, got.Stdout, diff)
		}
	}
}
