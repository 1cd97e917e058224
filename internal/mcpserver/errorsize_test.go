package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fsplane/fsplane/internal/fserr"
)

// TestErrorsAreBounded: an error names the lines it concerns, but a
// hunk whose context occurs on every line of a large file must not make
// an answer of megabytes: _meta's lines are cut, as the message's list
// is (by the planner).
func TestErrorsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a.txt": strings.Repeat("dup line\n", 30000)}, envOptions{})
	r := e.fail("patch", args("path", "a.txt", "patch", "@@\n-dup line\n+x\n"), "ambiguous_match")
	b, _ := json.Marshal(r.calls)
	if len(b) > 32<<10 {
		t.Fatalf("error result is %d bytes:\n%.500s", len(b), r.text)
	}
	wantContains(t, r.text, "lines 1, 2, 3, ", "\nHint: ")
	if lines := r.meta["lines"].([]any); len(lines) != errorMaxLines || lines[0] != 1.0 {
		t.Fatalf("_meta lines: %d", len(lines))
	}
}

// TestToolErrorMessageIsCut: a message longer than errorMaxMessage is cut
// on a character boundary, saying how much was left out; the hint stays.
func TestToolErrorMessageIsCut(t *testing.T) {
	t.Parallel()
	msg := strings.Repeat("é", errorMaxMessage) // 2 bytes each
	te := &toolError{e: fserr.New(fserr.BadRequest, "patch", "a.txt", "%s", msg).WithHint("do this")}
	got := te.Error()
	if len(got) > errorMaxMessage+200 || !utf8.ValidString(got) {
		t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	wantContains(t, got, " … [message cut: 8192 more bytes]", "\nHint: do this")
}
