package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
)

// connectProc is a running `fsplane connect --no-tui`.
type connectProc struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	lines  chan string
	done   chan error
}

// startConnect runs the real binary; its output is collected line by
// line.
func startConnect(t *testing.T, env []string, args ...string) *connectProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"connect"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &connectProc{cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, lines: make(chan string, 1000), done: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.stdout.WriteString(sc.Text() + "\n")
			p.lines <- sc.Text()
		}
	})
	wg.Go(func() {
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			p.stderr.WriteString(sc.Text() + "\n")
		}
	})
	go func() {
		wg.Wait()
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// waitLine waits for a stdout line containing s.
func (p *connectProc) waitLine(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return l
			}
		case <-deadline:
			t.Fatalf("no line with %q; stdout:\n%s\nstderr:\n%s", s, p.stdout.String(), p.stderr.String())
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *connectProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatalf("fsplane connect did not exit; stdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
	}
	return -1
}

func hubDo(t *testing.T, hub *hosttest.Hub, op *proto.Op) *proto.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := hub.Do(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jsonArgs(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConnectPlainLog(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "s3cret-token"})
	root, extra := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startConnect(t, []string{"FSPLANE_CONNECTOR_TOKEN=s3cret-token"}, hub.URL, "--no-tui", "--name", "test-host",
		"--root", root, "--allow", extra, "--state-dir", t.TempDir())
	banner := p.waitLine(t, "fsplane connect:")
	if want := fmt.Sprintf("fsplane connect: hub %s/v2/connector, host test-host, roots %s, %s, mode Read-only",
		strings.Replace(hub.URL, "http://", "ws://", 1), root, extra); banner != want {
		t.Errorf("banner %q, want %q", banner, want)
	}
	p.waitLine(t, "connected as h-1")
	hello := hub.LastHello()
	if hello.Name != "test-host" || hello.Mode != proto.ReadOnly || len(hello.Roots) != 2 || hello.Roots[0] != root || hello.Roots[1] != extra {
		t.Errorf("hello %+v", hello)
	}
	if a := hub.Authorizations(); len(a) != 1 || a[0] != "Bearer s3cret-token" {
		t.Errorf("authorization %q: the token from FSPLANE_CONNECTOR_TOKEN was not sent", a)
	}

	r := hubDo(t, hub, &proto.Op{Op: "read", Path: "a.txt"})
	var rd ops.ReadResult
	if !r.OK || json.Unmarshal(r.Result, &rd) != nil || rd.Content != "alpha\n" {
		t.Errorf("read: %+v", r)
	}
	p.waitLine(t, "read       a.txt  ok  ")
	r = hubDo(t, hub, &proto.Op{Op: "write", Path: "a.txt", Args: jsonArgs(t, ops.WriteRequest{Content: []byte("x")})})
	if r.OK || r.Error.Code != "read_only" || r.Error.Message != "Writes are disabled on this host. Press F3 to switch to Read&Write." {
		t.Errorf("write on a read-only host: %+v", r)
	}
	p.waitLine(t, "write      a.txt  read_only  ")

	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after SIGINT; stderr:\n%s", code, p.stderr.String())
	}
	if !strings.HasSuffix(p.stdout.String(), "  stopped\n") {
		t.Errorf("the log does not end with stopped:\n%s", p.stdout.String())
	}
	for _, s := range []string{p.stdout.String(), p.stderr.String()} {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "alpha") {
			t.Errorf("the output shows the token or file contents:\n%s", s)
		}
	}
}

