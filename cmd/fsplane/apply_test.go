package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/applytest"
	"github.com/fsplane/fsplane/internal/testenv"
)

// binary is the fsplane executable built once for the tests of this
// package: integration tests run the real binary as users do. home is
// the HOME runBinary gives it (see TestMain).
var binary, home string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fsplane-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "fsplane")
	build := exec.Command("go", "build", "-race", "-o", binary, ".")
	if !testenv.Race {
		build = exec.Command("go", "build", "-o", binary, ".")
	}
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building fsplane: " + err.Error())
	}
	// The binary's HOME is an empty directory of its own, so no
	// developer's git configuration (a global gitignore that fsplane grep
	// honours) or state directory changes what a test sees.
	home = filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBinary runs fsplane in dir with stdin and returns what it printed.
func runBinary(t *testing.T, dir, stdin string, args ...string) applytest.Outcome {
	t.Helper()
	return runBinaryWith(t, dir, stdin, nil, args...)
}

// runBinaryWith runs the binary in dir with stdin and env added to the
// environment, and returns what it printed and its exit status.
func runBinaryWith(t *testing.T, dir, stdin string, env []string, args ...string) applytest.Outcome {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewBufferString(stdin)
	cmd.Env = append(append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_STATE_HOME="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return applytest.Outcome{Stdout: out.String(), Stderr: errb.String(), Exit: code}
}

func TestApplyScenariosBinary(t *testing.T) {
	t.Parallel()
	applytest.Run(t, filepath.Join("..", "..", applytest.Dir), func(t *testing.T, root, stateDir, patch string, args []string) applytest.Outcome {
		return runBinary(t, root, patch, append([]string{"apply", "--state-dir", stateDir}, args...)...)
	})
}

func TestApplyPatchArgument(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch"
	got := runBinary(t, root, "", "apply", "--state-dir", t.TempDir(), patch)
	if got.Exit != 0 || got.Stdout != "Success. Updated the following files:\nM a.txt\n" {
		t.Fatalf("got %+v", got)
	}
	b, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	if string(b) != "one\n2\n" {
		t.Fatalf("a.txt = %q", b)
	}
}

// TestApplyRefusesNonUTF8Patch: a patch that is not UTF-8 (a Latin-1 or
// UTF-16 file) is refused, as Codex's apply_patch refuses it, and
// nothing changes. It used to be applied byte for byte: an update put
// Latin-1 bytes into a UTF-8 file, which fsplane's own edits then refused
// to read as text.
func TestApplyRefusesNonUTF8Patch(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-cafe\n+caf\xe9\n*** Add File: b.txt\n+\xe9t\xe9\n*** End Patch\n"
	for _, viaArg := range []bool{false, true} {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("cafe\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"apply", "--state-dir", t.TempDir()}
		stdin := patch
		if viaArg {
			args, stdin = append(args, patch), ""
		}
		got := runBinary(t, root, stdin, args...)
		if got.Exit != 1 || got.Stdout != "" || !strings.Contains(got.Stderr, "fsplane apply: the patch is not valid UTF-8 (line 5)") {
			t.Errorf("argument %v: got %+v, want exit 1 and a UTF-8 error naming line 5", viaArg, got)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "cafe\n" {
			t.Errorf("argument %v: a.txt = %q, want it unchanged", viaArg, b)
		}
		if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil {
			t.Errorf("argument %v: b.txt was added", viaArg)
		}
	}
}

func TestApplyRootFlagAndDryRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch"
	got := runBinary(t, t.TempDir(), patch, "apply", "--dry-run", "--root", root, "--state-dir", t.TempDir())
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	if got.Exit != 0 || got.Stdout != want {
		t.Fatalf("got %+v, want stdout %q", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	if string(b) != "one\ntwo\n" {
		t.Fatalf("dry run changed a.txt: %q", b)
	}
}

// TestApplyHelpNamesUndo: the help used to promise "fsplane's undo",
// which the CLI does not have; it must name where undo is reachable.
func TestApplyHelpNamesUndo(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), "", "apply", "--help")
	if got.Exit != 0 {
		t.Fatalf("apply --help: %+v", got)
	}
	for _, want := range []string{`"undo" tool of "fsplane mcp"`, "POST /v2/fs/undo", "--state-dir"} {
		if !strings.Contains(got.Stdout, want) {
			t.Errorf("apply --help does not mention %q:\n%s", want, got.Stdout)
		}
	}
	if strings.Contains(got.Stdout, "fsplane's undo") {
		t.Errorf("apply --help promises an undo command the CLI lacks:\n%s", got.Stdout)
	}
}

// TestApplyRefusalsPrintHint: every refusal that has a hint prints it on
// a Hint: line after the error, as the README promises. A path outside
// --root used to print only the error, its advice folded into the
// message.
func TestApplyRefusalsPrintHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch string
		err, hint   string // text the error line and the Hint: line must contain
	}{
		{"outside root", "*** Begin Patch\n*** Add File: ../x.txt\n+escape\n*** End Patch",
			"Failed to write file ../x.txt: path ../x.txt leads outside the workspace root (", "use a path inside one of the roots"},
		{"absolute path outside root", "*** Begin Patch\n*** Add File: /etc/fsplane-x.txt\n+escape\n*** End Patch",
			"is outside the workspace roots", "use a path inside one of the roots"},
		{"link leading out", "*** Begin Patch\n*** Add File: out/x.txt\n+escape\n*** End Patch",
			"through the symbolic link out -> ", "use a path inside one of the roots"},
		{"delete outside root", "*** Begin Patch\n*** Delete File: ../x.txt\n*** End Patch",
			"Failed to delete file ../x.txt", "leads outside the workspace root ("},
		{"update a directory", "*** Begin Patch\n*** Update File: dir\n@@\n-a\n+b\n*** End Patch",
			"dir is a directory", "name a file inside it"},
		{"state directory", "*** Begin Patch\n*** Add File: state/x.txt\n+x\n*** End Patch",
			"inside fsplane's state directory", "--state-dir"},
		{"no match", "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+b\n*** End Patch",
			"Failed to find expected lines in a.txt", "re-read the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
				t.Fatal(err)
			}
			got := runBinary(t, root, tt.patch, "apply", "--state-dir", filepath.Join(root, "state"))
			lines := strings.Split(strings.TrimSuffix(got.Stderr, "\n"), "\n")
			if got.Exit != 1 || got.Stdout != "" || len(lines) < 2 {
				t.Fatalf("got %+v, want exit 1, an error and a Hint: line", got)
			}
			if first := lines[0]; !strings.HasPrefix(first, "fsplane apply: ") || !strings.Contains(first, tt.err) {
				t.Errorf("error line %q, want it to contain %q", first, tt.err)
			}
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Hint: ") || !strings.Contains(last, tt.hint) {
				t.Errorf("last line %q, want a Hint: line containing %q; stderr:\n%s", last, tt.hint, got.Stderr)
			}
			if _, err := os.Lstat(filepath.Join(root, "..", "x.txt")); err == nil {
				t.Error("a refused patch wrote outside the root")
			}
		})
	}
}

