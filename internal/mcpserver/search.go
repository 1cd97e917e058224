package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// Search caps: what one call shows a model.
const (
	grepDefaultResults = 100
	grepMaxResults     = 2000
	grepMaxLineBytes   = 1000 // longer lines (minified files) are cut
	grepMaxContext     = 20
	searchMaxBytes     = 256 << 10
	globMaxResults     = 1000
)

type grepArgs struct {
	Pattern         string `json:"pattern" jsonschema:"RE2 regular expression (Go syntax), or literal text with fixed_strings"`
	Path            string `json:"path,omitempty" jsonschema:"directory (or one file) to search; default the first root"`
	Glob            string `json:"glob,omitempty" jsonschema:"only files matching this glob, e.g. *.go, *.{ts,tsx} or src/**/*.ts; a leading ! excludes instead"`
	Type            string `json:"type,omitempty" jsonschema:"only files of this ripgrep type: go, py, js, ts, rust, java, c, cpp, md…"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"match regardless of case"`
	FixedStrings    bool   `json:"fixed_strings,omitempty" jsonschema:"treat pattern as literal text, not a regular expression"`
	Multiline       bool   `json:"multiline,omitempty" jsonschema:"let a match span lines (\\n in the pattern, . matching line breaks too); the match is shown with every line it touches"`
	Context         int    `json:"context,omitempty" jsonschema:"lines of context to show before and after each match (at most 20)"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"most matches to return; default 100, at most 2000"`
}

