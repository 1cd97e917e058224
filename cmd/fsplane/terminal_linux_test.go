package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVersionAtASilentTerminal runs fsplane version at a terminal that
// answers no query, as many agents' harnesses run commands: it prints its
// version and nothing else. Every command used to ask the terminal its
// background color (OSC 11) and the cursor's position before doing
// anything — the package init of bubbletea v1, linked in for connect's
// interface — and to wait 5 s for the answer, the queries left in its
// output. Nor does it start a process: lipgloss v2's package init ran
// `tmux info` under tmux (TMUX set), which hangs while that server does.
func TestVersionAtASilentTerminal(t *testing.T) {
	t.Parallel()
	// A tmux that leaves a mark when run.
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ptmx, tty := openPTYPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "version")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// As script(1) runs it: the terminal is the process's controlling
	// terminal, and the process is in its foreground (termenv asks nothing
	// of a terminal it does not own)...
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	// ...of a type termenv asks (not screen, tmux or dumb), outside CI.
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "CI=", "TMUX=/nonexistent/tmux-0/default,1,0",
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the process's alone: reading ptmx ends when it exits
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptmx) // to EIO, once no one has the terminal open
		read <- string(b)
	}()
	err := cmd.Wait()
	out := <-read
	if err != nil {
		t.Fatalf("fsplane version: %v; output %q", err, out)
	}
	if strings.Contains(out, "\x1b]11;?") {
		t.Errorf("fsplane version asked the terminal its background color (OSC 11): output %q", out)
	} else if strings.Contains(out, "\x1b") {
		t.Errorf("fsplane version wrote an escape sequence: output %q", out)
	}
	if !strings.HasPrefix(out, "fsplane ") {
		t.Errorf("output %q, want the version", out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("fsplane version ran tmux")
	}
}