// TestApplyFileNameArgument: "fsplane apply p1.patch" applies the text
// "p1.patch", which Codex's parser refuses. When the argument names an
// existing file, the refusal stays Codex's but its hint says how to apply
// the file; otherwise the hint is the parser's own.
func TestApplyFileNameArgument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, arg, hint string
	}{
		{"file", "p1.patch", `Hint: p1.patch is a file, but the argument is the patch text itself; to apply the file, run fsplane apply < p1.patch (or fsplane apply "$(cat p1.patch)")`},
		{"file name to quote", "my p1.patch", `run fsplane apply < 'my p1.patch' (or fsplane apply "$(cat 'my p1.patch')")`},
		{"no such file", "p2.patch", "Hint: start the patch with a '*** Begin Patch' line"},
		{"directory", "dir", "Hint: start the patch with a '*** Begin Patch' line"},
		{"two lines", "p1.patch\np1.patch", "Hint: start the patch with a '*** Begin Patch' line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			patch := "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n"
			for _, name := range []string{"p1.patch", "my p1.patch"} {
				if err := os.WriteFile(filepath.Join(root, name), []byte(patch), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			got := runBinary(t, root, "", "apply", "--state-dir", t.TempDir(), tt.arg)
			first := "fsplane apply: Invalid patch: The first line of the patch must be '*** Begin Patch'\n"
			if got.Exit != 1 || got.Stdout != "" || !strings.HasPrefix(got.Stderr, first) || !strings.Contains(got.Stderr, tt.hint) {
				t.Fatalf("got %+v, want exit 1, Codex's error first, then %q", got, tt.hint)
			}
			if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
				t.Error("x.txt was added")
			}
		})
	}
}

// TestApplyRootOnce: apply works under one root; a repeated --root used
// to be dropped silently, the patch applied under the last one.
func TestApplyRootOnce(t *testing.T) {
	t.Parallel()
	r1, r2 := t.TempDir(), t.TempDir()
	for _, r := range []string{r1, r2} {
		if err := os.WriteFile(filepath.Join(r, "a.txt"), []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch"
	got := runBinary(t, t.TempDir(), "", "apply", "--state-dir", t.TempDir(), "--root", r1, "--root", r2, patch)
	if got.Exit != 2 || got.Stdout != "" || !strings.Contains(got.Stderr, "--root given 2 times") ||
		!strings.Contains(got.Stderr, "apply works under one root") {
		t.Fatalf("got %+v, want a usage error", got)
	}
	for _, r := range []string{r1, r2} {
		if b, _ := os.ReadFile(filepath.Join(r, "a.txt")); string(b) != "one\n" {
			t.Errorf("%s/a.txt = %q, want it unchanged", r, b)
		}
	}
}

// TestApplyStopsOnFirstSignal: apply reading a patch from a pipe whose
// writer never closes stops at the first SIGINT or SIGTERM, says so,
// and exits 128 plus the signal. It used to wait for a second signal.
func TestApplyStopsOnFirstSignal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "SIGINT"}, {syscall.SIGTERM, "SIGTERM"}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			// A signal that arrives before fsplane handles signals kills
			// it as any process: then try again, waiting longer.
			for delay := 100 * time.Millisecond; ; delay *= 2 {
				cmd := exec.Command(binary, "apply", "--state-dir", t.TempDir())
				cmd.Dir = root
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				io.WriteString(stdin, "*** Begin Patch\n*** Add File: x.txt\n")
				time.Sleep(delay)
				if err := cmd.Process.Signal(tt.sig); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-done
					t.Fatalf("apply still runs 10 s after %s", tt.name)
				}
				stdin.Close()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && delay < 10*time.Second {
					continue
				}
				want := "fsplane apply: stopped (" + tt.name + ") while reading the patch from standard input; nothing was changed\n"
				if code := cmd.ProcessState.ExitCode(); code != 128+int(tt.sig) || stderr.String() != want {
					t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), 128+int(tt.sig), want)
				}
				return
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"p1.patch":    "p1.patch",
		"my patch":    "'my patch'",
		"it's":        `'it'\''s'`,
		"-x.patch":    "./-x.patch",
		"-my x.patch": "'./-my x.patch'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