type grepMatch struct {
	Path   string   `json:"path" jsonschema:"relative to the first root when inside it, else absolute"`
	Line   int      `json:"line" jsonschema:"1-based line number"`
	Text   string   `json:"text" jsonschema:"the matching line (a line over 1000 bytes is cut, as in the text)"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

type grepResult struct {
	Matches       []grepMatch `json:"matches"`
	Truncated     bool        `json:"truncated" jsonschema:"more matches exist than were returned (also when the 256 KiB output cap left some out)"`
	FilesSearched int         `json:"files_searched"`
	FilesMatched  int         `json:"files_matched" jsonschema:"files the returned matches are in"`
	FilesSkipped  int         `json:"files_skipped_size,omitempty" jsonschema:"files over 1 MiB, not searched (name one as path to search it)"`
	FilesBinary   int         `json:"files_skipped_binary,omitempty" jsonschema:"binary files (a NUL byte in the first 8 KiB), not searched"`
	FilesCut      int         `json:"files_cut_binary,omitempty" jsonschema:"files whose first NUL byte comes after their first 8 KiB, searched only up to the line before it (see binary_cuts)"`
	Cuts          []grepCut   `json:"binary_cuts,omitempty" jsonschema:"where the first files_cut_binary files (at most 10) stopped"`
	Unreadable    int         `json:"files_unreadable,omitempty" jsonschema:"files and directories that could not be read, not searched"`
}

type grepCut struct {
	Path string `json:"path" jsonschema:"relative to the first root when inside it, else absolute"`
	Line int    `json:"line" jsonschema:"the line holding the NUL byte, the first not searched; read from it to see the rest"`
}

func grepFiles(ctx context.Context, c *Call, in grepArgs) (string, grepResult, error) {
	return grepIn(ctx, c.local(), in)
}

// grepIn runs a grep in pl and renders it ripgrep style.
func grepIn(ctx context.Context, pl place, in grepArgs) (string, grepResult, error) {
	const op = "grep"
	switch {
	case in.Context < 0 || in.Context > grepMaxContext:
		return "", grepResult{}, fserr.New(fserr.BadRequest, op, in.Path, "context must be between 0 and %d (got %d)", grepMaxContext, in.Context)
	case in.MaxResults < 0:
		return "", grepResult{}, fserr.New(fserr.BadRequest, op, in.Path, "max_results must not be negative (got %d)", in.MaxResults)
	}
	limit := in.MaxResults
	if limit == 0 {
		limit = grepDefaultResults
	}
	limit = min(limit, grepMaxResults)
	dir := in.Path
	if dir == "" {
		dir = pl.base
	}
	p, err := pl.path(op, dir)
	if err != nil {
		return "", grepResult{}, err
	}
	req := ops.GrepRequest{
		Path: p, Pattern: in.Pattern, Type: in.Type, CaseInsensitive: in.CaseInsensitive, FixedStrings: in.FixedStrings,
		ContextBefore: in.Context, ContextAfter: in.Context, MaxResults: limit, RespectGitignore: true, Multiline: in.Multiline,
		// A file named as the path is searched whatever its size: it is
		// what the caller asked for. The 1 MiB cap is for trees.
		NamedFileUnlimited: true,
	}
	if g := in.Glob; g != "" {
		if rest, ok := strings.CutPrefix(g, "!"); ok {
			req.Exclude = []string{rest}
		} else {
			req.Include = []string{g}
		}
	}
	r, err := pl.eng.Grep(ctx, req)
	if err != nil {
		return "", grepResult{}, err
	}
	out := grepResult{Matches: make([]grepMatch, 0, len(r.Matches)), Truncated: r.Truncated,
		FilesSearched: r.FilesSearched, FilesMatched: r.FilesMatched, FilesSkipped: r.FilesSkippedSize,
		FilesBinary: r.FilesSkippedBinary, FilesCut: r.FilesCutBinary, Unreadable: r.FilesUnreadable}
	for _, c := range r.CutBinary {
		out.Cuts = append(out.Cuts, grepCut{Path: pl.display(c.Path), Line: c.Line})
	}
	var body strings.Builder
	prevFile, prevLine := "", 0
	shown, size := 0, 0 // size: of the structured matches, roughly
	for i, m := range r.Matches {
		if body.Len() >= searchMaxBytes || size >= searchMaxBytes {
			break
		}
		// The structured matches are the ones shown, cut as shown: whole,
		// a search through long lines (minified files) would make an
		// answer of many MiB. Each repeats its context, so they have a
		// budget of their own.
		name := pl.display(m.File)
		gm := grepMatch{Path: name, Line: m.LineNumber, Text: cutLines(m.LineContent),
			Before: cutEach(m.ContextBefore), After: cutEach(m.ContextAfter)}
		out.Matches = append(out.Matches, gm)
		size += len(gm.Path) + len(gm.Text) + 64
		for _, l := range gm.Before {
			size += len(l) + 4
		}
		for _, l := range gm.After {
			size += len(l) + 4
		}
		shown++
		fresh := name != prevFile // nothing of this file printed yet
		first := m.LineNumber - len(m.ContextBefore)
		if in.Context > 0 && prevFile != "" && (fresh || first > prevLine+1) {
			body.WriteString("--\n")
		}
		for k, l := range m.ContextBefore {
			if n := first + k; fresh || n > prevLine {
				grepLine(&body, name, '-', n, l)
			}
		}
		last := m.LineNumber
		// A multiline match's text holds every line it touches.
		for k, l := range strings.Split(m.LineContent, "\n") {
			if last = m.LineNumber + k; fresh || last > prevLine {
				grepLine(&body, name, ':', last, l)
			}
		}
		next := int(^uint(0) >> 1) // the next match's line in this file
		if i+1 < len(r.Matches) && r.Matches[i+1].File == m.File {
			next = r.Matches[i+1].LineNumber
		}
		printed := last
		for k, l := range m.ContextAfter {
			n := last + 1 + k
			if n >= next {
				break
			}
			grepLine(&body, name, '-', n, l)
			printed = n
		}
		prevFile, prevLine = name, printed
	}

	if shown < len(r.Matches) {
		out.Truncated = true
		files := map[string]bool{}
		for _, m := range out.Matches {
			files[m.Path] = true
		}
		out.FilesMatched = len(files)
	}

	var b strings.Builder
	b.Grow(body.Len() + 256)
	where := pl.display(r.Path)
	if len(r.Matches) == 0 {
		fmt.Fprintf(&b, "No matches for %s in %s (%s searched).\n", strconv.Quote(in.Pattern), where, plural(r.FilesSearched, "file", "files"))
	} else {
		fmt.Fprintf(&b, "%s in %s under %s (%s searched):\n", plural(len(r.Matches), "match", "matches"),
			plural(r.FilesMatched, "file", "files"), where, plural(r.FilesSearched, "file", "files"))
	}
	b.WriteString(body.String())
	if shown < len(r.Matches) {
		fmt.Fprintf(&b, "[Output cut at 256 KiB: %d more matches not shown. Narrow the search with path, glob or type.]\n", len(r.Matches)-shown)
	}
	if r.Truncated {
		fmt.Fprintf(&b, "[More matches exist beyond these %d: narrow the search, or raise max_results (at most %d).]\n", len(r.Matches), grepMaxResults)
	}
	if r.FilesSkippedSize > 0 {
		fmt.Fprintf(&b, "[%s over 1 MiB not searched; pass one as path to search it.]\n", plural(r.FilesSkippedSize, "file", "files"))
	}
	if r.FilesSkippedBinary > 0 {
		fmt.Fprintf(&b, "[%s not searched: grep searches text only.]\n", plural(r.FilesSkippedBinary, "binary file", "binary files"))
	}
	if r.FilesCutBinary > 0 {
		cutNote(&b, r.FilesCutBinary, out.Cuts)
	}
	if n := r.FilesUnreadable; n > 0 {
		eg := ""
		if u := r.Unreadable; u != nil {
			eg = fmt.Sprintf(", e.g. %s (%s)", textName(pl.display(u.Path)), u.Error)
		}
		verb := "were"
		if n == 1 {
			verb = "was"
		}
		fmt.Fprintf(&b, "[%s could not be read and %s left out%s.]\n", plural(n, "file or directory", "files or directories"), verb, eg)
	}
	return b.String(), out, nil
}

// cutNote tells of n files searched only up to a NUL byte, listing where
// cuts (the first of them) stopped: their matches further on are missing
// from the output, and the lines there are often text all the same (a
// log with a stray NUL), which read shows.
func cutNote(b *strings.Builder, n int, cuts []grepCut) {
	fmt.Fprintf(b, "[%s searched only up to a NUL byte past the first 8 KiB", plural(n, "file", "files"))
	for i, c := range cuts {
		sep := ", "
		if i == 0 {
			sep = "; not searched: "
		}
		fmt.Fprintf(b, "%s%s from line %d on", sep, textName(c.Path), c.Line)
	}
	if more := n - len(cuts); more > 0 && len(cuts) > 0 {
		fmt.Fprintf(b, " (and %d more)", more)
	}
	b.WriteString(". Read those lines with read (line_from).]\n")
}

// grepLine writes one line of grep output, ripgrep style: path:N:text
// for a match, path-N-text for context.
func grepLine(b *strings.Builder, path string, sep byte, n int, text string) {
	b.WriteString(textName(path))
	b.WriteByte(sep)
	b.WriteString(strconv.Itoa(n))
	b.WriteByte(sep)
	b.WriteString(cutLine(text))
	b.WriteByte('\n')
}

// cutLine cuts a line longer than grepMaxLineBytes, saying so.
func cutLine(text string) string {
	if len(text) <= grepMaxLineBytes {
		return text
	}
	return cutUTF8(text, grepMaxLineBytes) + fmt.Sprintf(" … [line cut, %d bytes]", len(text))
}

// cutLines is cutLine for each line of a (multiline) match's text.
func cutLines(text string) string {
	if len(text) <= grepMaxLineBytes {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = cutLine(l)
	}
	return strings.Join(lines, "\n")
}

// cutEach is cutLine for each of lines (context), in a new slice.
func cutEach(lines []string) []string {
	if !slices.ContainsFunc(lines, func(l string) bool { return len(l) > grepMaxLineBytes }) {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cutLine(l)
	}
	return out
}

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"a glob: without / it matches names at any depth (*_test.go); with / paths relative to path (src/**/*.ts); ** spans directories, {a,b} alternatives"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search; default the first root"`
}

