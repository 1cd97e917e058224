package ops

import (
	"context"
	"fmt"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// EditRequest replaces old text with new text in one file.
type EditRequest struct {
	Path            string
	Old, New        string
	Mode            edit.Mode  // unique (default), all, first, last
	Strict          bool       // exact tier only
	Names           edit.Names // the front's names for what a no_match hint mentions
	ExpectedVersion string
	Diff            bool // include a unified diff
	DryRun          bool // compute everything, write nothing
	Caller          string
	// LinesStaleAfterMove makes a change that moves lines (Shifts) leave
	// the caller's line numbers stale: its next line edit needs a read.
	// For a front whose answer cannot say how lines moved (text_editor's
	// fixed text); others show Shifts and keep the caller fresh. Hosts
	// from before it ignore it.
	LinesStaleAfterMove bool `json:",omitempty"`
}

// EditResult describes a replacement.
type EditResult struct {
	Path         string
	Version      string // after the edit (the current version on a dry run or no-op)
	PrevVersion  string
	Tier         string
	Count        int
	StartLine    int
	EndLine      int
	Snippet      string
	Diff         string
	Changed      bool
	DryRun       bool
	Notice       string // e.g. the file changed since the caller's last read
	UndoRecorded bool
	// Shifts says how the change moved the lines after it (nil: none
	// moved): the caller's view stays fresh, so only this tells it that
	// line numbers it read have moved.
	Shifts []edit.Shift
	// Before and After are the whole content before and after (After ==
	// Before when unchanged); callers must not modify them. They stay out
	// of JSON (the connector) so an edit's result stays small.
	Before []byte `json:"-"`
	After  []byte `json:"-"`
}

// Edit replaces text using the matching ladder (edit.Replace) and commits
// the result atomically. It needs no prior read; when the caller has read
// the file before and it changed since, Notice says so (unless the caller
// named the version it changed: ExpectedVersion). Concurrent edits
// of one file apply one after another; one that finds the file changed at
// its commit is planned again (see replan).
func (e *Engine) Edit(ctx context.Context, req EditRequest) (*EditResult, error) {
	const op = "edit"
	var res *EditResult
	err := e.replan(ctx, op, req.Path, e.lockKeys(!req.DryRun, req.Path), func() (err error) {
		res, err = e.edit(op, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// edit is one attempt of Edit: read, check, plan, commit.
func (e *Engine) edit(op string, req EditRequest) (*EditResult, error) {
	tf, err := e.readForChange(op, req.Path, req.DryRun)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(op, req.Path, req.ExpectedVersion, tf.Version); err != nil {
		return nil, err
	}
	r, err := edit.Replace(tf.Content, req.Old, req.New, edit.ReplaceOptions{Mode: req.Mode, Strict: req.Strict, Diff: req.Diff, Path: req.Path, Names: req.Names})
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	res := &EditResult{
		Path: tf.Path.Abs, Version: tf.Version, PrevVersion: tf.Version, Tier: r.Tier.String(), Count: r.Count,
		StartLine: r.StartLine, EndLine: r.EndLine, Snippet: r.Snippet, Diff: r.Diff, Changed: r.Changed,
		DryRun: req.DryRun, Notice: e.staleNotice(req.Caller, req.ExpectedVersion, tf), Before: tf.Content, After: r.Content, Shifts: r.Shifts,
	}
	if req.DryRun || !r.Changed {
		return res, nil
	}
	v, undo, err := e.commitText(op, req.Path, r.Content, tf.Version)
	if err != nil {
		return nil, err
	}
	res.Version, res.UndoRecorded = v, undo
	// A caller that named the version it changed knew it (as for inserts
	// and line edits).
	e.fresh.Changed(req.Caller, tf.Path.Abs, tf.Version, v, req.ExpectedVersion != "", req.LinesStaleAfterMove && r.Shifts != nil)
	e.log.Info("Edit", "path", tf.Path.Abs, "tier", res.Tier, "count", res.Count)
	return res, nil
}

// readForChange reads path as text for an operation that will write it
// (unless dry), refusing first when the engine is read-only.
func (e *Engine) readForChange(op, path string, dry bool) (*workspace.TextFile, error) {
	if !dry {
		if err := e.writable(op, path); err != nil {
			return nil, err
		}
	}
	tf, err := e.ws.ReadTextLimit(path, EditLimit)
	if err != nil {
		return nil, fserr.From(op, path, err)
	}
	return tf, nil
}

// EditLimit is the largest text file edits, line edits, inserts and
// patches take whole (the edit engine handles 100 MB files in well under a
// second per ladder tier); reads return at most workspace.TextLimit.
const EditLimit = 256 << 20

// commitText writes content over path, guarded by the version it was
// computed from, and returns the new version. A file changed since is a
// changedError (see replan).
func (e *Engine) commitText(op, path string, content []byte, from string) (string, bool, error) {
	res, err := e.commit(op, path, []workspace.Change{{Path: path, Content: content, ExpectedVersion: from}})
	if err != nil {
		return "", false, err
	}
	return res[0].Version, res[0].UndoRecorded, nil
}

func checkVersion(op, path, expected, current string) error {
	if expected == "" || expected == current {
		return nil
	}
	if err := workspace.CheckVersionFormat(op, path, expected); err != nil {
		return err
	}
	return fserr.New(fserr.StaleVersion, op, path, "%s changed since version %s (now %s)", path, expected, current).
		WithHint("re-read the file and retry with its current version")
}

// staleNotice says when the caller's last view of the file is outdated,
// unless it named the version it changed (expected, checked already).
func (e *Engine) staleNotice(caller, expected string, tf *workspace.TextFile) string {
	if expected != "" {
		return ""
	}
	seen, ok := e.fresh.Seen(caller, tf.Path.Abs)
	if !ok || seen == tf.Version {
		return ""
	}
	return fmt.Sprintf("%s changed since you last read it; the edit applied to its current content", tf.Path.Given)
}
