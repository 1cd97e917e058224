package edit

import (
	udiff "github.com/aymanbagabas/go-udiff"
)

// UnifiedDiff returns a unified diff (3 lines of context) that turns
// content into the result of applying edits, with headers a/<path> and
// b/<path>. Each edit is widened to whole lines and diffed line by line,
// so a replacement that keeps most of its lines shows only those changed.
func UnifiedDiff(path string, content []byte, edits []Edit) string {
	return unifiedDiff(path, content, edits)
}

func unifiedDiff(path string, content []byte, edits []Edit) string {
	var ud []udiff.Edit
	for _, e := range edits {
		ls := lineStart(content, e.Start)
		le := e.End
		if le > ls && (content[le-1] == '\n' || content[le-1] == '\r') {
			// The span ends with a terminator: its line is complete.
		} else {
			le = lineEnd(content, le)
		}
		before := string(content[ls:le])
		after := string(content[ls:e.Start]) + e.New + string(content[e.End:le])
		for _, d := range udiff.Lines(before, after) {
			ud = append(ud, udiff.Edit{Start: d.Start + ls, End: d.End + ls, New: d.New})
		}
	}
	if len(ud) == 0 {
		return ""
	}
	if path == "" {
		path = "file"
	}
	out, err := udiff.ToUnified("a/"+path, "b/"+path, string(content), ud, udiff.DefaultContextLines)
	if err != nil {
		return ""
	}
	return out
}

// DiffText returns a unified diff between two whole texts, labelled
// oldName and newName ("/dev/null" for a side that does not exist).
func DiffText(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	return udiff.Unified(oldName, newName, string(old), string(new))
}
