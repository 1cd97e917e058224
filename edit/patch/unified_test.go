package patch

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/edit"
)

// TestUnifiedDiffsAreRefusedWithAWay: a unified diff given to either
// parser is refused at once with a hint that says how to write it; read
// as hunk lines, its "--- a/f" deleted a line "-- a/f" and the patch
// failed later on a context that named neither. Codex's own message is
// kept for apply_patch (only the hint is fsplane's). Patches that merely
// look alike are not refused.
func TestUnifiedDiffsAreRefusedWithAWay(t *testing.T) {
	t.Parallel()
	const body = " one\n-two\n+TWO\n three\n"
	tests := []struct {
		name, text string
		refused    bool
	}{
		{"git diff", "diff --git a/f.txt b/f.txt\nindex 1..2 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n" + body, true},
		{"diff -u", "--- a/f.txt\t2026-01-01\n+++ b/f.txt\t2026-01-01\n@@ -1,3 +1,3 @@\n" + body, true},
		{"hunk header alone", "@@ -1,3 +1,3 @@ func main() {\n" + body, true},
		{"one-line range", "@@ -2 +2 @@\n-two\n+TWO\n", true},
		{"anchor", "@@ one\n-two\n+TWO\n", false},
		{"deletes a line of dashes", "--- \n-two\n+TWO\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAgentZero(tt.text, "f.txt")
			var e *edit.Error
			refused := errors.As(err, &e) && e.Message == "patch_text is a unified diff, which this tool does not take"
			if refused != tt.refused {
				t.Fatalf("patch_text: err %v, want refused=%v", err, tt.refused)
			}
			if refused && !strings.Contains(e.Hint, "bare '@@'") {
				t.Errorf("patch_text hint %q says nothing of how to write it", e.Hint)
			}
			_, err = Parse(tt.text)
			if !errors.As(err, &e) || e.Message != "Invalid patch: The first line of the patch must be '*** Begin Patch'" {
				t.Fatalf("apply_patch: err %v, want Codex's first-line message", err)
			}
			if got := strings.Contains(e.Hint, "unified diff"); got != tt.refused {
				t.Errorf("apply_patch hint %q: names a unified diff %v, want %v", e.Hint, got, tt.refused)
			}
		})
	}
}
