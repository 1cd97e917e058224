package ops

import (
	"context"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// EditLinesRequest edits by line numbers, which are only meaningful for
// the version the caller read: it needs ExpectedVersion, or a Caller whose
// last read of the file is current.
type EditLinesRequest struct {
	Path            string
	Edits           []edit.LineEdit
	ExpectedVersion string
	Diff            bool
	DryRun          bool
	Caller          string
	// LinesStaleAfterMove: as EditRequest's, for edits that move lines
	// (Shifts).
	LinesStaleAfterMove bool `json:",omitempty"`
}

// LinesResult describes a line edit or insert.
type LinesResult struct {
	Path         string
	Version      string
	PrevVersion  string
	StartLine    int
	EndLine      int
	TotalLines   int
	Snippet      string
	Diff         string
	DryRun       bool
	UndoRecorded bool
	Shifts       []edit.Shift // how the change moved the lines it left whole (nil: none moved)
	// Before and After are the whole content before and after; callers
	// must not modify them. They stay out of JSON (the connector).
	Before []byte `json:"-"`
	After  []byte `json:"-"`
}

// EditLines applies line edits (edit.EditLines) to a freshly read file. A
// commit that finds the file changed since the read starts again from the
// read (see replan), whose freshness check then reports stale_version: the
// caller's line numbers belong to the version it read.
func (e *Engine) EditLines(ctx context.Context, req EditLinesRequest) (*LinesResult, error) {
	const op = "edit_lines"
	var res *LinesResult
	err := e.replan(ctx, op, req.Path, e.lockKeys(!req.DryRun, req.Path), func() error {
		tf, err := e.readForChange(op, req.Path, req.DryRun)
		if err != nil {
			return err
		}
		if err := e.requireFresh(op, req.Path, req.Caller, req.ExpectedVersion, tf); err != nil {
			return err
		}
		r, err := edit.EditLines(tf.Content, req.Edits, req.Diff, req.Path)
		if err != nil {
			return fserr.From(op, req.Path, err)
		}
		res, err = e.finishLines(op, req.Path, req.Caller, req.DryRun, true, req.LinesStaleAfterMove, tf, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// InsertRequest inserts text after a line (0 = top).
type InsertRequest struct {
	Path            string
	After           int
	Text            string
	ExpectedVersion string
	Diff            bool
	Caller          string
}

// Insert inserts text after line After, as Anthropic's and AIO's insert
// command: it needs no prior read, so it does not vouch for the caller's
// view of the rest of the file either (see Tracker.Changed). Without
// ExpectedVersion, an insert that finds the file changed at its commit is
// planned again against the new content (see replan).
func (e *Engine) Insert(ctx context.Context, req InsertRequest) (*LinesResult, error) {
	const op = "insert"
	var res *LinesResult
	err := e.replan(ctx, op, req.Path, e.lockKeys(true, req.Path), func() error {
		tf, err := e.readForChange(op, req.Path, false)
		if err != nil {
			return err
		}
		if err := checkVersion(op, req.Path, req.ExpectedVersion, tf.Version); err != nil {
			return err
		}
		r, err := edit.Insert(tf.Content, req.After, req.Text, req.Diff, req.Path)
		if err != nil {
			return fserr.From(op, req.Path, err)
		}
		res, err = e.finishLines(op, req.Path, req.Caller, false, req.ExpectedVersion != "", false, tf, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// finishLines commits a line edit or insert. knew says the caller proved
// it had seen the version edited (a fresh read, or the expected version);
// otherwise its view advances only if it was current (Tracker.Changed).
// staleAfterMove leaves its line numbers stale when lines moved.
func (e *Engine) finishLines(op, path, caller string, dry, knew, staleAfterMove bool, tf *workspace.TextFile, r *edit.LinesResult) (*LinesResult, error) {
	res := &LinesResult{Path: tf.Path.Abs, Version: tf.Version, PrevVersion: tf.Version, StartLine: r.StartLine,
		EndLine: r.EndLine, TotalLines: r.TotalLines, Snippet: r.Snippet, Diff: r.Diff, DryRun: dry,
		Before: tf.Content, After: r.Content, Shifts: r.Shifts}
	if dry || string(r.Content) == string(tf.Content) {
		return res, nil
	}
	v, undo, err := e.commitText(op, path, r.Content, tf.Version)
	if err != nil {
		return nil, err
	}
	res.Version, res.UndoRecorded = v, undo
	e.fresh.Changed(caller, tf.Path.Abs, tf.Version, v, knew, staleAfterMove && r.Shifts != nil)
	e.log.Info("Edit lines", "op", op, "path", tf.Path.Abs)
	return res, nil
}

// requireFresh enforces DESIGN §5 for line-number edits, in Agent Zero's
// wording: no known read is must_read, an outdated one is stale_version,
// and so is a current one whose lines the caller's own change moved
// without telling it where (LinesStaleAfterMove).
func (e *Engine) requireFresh(op, path, caller, expected string, tf *workspace.TextFile) error {
	if expected != "" {
		if err := workspace.CheckVersionFormat(op, path, expected); err != nil {
			return err
		}
		if expected != tf.Version {
			return fserr.New(fserr.StaleVersion, op, path, "error patching %s: file changed since last read - re-read to get current line numbers", path).
				WithHint("read the file again and use the new line numbers and version")
		}
		return nil
	}
	seen, linesKnown, ok := e.fresh.SeenLines(caller, tf.Path.Abs)
	switch {
	case caller == "" || !ok:
		return fserr.New(fserr.MustRead, op, path, "error patching %s: read file before patching - line numbers unknown", path).
			WithHint("read the file first (or pass the version you read as expected_version), then edit by line numbers")
	case seen != tf.Version:
		return fserr.New(fserr.StaleVersion, op, path, "error patching %s: file changed since last read - re-read to get current line numbers", path).
			WithHint("read the file again and use the new line numbers")
	case !linesKnown:
		// The caller's own change moved lines, and it was not told where.
		return fserr.New(fserr.StaleVersion, op, path, "error patching %s: file changed since last read - re-read to get current line numbers", path).
			WithHint("your last change moved lines: read the file again and use the new line numbers")
	}
	return nil
}