func TestConnectReadWriteFlag(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	root := t.TempDir()
	p := startConnect(t, nil, hub.URL, "--no-tui", "--token", "tok", "--mode", "read-write", "--root", root, "--state-dir", t.TempDir())
	p.waitLine(t, "connected as")
	r := hubDo(t, hub, &proto.Op{Op: "write", Path: "new.txt", Args: jsonArgs(t, ops.WriteRequest{Content: []byte("hi\n")})})
	if !r.OK {
		t.Fatalf("write: %+v", r.Error)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	if h, _ := os.Hostname(); hub.LastHello().Name != h {
		t.Errorf("default name %q, want the hostname %q", hub.LastHello().Name, h)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "right"})
	tlsHub := hosttest.Start(t, hosttest.Options{Token: "tok", TLS: true})
	noTokenHub := startServer(t, t.TempDir()) // the real hub, with neither --connector-token nor --api-key
	state := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
		not  []string // and stderr lacks these
	}{
		{"no URL", []string{"--no-tui"}, 2, []string{"the hub URL is required", "Usage: fsplane connect URL", "fsplane connect --help"}, nil},
		{"missing --allow directory", []string{hub.URL, "--allow", "/nonexistent/allowed", "--no-tui"}, 1, []string{"fsplane connect: cannot open the --allow directory /nonexistent/allowed"}, nil},
		{"bad scheme", []string{"ftp://x", "--no-tui"}, 2, []string{"use http://, https://, ws:// or wss://"}, nil},
		{"no scheme", []string{"127.0.0.1:18710", "--no-tui"}, 2,
			[]string{`hub URL "127.0.0.1:18710" needs a scheme: use http://127.0.0.1:18710 (or https://)`}, []string{"first path segment"}},
		{"--root twice", []string{hub.URL, "--root", "/tmp", "--root", "/", "--no-tui"}, 2,
			[]string{`--root given 2 times ("/tmp", "/"): there is one root; give each further directory with --allow, e.g. --root "/tmp" --allow "/"; give it once`, "Usage: fsplane connect URL"}, nil},
		{"--name -", []string{hub.URL, "--name", "-", "--no-tui"}, 2,
			[]string{`--name "-": host name "-" is reserved: it addresses the only connected host; choose another name`}, []string{"Connecting", "Reconnecting"}},
		{"bad mode", []string{hub.URL, "--mode", "admin", "--no-tui"}, 2, []string{`--mode "admin": use read-only or read-write`}, nil},
		{"missing CA file", []string{hub.URL, "--ca-file", "/nonexistent.pem", "--no-tui"}, 2, []string{"--ca-file", "no such file"}, nil},
		{"missing root", []string{hub.URL, "--root", "/nonexistent/dir", "--no-tui"}, 1, []string{"/nonexistent/dir"}, nil},
		{"wrong token", []string{hub.URL, "--token", "wrong", "--no-tui"}, 1,
			[]string{"the hub refused the connection (HTTP 401 Unauthorized: connector token required)", "Hint: check --token"}, nil},
		{"no token", []string{hub.URL, "--no-tui"}, 1,
			[]string{"the hub requires a token and none was given (HTTP 401 Unauthorized)\n", "Hint: set FSPLANE_CONNECTOR_TOKEN (or pass --token)"},
			[]string{"check --token"}},
		{"hub without a token", []string{noTokenHub.url, "--token", "tok", "--no-tui"}, 1,
			[]string{"HTTP 403 Forbidden: this hub accepts no hosts", "Hint: no token can work until the hub has one: whoever runs it must start fsplane serve with --connector-token (or --api-key)"},
			[]string{"check --token"}},
		{"untrusted TLS", []string{tlsHub.URL, "--token", "tok", "--no-tui"}, 1,
			[]string{"the hub's TLS certificate is not trusted", "x509", "Hint: pass the CA"}, nil},
		{"http:// to a TLS hub", []string{strings.Replace(tlsHub.URL, "https://", "http://", 1), "--token", "tok", "--no-tui"}, 1,
			[]string{"the hub speaks TLS: use " + tlsHub.URL + "\n"}, []string{"Hint", "HTTP 400"}},
		{"not a hub", []string{strings.TrimSuffix(hub.URL, "/") + "/elsewhere", "--no-tui"}, 1,
			[]string{"does not speak fsplane-connector/1", "HTTP 404", "Hint: URL should be"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinaryWith(t, t.TempDir(), "", []string{"FSPLANE_CONNECTOR_TOKEN="}, append(append([]string{"connect"}, tt.args...), "--state-dir", state)...)
			if got.Exit != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", got.Exit, tt.code, got.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, got.Stderr)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got.Stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, got.Stderr)
				}
			}
			if strings.Contains(got.Stdout+got.Stderr, "wrong\n") {
				t.Error("the token is printed")
			}
		})
	}
}

