package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// e2eDir holds the TypeScript end-to-end clients (official MCP SDK).
const e2eDir = "../../test/mcp-e2e"

// needNode skips unless node and the e2e folder's packages are installed
// (.ci/run runs npm ci there).
func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("run `npm ci` in test/mcp-e2e first")
	}
}

func runNode(t *testing.T, script string, env ...string) {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = e2eDir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	t.Logf("node %s:\n%s", script, out)
}

// TestMCPTypeScriptStdio drives `fsplane mcp` over stdio with the official
// TypeScript SDK: initialize, list tools, read/edit/patch/grep, errors.
func TestMCPTypeScriptStdio(t *testing.T) {
	t.Parallel()
	needNode(t)
	runNode(t, "e2e.mjs", "FSPLANE_BIN="+binary)
}

// TestMCPTypeScriptHub drives /mcp on a running hub: the local tools, and
// the remote ones with a connected host, including list_changed when the
// host switches to Read&Write.
func TestMCPTypeScriptHub(t *testing.T) {
	t.Parallel()
	needNode(t)
	const key = "mcp-e2e-key"
	hubRoot := t.TempDir()
	s := startServer(t, hubRoot, "--api-key", key, "--connector-token", hubToken)
	h := &hubAndHost{hub: s, roots: map[string]string{}, hosts: map[string]*connectProc{}}
	h.c = mustClient(t, s.url, key)
	hostRoot := h.connect(t, "laptop", "read-only", map[string]string{"hello.txt": "hello\nworld\n"})
	mcpURL := "FSPLANE_MCP_URL=" + s.url + "/mcp"
	runNode(t, "e2e-http.mjs", mcpURL, "FSPLANE_API_KEY="+key, "FSPLANE_ROOT="+hubRoot)
	runNode(t, "e2e-hub.mjs", mcpURL, "FSPLANE_API_KEY="+key,
		"FSPLANE_HOST_PID="+strconv.Itoa(h.hosts["laptop"].cmd.Process.Pid), "FSPLANE_HOST_ROOT="+hostRoot)
}
