package ops

import (
	"context"
	"slices"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// ReadRequest asks for a file's text, whole or a range of lines.
type ReadRequest struct {
	Path     string
	LineFrom int // 1-based first line; 0 means 1
	LineTo   int // 1-based last line, inclusive; 0 or -1 means the last
	Caller   string
}

// ReadResult is a file's text. Version is the whole file's, whatever range
// was asked for.
type ReadResult struct {
	Path       string // absolute, resolved
	Content    string // the requested lines with their line endings
	Version    string
	TotalLines int
	LineFrom   int // the range returned (LineTo < LineFrom when empty)
	LineTo     int
	Size       int64
	BOM        bool
	EOL        string // dominant line ending: LF, CRLF or CR
}

// Read reads a text file and records that the caller saw its version.
func (e *Engine) Read(_ context.Context, req ReadRequest) (*ReadResult, error) {
	const op = "read"
	from, to := req.LineFrom, req.LineTo
	if from < 0 {
		return nil, fserr.New(fserr.BadRequest, op, req.Path, "line_from must be >= 1 (got %d)", from).
			WithHint("line numbers start at 1; omit line_from to read from the first line")
	}
	if to > 0 && from > to {
		return nil, fserr.New(fserr.BadRequest, op, req.Path, "line_to (%d) must be >= line_from (%d)", to, from).
			WithHint("pass a line_to of line_from or more, or omit it to read to the end")
	}
	tf, err := e.ws.ReadText(req.Path)
	if fserr.CodeOf(err) == fserr.TooLarge && (from > 1 || to > 0) {
		return e.readLines(req)
	}
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	want := to
	if want <= 0 {
		want = -1
	}
	text, total := edit.Lines(tf.Content, max(from, 1), want)
	from = max(from, 1)
	if to <= 0 || to > total {
		to = total
	}
	e.fresh.Saw(req.Caller, tf.Path.Abs, tf.Version)
	return &ReadResult{
		Path: tf.Path.Abs, Content: text, Version: tf.Version, TotalLines: total,
		LineFrom: from, LineTo: to, Size: int64(len(tf.Content)), BOM: tf.BOM,
		EOL: edit.DetectEOL(tf.Content).Name(),
	}, nil
}

// readLines reads a line range of a file too large to hold (over
// workspace.TextLimit) in one streaming pass: a grep hit in a large log can
// be read around. A whole such file is still too_large.
func (e *Engine) readLines(req ReadRequest) (*ReadResult, error) {
	to := req.LineTo
	if to <= 0 {
		to = -1
	}
	tl, err := e.ws.ReadTextLines(req.Path, req.LineFrom, to)
	if err != nil {
		return nil, fserr.From("read", req.Path, err)
	}
	from := max(req.LineFrom, 1)
	if to < 0 || to > tl.TotalLines {
		to = tl.TotalLines
	}
	e.fresh.Saw(req.Caller, tl.Path.Abs, tl.Version)
	return &ReadResult{
		Path: tl.Path.Abs, Content: string(tl.Content), Version: tl.Version, TotalLines: tl.TotalLines,
		LineFrom: from, LineTo: to, Size: tl.Size, BOM: tl.BOM, EOL: tl.EOL.Name(),
	}, nil
}

// DirViewLimit caps the entries ViewDir lists, so a huge tree cannot make
// an unbounded answer.
const DirViewLimit = 1000

// DirViewResult is a directory as str_replace_editor's view shows it.
type DirViewResult struct {
	Path      string // absolute, resolved
	Output    string // edit.ViewDir's text
	Entries   int    // listed, the directory itself not counted
	Truncated bool   // more than DirViewLimit entries existed
}

// ViewDir lists the directory p two levels deep without hidden items, as
// Anthropic's str_replace_editor views a directory (find -maxdepth 2 -not
// -path '*/.*'), through the workspace's listing: confined to the roots,
// links listed but not entered, subdirectories it cannot read skipped.
// find prints in the directories' own order; the entries here are sorted
// by path (byte order) so the same tree always reads the same. Past
// DirViewLimit the listing is cut, and the text says so. A file is
// invalid_target, a missing path not_found.
func (e *Engine) ViewDir(_ context.Context, p string) (*DirViewResult, error) {
	l, err := e.ws.List(p, workspace.ListOptions{Recursive: true, MaxDepth: 2, SkipHidden: true, Limit: DirViewLimit})
	if err != nil {
		return nil, fserr.From("view", p, err)
	}
	rels := make([]string, len(l.Entries))
	for i, en := range l.Entries {
		rels[i] = en.Rel
	}
	slices.Sort(rels)
	cut := 0
	if l.Truncated {
		cut = DirViewLimit
	}
	return &DirViewResult{Path: l.Path.Abs, Output: edit.ViewDir(p, rels, cut), Entries: len(rels), Truncated: l.Truncated}, nil
}