type globEntry struct {
	Path  string `json:"path" jsonschema:"relative to the first root when inside it, else absolute"`
	IsDir bool   `json:"is_dir,omitempty"`
}

type globResult struct {
	Entries   []globEntry `json:"entries"`
	Truncated bool        `json:"truncated" jsonschema:"more entries matched than the 1000 returned"`
}

func globFiles(ctx context.Context, c *Call, in globArgs) (string, globResult, error) {
	const op = "glob"
	dir := in.Path
	if dir == "" {
		dir = c.base()
	}
	p, err := c.Path(op, dir)
	if err != nil {
		return "", globResult{}, err
	}
	pattern := in.Pattern
	if pattern != "" && !strings.Contains(pattern, "/") && !strings.HasPrefix(pattern, "**") {
		pattern = "**/" + pattern // a name, at any depth (as ripgrep's -g)
	}
	// Dot-prefixed names are skipped unless the pattern asks for one.
	hidden := strings.HasPrefix(in.Pattern, ".") || strings.Contains(in.Pattern, "/.")
	r, err := c.srv.eng.Glob(ctx, ops.GlobRequest{
		Path: p, Pattern: pattern, FilesOnly: new(false), IncludeMetadata: new(false),
		MaxResults: globMaxResults, RespectGitignore: true, IncludeHidden: hidden,
	})
	if err != nil {
		return "", globResult{}, err
	}
	out := globResult{Entries: make([]globEntry, 0, len(r.Files)), Truncated: r.Truncated}
	var b strings.Builder
	b.Grow(len(r.Files) * 48)
	where := c.display(r.Path)
	if len(r.Files) == 0 {
		fmt.Fprintf(&b, "No files match %s under %s.\n", strconv.Quote(in.Pattern), where)
	} else {
		verb := "match"
		if len(r.Files) == 1 {
			verb = "matches"
		}
		fmt.Fprintf(&b, "%s %s %s under %s:\n", plural(len(r.Files), "entry", "entries"), verb, strconv.Quote(in.Pattern), where)
	}
	for _, f := range r.Files {
		name := c.display(f.Path)
		out.Entries = append(out.Entries, globEntry{Path: name, IsDir: f.IsDirectory})
		b.WriteString(textName(name))
		if f.IsDirectory {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if r.Truncated {
		fmt.Fprintf(&b, "[Truncated at %d entries: use a narrower pattern or path.]\n", globMaxResults)
	}
	return b.String(), out, nil
}
