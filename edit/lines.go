package edit

import (
	"slices"
)

// LineEdit changes whole lines. From and To are 1-based and inclusive and
// refer to the original text. To == nil (or *To == From-1) inserts Content
// before line From (From may be one past the last line to append);
// Content == nil deletes lines From..To; otherwise lines From..To are
// replaced by Content. Content without a final line break gets one, in the
// file's line ending; an empty Content removes the lines like nil.
type LineEdit struct {
	From    int     `json:"from"`
	To      *int    `json:"to,omitempty"`
	Content *string `json:"content"`
}

// LinesResult describes the outcome of EditLines or Insert.
type LinesResult struct {
	Content    []byte
	StartLine  int // 1-based first line touched in the new content
	EndLine    int // 1-based last line touched in the new content (< StartLine when only lines were deleted)
	TotalLines int // lines in the new content
	Snippet    string
	Diff       string  // when requested
	Shifts     []Shift // how the change moved the lines it left whole (nil: none moved)
}

// EditLines applies line edits all at once: every line number refers to
// the original content, overlapping edits are an error, and on any error
// nothing is applied. The caller must have read the current version of the
// content (line numbers from an older version would hit the wrong lines).
func EditLines(content []byte, edits []LineEdit, diff bool, path string) (*LinesResult, error) {
	if len(edits) == 0 {
		return nil, errorf(CodeBadRequest, "edits must be a non-empty list")
	}
	body, bom := StripBOM(content)
	idx := newLines(body)
	n := idx.count()
	eol := DetectEOL(body)
	type planned struct {
		from, to int // 0-based line range [from, to) replaced; from == to inserts
		text     string
		order    int
	}
	ps := make([]planned, 0, len(edits))
	for i, e := range edits {
		if e.From < 1 {
			return nil, errorf(CodeBadRequest, "edit %d: from must be >= 1 (got %d)", i+1, e.From)
		}
		insert := e.To == nil || *e.To == e.From-1
		var to int
		if insert {
			if e.From > n+1 {
				return nil, errorf(CodeBadRequest, "edit %d: cannot insert before line %d; the file has %d lines (use from=%d to append)", i+1, e.From, n, n+1)
			}
			if e.Content == nil {
				return nil, errorf(CodeBadRequest, "edit %d: an insert needs content", i+1)
			}
			to = e.From - 1
		} else {
			to = *e.To
			if to < e.From {
				return nil, errorf(CodeBadRequest, "edit %d: to (%d) must be >= from (%d), or from-1 to insert", i+1, to, e.From)
			}
			if to > n {
				return nil, errorf(CodeBadRequest, "edit %d: lines %d-%d are past the end of the file (%d lines)", i+1, e.From, to, n)
			}
		}
		text := ""
		if e.Content != nil && *e.Content != "" {
			text = convertEOL(*e.Content, eol)
			if !endsWithEOL(text) {
				text += string(eol)
			}
		}
		ps = append(ps, planned{from: e.From - 1, to: to, text: text, order: i})
	}
	slices.SortStableFunc(ps, func(a, b planned) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return (a.to - a.from) - (b.to - b.from) // inserts before replacements at the same line
	})
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if b.from < a.to {
			return nil, errorf(CodeBadRequest, "edits %d and %d overlap (lines %d-%d and %d-%d); merge them into one edit",
				a.order+1, b.order+1, a.from+1, max(a.to, a.from+1), b.from+1, max(b.to, b.from+1))
		}
	}
	bedits := make([]Edit, 0, len(ps))
	for _, p := range ps {
		bedits = append(bedits, Edit{Start: idx.start[p.from] + bom, End: idx.start[p.to] + bom, New: p.text})
	}
	if n > 0 && idx.eol(n-1) == "" {
		keepUnterminated(content, bom, idx.start[n-1]+bom, eol, bedits)
	}
	out, err := Apply(content, bedits)
	if err != nil {
		return nil, err
	}
	return describeLines(content, out, bedits, diff, path), nil
}

// Insert inserts text after line `after` (0 inserts at the top; the line
// count appends). text gets a final line break in the file's style when it
// lacks one.
func Insert(content []byte, after int, text string, diff bool, path string) (*LinesResult, error) {
	n := LineCount(content)
	if after < 0 || after > n {
		return nil, errorf(CodeBadRequest, "Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", after, n)
	}
	return EditLines(content, []LineEdit{{From: after + 1, To: ptr(after), Content: &text}}, diff, path)
}

func ptr[T any](v T) *T { return &v }

func describeLines(old, out []byte, edits []Edit, diff bool, path string) *LinesResult {
	r := &LinesResult{Content: out, TotalLines: LineCount(out)}
	r.StartLine, r.EndLine, r.Snippet = changedLines(out, edits)
	r.Shifts = LineShifts(old, out, edits)
	if len(edits) == 1 && len(edits[0].New) == 0 {
		r.EndLine = r.StartLine - 1
	}
	if diff {
		r.Diff = unifiedDiff(path, old, edits)
	}
	return r
}

// LineCount returns the number of lines: terminators, plus one for text
// after the last terminator. Empty content has no lines.
func LineCount(content []byte) int {
	content, _ = StripBOM(content)
	if len(content) == 0 {
		return 0
	}
	n := countEOLs(content)
	if terminator(content[len(content)-min(2, len(content)):]) == "" {
		n++
	}
	return n
}

// View renders lines start..end (1-based, inclusive; end -1 means the last
// line) in cat -n style. start 0 is read as 1. An empty file views as "".
func View(content []byte, start, end int) (string, error) {
	body, _ := StripBOM(content)
	idx := newLines(body)
	n := idx.count()
	if start == 0 {
		start = 1
	}
	if end == -1 {
		end = n
	}
	if n == 0 && start == 1 {
		return "", nil
	}
	if start < 1 || start > n {
		return "", errorf(CodeBadRequest, "Invalid `view_range`: [%d, %d]. Its first element `%d` should be within the range of lines of the file: [1, %d]", start, end, start, n)
	}
	if end < start {
		return "", errorf(CodeBadRequest, "Invalid `view_range`: [%d, %d]. Its second element `%d` should be larger or equal than its first `%d`", start, end, end, start)
	}
	if end > n {
		return "", errorf(CodeBadRequest, "Invalid `view_range`: [%d, %d]. Its second element `%d` should be smaller than the number of lines in the file: `%d`", start, end, end, n)
	}
	return numbered(body[idx.start[start-1]:idx.start[end]], start), nil
}

// Lines returns content's lines from..to (1-based inclusive) with their
// terminators, and the total line count. It clamps to the file.
func Lines(content []byte, from, to int) (string, int) {
	body, _ := StripBOM(content)
	idx := newLines(body)
	n := idx.count()
	from = max(from, 1)
	if to < 0 || to > n {
		to = n
	}
	if from > to {
		return "", n
	}
	return string(body[idx.start[from-1]:idx.start[to]]), n
}
