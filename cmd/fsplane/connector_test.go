package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/testenv"
)

const hubToken = "integration-token"

// hubAndHost starts a real hub (fsplane serve) and connects real hosts
// (fsplane connect) to it, one per name, each over its own root.
type hubAndHost struct {
	hub   *server
	c     *client.Client
	roots map[string]string
	hosts map[string]*connectProc
	// connectArgs are added to every fsplane connect (--ca-file for a
	// hub serving HTTPS).
	connectArgs []string
}

func startHub(t *testing.T, args ...string) *hubAndHost {
	t.Helper()
	s := startServer(t, t.TempDir(), append([]string{"--connector-token", hubToken}, args...)...)
	h := &hubAndHost{hub: s, c: mustClient(t, s.url, ""), roots: map[string]string{}, hosts: map[string]*connectProc{}}
	t.Cleanup(func() {
		// What the processes said, for a failure that depends on the
		// machine (a host dropped under load).
		if !t.Failed() {
			return
		}
		t.Logf("hub log (end):\n%s", lastLines(s.logs.String(), 40))
		for name, p := range h.hosts {
			t.Logf("host %s stdout (end):\n%s\nstderr (end):\n%s", name, lastLines(p.stdout.String(), 20), lastLines(p.stderr.String(), 20))
		}
	})
	return h
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func mustClient(t *testing.T, url, key string) *client.Client {
	t.Helper()
	var opts []client.Option
	if key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (h *hubAndHost) connect(t *testing.T, name, mode string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for n, content := range files {
		p := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{h.hub.url, "--name", name, "--root", root, "--mode", mode, "--no-tui", "--state-dir", t.TempDir()}, h.connectArgs...)
	p := startConnect(t, []string{"FSPLANE_CONNECTOR_TOKEN=" + hubToken}, args...)
	go func() { // keep its output flowing
		for range p.lines {
		}
	}()
	h.roots[name], h.hosts[name] = root, p
	h.waitHost(t, name, strings.ReplaceAll(mode, "-", "_"))
	return root
}

// waitHost waits until GET /v2/hosts lists name in mode.
func (h *hubAndHost) waitHost(t *testing.T, name, mode string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		l, err := h.c.Hosts(context.Background())
		if err == nil {
			for _, x := range l.Hosts {
				if x.Name == name && x.Mode == mode {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("host %s never appeared in mode %s", name, mode)
}

func code(err error) string {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return ""
}

func TestConnectorTextEditorThroughTheHub(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startHub(t)
	root := h.connect(t, "laptop", "read-write", map[string]string{"notes.txt": "alpha\nbeta\ngamma\n"})
	te := func(req client.TextEditorRequest) (*client.TextEditorResult, error) {
		req.ContextID = "agent-1"
		return h.c.TextEditor(ctx, "laptop", req)
	}
	r, err := te(client.TextEditorRequest{Action: "read", Path: "notes.txt"})
	if err != nil || r.Output != "notes.txt 3 lines\n>>>\n   1 | alpha\n   2 | beta\n   3 | gamma\n\n<<<" {
		t.Fatalf("read: %+v %v", r, err)
	}
	r, err = te(client.TextEditorRequest{Action: "patch", Path: "notes.txt", Edits: []client.LineEdit{{From: 2, To: client.Int(2), Content: client.String("BETA")}}})
	if err != nil || r.Output != "notes.txt patched successfully" {
		t.Fatalf("edits: %+v %v", r, err)
	}
	r, err = te(client.TextEditorRequest{Action: "patch", Path: "notes.txt", PatchText: client.String("@@ BETA\n-gamma\n+GAMMA")})
	if err != nil || r.Output != "notes.txt patched successfully" {
		t.Fatalf("patch_text: %+v %v", r, err)
	}
	r, err = te(client.TextEditorRequest{Action: "patch", Path: "notes.txt", OldText: client.String("alpha"), NewText: client.String("ALPHA")})
	if err != nil || r.Output != "notes.txt patched successfully" {
		t.Fatalf("old/new: %+v %v", r, err)
	}
	r, err = te(client.TextEditorRequest{Action: "write", Path: "new/file.txt", Content: client.String("hello\n")})
	if err != nil || r.Output != "new/file.txt written successfully" {
		t.Fatalf("write: %+v %v", r, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "ALPHA\nBETA\nGAMMA\n" {
		t.Fatalf("notes.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "new/file.txt")); string(b) != "hello\n" {
		t.Fatalf("new/file.txt = %q", b)
	}
	// The agent's edits on the host can be undone through the hub, one
	// step at a time, from the host's own history.
	hc := h.c.Host("laptop")
	u, err := hc.Undo(ctx, "notes.txt")
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); err != nil || u.Undone != "edit" || string(b) != "alpha\nBETA\nGAMMA\n" {
		t.Fatalf("undo through the hub: %+v %v, notes.txt %q", u, err, b)
	}
	if u, err := hc.Undo(ctx, "new/file.txt"); err != nil || !u.Deleted {
		t.Fatalf("undo of a create through the hub: %+v %v", u, err)
	}
	if _, err := os.Stat(filepath.Join(root, "new/file.txt")); !os.IsNotExist(err) {
		t.Fatalf("new/file.txt after undoing its creation: %v", err)
	}
	if _, err := hc.Undo(ctx, "../outside.txt"); code(err) != "outside_root" {
		t.Fatalf("undo outside the host's root: %v", err)
	}
	// Line edits need a fresh read in the same context.
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = te(client.TextEditorRequest{Action: "patch", Path: "notes.txt", Edits: []client.LineEdit{{From: 1, To: client.Int(1), Content: client.String("x")}}})
	if err == nil || r != nil || code(err) != "stale_version" {
		t.Fatalf("stale edits: %+v %v", r, err)
	}
	var ce *client.Error
	errors.As(err, &ce)
	if !strings.Contains(ce.Message, "file changed since last read - re-read to get current line numbers") {
		t.Errorf("stale message %q", ce.Message)
	}
	// Validation and errors in Agent Zero's words.
	for _, tt := range []struct {
		req  client.TextEditorRequest
		want string
	}{
		{client.TextEditorRequest{Path: "x"}, "action is required (read, write, or patch)"},
		{client.TextEditorRequest{Action: "delete", Path: "x"}, "Unknown action: 'delete'. Use read, write, or patch."},
		{client.TextEditorRequest{Action: "read"}, "path is required"},
		{client.TextEditorRequest{Action: "write", Path: "x"}, "content is required for write"},
		{client.TextEditorRequest{Action: "patch", Path: "x"}, "edits, patch_text, or old_text/new_text is required for patch"},
		{client.TextEditorRequest{Action: "patch", Path: "x", PatchText: client.String("@@ a"), OldText: client.String("b")}, "provide exactly one patch form: edits, patch_text, or old_text/new_text"},
		{client.TextEditorRequest{Action: "read", Path: "missing.txt"}, "Error (read 'missing.txt'): "},
	} {
		_, err := te(tt.req)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(tt.want, ": ")) {
			t.Errorf("%+v: %v, want %q", tt.req, err, tt.want)
		}
	}
}

func TestConnectorReadOnlyHostRefusesEvenDirectCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startHub(t)
	root := h.connect(t, "desk", "read-only", map[string]string{"a.txt": "one\n"})
	hc := h.c.Host("desk")
	if r, err := hc.Read(ctx, client.ReadQuery{Path: "a.txt"}); err != nil || r.Content != "one\n" {
		t.Fatalf("read: %+v %v", r, err)
	}
	// The hub does not pre-check the mode on /fs routes: the host refuses.
	_, err := hc.Write(ctx, client.WriteRequest{Path: "a.txt", Content: "two\n"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code() != "read_only" || ce.Message != "Writes are disabled on this host. Press F3 to switch to Read&Write." || ce.Status != 403 {
		t.Fatalf("write on a read-only host: %v", err)
	}
	_, err = h.c.TextEditor(ctx, "desk", client.TextEditorRequest{Action: "write", Path: "a.txt", Content: client.String("x")})
	if err == nil || !strings.Contains(err.Error(), "Press F3 to switch the CLI to Read&Write.") {
		t.Fatalf("text_editor write on a read-only host: %v", err)
	}
	if _, err := hc.Undo(ctx, "a.txt"); code(err) != "read_only" {
		t.Fatalf("undo on a read-only host: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a.txt changed: %q", b)
	}
	// Path escapes are refused by the host itself.
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/etc/passwd", "../outside.txt", "etc-link/passwd"} {
		if _, err := hc.Read(ctx, client.ReadQuery{Path: p}); code(err) != "outside_root" {
			t.Errorf("read %s: %v, want outside_root", p, err)
		}
	}
}

func TestConnectorTwoHostsRouting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startHub(t)
	h.connect(t, "alpha", "read-write", map[string]string{"who.txt": "alpha\n"})
	h.connect(t, "beta", "read-write", map[string]string{"who.txt": "beta\n"})
	_, err := h.c.Host("-").Read(ctx, client.ReadQuery{Path: "who.txt"})
	if err == nil || !strings.Contains(err.Error(), "alpha (id ") || !strings.Contains(err.Error(), "beta (id ") {
		t.Fatalf("unnamed call with two hosts: %v", err)
	}
	for _, name := range []string{"alpha", "beta"} {
		r, err := h.c.Host(name).Read(ctx, client.ReadQuery{Path: "who.txt"})
		if err != nil || r.Content != name+"\n" {
			t.Fatalf("%s: %+v %v", name, r, err)
		}
		if _, err := h.c.Host(name).Write(ctx, client.WriteRequest{Path: "mark.txt", Content: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"alpha", "beta"} {
		if b, _ := os.ReadFile(filepath.Join(h.roots[name], "mark.txt")); string(b) != name {
			t.Errorf("%s's mark.txt = %q", name, b)
		}
	}
}

// TestConnectorReadShowsBOM: a read of a host's file shows its byte order
// mark as the local route does (the hub copies the host's text as it came,
// so the mark is added there), and writing back what was read keeps it.
func TestConnectorReadShowsBOM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const file = "\ufefftop\nworld\n"
	h := startHub(t)
	root := h.connect(t, "box", "read-write", map[string]string{"bom.txt": file})
	box := h.c.Host("box")
	r, err := box.Read(ctx, client.ReadQuery{Path: "bom.txt"})
	if err != nil || r.Content != file || !r.BOM {
		t.Fatalf("read: %+v %v", r, err)
	}
	if r, err := box.Read(ctx, client.ReadQuery{Path: "bom.txt", StartLine: client.Int(1)}); err != nil || r.Content != "world\n" {
		t.Fatalf("read from the second line: %+v %v", r, err)
	}
	if _, err := box.Write(ctx, client.WriteRequest{Path: "bom.txt", Content: r.Content}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "bom.txt")); string(b) != file {
		t.Fatalf("after writing back what was read: %q", b)
	}
}

func TestConnectorTimeoutCancelsAndKilledHostFailsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := startHub(t, "--op-timeout", "60s")
	files := map[string]string{}
	body := strings.Repeat("some words here\n", 4000) // 64 KB
	for i := range 1500 {                             // 96 MB in all
		files[filepath.Join("tree", strings.Repeat("d", i%7+1), "f"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+".txt")] = body
	}
	h.connect(t, "victim", "read-write", files)
	// A deadline shorter than the operation: 504, and the host stops the
	// work (cancelled by the hub's cancel, or by the op's own deadline,
	// whichever it sees first).
	resp, err := http.Post(h.hub.url+"/v2/hosts/victim/fs/grep?timeout=0.001", "application/json",
		strings.NewReader(`{"path":".","pattern":"(\\w+\\s+){30}\\d\\d\\d","max_file_size":"0"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 504 || !strings.Contains(string(out), "may still have completed") {
		t.Fatalf("timeout: %d %s", resp.StatusCode, out)
	}
	testenv.WaitFor(t, 20*time.Second, "the host to log the stopped grep", func() bool {
		out := h.hosts["victim"].stdout.String()
		return strings.Contains(out, "grep") && (strings.Contains(out, "cancelled") || strings.Contains(out, "timeout"))
	})
	// Operations in flight when the host dies fail at once with
	// unavailable: many greps over the whole tree run concurrently, the
	// host is killed while they run.
	const calls = 16
	done := make(chan error, calls)
	for range calls {
		go func() {
			_, err := h.c.Host("victim").Grep(ctx, client.GrepRequest{Path: ".", Pattern: `(\w+\s+){30}\d\d\d`, MaxFileSize: "0"})
			done <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if err := h.hosts["victim"].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	failed := 0
	for range calls {
		select {
		case err := <-done:
			switch {
			case err == nil:
			case code(err) == "unavailable" && strings.Contains(err.Error(), "disconnected"):
				failed++
			default:
				t.Errorf("a call failed otherwise: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a pending op was not failed when its host died")
		}
	}
	if failed == 0 {
		t.Fatal("every grep finished before the kill; the test needs slower operations")
	}
	// "At once" is checked by the error, not a clock: a hub that noticed
	// the death only by its op deadline would have failed them as
	// timeout, not as disconnected (a clock failed this test on a loaded
	// machine, 8 s after the kill).
	t.Logf("%d of %d calls were in flight at the kill and failed as disconnected %v after it", failed, calls, time.Since(killed))
}

func TestConnectorHubRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The hub runs with a fixed port so it can be restarted on it.
	dir := t.TempDir()
	h := startHub(t)
	h.connect(t, "box", "read-write", map[string]string{"a.txt": "x\n"})
	// Restart the hub on the same address: the host reconnects by itself.
	addr := strings.TrimPrefix(h.hub.url, "http://")
	if err := h.hub.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-h.hub.done
	var s2 *server
	deadline := time.Now().Add(10 * time.Second)
	for {
		s2 = tryStartServer(t, dir, "--listen", addr, "--connector-token", hubToken)
		if s2 != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s2 == nil {
		t.Fatal("could not restart the hub on its address")
	}
	c2, _ := client.New(s2.url)
	h.hub, h.c = s2, c2
	h.waitHost(t, "box", "read_write")
	r, err := c2.Host("box").Read(ctx, client.ReadQuery{Path: "a.txt"})
	if err != nil || r.Content != "x\n" {
		t.Fatalf("after the hub restart: %+v %v", r, err)
	}
}

// TestConnectorLargeFilesThroughTheHub writes and reads back a 32 MiB file
// through the hub: the write moves as a transfer, the read as a streamed
// download; both are checked by SHA-256 end to end.
func TestConnectorLargeFilesThroughTheHub(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// What is checked is the bytes, not the time: the op timeout is
	// generous, as 32 MiB each way under -race on a loaded machine has
	// taken over the default 30 s.
	h := startHub(t, "--op-timeout", "5m")
	root := h.connect(t, "big", "read-write", nil)
	content := strings.Repeat("0123456789abcdef", 32<<20/16)
	hc := h.c.Host("big")
	if _, err := hc.Write(ctx, client.WriteRequest{Path: "big.txt", Content: content}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "big.txt"))
	if err != nil || sha256.Sum256(got) != sha256.Sum256([]byte(content)) {
		t.Fatalf("written file: %d bytes, %v", len(got), err)
	}
	d, err := hc.Download(ctx, "big.txt", client.DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h256 := sha256.New()
	n, err := io.Copy(h256, d.Body)
	d.Body.Close()
	if err != nil || n != int64(len(content)) || !bytes.Equal(h256.Sum(nil), sha256Of(content)) {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	if d.Size != int64(len(content)) || d.Version == "" {
		t.Errorf("download headers: size %d, version %q", d.Size, d.Version)
	}
	// A range from the middle, as a client resuming the download asks
	// for it: only those bytes come, and only while the file is the
	// version it has.
	const first, last = 13<<20 + 7, 29<<20 + 3
	d, err = hc.Download(ctx, "big.txt", client.DownloadOptions{Range: fmt.Sprintf("bytes=%d-", first), IfRange: `"` + d.Version + `"`})
	if err != nil {
		t.Fatal(err)
	}
	h256.Reset()
	n, err = io.Copy(h256, d.Body)
	d.Body.Close()
	if err != nil || d.Status != http.StatusPartialContent || n != int64(len(content)-first) || !bytes.Equal(h256.Sum(nil), sha256Of(content[first:])) {
		t.Fatalf("resumed download: %d, %d bytes (%s), %v", d.Status, n, d.ContentRange, err)
	}
	d, err = hc.Download(ctx, "big.txt", client.DownloadOptions{Range: fmt.Sprintf("bytes=%d-%d", first, last)})
	if err != nil {
		t.Fatal(err)
	}
	h256.Reset()
	n, err = io.Copy(h256, d.Body)
	d.Body.Close()
	want := fmt.Sprintf("bytes %d-%d/%d", first, last, len(content))
	if err != nil || d.Status != http.StatusPartialContent || d.ContentRange != want || n != last-first+1 || !bytes.Equal(h256.Sum(nil), sha256Of(content[first:last+1])) {
		t.Fatalf("range: %d, %d bytes (%s, want %s), %v", d.Status, n, d.ContentRange, want, err)
	}
	_, err = hc.Download(ctx, "missing.bin", client.DownloadOptions{})
	if code(err) != "not_found" {
		t.Errorf("missing file: %v", err)
	}
}

func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// TestConnectorF3UnderTmuxReachesTheRealHub runs the real hub and the real
// `fsplane connect` terminal interface under tmux: F3 (send-keys) flips
// the mode that GET /v2/hosts reports, within a second, and the host then
// takes writes from the hub.
func TestConnectorF3UnderTmuxReachesTheRealHub(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	ctx := context.Background()
	h := startHub(t)
	root := t.TempDir()
	x := &tmux{t: t, socket: fmt.Sprintf("fsplane-hub-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { x.run("kill-server") })
	shell := fmt.Sprintf("FSPLANE_CONNECTOR_TOKEN=%s %q connect %q --name tmux-laptop --root %q --state-dir %q; sleep 30",
		hubToken, binary, h.hub.url, root, t.TempDir())
	if out, err := x.run("new-session", "-d", "-s", "connect", "-x", "100", "-y", "30", "sh", "-c", shell); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	h.waitHost(t, "tmux-laptop", "read_only")
	x.waitScreen("Read-only footer", func(l []string) bool { return strings.Contains(footer(l), "Read-only") })
	if _, err := h.c.Host("tmux-laptop").Write(ctx, client.WriteRequest{Path: "f3.txt", Content: "x"}); code(err) != "read_only" {
		t.Fatalf("write before F3: %v", err)
	}
	pressed := time.Now()
	if out, err := x.run("send-keys", "-t", "connect", "F3"); err != nil {
		t.Fatalf("send-keys F3: %v: %s", err, out)
	}
	h.waitHost(t, "tmux-laptop", "read_write")
	if d := time.Since(pressed); d > time.Second {
		t.Errorf("GET /v2/hosts showed read_write only %v after F3", d)
	}
	x.waitScreen("Read&Write footer", func(l []string) bool { return strings.Contains(footer(l), "Read&Write") })
	if _, err := h.c.Host("tmux-laptop").Write(ctx, client.WriteRequest{Path: "f3.txt", Content: "written after F3"}); err != nil {
		t.Fatalf("write after F3: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f3.txt")); string(b) != "written after F3" {
		t.Fatalf("f3.txt = %q", b)
	}
}
