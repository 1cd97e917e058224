package edit

import (
	"cmp"
	"fmt"
	"strings"
)

// Mode chooses which matches Replace changes.
type Mode string

// The replace modes.
const (
	// ModeUnique (the default) requires exactly one match.
	ModeUnique Mode = "unique"
	// ModeAll replaces every match (non-overlapping, from the start).
	ModeAll Mode = "all"
	// ModeFirst replaces the first match.
	ModeFirst Mode = "first"
	// ModeLast replaces the last match.
	ModeLast Mode = "last"
)

// ReplaceOptions tune Replace. The zero value is unique mode with the full
// ladder, no diff.
type ReplaceOptions struct {
	Mode   Mode
	Strict bool   // exact tier only (AIO's routes match verbatim)
	Diff   bool   // compute a unified diff of the change
	Path   string // name used in the diff headers ("a/<path>", "b/<path>")
	Names  Names  // the caller's names for what a no_match hint mentions
}

// Names are a front's names for what Replace's hints mention, so that a
// caller reads its own parameter names. The zero value names them as the
// MCP tools do.
type Names struct {
	// Old is the old text's parameter: "old_text" when empty (HTTP:
	// "old_str").
	Old string
	// Tolerant tells a Strict caller how to ask for the whole ladder, as
	// an imperative (HTTP: `send "match": "tolerant"`); "use tolerant
	// matching" when empty.
	Tolerant string
	// New is the replacement's parameter: "new_text" when empty (HTTP:
	// "new_str").
	New string
	// AddLines tells how to add lines without replacing any, as an
	// imperative (HTTP: "use the insert command"); MCP's line edits when
	// empty.
	AddLines string
	// Modes tells how to have one of several matches (or all) replaced,
	// as an imperative (HTTP: "set replace_mode to ALL, FIRST or LAST");
	// MCP's replace_all when empty.
	Modes string
}

func (n Names) new() string { return cmp.Or(n.New, "new_text") }

func (n Names) addLines() string {
	return cmp.Or(n.AddLines, "give edits with from and no to (inserts before line from)")
}

func (n Names) old() string { return cmp.Or(n.Old, "old_text") }

func (n Names) tolerant() string { return cmp.Or(n.Tolerant, "use tolerant matching") }

func (n Names) modes() string { return cmp.Or(n.Modes, "set replace_all to change every occurrence") }

// ReplaceResult describes a successful replacement.
type ReplaceResult struct {
	Content   []byte  // the new content
	Changed   bool    // false when the replacement left the bytes as they were
	Tier      Tier    // the ladder tier that located the text
	Count     int     // number of replacements made
	StartLine int     // 1-based first line of the change in the new content
	EndLine   int     // 1-based last line of the change in the new content
	Snippet   string  // numbered lines around the (first) change, cat -n style
	Diff      string  // unified diff, when requested
	Edits     []Edit  // the byte edits applied to the original content
	Shifts    []Shift // how the change moved the lines after it (nil: none moved)
}

// snippetContext is the number of lines shown around a change.
const snippetContext = 3

// Replace replaces old with new in content. Where old is found follows the
// matching ladder (see Tier); in ModeUnique more than one match is an
// ambiguous_match error naming their lines, and no match is a no_match
// error whose Hint shows the nearest region. The replacement is written in
// the line ending of the span it replaces. Content is never modified.
func Replace(content []byte, old, new string, opts ReplaceOptions) (*ReplaceResult, error) {
	if err := checkReplace(old, new, opts.Names); err != nil {
		return nil, err
	}
	mode := opts.Mode
	if mode == "" {
		mode = ModeUnique
	}
	limit := 0
	if mode == ModeUnique {
		// Past maxCounted matches the answer is ambiguous_match either
		// way, and its message needs no more (a one-line 15 MiB file
		// can hold millions).
		limit = maxCounted + 1
	}
	tier, matches := locate(content, old, opts.Strict, limit)
	if len(matches) == 0 {
		e := errorf(CodeNoMatch, "old_text was not found in the file")
		if opts.Strict {
			e.Message = "old_text was not found verbatim in the file"
		}
		e.Hint = noMatchHint(content, old, opts.Strict, opts.Names)
		return nil, e
	}
	var chosen []Match
	switch mode {
	case ModeUnique:
		if len(matches) > 1 {
			return nil, ambiguous(content, matches, tier, opts.Names)
		}
		chosen = matches
	case ModeFirst:
		chosen = matches[:1]
	case ModeLast:
		chosen = matches[len(matches)-1:]
	case ModeAll:
		chosen = matches // they do not overlap (see Locate)
	default:
		return nil, errorf(CodeBadRequest, "unknown replace mode %q; use unique, all, first or last", mode)
	}
	var idx *lines
	if len(chosen) > 1 {
		idx = newLines(content) // many matches may share one long line
	}
	edits := make([]Edit, len(chosen))
	var lastDeletes bool
	for i, m := range chosen {
		edits[i], lastDeletes = m.edit(content, idx, new)
	}
	keepUnterminatedEnd(content, edits, lastDeletes)
	return finish(content, edits, tier, opts)
}

