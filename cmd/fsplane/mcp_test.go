package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsplane/fsplane/internal/mcpserver"
)

// mcpSession starts `fsplane mcp` (the real binary) in dir and connects a
// go-sdk client to it over stdio.
func mcpSession(t *testing.T, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--state-dir", t.TempDir()}, args...)...)
	cmd.Dir = dir
	client := mcp.NewClient(&mcp.Implementation{Name: "cmd-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestMCPStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\r\nbeta\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No --root: the working directory is the root.
	cs := mcpSession(t, dir)
	if got := cs.InitializeResult().ServerInfo.Name; got != "fsplane" {
		t.Fatalf("server name %q", got)
	}
	want := []string{"delete", "edit", "glob", "grep", "list", "move", "patch", "read", "stat", "undo", "write"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v", got)
	}
	text, isErr := mcpText(t, cs, "read", map[string]any{"path": "a.txt"})
	if isErr || !strings.Contains(text, "     2\tbeta\n") || !strings.Contains(text, "CRLF line endings") {
		t.Fatalf("read: %q", text)
	}
	if text, isErr = mcpText(t, cs, "edit", map[string]any{"path": "a.txt", "old_text": "beta", "new_text": "gamma"}); isErr {
		t.Fatal(text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\r\ngamma\r\n" {
		t.Fatalf("file %q", b)
	}
	text, isErr = mcpText(t, cs, "read", map[string]any{"path": "../etc/passwd"})
	if !isErr || !strings.HasPrefix(text, "Error (outside_root): ") {
		t.Fatalf("outside: %q", text)
	}
}

func TestMCPStdioReadOnlyAndRoots(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(b, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := mcpSession(t, t.TempDir(), "--root", a, "--root", b, "--read-only")
	if got := toolNames(t, cs); !slices.Equal(got, []string{"glob", "grep", "list", "read", "stat"}) {
		t.Fatalf("read-only tools %v", got)
	}
	if text, isErr := mcpText(t, cs, "read", map[string]any{"path": filepath.Join(b, "b.txt")}); isErr {
		t.Fatal(text)
	}
}

func TestMCPBadRoot(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), "", "mcp", "--root", "/nonexistent/dir", "--state-dir", t.TempDir())
	if got.Exit != 1 || got.Stdout != "" || !strings.Contains(got.Stderr, "/nonexistent/dir") {
		t.Fatalf("got %+v", got)
	}
	got = runBinary(t, t.TempDir(), "", "mcp", "--log-level", "loud", "--state-dir", t.TempDir())
	if got.Exit != 2 || !strings.Contains(got.Stderr, "--log-level") {
		t.Fatalf("got %+v", got)
	}
}

func TestMCPExitsWhenStdinCloses(t *testing.T) {
	t.Parallel()
	// A client that goes away (stdin at EOF) ends the server cleanly.
	got := runBinary(t, t.TempDir(), "", "mcp", "--state-dir", t.TempDir())
	if got.Exit != 0 || got.Stdout != "" {
		t.Fatalf("got %+v", got)
	}
}

// TestMCPStdioBadInput pipes a whole session into `fsplane mcp` and closes
// its input: a line that is not JSON, one with invalid UTF-8 and one over
// the 16 MiB line limit are each answered with a JSON-RPC error, the calls
// around them are answered and take effect, and the server exits 0.
func TestMCPStdioBadInput(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	call := func(id int, path, content string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write","arguments":{"path":%q,"content":"%s"}}}`, id, path, content)
	}
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not json`,
		call(1, "bad.txt", "a\xff\xfeb"),
		call(2, "big.txt", strings.Repeat("x", mcpserver.StdioMaxLine)),
		call(3, "piped.txt", `hi\n`),
	}, "\n") + "\n"
	got := runBinary(t, root, input, "mcp", "--root", root, "--state-dir", t.TempDir())
	if got.Exit != 0 {
		t.Fatalf("exit %d, stderr:\n%s", got.Exit, got.Stderr)
	}
	codes := map[any]any{} // id → error code, or "ok"
	for line := range strings.Lines(got.Stdout) {
		var m struct {
			ID    any `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %.200q: %v", line, err)
		}
		codes[m.ID] = "ok"
		if m.Error != nil {
			codes[m.ID] = m.Error.Code
		}
	}
	want := map[any]any{0.0: "ok", nil: -32700, 1.0: -32602, 2.0: -32600, 3.0: "ok"}
	if d := cmp.Diff(want, codes); d != "" {
		t.Errorf("answers by id (-want +got):\n%s\nstderr:\n%s", d, got.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(root, "piped.txt")); string(b) != "hi\n" {
		t.Errorf("piped.txt = %q, %v", b, err)
	}
	for _, name := range []string{"bad.txt", "big.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// TestMCPStopsOnSignal: SIGINT or SIGTERM ends a session whose client is
// still there (stdin open), and the stop, asked for, is not a failure:
// exit status 0 and no ERROR line (the SDK logged "server run cancelled"
// at ERROR). Nor does the SDK narrate the session at the default level
// ("server run start", "server connecting", session_id="").
func TestMCPStopsOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binary, "mcp", "--state-dir", t.TempDir())
			cmd.Dir = t.TempDir()
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			logs := &lockedBuffer{}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			done := make(chan error, 1)
			go func() {
				b, _ := io.ReadAll(stderr)
				logs.WriteString(string(b))
				done <- cmd.Wait()
			}()
			// An answer shows the session running (and the signals handled).
			if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
				t.Fatalf("ping: %q, %v", line, err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit after %v: %v\n%s", sig, err, logs.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("fsplane mcp did not stop on %v", sig)
			}
			for _, noise := range []string{"level=ERROR", "server run", "server connecting", "session_id="} {
				if strings.Contains(logs.String(), noise) {
					t.Errorf("the log has %q:\n%s", noise, logs.String())
				}
			}
			if !strings.Contains(logs.String(), `msg="MCP session ended"`) {
				t.Errorf("the log does not say the session ended:\n%s", logs.String())
			}
		})
	}
}
