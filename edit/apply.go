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
	sorted, err := sortEdits(content, edits)
	if err != nil {
		return nil, err
	}
	return applySorted(content, sorted), nil
}

// sortEdits returns a sorted copy of edits, checked to lie within content
// and not to overlap.
func sortEdits(content []byte, edits []Edit) ([]Edit, error) {
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b Edit) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	for i, e := range sorted {
		if e.Start < 0 || e.End < e.Start || e.End > len(content) {
			return nil, errorf(CodeBadRequest, "edit %d..%d lies outside the content (%d bytes)", e.Start, e.End, len(content))
		}
		if i > 0 && e.Start < sorted[i-1].End {
			return nil, errorf(CodeBadRequest, "edits overlap at byte %d", e.Start)
		}
	}
	return sorted, nil
}

// applySorted applies edits that sortEdits returned.
func applySorted(content []byte, sorted []Edit) []byte {
	size := len(content)
	for _, e := range sorted {
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
	return out
}

// keepUnterminated adjusts whole-line edits of content so that a last line
// without a terminator stays without one, whatever the edits do to it. The
// edits are sorted (as Apply sorts them) and do not overlap; each covers
// whole lines of the body after bom (lines [i, j) are content[start(i),
// start(j)), so a range through the last line ends at len(content)) or
// inserts at a line start (len(content) appends), and each non-empty New
// ends with a line terminator. lastStart is the offset of the last line.
//
// An append after the last line, when that line survives, first gets the
// terminator the line lacks (eol). Then, when the edits reach the end of
// the content, the terminator that now ends the result is dropped: from
// the last non-empty New at the end, or else the one of the line before
// the deleted run of lines. Working on the result as a whole, instead of
// per edit, lets edits that touch each other (a deletion through the last
// line after a change of the line before it) agree on one terminator.
func keepUnterminated(content []byte, bom, lastStart int, eol EOL, edits []Edit) {
	if len(edits) == 0 || edits[len(edits)-1].End != len(content) {
		return // the unterminated last line is untouched
	}
	kept := true
	for _, e := range edits {
		if e.Start <= lastStart && e.End == len(content) && e.Start < e.End {
			kept = false
		}
	}
	if kept {
		for i := range edits {
			if e := &edits[i]; e.Start == len(content) && e.New != "" {
				e.New = string(eol) + e.New
				break
			}
		}
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := &edits[i]
		if e.New != "" {
			e.New = e.New[:len(e.New)-len(terminator([]byte(e.New)))]
			return
		}
		if i > 0 && edits[i-1].End == e.Start {
			continue // what ends the result comes from the edit before
		}
		e.Start -= len(terminator(content[bom:e.Start]))
		return
	}
}
