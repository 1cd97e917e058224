package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/edit/patch"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// PatchRequest applies a context patch. Without Path, Patch is a Codex
// apply_patch text that may touch several files; with Path, it is Agent
// Zero's patch_text for that one file (the envelope optional).
type PatchRequest struct {
	Patch  string
	Path   string
	DryRun bool // plan and diff, write nothing
	Diff   bool // include a unified diff (always on for dry runs)
	Caller string
}

// PatchResult describes an applied (or planned) patch.
type PatchResult struct {
	// Added, Modified and Deleted list the patch's sections as Codex
	// reports them (a moved file under its destination).
	Added, Modified, Deleted []string
	Files                    []PatchFile // one per file whose state changed
	Hunks                    []patch.HunkResult
	Diff                     string
	DryRun                   bool
	Notices                  []string
}

// PatchFile is one file's outcome.
type PatchFile struct {
	Path         string // as the patch wrote it
	Abs          string
	Action       string // "A" created, "M" modified, "D" deleted
	Version      string // new version ("" when deleted, or on a dry run)
	PrevVersion  string // "" when it did not exist
	UndoRecorded bool
}

// Summary renders Codex's success listing.
func (r *PatchResult) Summary() string {
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	for _, p := range r.Added {
		fmt.Fprintf(&b, "A %s\n", p)
	}
	for _, p := range r.Modified {
		fmt.Fprintf(&b, "M %s\n", p)
	}
	for _, p := range r.Deleted {
		fmt.Fprintf(&b, "D %s\n", p)
	}
	return b.String()
}

// Patch parses, plans and commits a patch: every hunk of every file is
// resolved in memory first, then all files are committed in one
// transaction (workspace.Commit), or nothing is.
func (e *Engine) Patch(_ context.Context, req PatchRequest) (*PatchResult, error) {
	const op = "patch"
	if !req.DryRun {
		if err := e.writable(op, req.Path); err != nil {
			return nil, err
		}
	}
	var (
		p   *patch.Patch
		err error
	)
	if req.Path != "" {
		p, err = patch.ParseAgentZero(req.Patch, req.Path)
	} else {
		p, err = patch.Parse(req.Patch)
	}
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	if len(p.Files) == 0 {
		return nil, fserr.New(fserr.BadRequest, op, "", "No files were modified.").
			WithHint("the patch has no '*** Add File:', '*** Update File:' or '*** Delete File:' section")
	}
	src := &patchSource{ws: e.ws, versions: map[string]string{}}
	plan, err := patch.Build(p, src)
	if err != nil {
		return nil, patchError(op, p.Dialect, err)
	}
	res := &PatchResult{Added: plan.Added, Modified: plan.Modified, Deleted: plan.Deleted, Hunks: plan.Hunks, DryRun: req.DryRun}
	changes := make([]workspace.Change, len(plan.Changes))
	for i, c := range plan.Changes {
		ch := workspace.Change{Path: c.Canonical, Delete: c.Delete, Content: c.New}
		if c.Existed {
			ch.ExpectedVersion = src.versions[c.Canonical]
		} else {
			ch.ExpectAbsent = true
		}
		changes[i] = ch
		action := "M"
		switch {
		case c.Delete:
			action = "D"
		case !c.Existed:
			action = "A"
		}
		res.Files = append(res.Files, PatchFile{Path: c.Path, Abs: c.Canonical, Action: action, PrevVersion: ch.ExpectedVersion})
		if seen, ok := e.fresh.Seen(req.Caller, c.Canonical); ok && c.Existed && seen != ch.ExpectedVersion {
			res.Notices = append(res.Notices, fmt.Sprintf("%s changed since you last read it; the patch applied to its current content", c.Path))
		}
	}
	if req.Diff || req.DryRun {
		res.Diff = planDiff(plan)
	}
	if req.DryRun || len(changes) == 0 {
		return res, nil
	}
	done, err := e.ws.Commit(changes, workspace.CommitOptions{Op: op})
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	for i, d := range done {
		res.Files[i].Version, res.Files[i].UndoRecorded = d.Version, d.UndoRecorded
		if d.Deleted {
			e.fresh.Forget(req.Caller, d.Path.Abs)
		} else {
			e.fresh.Saw(req.Caller, d.Path.Abs, d.Version)
		}
	}
	e.log.Info("Patch", "files", len(done), "hunks", len(plan.Hunks))
	return res, nil
}

// planDiff renders every change as one unified diff, paths as the patch
// wrote them.
func planDiff(plan *patch.Plan) string {
	var b strings.Builder
	for _, c := range plan.Changes {
		oldName, newName := "a/"+c.Path, "b/"+c.Path
		if !c.Existed {
			oldName = "/dev/null"
		}
		if c.Delete {
			newName = "/dev/null"
		}
		b.WriteString(edit.DiffText(oldName, newName, c.Old, c.New))
	}
	return b.String()
}

// patchError words planner failures for the patch's dialect.
func patchError(op string, d patch.Dialect, err error) error {
	var se *patch.SourceError
	if !errors.As(err, &se) {
		return fserr.From(op, "", err)
	}
	cause := fserr.From(op, se.Path, se.Err)
	msg := cause.Message
	if cause.Code == fserr.NotFound {
		msg = "No such file or directory (os error 2)"
	}
	out := *cause
	out.Path = se.Path
	switch {
	case d == patch.AgentZero:
		out.Message = fmt.Sprintf("%s: %s", se.Path, cause.Message)
	case se.Kind == patch.Delete:
		out.Message = "Failed to delete file " + se.Path
		out.Hint = strings.TrimSpace(cause.Message + "; " + cause.Hint)
	case se.Kind == patch.Update:
		out.Message = fmt.Sprintf("Failed to read file to update %s: %s", se.Path, msg)
	default:
		out.Message = fmt.Sprintf("Failed to write file %s: %s", se.Path, msg)
	}
	return &out
}

// patchSource reads the files a patch names through the workspace and
// remembers the version each was planned against.
type patchSource struct {
	ws       *workspace.Workspace
	versions map[string]string
}

func (s *patchSource) Canonical(p string) (string, error) {
	r, err := s.ws.Resolve(p)
	if err != nil {
		return "", err
	}
	return r.Abs, nil
}

func (s *patchSource) Read(abs string) ([]byte, bool, error) {
	tf, err := s.ws.ReadText(abs)
	if fserr.Is(err, fserr.NotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.versions[abs] = tf.Version
	return tf.Content, true, nil
}
