package edit

import (
	"slices"
)

// Edit replaces content[Start:End] with New. Start == End inserts.
type Edit struct {
	Start, End int
	New        string
}

// Apply returns content with edits applied. Every edit refers to the
// original content. It validates everything before building anything:
// edits must lie inside content and must not overlap (insertions at the
// same offset are applied in the given order). Content is not modified.
func Apply(content []byte, edits []Edit) ([]byte, error) {
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b Edit) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	size := len(content)
	prev := 0
	for i, e := range sorted {
		if e.Start < 0 || e.End < e.Start || e.End > len(content) {
			return nil, errorf(CodeBadRequest, "edit %d..%d lies outside the content (%d bytes)", e.Start, e.End, len(content))
		}
		if i > 0 && e.Start < prev {
			return nil, errorf(CodeBadRequest, "edits overlap at byte %d", e.Start)
		}
		prev = e.End
		size += len(e.New) - (e.End - e.Start)
	}
	out := make([]byte, 0, size)
	last := 0
	for _, e := range sorted {
		out = append(out, content[last:e.Start]...)
		out = append(out, e.New...)
		last = e.End
	}
	out = append(out, content[last:]...)
	if len(out) != size {
		panic("edit.Apply: wrong size")
	}
	return out, nil
}
