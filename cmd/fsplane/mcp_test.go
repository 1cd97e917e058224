package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
