package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/edit/patch"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// patchDiffMax caps the unified diff shown in a patch result.
const patchDiffMax = 128 << 10

type patchArgs struct {
	Patch  string `json:"patch" jsonschema:"a Codex patch (*** Begin Patch … *** End Patch, any number of files), or with path: the hunks for that one file (@@ anchors, ' '/'-'/'+' lines; the envelope is optional)"`
	Path   string `json:"path,omitempty" jsonschema:"the one file the patch changes (Agent Zero patch_text form); omit for a Codex patch, which names its files"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"check the patch and show its diff without writing anything"`
	// The versions the patch was written against.
	ExpectedVersion  string            `json:"expected_version,omitempty" jsonschema:"with path: the version of that file you last read; the patch fails with stale_version if it changed since"`
	ExpectedVersions map[string]string `json:"expected_versions,omitempty" jsonschema:"file path → the version you last read, for any files the patch touches; if one changed since, nothing is written (stale_version)"`
}

type patchFile struct {
	Path        string `json:"path" jsonschema:"the path as the patch wrote it (a move's destination)"`
	From        string `json:"from,omitempty" jsonschema:"a moved file's source, as the patch wrote it"`
	Action      string `json:"action" jsonschema:"A created, M modified (or moved: see from), D deleted"`
	Version     string `json:"version,omitempty" jsonschema:"the file's new version (absent when deleted or on a dry run)"`
	PrevVersion string `json:"prev_version,omitempty" jsonschema:"the file's version before the patch (absent when created; a move's: its source's)"`
	LineNote    string `json:"line_note,omitempty" jsonschema:"how the patch moved the file's line numbers, numbered as before it"`
}

type patchResult struct {
	Files   []patchFile `json:"files" jsonschema:"one entry per file whose state changed"`
	DryRun  bool        `json:"dry_run" jsonschema:"nothing was written"`
	Notices []string    `json:"notices,omitempty" jsonschema:"e.g. a file changed since your last read"`
}

func patchFiles(ctx context.Context, c *Call, in patchArgs) (string, patchResult, error) {
	const op = "patch"
	text, path := in.Patch, in.Path
	var (
		written map[string]string // rewritten paths: absolute → as the patch wrote them
		err     error
	)
	if path != "" {
		if path, err = c.Path(op, path); err != nil {
			return "", patchResult{}, err
		}
		if err := c.samePatchFile(op, text, in.Path, path); err != nil {
			return "", patchResult{}, err
		}
	} else if text, written, err = c.patchPaths(op, text); err != nil {
		return "", patchResult{}, err
	}
	versions, err := c.patchVersions(op, in)
	if err != nil {
		return "", patchResult{}, err
	}
	r, err := c.srv.eng.Patch(ctx, ops.PatchRequest{Patch: text, Path: path, DryRun: in.DryRun, Diff: true, ExpectedVersions: versions, ExpectedVersion: in.ExpectedVersion, Caller: c.Caller,
		IgnoreHeader: path != ""})
	if err != nil {
		return "", patchResult{}, err
	}
	out := patchResult{Files: make([]patchFile, 0, len(r.Files)), DryRun: r.DryRun, Notices: r.Notices}
	var b strings.Builder
	if r.DryRun {
		b.WriteString("Dry run: nothing was written. The patch applies cleanly and would change:\n")
	} else {
		b.WriteString("Success. Updated the following files:\n")
	}
	var shifted []string
	for _, f := range r.Files {
		name, from := f.Path, f.From
		if in.Path != "" {
			name = c.display(f.Abs)
		}
		if w, ok := written[name]; ok {
			name = w
		}
		if w, ok := written[from]; ok {
			from = w
		}
		pf := patchFile{Path: name, From: from, Action: f.Action, Version: f.Version, PrevVersion: f.PrevVersion,
			LineNote: edit.ShiftNote(f.Shifts)}
		out.Files = append(out.Files, pf)
		b.WriteString(f.Action)
		b.WriteByte(' ')
		b.WriteString(name)
		if from != "" {
			fmt.Fprintf(&b, " (moved from %s)", from)
		}
		if f.Version != "" {
			b.WriteString("  (version ")
			b.WriteString(f.Version)
			b.WriteByte(')')
		}
		b.WriteByte('\n')
		if pf.LineNote != "" && !r.DryRun {
			where := name
			if from != "" {
				where += " (numbered as " + from + " was)"
			}
			shifted = append(shifted, fmt.Sprintf("Note: in %s, %s; use the new numbers for line edits.\n", where, pf.LineNote))
		}
	}
	for _, n := range r.Notices {
		fmt.Fprintf(&b, "Note: %s.\n", n)
	}
	for _, n := range shifted {
		b.WriteString(n)
	}
	if r.Diff != "" {
		b.WriteString("\n")
		b.WriteString(capText(unwriteDiff(r.Diff, written), patchDiffMax, "diff"))
	}
	return b.String(), out, nil
}

