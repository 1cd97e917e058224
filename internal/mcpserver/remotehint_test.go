package mcpserver

import (
	"strings"
	"testing"
)

// TestRemoteReadOnlyHint: a write refused because the connected host is
// Read-only is not this server being read-only: the hint must not tell
// the model that only the reading tools are available (the local write
// tools work), but say how the host allows writes.
func TestRemoteReadOnlyHint(t *testing.T) {
	t.Parallel()
	r := newRemoteEnv(t, map[string]string{"notes.txt": "alpha\n"})
	res := r.fail(toolTextEditorRemote, args("action", "write", "path", "notes.txt", "content", "x"), "read_only")
	hint, _ := res.meta["hint"].(string)
	if strings.Contains(hint, "this server is read-only") || !strings.Contains(hint, "F3") {
		t.Fatalf("hint %q", hint)
	}
	wantContains(t, res.text, "\nHint: "+hint)
	r.ok("write", args("path", "local.txt", "content", "the local tools still write\n"))
	// The description tells the error text as it is.
	for _, tool := range r.waitTools(t, toolTextEditorRemote) {
		if tool.Name == toolTextEditorRemote && !strings.Contains(tool.Description, "Errors start `Error (code): …`") {
			t.Fatalf("description misstates the errors: %s", tool.Description)
		}
	}
}
