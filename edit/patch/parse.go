package patch

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fsplane/fsplane/edit"
)

// Codex apply_patch markers.
const (
	codexBeginMarker  = "*** Begin Patch"
	codexEndMarker    = "*** End Patch"
	codexAddMarker    = "*** Add File: "
	codexDeleteMarker = "*** Delete File: "
	codexUpdateMarker = "*** Update File: "
	codexMoveMarker   = "*** Move to: "
	codexEOFMarker    = "*** End of File"
	codexEnvMarker    = "*** Environment ID:"
	codexAnchorMarker = "@@ "
	codexEmptyAnchor  = "@@"
)

// Parse parses text in Codex's apply_patch dialect ("*** Begin Patch" …
// "*** End Patch") and returns a Patch with Dialect Codex. It accepts what
// Codex's own parser accepts, with Codex's error messages:
//
//   - The text is trimmed of surrounding white space and split on "\n"; a
//     line's trailing "\r"s are dropped.
//   - The first and last lines, trimmed, must be "*** Begin Patch" and
//     "*** End Patch". Failing that, a heredoc wrapper is stripped: a first
//     line "<<EOF", "<<'EOF'" or "<<\"EOF\"" (optionally after "apply_patch "
//     or "applypatch ") and a last line ending in "EOF".
//   - An "*** Environment ID: …" line right after "*** Begin Patch" is
//     ignored. Begin/End with nothing between is a valid patch of no files.
//   - File headers ("*** Add File: p", "*** Delete File: p",
//     "*** Update File: p") are trimmed; so is the path.
//   - An Add takes the "+" lines that follow it (possibly none).
//   - An Update takes an optional "*** Move to: p" line right after its
//     header, then one or more chunks; blank lines between chunks are
//     skipped. A chunk is a run of "@@" / "@@ <anchor>" lines (optional for
//     the first chunk), then body lines: " x" context, "-x" removed, "+x"
//     added, "" empty context; an optional "*** End of File" ends it and
//     sets EOF. Trailing white space is ignored on "@@", "*** Move to:" and
//     "*** End of File" lines; leading white space is not, since a line
//     starting with a space is a context line.
//
// fsplane extension: consecutive "@@ <anchor>" lines accumulate in
// Chunk.Anchors, outermost first (Codex rejects a second "@@" line before
// a body). An "@@" line with no text adds no anchor.
//
// Line numbers, in error messages and in FileOp.Line and Chunk.Line, are
// Codex's: line 1 is the "*** Begin Patch" line, after the text was
// trimmed and a heredoc wrapper removed (so the first file header is
// line 2). For a patch without leading blank lines or heredoc wrapper they
// are the lines of text itself.
//
// Errors are *edit.Error with Code edit.CodeBadRequest and the message
// "Invalid patch: …" or "Invalid patch hunk on line N: …", as Codex's
// apply_patch prints them. Parse only checks syntax: whether the chunks
// match the files is for the planner.
func Parse(text string) (*Patch, error) {
	lines := parseCodexLines(strings.TrimSpace(text))
	lines, err := parseCodexBoundaries(lines)
	if err != nil {
		return nil, err
	}
	p := &Patch{Dialect: Codex}
	rest := lines[1 : len(lines)-1]
	n := 2 // the line number of rest[0]
	if len(rest) > 0 && strings.HasPrefix(strings.TrimSpace(rest[0]), codexEnvMarker) {
		rest = rest[1:]
		n++
	}
	for len(rest) > 0 {
		op, used, err := parseCodexHunk(rest, n)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, op)
		rest = rest[used:]
		n += used
	}
	return p, nil
}

// parseCodexLines splits trimmed patch text into lines as Rust's
// str::lines does, except that every trailing "\r" of a line is dropped
// (Rust drops one), so that no parsed line ends in "\r".
func parseCodexLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// parseCodexBoundaries checks the Begin/End markers, stripping a heredoc
// wrapper if that is what it takes, and returns the lines from
// "*** Begin Patch" to "*** End Patch" inclusive.
func parseCodexBoundaries(lines []string) ([]string, error) {
	err := parseCodexCheckMarkers(lines)
	if err == nil {
		return lines, nil
	}
	if len(lines) >= 4 && parseIsHeredocStart(lines[0]) && strings.HasSuffix(lines[len(lines)-1], "EOF") {
		inner := lines[1 : len(lines)-1]
		if err := parseCodexCheckMarkers(inner); err != nil {
			return nil, err
		}
		return inner, nil
	}
	return nil, err
}