// changes reports whether any edit changes the bytes it covers.
func changes(content []byte, edits []Edit) bool {
	for _, e := range edits {
		if string(content[e.Start:e.End]) != e.New {
			return true
		}
	}
	return false
}

// lastTextOff returns the offset of the last line of text inserted at
// start: inside its last line, before any final terminator.
func lastTextOff(start int, text string) int {
	t := strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
	if t == "" {
		return start
	}
	return start + len(t) - 1
}

// checkReplace refuses what no file content can make right, in the
// caller's own names (n).
func checkReplace(old, new string, n Names) error {
	switch {
	case old == "":
		return &Error{Code: CodeBadRequest, Message: n.old() + " must not be empty",
			Hint: "copy the text to replace from the file; to create a file, write it; to add lines, " + n.addLines()}
	case old == new:
		return &Error{Code: CodeBadRequest, Message: n.old() + " and " + n.new() + " are identical; there is nothing to change"}
	case strings.TrimSpace(old) == "":
		return &Error{Code: CodeBadRequest, Message: n.old() + " is only whitespace, which would match in many places",
			Hint: "include a neighbouring non-blank line so the match is unique"}
	}
	return nil
}

// edit returns the byte edit that puts new in place of m, and whether it
// deletes lines (see adaptation.deletesLines). idx, when not nil, indexes
// content's lines (see spanEOL).
func (m Match) edit(content []byte, idx *lines, new string) (Edit, bool) {
	repl := m.adapt.apply(new)
	start, end := m.Start, m.End
	deletes := m.adapt.deletesLines(repl)
	if deletes {
		if m.adapt.wholeLine {
			start, end = wholeLine(content, start, end)
		} else {
			end += len(eolAt(content, end))
		}
	}
	return Edit{Start: start, End: end, New: convertEOL(repl, spanEOL(content, idx, m.Start, m.End))}, deletes
}

// keepUnterminatedEnd moves the start of sorted edits whose last deletes
// lines through a last line without a terminator back over the terminator
// before them, when they delete whole lines, so that the new last line has
// none either (as EditLines keeps it). Edits that touch it count with it:
// one run of deleted text ends the content.
func keepUnterminatedEnd(content []byte, edits []Edit, deletesLines bool) {
	k := len(edits)
	if !deletesLines || edits[k-1].End != len(content) || terminator(content) != "" {
		return
	}
	i := k - 1
	for i > 0 && edits[i-1].End == edits[i].Start && edits[i-1].New == "" {
		i--
	}
	if s := edits[i].Start; lineStart(content, s) == s {
		edits[i].Start -= len(terminator(content[:s]))
	}
}

// wholeLine widens content[start:end], a match that only blanks surround
// on its line, to the whole line with its terminator, when those bytes
// are indeed spaces and tabs (the match may have been located in a
// normalised view).
func wholeLine(content []byte, start, end int) (int, int) {
	ls := lineStart(content, start)
	if ls == 0 && HasBOM(content) {
		ls = len(BOM)
	}
	le := end
	for le < len(content) && (content[le] == ' ' || content[le] == '\t') {
		le++
	}
	t := eolAt(content, le)
	if ls > start || !isBlank(content[ls:start]) || (t == "" && le < len(content)) {
		return start, end + len(eolAt(content, end))
	}
	return ls, le + len(t)
}

// spanEOL returns the line ending a replacement for content[start:end]
// should use: the span's own first terminator, else that of the line it
// sits in, else the line before, else the file's dominant one, which is
// LF, since then the file has no terminator at all. idx, when not nil,
// indexes content's lines, so that the spans of many matches on one long
// line do not each read the line.
func spanEOL(content []byte, idx *lines, start, end int) EOL {
	for i := start; i < end; i++ {
		if e := eolAt(content, i); e != "" {
			return e
		}
	}
	var ls, le int
	if idx != nil {
		ls, le = idx.startOf(start), idx.endOf(end)
	} else {
		ls, le = lineStart(content, start), lineEnd(content, end)
	}
	if e := terminator(content[end:le]); e != "" {
		return e
	}
	if ls > 0 {
		return terminator(content[:ls])
	}
	return LF
}