func TestConnectCAFile(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok", TLS: true})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, hub.CAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wss := strings.Replace(hub.URL, "https://", "wss://", 1)
	p := startConnect(t, nil, wss, "--no-tui", "--token", "tok", "--ca-file", ca, "--root", root, "--state-dir", t.TempDir())
	p.waitLine(t, "connected as h-1")
	if r := hubDo(t, hub, &proto.Op{Op: "stat", Path: "a.txt"}); !r.OK {
		t.Errorf("stat over wss: %+v", r.Error)
	}
	if s := p.stderr.String(); strings.Contains(s, "warning") {
		t.Errorf("a warning over TLS: %s", s)
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestConnectLogsReasons: the log says why each connection attempt
// failed in a few words — "hub unreachable (connection refused)", "hub
// shut down" for a real hub stopping — never "disconnected" for a host
// that never connected, and standard error keeps the whole error.
func TestConnectLogsReasons(t *testing.T) {
	t.Parallel()
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		p := startConnect(t, nil, "http://"+freeAddr(t), "--no-tui", "--token", "tok", "--root", t.TempDir(), "--state-dir", t.TempDir())
		p.waitLine(t, "  hub unreachable (connection refused); reconnecting in ")
		p.waitLine(t, "  hub unreachable (connection refused); reconnecting in ")
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		p.wait(t)
		if out := p.stdout.String(); strings.Contains(out, "disconnected") || strings.Contains(out, "dial tcp") {
			t.Errorf("the log says more than the reason:\n%s", out)
		}
		// The whole error once, not at every attempt.
		if e := p.stderr.String(); strings.Count(e, "level=WARN msg=Reconnecting") != 1 || !strings.Contains(e, "cannot reach the hub: failed to WebSocket dial") ||
			!strings.Contains(e, "connect: connection refused") {
			t.Errorf("standard error does not have the whole error once:\n%s", e)
		}
	})
	t.Run("hub shut down", func(t *testing.T) {
		t.Parallel()
		hub := startServer(t, t.TempDir(), "--connector-token", "tok")
		p := startConnect(t, nil, hub.url, "--no-tui", "--token", "tok", "--root", t.TempDir(), "--state-dir", t.TempDir())
		p.waitLine(t, "connected as")
		if err := hub.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		p.waitLine(t, "  hub shut down; reconnecting in ")
		p.waitLine(t, "  hub unreachable (connection refused); reconnecting in ")
	})
}

