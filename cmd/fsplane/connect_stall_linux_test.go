package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestConnectTUIStalledTerminal runs the interface at a terminal that
// stops reading its output, as a stalled SSH connection or a console
// whose text is being selected does: the hub's operations go on being
// served. The host hands each event to the interface and waits for it to
// be taken; with the screen's writes blocked, the interface took none,
// and after a few hundred operations every one hung until the hub's
// timeout.
func TestConnectTUIStalledTerminal(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	ptmx, tty := openPTYPair(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 200}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "connect", hub.URL, "--token", "tok", "--root", t.TempDir(), "--state-dir", t.TempDir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	tty.Close()
	// Read the screen until the host is connected, then read no more.
	connected := make(chan struct{})
	go func() {
		var out []byte
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			out = append(out, buf[:n]...)
			if bytes.Contains(out, []byte("connected as h-1")) {
				close(connected)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatal("the interface never showed the host connected")
	}
	opsKeepFlowing(t, hub)
}

// opsKeepFlowing makes operations through hub for a few seconds, enough
// to fill any terminal's or pipe's buffer many times over, and fails t if
// one is not answered.
func opsKeepFlowing(t *testing.T, hub *hosttest.Hub) {
	t.Helper()
	for i, start := 0, time.Now(); i < 10000 && time.Since(start) < 4*time.Second; i++ {
		// A generous bound: a blocked host waits for ever.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := hub.Do(ctx, &proto.Op{Op: "stat", Path: "."})
		cancel()
		if err != nil {
			t.Fatalf("operation %d with the output not read: %v", i, err)
		}
		if !r.OK {
			t.Fatalf("operation %d: %+v", i, r)
		}
	}
}

// TestConnectPlainStalledOutput: with --no-tui, output nobody reads (a
// pipe into a pager, a stalled terminal) does not stop the operations:
// each one's log line waits in a bounded queue, not the host.
func TestConnectPlainStalledOutput(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "connect", hub.URL, "--no-tui", "--token", "tok", "--root", t.TempDir(), "--state-dir", t.TempDir())
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); pr.Close() })
	connected := make(chan struct{})
	go func() {
		var out []byte
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			out = append(out, buf[:n]...)
			if bytes.Contains(out, []byte("connected as h-1")) {
				close(connected)
				return // and read no more
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatal("connect never logged the host connected")
	}
	opsKeepFlowing(t, hub)
}