func parseCodexCheckMarkers(lines []string) error {
	switch {
	case len(lines) == 0:
		// Codex reports the last line here: its check has no first line.
		return parseInvalidPatch("The last line of the patch must be '*** End Patch'",
			"the patch is empty: write '*** Begin Patch', the file sections, then '*** End Patch'")
	case strings.TrimSpace(lines[0]) != codexBeginMarker:
		hint := "start the patch with a '*** Begin Patch' line"
		if looksUnified(lines) {
			hint = unifiedCodexHint
		}
		return parseInvalidPatch("The first line of the patch must be '*** Begin Patch'", hint)
	case len(lines) == 1 || strings.TrimSpace(lines[len(lines)-1]) != codexEndMarker:
		return parseInvalidPatch("The last line of the patch must be '*** End Patch'",
			"end the patch with a '*** End Patch' line")
	}
	return nil
}

func parseIsHeredocStart(line string) bool {
	line = strings.TrimSpace(line)
	for _, cmd := range []string{"apply_patch ", "applypatch "} {
		if rest, ok := strings.CutPrefix(line, cmd); ok {
			line = strings.TrimSpace(rest)
			break
		}
	}
	return line == "<<EOF" || line == "<<'EOF'" || line == `<<"EOF"`
}

// parseCodexHunk parses the file section starting at lines[0], which is
// line n of the patch, and returns it with the number of lines it used.
func parseCodexHunk(lines []string, n int) (FileOp, int, error) {
	header := strings.TrimSpace(lines[0])
	if path, ok := strings.CutPrefix(header, codexAddMarker); ok {
		op := FileOp{Kind: Add, Path: strings.TrimSpace(path), Line: n}
		i := 1
		for ; i < len(lines) && strings.HasPrefix(lines[i], "+"); i++ {
			op.Lines = append(op.Lines, lines[i][1:])
		}
		return op, i, nil
	}
	if path, ok := strings.CutPrefix(header, codexDeleteMarker); ok {
		return FileOp{Kind: Delete, Path: strings.TrimSpace(path), Line: n}, 1, nil
	}
	path, ok := strings.CutPrefix(header, codexUpdateMarker)
	if !ok {
		return FileOp{}, 0, parseInvalidHunk(n,
			fmt.Sprintf("'%s' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", header),
			"start each file section with '*** Add File: {path}', '*** Delete File: {path}' or '*** Update File: {path}'; every line of an added file starts with '+'")
	}
	op := FileOp{Kind: Update, Path: strings.TrimSpace(path), Line: n}
	i := 1
	if i < len(lines) {
		move := parseTrimRight(lines[i])
		if dest, ok := strings.CutPrefix(move, codexMoveMarker); ok {
			op.MoveTo = strings.TrimSpace(dest)
			i++
		} else if move == strings.TrimSpace(codexMoveMarker) {
			// "*** Move to: " with nothing after it (trimmed, it no
			// longer has the marker's space). Codex would take it for
			// the end of the section and call the update empty, or try
			// to write a file named "": neither says what is wrong.
			return FileOp{}, 0, parseInvalidHunk(n+i,
				fmt.Sprintf("Move to path for '%s' is empty", op.Path),
				fmt.Sprintf("write the new path after '*** Move to: ', or drop the line to update %s in place", op.Path))
		}
	}
	for i < len(lines) {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		if lines[i][0] == '*' {
			break
		}
		c, used, err := parseCodexChunk(lines[i:], n+i, len(op.Chunks) == 0)
		if err != nil {
			return FileOp{}, 0, err
		}
		op.Chunks = append(op.Chunks, c)
		i += used
	}
	if len(op.Chunks) == 0 {
		return FileOp{}, 0, parseInvalidHunk(n,
			fmt.Sprintf("Update file hunk for path '%s' is empty", op.Path),
			fmt.Sprintf("follow '*** Update File: %s' with at least one chunk: an '@@' line, then ' ', '-' and '+' lines", op.Path))
	}
	return op, i, nil
}

