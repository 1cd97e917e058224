package patch

import (
	"regexp"
	"strings"
)

// Agents trained on git output often send a unified diff where a Codex
// patch or Agent Zero's patch_text is asked for. Its body lines are the
// same (' ', '-', '+'), but its headers are not: read as hunk lines,
// "--- a/f" deletes a line "-- a/f" and "@@ -1,3 +1,3 @@" anchors on a
// line of that text, so the patch failed later with a context that
// named neither. Both parsers refuse one at once, saying how to write it
// instead.

// unifiedRange matches a unified diff's hunk header, "@@ -1,3 +1,4 @@",
// with what may follow it (the enclosing function).
var unifiedRange = regexp.MustCompile(`^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)

// looksUnified reports whether lines (the patch's, outer blank lines
// dropped) start as a unified diff does: "diff --git", a "--- " line
// followed by a "+++ " line, or a hunk header with line ranges.
func looksUnified(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	first := strings.TrimRight(lines[0], "\r")
	switch {
	case strings.HasPrefix(first, "diff --git "), unifiedRange.MatchString(first):
		return true
	case strings.HasPrefix(first, "--- ") && len(lines) > 1:
		return strings.HasPrefix(lines[1], "+++ ")
	}
	return false
}

// unifiedCodexHint is the hint for a unified diff given as a Codex patch.
const unifiedCodexHint = "this is a unified diff (---/+++ headers, @@ -N,M +N,M @@ ranges), which apply_patch does not take: " +
	"write '*** Begin Patch', then per file '*** Update File: PATH', its hunks each under a bare '@@' " +
	"(or '@@ <a line just above the change>') with the same ' ', '-', '+' lines, then '*** End Patch'"

// unifiedAZHint is the hint for a unified diff given as patch_text.
const unifiedAZHint = "drop the ---/+++ lines and write each '@@ -N,M +N,M @@' header as a bare '@@' " +
	"(or '@@ <a line just above the change>'); keep the ' ', '-' and '+' lines as they are"
