package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestErrorsAreBounded: an error names the lines it concerns, but a
// hunk whose context occurs on every line of a large file must not make
// an answer of megabytes: the message and _meta's lines are cut, as an
// edit's ambiguous_match already is.
func TestErrorsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": strings.Repeat("dup line\n", 30000)}, envOptions{})
	r := e.fail("patch", args("path", "a.txt", "patch", "@@\n-dup line\n+x\n"), "ambiguous_match")
	b, _ := json.Marshal(r.calls)
	if len(b) > 32<<10 {
		t.Fatalf("error result is %d bytes:\n%.500s", len(b), r.text)
	}
	wantContains(t, r.text, "lines 1, 2, 3, ", " … [message cut: ", "\nHint: ")
	if lines := r.meta["lines"].([]any); len(lines) != errorMaxLines || lines[0] != 1.0 {
		t.Fatalf("_meta lines: %d", len(lines))
	}
}