// TestConnectTUICountsDown: under tmux, while the hub is unreachable the
// State row gives the reason in a few words and counts down to the next
// attempt: two captures during one wait show two different waits left.
func TestConnectTUICountsDown(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	x := &tmux{t: t, socket: fmt.Sprintf("fsplane-count-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { x.run("kill-server") })
	shell := fmt.Sprintf("%q connect http://%s --token tok --root %q --state-dir %q; sleep 30", binary, freeAddr(t), t.TempDir(), t.TempDir())
	if out, err := x.run("new-session", "-d", "-s", "connect", "-x", "100", "-y", "30", "sh", "-c", shell); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	// The State row, and the last log line (the attempt it counts for).
	stateAndAttempt := func(l []string) (string, string) {
		var st, last string
		for _, line := range l {
			if s, ok := strings.CutPrefix(line, " State  "); ok {
				st = s
			}
			if strings.Contains(line, "; reconnecting in ") {
				last = line
			}
		}
		return st, last
	}
	var prevState, prevAttempt string
	x.waitScreen("a countdown", func(l []string) bool {
		st, attempt := stateAndAttempt(l)
		if !strings.HasPrefix(st, "reconnecting in ") {
			prevState = ""
			return false
		}
		if !strings.HasSuffix(strings.TrimSpace(st), "s — hub unreachable (connection refused)") {
			t.Fatalf("State %q, want the reason in a few words", st)
		}
		ticked := prevState != "" && attempt == prevAttempt && st != prevState
		prevState, prevAttempt = st, attempt
		return ticked
	})
}

func TestPlaintextWarning(t *testing.T) {
	t.Parallel()
	for in, warn := range map[string]bool{
		"ws://127.0.0.1:1/v2/connector": false, "ws://localhost:1/v2/connector": false, "ws://[::1]:1/v2/connector": false,
		"ws://agent.example:1/v2/connector": true, "ws://10.0.0.2/v2/connector": true, "wss://agent.example/v2/connector": false,
	} {
		if got := plaintextWarning(in) != ""; got != warn {
			t.Errorf("plaintextWarning(%q) = %v, want %v", in, got, warn)
		}
	}
}

// tmux drives a private tmux server (its own socket) for one test.
type tmux struct {
	t      *testing.T
	socket string
	target string // the session screen shows; "" is "connect"
}

func (x *tmux) run(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", x.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// screen returns the pane's visible text.
func (x *tmux) screen() string {
	target := x.target
	if target == "" {
		target = "connect"
	}
	out, err := x.run("capture-pane", "-p", "-t", target)
	if err != nil {
		x.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return out
}

// waitScreen waits until the pane shows a line satisfying ok.
func (x *tmux) waitScreen(what string, ok func(lines []string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := x.screen()
		if ok(strings.Split(strings.TrimRight(s, "\n"), "\n")) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the screen never showed %s:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// footer is the last non-empty line of the screen: the mode and keys.
func footer(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

// TestConnectTUIUnderTmux runs the real binary's terminal interface in
// tmux: F3 flips the footer and the hub receives the new mode within a
// second; a long path's log line keeps its result; a pane shrunk to a
// few rows and columns still shows the state and the mode, and grown
// again the whole screen; q quits.
func TestConnectTUIUnderTmux(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	root := t.TempDir()
	x := &tmux{t: t, socket: fmt.Sprintf("fsplane-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { x.run("kill-server") })
	exitFile := filepath.Join(t.TempDir(), "exit")
	shell := fmt.Sprintf("%q connect %q --token tok --name tmux-host --root %q --state-dir %q; echo $? > %q; sleep 30",
		binary, hub.URL, root, t.TempDir(), exitFile)
	if out, err := x.run("new-session", "-d", "-s", "connect", "-x", "100", "-y", "30", "sh", "-c", shell); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	x.waitScreen("connected as h-1 and Read-only", func(l []string) bool {
		return strings.Contains(strings.Join(l, "\n"), "connected as h-1") && strings.Contains(footer(l), "Read-only")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hub.WaitMode(ctx, proto.ReadOnly); err != nil {
		t.Fatal(err)
	}
	s := x.screen()
	for _, want := range []string{"fsplane connect", strings.Replace(hub.URL, "http://", "ws://", 1) + "/v2/connector", "tmux-host", root} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}

	for _, step := range []struct {
		mode  proto.Mode
		label string
	}{{proto.ReadWrite, "Read&Write"}, {proto.ReadOnly, "Read-only"}} {
		pressed := time.Now()
		if out, err := x.run("send-keys", "-t", "connect", "F3"); err != nil {
			t.Fatalf("send-keys F3: %v: %s", err, out)
		}
		mctx, mcancel := context.WithTimeout(ctx, time.Second)
		err := hub.WaitMode(mctx, step.mode)
		mcancel()
		if err != nil {
			t.Fatalf("the hub did not see %s within a second of F3: %v\n%s", step.mode, err, x.screen())
		}
		t.Logf("F3 → hello %s in %s", step.mode, time.Since(pressed))
		x.waitScreen("footer "+step.label, func(l []string) bool {
			f := footer(l)
			return strings.Contains(f, step.label) && !strings.Contains(f, map[bool]string{true: "Read-only", false: "Read&Write"}[step.mode == proto.ReadWrite])
		})
		// The host obeys the new mode.
		r := hubDo(t, hub, &proto.Op{Op: "write", Path: "f3.txt", Args: jsonArgs(t, ops.WriteRequest{Content: []byte(step.label)})})
		if (step.mode == proto.ReadWrite) != r.OK {
			t.Errorf("write in %s: %+v", step.mode, r)
		}
	}
	screen := x.waitScreen("the op log", func(l []string) bool {
		s := strings.Join(l, "\n")
		return strings.Contains(s, "write      f3.txt  ok") && strings.Contains(s, "write      f3.txt  read_only") &&
			strings.Contains(s, "Local access: Read&Write.") && strings.Contains(s, "Local access: Read-only.")
	})
	t.Logf("screen:\n%s", screen)

	// The host is Read-only again: the write is refused, and its line says
	// so whatever the length of its path.
	long := strings.Repeat("very/long/directory/", 8) + "final_file_with_a_long_name.txt"
	if r := hubDo(t, hub, &proto.Op{Op: "write", Path: long, Args: jsonArgs(t, ops.WriteRequest{Content: []byte("x")})}); r.OK {
		t.Fatalf("write in read_only: %+v", r)
	}
	x.waitScreen("the long write's result", func(l []string) bool {
		for _, line := range l {
			if strings.Contains(line, "write      very/") && strings.Contains(line, "…") && strings.Contains(line, "_name.txt  read_only  ") {
				return true
			}
		}
		return false
	})

	// Shrunk, the pane keeps the state and the mode (tui.Model.layout).
	cut := func(s string, w int) string {
		if r := []rune(s); len(r) > w {
			return string(r[:w-1]) + "…"
		}
		return s
	}
	hubWS := strings.Replace(hub.URL, "http://", "ws://", 1) + "/v2/connector"
	for _, size := range []struct{ w, h int }{{15, 6}, {10, 4}} {
		if out, err := x.run("resize-window", "-t", "connect", "-x", fmt.Sprint(size.w), "-y", fmt.Sprint(size.h)); err != nil {
			t.Fatalf("resize-window: %v: %s", err, out)
		}
		want := []string{cut(hubWS, size.w), cut("connected as h-1", size.w), cut("tmux-host", size.w)}
		screen := x.waitScreen(fmt.Sprintf("at %dx%d the hub, the state, the host and the mode", size.w, size.h), func(l []string) bool {
			if len(l) > size.h || !strings.HasPrefix(strings.TrimSpace(footer(l)), "Read-only") {
				return false
			}
			for _, w := range want {
				if !slices.Contains(l, w) {
					return false
				}
			}
			return true
		})
		t.Logf("at %dx%d:\n%s", size.w, size.h, screen)
		for _, line := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
			if n := len([]rune(line)); n > size.w {
				t.Errorf("at %dx%d the row %q has %d characters", size.w, size.h, line, n)
			}
		}
	}
	if out, err := x.run("resize-window", "-t", "connect", "-x", "100", "-y", "30"); err != nil {
		t.Fatalf("resize-window: %v: %s", err, out)
	}
	x.waitScreen("the whole screen again", func(l []string) bool {
		s := strings.Join(l, "\n")
		return len(l) > 10 && strings.HasPrefix(l[0], " fsplane connect") && strings.Contains(s, " Hub    "+hubWS) &&
			strings.Contains(s, " State  connected as h-1") && strings.Contains(s, " Host   tmux-host") &&
			strings.Contains(s, "_name.txt  read_only  ") && strings.HasPrefix(footer(l), " Read-only   F3 toggle")
	})

	if out, err := x.run("send-keys", "-t", "connect", "q"); err != nil {
		t.Fatalf("send-keys q: %v: %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(exitFile)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Errorf("fsplane connect exited %s after q:\n%s", code, x.screen())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", x.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectTUIStopsOnSignal: SIGTERM or SIGINT from outside stops the
// terminal interface at once, exit status 0, with the terminal given back
// (canonical mode). With bubbletea's own signal handler beside fsplane's,
// such a signal sometimes hung the process with the terminal left raw.
func TestConnectTUIStopsOnSignal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	x := &tmux{t: t, socket: fmt.Sprintf("fsplane-sig-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { x.run("kill-server") })
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		state, exitFile, sttyFile := filepath.Join(dir, "state"), filepath.Join(dir, "exit"), filepath.Join(dir, "stty")
		shell := fmt.Sprintf("%q connect %q --token tok --name sig-host --root %q --state-dir %q; echo $? > %q; stty -a > %q; sleep 30",
			binary, hub.URL, dir, state, exitFile, sttyFile)
		session := fmt.Sprintf("sig%d", i)
		if out, err := x.run("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "sh", "-c", shell); err != nil {
			t.Fatalf("tmux new-session: %v: %s", err, out)
		}
		x.target = session
		x.waitScreen("connected", func(l []string) bool { return strings.Contains(strings.Join(l, "\n"), "connected as") })
		out, err := exec.Command("pgrep", "-f", "--", "--state-dir "+state).Output()
		if err != nil {
			t.Fatalf("pgrep: %v", err)
		}
		pid, err := strconv.Atoi(strings.Fields(string(out))[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, err := os.ReadFile(sttyFile)
			if err == nil && len(b) > 0 {
				code, _ := os.ReadFile(exitFile)
				if c := strings.TrimSpace(string(code)); c != "0" {
					t.Errorf("%v: exit status %s, want 0", sig, c)
				}
				if fields := strings.Fields(string(b)); slices.Contains(fields, "-icanon") || slices.Contains(fields, "-echo") {
					t.Errorf("%v: the terminal was left raw: %s", sig, b)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: fsplane connect did not stop within 5 s:\n%s", sig, x.screen())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