// parseCodexChunk parses the chunk starting at lines[0] (line n of the
// patch; neither blank nor starting with '*'). The anchor lines may be
// omitted only when first is set.
func parseCodexChunk(lines []string, n int, first bool) (Chunk, int, error) {
	c := Chunk{Line: n}
	i := 0
	for ; i < len(lines); i++ {
		t := parseTrimRight(lines[i])
		if t == codexEmptyAnchor {
			continue
		}
		anchor, ok := strings.CutPrefix(t, codexAnchorMarker)
		if !ok {
			break
		}
		c.Anchors = append(c.Anchors, anchor)
	}
	if i == 0 && !first {
		return Chunk{}, 0, parseInvalidHunk(n,
			fmt.Sprintf("Expected update hunk to start with a @@ context marker, got: '%s'", lines[0]),
			"start every chunk after the first with an '@@' or '@@ <context>' line")
	}
	noLines := func() error {
		return parseInvalidHunk(n+i, "Update hunk does not contain any lines",
			"follow the '@@' lines with at least one ' ', '-' or '+' line")
	}
	if i == len(lines) {
		return Chunk{}, 0, noLines()
	}
	body := 0
scan:
	for _, l := range lines[i:] {
		if parseTrimRight(l) == codexEOFMarker {
			if body == 0 {
				return Chunk{}, 0, noLines()
			}
			c.EOF = true
			body++
			break
		}
		switch {
		case l == "":
			c.Old = append(c.Old, "")
			c.New = append(c.New, "")
		case l[0] == ' ':
			c.Old = append(c.Old, l[1:])
			c.New = append(c.New, l[1:])
		case l[0] == '+':
			c.New = append(c.New, l[1:])
		case l[0] == '-':
			c.Old = append(c.Old, l[1:])
		case body == 0:
			// Codex reports the line after the chunk's first, which is
			// this line only when the chunk has an "@@" line; without one
			// (a first chunk) its number is one more than the line's.
			// `fsplane apply` prints Codex's number.
			line := n + i
			if i == 0 {
				line++
			}
			return Chunk{}, 0, parseInvalidHunk(line,
				fmt.Sprintf("Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l),
				"prefix every chunk line with ' ' (unchanged), '-' (removed) or '+' (added)")
		default:
			break scan // the start of the next chunk or file section
		}
		body++
	}
	return c, i + body, nil
}

func parseTrimRight(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

func parseInvalidPatch(msg, hint string) *edit.Error {
	return &edit.Error{Code: edit.CodeBadRequest, Message: "Invalid patch: " + msg, Hint: hint}
}

func parseInvalidHunk(line int, msg, hint string) *edit.Error {
	return &edit.Error{
		Code:    edit.CodeBadRequest,
		Message: fmt.Sprintf("Invalid patch hunk on line %d: %s", line, msg),
		Hint:    hint,
	}
}

// ParseAgentZero parses Agent Zero's patch_text for the file at path and
// returns a Patch with Dialect AgentZero and one FileOp{Kind: Update,
// Path: path}. It follows Agent Zero's context_patch.py:
//
//   - Lines are split as Python's str.splitlines does (also on "\r", "\v",
//     "\f", "\x1c"–"\x1e", U+0085, U+2028, U+2029); blank lines at either
//     end are dropped. Nothing left: "patch_text is required".
//   - The envelope is optional. With one (a first line starting with
//     "*** Begin Patch"), the last line must be "*** End Patch"; lines
//     before "*** Update File:" are ignored, its path is ignored (path
//     wins), and the body is what follows it. A second Update, a
//     "*** Move to:", an Add or a Delete File line is an error.
//   - In the body, a file header line or "*** End Patch" ends parsing;
//     "@@…" starts a chunk, the rest of the line (stripped) being its
//     anchor; any other "***" line (also "*** End of File") is an error;
//     "" is empty context; otherwise the line must start with ' ', '-' or
//     '+'. "@@" lines with no body after them are dropped.
//
// fsplane differences: consecutive "@@ x" lines accumulate in
// Chunk.Anchors, outermost first, where Agent Zero kept only the last
// one; and a chunk that Agent Zero would reject whatever the file holds is
// rejected here: Old equal to New ("patch hunk does not change content"),
// or no Old lines and no anchor ("insert-only patch hunk needs an @@
// anchor").
//
// Line numbers count the lines left after the outer blank lines were
// dropped, from 1. FileOp.Line is the "*** Update File:" line, or 0
// without an envelope. Errors are *edit.Error with Code
// edit.CodeBadRequest and Agent Zero's messages.
func ParseAgentZero(text, path string) (*Patch, error) {
	lines := parsePyTrimBlank(parsePySplitLines(text))
	if len(lines) == 0 {
		return nil, parseAZError("patch_text is required",
			"pass the change as patch_text: '@@ <anchor>' lines, then ' ', '-' and '+' lines")
	}
	if looksUnified(lines) {
		return nil, parseAZError("patch_text is a unified diff, which this tool does not take", unifiedAZHint)
	}
	op := FileOp{Kind: Update, Path: path}
	body, first := lines, 1 // first: the line number of body[0]
	if strings.HasPrefix(lines[0], codexBeginMarker) {
		if len(lines) < 2 || lines[len(lines)-1] != codexEndMarker {
			return nil, parseAZError("patch_text missing *** End Patch",
				"end the envelope with a '*** End Patch' line, or leave the envelope out")
		}
		body = nil
		for i, l := range lines[1 : len(lines)-1] {
			switch {
			case strings.HasPrefix(l, "*** Update File:"):
				if op.Line != 0 {
					return nil, parseAZError("patch_text may update only one file per operation",
						"send one patch_text per file")
				}
				op.Line, first = i+2, i+3
				op.Header = strings.TrimSpace(l[len("*** Update File:"):])
				body = []string{}
			case strings.HasPrefix(l, "*** Move to:"):
				return nil, parseAZError("patch_text does not support file moves",
					"move the file with a separate operation; patch_text only edits it in place")
			case strings.HasPrefix(l, "*** Add File:") || strings.HasPrefix(l, "*** Delete File:"):
				return nil, parseAZError("patch_text supports update hunks only",
					"create or delete files with a separate operation")
			case op.Line != 0:
				body = append(body, l)
			}
		}
		if op.Line == 0 {
			return nil, parseAZError("patch_text must include an update file block",
				fmt.Sprintf("put '*** Update File: %s' after '*** Begin Patch', or leave the envelope out", path))
		}
	}
	chunks, err := parseAZBody(body, first)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 {
		return nil, parseAZError("patch_text must contain at least one update hunk",
			"add ' ', '-' and '+' lines after the '@@' anchor")
	}
	for _, c := range chunks {
		if parseEqualLines(c.Old, c.New) {
			return nil, parseAZError("patch hunk does not change content",
				"make the '+' lines differ from the '-' lines, or drop the hunk")
		}
		if len(c.Old) == 0 && len(c.Anchors) == 0 {
			return nil, parseAZError("insert-only patch hunk needs an @@ anchor",
				"add an '@@ <line>' anchor naming the line to insert after, or context lines")
		}
	}
	op.Chunks = chunks
	return &Patch{Dialect: AgentZero, Files: []FileOp{op}}, nil
}

// parseAZBody parses Agent Zero hunk lines; lines[0] is line first.
func parseAZBody(lines []string, first int) ([]Chunk, error) {
	var chunks []Chunk
	var cur Chunk
	hasLine, hasBody := false, false // cur has a first line; cur has a body line
scan:
	for i, l := range lines {
		switch {
		case parseAZIsHeader(l):
			break scan
		case strings.HasPrefix(l, "@@"):
			if hasBody {
				chunks = append(chunks, cur)
				cur, hasLine, hasBody = Chunk{}, false, false
			}
			if a := parsePyStrip(l[2:]); a != "" {
				cur.Anchors = append(cur.Anchors, a)
			}
		case strings.HasPrefix(l, "***"):
			return nil, parseAZError("invalid patch control line: "+l,
				"patch_text takes '@@' anchors and ' ', '-', '+' lines only; remove the line")
		case l == "":
			cur.Old = append(cur.Old, "")
			cur.New = append(cur.New, "")
			hasBody = true
		case l[0] == ' ':
			cur.Old = append(cur.Old, l[1:])
			cur.New = append(cur.New, l[1:])
			hasBody = true
		case l[0] == '+':
			cur.New = append(cur.New, l[1:])
			hasBody = true
		case l[0] == '-':
			cur.Old = append(cur.Old, l[1:])
			hasBody = true
		default:
			return nil, parseAZError("invalid patch line prefix: "+l,
				"start every line with ' ' (unchanged), '-' (removed) or '+' (added)")
		}
		if !hasLine {
			cur.Line, hasLine = first+i, true
		}
	}
	if hasBody {
		chunks = append(chunks, cur)
	}
	return chunks, nil
}

func parseAZIsHeader(l string) bool {
	for _, h := range []string{"*** Update File:", "*** Add File:", "*** Delete File:", codexEndMarker} {
		if strings.HasPrefix(l, h) {
			return true
		}
	}
	return false
}

func parseAZError(msg, hint string) *edit.Error {
	return &edit.Error{Code: edit.CodeBadRequest, Message: msg, Hint: hint}
}

func parseEqualLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parsePySplitLines splits s as Python's str.splitlines: on "\n", "\r",
// "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", U+0085, U+2028 and U+2029,
// with no empty last line for a trailing line break.
func parsePySplitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\u0085', '\u2028', '\u2029':
			lines = append(lines, s[start:i])
			i += size
			if r == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
		default:
			i += size
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// parsePyTrimBlank drops the lines at either end that are empty after
// Python's str.strip.
func parsePyTrimBlank(lines []string) []string {
	for len(lines) > 0 && parsePyStrip(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && parsePyStrip(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// parsePyStrip is Python's str.strip(): it also strips "\x1c"–"\x1f",
// which Go's unicode.IsSpace does not count as space.
func parsePyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= '\x1c' && r <= '\x1f')
	})
}