// finish applies edits and describes the result.
func finish(content []byte, edits []Edit, tier Tier, opts ReplaceOptions) (*ReplaceResult, error) {
	out, err := Apply(content, edits)
	if err != nil {
		return nil, err
	}
	r := &ReplaceResult{
		Content: out,
		Changed: changes(content, edits),
		Tier:    tier,
		Count:   len(edits),
		Edits:   edits,
	}
	r.StartLine, r.EndLine, r.Snippet = changedLines(out, edits)
	r.Shifts = LineShifts(content, out, edits)
	if opts.Diff {
		r.Diff = unifiedDiff(opts.Path, content, edits)
	}
	return r, nil
}

// changedLines locates sorted edits in out, the content they produced:
// the 1-based first and last line of out holding the new text of the
// first and the last edit, and a numbered snippet around them.
func changedLines(out []byte, edits []Edit) (startLine, endLine int, snip string) {
	first, last := edits[0], edits[len(edits)-1]
	shift := 0
	for _, e := range edits[:len(edits)-1] {
		shift += len(e.New) - (e.End - e.Start)
	}
	startOff := first.Start
	endOff := max(lastTextOff(last.Start+shift, last.New), startOff)
	startLine = lineAt(out, startOff)
	return startLine, startLine + countEOLs(out[startOff:endOff]), snippet(out, startOff, endOff, snippetContext)
}

// ambiguous is the refusal of more than one match (at most maxCounted+1,
// see Replace): how many, on which lines and how often on each, and a
// hint that fits where they are (several on one line need more of that
// line, not more lines).
func ambiguous(content []byte, matches []Match, tier Tier, names Names) *Error {
	type onLine struct{ line, n int }
	var at []onLine
	prev, line := 0, 1
	for _, m := range matches {
		line += countEOLs(content[prev:m.Start])
		prev = m.Start
		if k := len(at); k > 0 && at[k-1].line == line {
			at[k-1].n++
		} else {
			at = append(at, onLine{line, 1})
		}
	}
	more := len(matches) > maxCounted
	count := fmt.Sprintf("%d places", len(matches))
	if more {
		count = fmt.Sprintf("more than %d places", maxCounted)
	}
	shown := at[:min(len(at), maxShownLines)]
	strs := make([]string, len(shown))
	for i, l := range shown {
		switch {
		case l.n > 1:
			strs[i] = fmt.Sprintf("%d (%d times)", l.line, l.n)
		default:
			strs[i] = fmt.Sprint(l.line)
		}
	}
	where := "lines " + strings.Join(strs, ", ")
	if len(at) == 1 {
		where = "line " + strs[0]
	}
	if len(at) > len(shown) {
		where += fmt.Sprintf(" and %d more lines", len(at)-len(shown))
	}
	switch {
	case more:
		where = fmt.Sprintf("the first %d on %s", len(matches), where)
	case len(at) == 1:
		where = "all on " + where
	default:
		where = "on " + where
	}
	lines := make([]int, 0, min(len(at), maxReportedLines))
	for _, l := range at[:min(len(at), maxReportedLines)] {
		lines = append(lines, l.line)
	}
	hint := fmt.Sprintf("include more surrounding lines so %s matches once, or %s", names.old(), names.modes())
	if len(at) == 1 {
		// More lines cannot tell apart matches within one line.
		hint = fmt.Sprintf("%s occurs more than once within line %d: include more of that line's text (what comes before or after it there) so it matches once, or %s", names.old(), at[0].line, names.modes())
	}
	return &Error{
		Code:    CodeAmbiguousMatch,
		Message: fmt.Sprintf("old_text matches %s%s, %s", count, tier.describe(), where),
		Hint:    hint,
		Lines:   lines,
	}
}

// maxCounted bounds the matches a unique replace looks for: past it the
// answer is the same ambiguous_match, which then says "more than".
const maxCounted = 1000

// maxShownLines bounds the lines an ambiguous match's message lists.
const maxShownLines = 20

// maxReportedLines bounds the distinct line numbers an ambiguous match
// reports (Error.Lines): a frequent old_text ("}") can match on hundreds
// of thousands of lines, and the error must stay small.
const maxReportedLines = 100
