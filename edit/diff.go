package edit

import (
	"strings"

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
	idx := newLines(content)
	for i := 0; i < len(edits); {
		// Edits whose lines overlap (several on one line) form one group:
		// diffing them one by one would describe that line twice.
		ls, le := idx.startOf(edits[i].Start), widenEnd(content, idx, edits[i])
		j := i + 1
		for j < len(edits) && idx.startOf(edits[j].Start) < le {
			le = max(le, widenEnd(content, idx, edits[j]))
			j++
		}
		var after strings.Builder
		pos := ls
		for _, e := range edits[i:j] {
			after.Write(content[pos:e.Start])
			after.WriteString(e.New)
			pos = e.End
		}
		after.Write(content[pos:le])
		for _, d := range udiff.Lines(string(content[ls:le]), after.String()) {
			ud = append(ud, udiff.Edit{Start: d.Start + ls, End: d.End + ls, New: d.New})
		}
		i = j
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

// widenEnd returns where the lines edit e touches end: the end of its
// span when that ends with a terminator (its line is complete), else the
// end of the line it ends in. idx indexes content's lines.
func widenEnd(content []byte, idx *lines, e Edit) int {
	ls := idx.startOf(e.Start)
	if le := e.End; le > ls && (content[le-1] == '\n' || content[le-1] == '\r') {
		return le
	}
	return idx.endOf(e.End)
}

// DiffText returns a unified diff between two whole texts, labelled
// oldName and newName ("/dev/null" for a side that does not exist).
func DiffText(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	return udiff.Unified(oldName, newName, string(old), string(new))
}
