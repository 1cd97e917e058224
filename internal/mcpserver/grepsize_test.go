package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestGrepStructuredOutputIsBounded: the structured matches are cut as
// the text is (lines at 1,000 bytes, the matches the 256 KiB text shows),
// so a search through long lines (minified files) cannot make an answer
// of many MiB, which a client's 16 MiB frame limit turns into a dead
// session.
func TestGrepStructuredOutputIsBounded(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&long, "var a%d=1;%s\n", i, strings.Repeat("x", 20<<10))
	}
	e := newEnv(t, map[string]string{"min.js": long.String()}, envOptions{})
	r := e.ok("grep", args("pattern", "var a", "path", "min.js", "max_results", 2000, "context", 2))
	b, _ := json.Marshal(r.calls.StructuredContent)
	if len(b) > 2*searchMaxBytes {
		t.Fatalf("structured content is %d bytes for %d bytes of text", len(b), len(r.text))
	}
	ms := r.out["matches"].([]any)
	m := ms[0].(map[string]any)
	if s := m["text"].(string); !strings.HasPrefix(s, "var a1=1;xxx") || !strings.HasSuffix(s, " … [line cut, 20489 bytes]") {
		t.Fatalf("structured text not cut as the text is: %d bytes, ends %q", len(s), s[max(0, len(s)-40):])
	}
	after := m["after"].([]any)
	if len(after) != 2 || len(after[0].(string)) > grepMaxLineBytes+40 {
		t.Fatalf("context lines not cut: %d", len(after))
	}
	// The matches the text leaves out are left out here too, and said so.
	shown := strings.Count(r.text, "\nmin.js:")
	if len(ms) != shown || r.out["truncated"] != true {
		t.Fatalf("%d structured matches, %d shown, truncated %v", len(ms), shown, r.out["truncated"])
	}
	wantContains(t, r.text, "[Output cut at 256 KiB: ")
}
