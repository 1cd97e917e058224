package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its terminal end, closed
// when t ends (the controlling end is closed with it).
func openPTY(t *testing.T) *os.File {
	t.Helper()
	_, tty := openPTYPair(t)
	return tty
}

// openPTYPair opens a pseudo-terminal and returns its controlling end
// (what a terminal emulator reads and writes) and its terminal end (a
// program's standard streams), both closed when t ends.
func openPTYPair(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// TestApplyRefusesTerminalInput: without a patch argument, apply reads
// standard input; at a terminal it used to wait, silently, for a patch
// typed by hand. It refuses at once (a usage error) and says how to pass
// the patch; with the argument, a terminal on standard input is no
// matter.
func TestApplyRefusesTerminalInput(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"
	tests := []struct {
		name   string
		args   []string
		exit   int
		stderr string // text stderr must contain
	}{
		{"no argument", nil, 2, "standard input is a terminal: pass the patch as the argument (fsplane apply \"$(cat change.patch)\") or pipe it (fsplane apply < change.patch)"},
		{"dry run, no argument", []string{"--dry-run"}, 2, "Usage: fsplane apply [PATCH]"},
		{"patch argument", []string{patch}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"apply", "--state-dir", t.TempDir()}, tt.args...)...)
			cmd.Dir = root
			cmd.Stdin = openPTY(t)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatal("apply waited on the terminal")
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.exit || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d (%v), stderr %q; want %d and %q", code, err, stderr.String(), tt.exit, tt.stderr)
			}
			_, serr := os.Stat(filepath.Join(root, "x.txt"))
			if added := serr == nil; added != (tt.exit == 0) {
				t.Errorf("x.txt added: %v", added)
			}
		})
	}
}