// samePatchFile refuses a single-file patch whose envelope updates
// another file than path. Agent Zero's patch_text ignores the header
// (path wins), which silently edits path with hunks meant for the other
// file whenever their context happens to match; a model used to Codex
// patches fills in both, so here they must agree. The engine checks the
// same against the workspace's roots; this check resolves the header as
// the session resolves paths, so the engine is told to skip its own.
// Both sides are resolved (links followed), as the engine resolves
// them: an absolute path and the relative header a model writes in its
// envelope, "./a.txt", or a link and its target, are one file. A patch
// that does not parse, or a path that does not resolve, is left for the
// engine to report.
func (c *Call) samePatchFile(op, text, given, abs string) error {
	p, err := patch.ParseAgentZero(text, given)
	if err != nil || p.Files[0].Header == "" {
		return nil
	}
	name := p.Files[0].Header
	other, err := c.Path(op, name)
	if err != nil {
		return err // outside the session's roots, say: that error, not a mismatch
	}
	if other == abs {
		return nil
	}
	same, err := c.srv.eng.SameFile(abs, other)
	if err != nil {
		return fserr.From(op, name, err)
	}
	if !same {
		return ops.HeaderMismatch(op, name, given)
	}
	return nil
}

// patchVersions is the patch's expected_versions by absolute path (the
// session resolves the names; expected_version goes to the engine with
// path as it is).
func (c *Call) patchVersions(op string, in patchArgs) (map[string]string, error) {
	if len(in.ExpectedVersions) == 0 {
		return nil, nil
	}
	versions := make(map[string]string, len(in.ExpectedVersions))
	for p, v := range in.ExpectedVersions {
		abs, err := c.Path(op, p)
		if err != nil {
			return nil, err
		}
		versions[abs] = v
	}
	return versions, nil
}

// patchPaths checks the files a Codex patch names against the session's
// roots. When the session's first root is not the workspace's, relative
// paths would resolve differently in ops, so the patch is rewritten with
// absolute paths; written maps each of them back to the name the patch
// gave, for the result. A patch that does not parse is passed on
// unchanged for ops to report.
func (c *Call) patchPaths(op, text string) (_ string, written map[string]string, _ error) {
	c.sess.mu.Lock()
	restricted := c.sess.restricted
	c.sess.mu.Unlock()
	if !restricted {
		return text, nil, nil
	}
	p, err := patch.Parse(text)
	if err != nil {
		return text, nil, nil
	}
	written = map[string]string{}
	for i := range p.Files {
		f := &p.Files[i]
		for _, name := range []*string{&f.Path, &f.MoveTo} {
			if *name == "" {
				continue
			}
			abs, err := c.Path(op, *name)
			if err != nil {
				return "", nil, err
			}
			if !filepath.IsAbs(*name) {
				written[abs] = *name
				*name = abs
			}
		}
	}
	if len(written) == 0 || c.base() == c.srv.eng.Workspace().Roots()[0] {
		return text, nil, nil
	}
	return patch.Format(p), written, nil
}

// unwriteDiff names the files in diff's headers as the patch wrote them
// (see patchPaths).
func unwriteDiff(diff string, written map[string]string) string {
	if len(written) == 0 {
		return diff
	}
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		for _, side := range []string{"--- a/", "+++ b/"} {
			rest, ok := strings.CutPrefix(l, side)
			if !ok {
				continue
			}
			name := strings.TrimSuffix(rest, "\n")
			if w, ok := written[name]; ok {
				lines[i] = side + w + rest[len(name):]
			}
		}
	}
	return strings.Join(lines, "")
}
