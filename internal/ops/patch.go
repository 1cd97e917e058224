package ops

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
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
	// ExpectedVersions maps paths the patch touches to the version the
	// caller last saw; a file that changed since fails the whole patch
	// with stale_version.
	ExpectedVersions map[string]string
	// ExpectedVersion is, with Path, that file's expected version (as one
	// more entry of ExpectedVersions); without Path it is a bad request.
	ExpectedVersion string
	Caller          string
	// IgnoreHeader applies a single-file patch to Path whatever file its
	// "*** Update File:" header names, as Agent Zero's patch_text does
	// (text_editor keeps that), or because the front checked the header
	// against its own path rules (MCP's session roots). Without it a
	// header naming another file than Path is refused: the hunks were
	// written for that file, and applying them to Path edits it wherever
	// their context happens to match.
	IgnoreHeader bool
	// LinesStaleAfterMove: as EditRequest's, for each file whose lines
	// the patch moves (PatchFile.Shifts).
	LinesStaleAfterMove bool `json:",omitempty"`
}

// Folded is r with ExpectedVersion moved into ExpectedVersions under
// Path (a copy of the map; r is unchanged). Hosts from before
// ExpectedVersion check only the map, so the hub sends requests folded.
func (r PatchRequest) Folded() PatchRequest {
	if r.ExpectedVersion == "" || r.Path == "" {
		return r
	}
	m := maps.Clone(r.ExpectedVersions)
	if m == nil {
		m = map[string]string{}
	}
	m[r.Path] = r.ExpectedVersion
	r.ExpectedVersions, r.ExpectedVersion = m, ""
	return r
}

// PatchResult describes an applied (or planned) patch.
type PatchResult struct {
	// Added, Modified and Deleted list the patch's sections as Codex
	// reports them (a moved file under its destination).
	Added, Modified, Deleted []string
	Files                    []PatchFile // one per file whose state changed
	Sections                 []PatchSection
	Hunks                    []patch.HunkResult
	Diff                     string
	DryRun                   bool
	Notices                  []string
}

// PatchFile is one file's outcome.
type PatchFile struct {
	Path         string // as the patch wrote it (a move's destination)
	Abs          string
	Action       string // "A" created, "M" modified (or moved to Path), "D" deleted
	Version      string // new version ("" when deleted, or on a dry run)
	PrevVersion  string // "" when it did not exist; a move's: its source's
	UndoRecorded bool
	// From is a move's source, as the patch wrote it: the file moved from
	// there to Path (an Update with "*** Move to:" onto a new path), and
	// is reported once, as Codex reports it ("M Path"), not as a delete
	// and an add.
	From string
	// Shifts says how the patch moved the file's lines, numbered as
	// before it (a move's: as in From); nil when none moved.
	Shifts []edit.Shift
}

// PatchSection is the outcome of one file section of the patch.
type PatchSection struct {
	Action  string // add, update, delete or move
	Path    string // as the patch wrote it; a move's destination
	From    string // a move's source
	Version string // the file's version after the patch ("" when deleted or on a dry run)
	Diff    string // this file's unified diff, when requested
}

// Summary renders Codex's success listing; for a dry run, the same
// listing under a heading that says nothing was written.
func (r *PatchResult) Summary() string {
	var b strings.Builder
	if r.DryRun {
		b.WriteString("Dry run: nothing was written. The patch applies cleanly and would update the following files:\n")
	} else {
		b.WriteString("Success. Updated the following files:\n")
	}
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
// transaction (workspace.Commit), or nothing is. Concurrent patches of one
// file apply one after another; a patch that finds a file changed at its
// commit is planned again from the current files (see replan), and
// ExpectedVersions are checked again.
func (e *Engine) Patch(ctx context.Context, req PatchRequest) (*PatchResult, error) {
	const op = "patch"
	if !req.DryRun {
		if err := e.writable(op, req.Path); err != nil {
			return nil, err
		}
	}
	// Files the patch adds belong to the engine's default user.
	owner, err := e.owner(op, req.Path, "")
	if err != nil {
		return nil, err
	}
	var p *patch.Patch
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
	if req.Path != "" && !req.IgnoreHeader {
		if err := e.sameHeader(op, req.Path, p.Files[0].Header); err != nil {
			return nil, err
		}
	}
	if req.ExpectedVersion != "" && req.Path == "" {
		return nil, fserr.New(fserr.BadRequest, op, "", "expected_version needs path: a Codex patch may change several files").
			WithHint("pass expected_versions: {\"<file>\": \"<version>\"} for the files the patch changes")
	}
	req = req.Folded()
	for _, p := range slices.Sorted(maps.Keys(req.ExpectedVersions)) {
		// A mistyped version is the caller's mistake, not a change of
		// the file (stale_version would send it to re-read).
		if err := workspace.CheckVersionFormat(op, p, req.ExpectedVersions[p]); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, f := range p.Files {
		names = append(names, f.Path)
		if f.MoveTo != "" {
			names = append(names, f.MoveTo)
		}
	}
	// A Codex patch names its files itself: errors name the first.
	display := req.Path
	if display == "" {
		display = names[0]
	}
	var res *PatchResult
	err = e.replan(ctx, op, display, e.lockKeys(!req.DryRun, names...), func() (err error) {
		res, err = e.patch(ctx, op, display, req, p, owner)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// patch is one attempt of Patch: read every file, plan, check, commit.
// Planning stops when ctx is done; the commit, once begun, does not.
func (e *Engine) patch(ctx context.Context, op, display string, req PatchRequest, p *patch.Patch, owner *workspace.Owner) (*PatchResult, error) {
	src := &patchSource{ws: e.ws, versions: map[string]string{}, keys: map[string]string{}, keysRev: map[string]struct{}{},
		links: map[string]namedLink{}, symlinks: map[string]string{}}
	for _, f := range p.Files {
		if err := src.remember(f.Path); err != nil {
			return nil, patchError(op, p.Dialect, src, &patch.SourceError{Kind: f.Kind, Path: f.Path, Err: err})
		}
		if f.MoveTo == "" {
			continue
		}
		if err := src.remember(f.MoveTo); err != nil {
			// The destination is written, not read.
			return nil, patchError(op, p.Dialect, src, &patch.SourceError{Kind: patch.Add, Path: f.MoveTo, Err: err, MoveFrom: f.Path})
		}
	}
	plan, err := patch.BuildContext(ctx, p, src)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, cancelled(op, display, err)
		}
		// A file that changed since the version the caller names is why
		// its hunks no longer apply: say so, rather than that they do not
		// match.
		if serr := staleRead(op, src, req.ExpectedVersions); serr != nil {
			return nil, serr
		}
		return nil, patchError(op, p.Dialect, src, err)
	}
	vouched := vouchedFor(src, req.ExpectedVersions)
	res := &PatchResult{Added: plan.Added, Modified: plan.Modified, Deleted: plan.Deleted, Hunks: plan.Hunks, DryRun: req.DryRun}
	changes := make([]workspace.Change, len(plan.Changes))
	groups := moveGroups(p, src)
	for i, c := range plan.Changes {
		ch := workspace.Change{Path: c.Canonical, Delete: c.Delete, Content: c.New, Owner: owner, Group: groups[c.Canonical]}
		switch {
		case c.Link:
			// The link itself goes (or makes way for a file); the file
			// it led to stays.
			ch.Entry, ch.ExpectLink = true, string(c.Old)
		case c.Existed:
			ch.ExpectedVersion = src.versions[c.Canonical]
		default:
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
		if seen, ok := e.fresh.Seen(req.Caller, c.Canonical); ok && c.Existed && !c.Link && !vouched[c.Canonical] && seen != ch.ExpectedVersion {
			res.Notices = append(res.Notices, fmt.Sprintf("%s changed since you last read it; the patch applied to its current content", c.Path))
		}
	}
	if err := checkExpected(op, src, req.ExpectedVersions); err != nil {
		return nil, err
	}
	moves := movePairs(p, src, plan)
	shifts := changeShifts(plan, moves)
	diffs := map[string]string{}
	if req.Diff || req.DryRun {
		res.Diff = planDiff(plan, moves, diffs)
	}
	versions := map[string]string{}
	if !req.DryRun && len(changes) > 0 {
		known := e.knownAfter(req.Caller, p, src, vouched)
		done, err := e.commit(op, req.Path, changes)
		if err != nil {
			if ce, changed := errors.AsType[*changedError](err); changed {
				// replan plans it again; should it give up, its error
				// names the file as the patch wrote it.
				if fe, ok := fserr.As(commitError(op, p.Dialect, plan, ce.err)); ok {
					ce.err = fe
				}
				return nil, ce
			}
			return nil, commitError(op, p.Dialect, plan, err)
		}
		for i, d := range done {
			res.Files[i].Version, res.Files[i].UndoRecorded = d.Version, d.UndoRecorded
			versions[plan.Changes[i].Canonical] = d.Version
			switch {
			case d.Deleted:
				e.fresh.Gone(req.Caller, d.Path.Abs)
			case known[plan.Changes[i].Canonical]:
				e.fresh.Changed(req.Caller, d.Path.Abs, d.PrevVersion, d.Version, true, req.LinesStaleAfterMove && shifts[i] != nil)
			default:
				e.fresh.Made(req.Caller, d.Path.Abs, d.Version)
			}
		}
		e.log.Info("Patch", "files", len(done), "hunks", len(plan.Hunks))
	}
	res.Files = mergeMoves(plan, moves, shifts, res.Files)
	res.Sections = sections(p, src, versions, diffs)
	return res, nil
}

// movePairs pairs, by index into plan.Changes, each change that a move
// creates (its destination, new) with the one that removes its source:
// destination → source. A source that was a link, a destination that
// existed (the move overwrote it) and a chain of moves (a → b → c) are
// left unpaired, reported as the separate changes they are.
func movePairs(p *patch.Patch, src *patchSource, plan *patch.Plan) map[int]int {
	at := map[string]int{}
	for i, c := range plan.Changes {
		at[c.Canonical] = i
	}
	pairs := map[int]int{}
	used := map[int]bool{}
	for _, f := range p.Files {
		if f.MoveTo == "" {
			continue
		}
		if _, link := src.symlinks[f.Path]; link {
			continue
		}
		si, sok := at[src.keys[f.Path]]
		di, dok := at[src.keys[f.MoveTo]]
		if !sok || !dok || used[si] || used[di] {
			continue
		}
		s, d := plan.Changes[si], plan.Changes[di]
		if !s.Delete || s.Link || s.Opaque || d.Delete || d.Link || d.Existed {
			continue
		}
		pairs[di], used[si], used[di] = si, true, true
	}
	return pairs
}

// changeShifts returns, by index into plan.Changes, how each change that
// leaves a file in place moved its lines (a paired move's destination:
// from its source's; see movePairs); nil for the others.
func changeShifts(plan *patch.Plan, moves map[int]int) [][]edit.Shift {
	shifts := make([][]edit.Shift, len(plan.Changes))
	for i, c := range plan.Changes {
		if si, moved := moves[i]; moved {
			shifts[i] = edit.TextShifts(plan.Changes[si].Old, c.New)
		} else if c.Existed && !c.Delete && !c.Link && !c.Opaque {
			shifts[i] = edit.TextShifts(c.Old, c.New)
		}
	}
	return shifts
}

// mergeMoves reports each paired move (see movePairs) as one modified
// file at its destination, from its source, and gives every updated file
// the line shifts of its change (changeShifts).
func mergeMoves(plan *patch.Plan, moves map[int]int, shifts [][]edit.Shift, files []PatchFile) []PatchFile {
	merged := make(map[int]bool, len(moves))
	for _, si := range moves {
		merged[si] = true
	}
	out := make([]PatchFile, 0, len(files)-len(moves))
	for i, f := range files {
		c := plan.Changes[i]
		switch si, moved := moves[i]; {
		case merged[i]:
			continue
		case moved:
			s := files[si]
			f.Action, f.From, f.PrevVersion = "M", s.Path, s.PrevVersion
			f.UndoRecorded = f.UndoRecorded && s.UndoRecorded
			f.Shifts = shifts[i]
		case f.Action == "M" && !c.Link && !c.Opaque:
			f.Shifts = shifts[i]
		}
		out = append(out, f)
	}
	return out
}

// knownAfter tells, for each file p leaves in place (by canonical path),
// whether caller knows all of its new content: it wrote all of it (Add),
// or the content is that of a file whose version it had seen or named
// (vouched, see vouchedFor), changed by the patch's hunks (Update, also
// when moved: the destination's content is the source's). A file the
// caller had not seen, or had seen in an older version, stays unread or
// stale for it, wherever the patch puts it (see Tracker.Changed).
func (e *Engine) knownAfter(caller string, p *patch.Patch, src *patchSource, vouched map[string]bool) map[string]bool {
	known := map[string]bool{}
	state := func(key string) bool {
		k, ok := known[key]
		if !ok {
			v, existed := src.versions[key]
			seen, read := e.fresh.Seen(caller, key)
			k = !existed || vouched[key] || (read && seen == v)
			known[key] = k
		}
		return k
	}
	for _, f := range p.Files {
		key := src.keys[f.Path]
		switch {
		case f.Kind == patch.Add:
			known[key] = true
			if l, ok := src.symlinks[f.Path]; ok {
				known[l] = true // the Add replaced the link the patch had removed
			}
		case f.Kind == patch.Delete:
			known[src.removed(f.Path)] = true
		case f.MoveTo != "":
			k, dst := state(key), src.keys[f.MoveTo]
			known[src.removed(f.Path)] = true // moved away: nothing left to know
			known[dst] = k
		default:
			state(key)
		}
	}
	return known
}

// moveGroups ties together the files p's moves connect (a → b, and b → c
// with it): canonical path → a group label, so that undoing any of them
// reverts them all and a moved file's content comes back under its old
// name (workspace.Change.Group).
func moveGroups(p *patch.Patch, src *patchSource) map[string]string {
	parent := map[string]string{}
	find := func(k string) string {
		for parent[k] != "" && parent[k] != k {
			k = parent[k]
		}
		return k
	}
	for _, f := range p.Files {
		if f.MoveTo == "" {
			continue
		}
		a, b := find(src.removed(f.Path)), find(src.keys[f.MoveTo])
		parent[a], parent[b] = a, a
	}
	out := map[string]string{}
	for k := range parent {
		out[k] = "move:" + find(k)
	}
	return out
}

// sections describes each file section of p after the commit.
func sections(p *patch.Patch, src *patchSource, versions, diffs map[string]string) []PatchSection {
	out := make([]PatchSection, 0, len(p.Files))
	for _, f := range p.Files {
		s := PatchSection{Path: f.Path}
		switch {
		case f.Kind == patch.Add:
			s.Action = "add"
		case f.Kind == patch.Delete:
			s.Action = "delete"
		case f.MoveTo != "":
			s.Action, s.Path, s.From = "move", f.MoveTo, f.Path
		default:
			s.Action = "update"
		}
		key := src.keys[s.Path]
		if s.Action == "delete" {
			key = src.removed(s.Path)
		}
		s.Version, s.Diff = versions[key], diffs[key]
		out = append(out, s)
	}
	return out
}

// checkExpected compares the versions the caller expects with those the
// patch was planned against.
func checkExpected(op string, src *patchSource, expected map[string]string) error {
	for p, want := range expected {
		if _, isLink := src.symlinks[p]; isLink {
			// The patch removes the link itself, which has no content
			// and so no version (as a delete of a link refuses one).
			return fserr.New(fserr.BadRequest, op, p, "expected_versions names %s, a symbolic link the patch removes; a link has no version", p).
				WithHint("leave %s out of expected_versions", p)
		}
		key, err := src.Canonical(p)
		if err != nil {
			return fserr.From(op, p, err)
		}
		got, touched := src.versions[key]
		if _, named := src.keysRev[key]; !named {
			return fserr.New(fserr.BadRequest, op, p, "expected_versions names %s, which the patch does not touch", p).
				WithHint("leave %s out of expected_versions, or check the patch names the file you meant", p)
		}
		if !touched {
			got = ""
		}
		if got != want {
			return staleExpected(op, p, want, got)
		}
	}
	return nil
}

// staleRead is checkExpected for a patch whose plan failed: the
// stale_version of the first file (by path) the planner read whose version
// is not the one the caller expects; nil when there is none.
func staleRead(op string, src *patchSource, expected map[string]string) error {
	for _, p := range slices.Sorted(maps.Keys(expected)) {
		if _, isLink := src.symlinks[p]; isLink {
			continue
		}
		key, err := src.Canonical(p)
		if err != nil {
			continue
		}
		if got, read := src.versions[key]; read && got != expected[p] {
			return staleExpected(op, p, expected[p], got)
		}
	}
	return nil
}

// vouchedFor returns the canonical paths of the files whose version the
// caller named (checkExpected holds them to it): the caller knew them as
// they were, as a fresh read would have shown them.
func vouchedFor(src *patchSource, expected map[string]string) map[string]bool {
	vouched := map[string]bool{}
	for p := range expected {
		if key, err := src.Canonical(p); err == nil {
			vouched[key] = true
		}
	}
	return vouched
}

func staleExpected(op, p, want, got string) *fserr.Error {
	return fserr.New(fserr.StaleVersion, op, p, "%s changed since version %s (now %s); nothing was applied", p, want, versionOrAbsent(got)).
		WithHint("re-read the file and rebuild the patch against its current content")
}

func versionOrAbsent(v string) string {
	if v == "" {
		return "absent"
	}
	return v
}

// planDiff renders every change as one unified diff, paths as the patch
// wrote them, and records each file's part in byFile (by canonical path).
// A paired move (moves, see movePairs) is one diff, from its source to
// its destination, of what the patch changed in its content.
func planDiff(plan *patch.Plan, moves map[int]int, byFile map[string]string) string {
	merged := make(map[int]bool, len(moves))
	for _, si := range moves {
		merged[si] = true
	}
	var b strings.Builder
	for i, c := range plan.Changes {
		if merged[i] {
			continue
		}
		oldName, newName := "a/"+c.Path, "b/"+c.Path
		if !c.Existed {
			oldName = "/dev/null"
		}
		if c.Delete {
			newName = "/dev/null"
		}
		var d string
		switch si, moved := moves[i]; {
		case moved:
			s := plan.Changes[si]
			d = edit.DiffText("a/"+s.Path, newName, s.Old, c.New)
			if d == "" {
				d = fmt.Sprintf("rename from %s\nrename to %s\n", s.Path, c.Path)
			}
			byFile[s.Canonical] = d
		case c.Opaque:
			// Not text: no lines to show, as diff(1) and git say.
			d = fmt.Sprintf("Binary files %s and %s differ\n", oldName, newName)
		default:
			d = edit.DiffText(oldName, newName, c.Old, c.New)
		}
		byFile[c.Canonical] = d
		b.WriteString(d)
	}
	return b.String()
}

// patchError words planner failures for the patch's dialect, naming the
// file as the patch wrote it (the Source reads files by canonical path).
func patchError(op string, d patch.Dialect, src *patchSource, err error) error {
	var se *patch.SourceError
	if !errors.As(err, &se) {
		return fserr.From(op, "", err)
	}
	cause := fserr.From(op, se.Path, se.Err)
	out := *cause
	out.Path = se.Path
	named := func(s string) string {
		if k := src.keys[se.Path]; k != "" {
			return strings.ReplaceAll(s, k, se.Path)
		}
		return s
	}
	text := named(causeText(cause))
	switch {
	case d == patch.AgentZero:
		out.Message = fmt.Sprintf("%s: %s", se.Path, named(cause.Message))
	case se.Kind == patch.Delete:
		out.Message = "Failed to delete file " + se.Path
		out.Hint = fserr.JoinHints(text, cause.Hint)
	case se.Kind == patch.Update:
		out.Message = fmt.Sprintf("Failed to read file to update %s: %s", se.Path, text)
	case se.MoveFrom != "":
		out.Message = fmt.Sprintf("Failed to write file %s (the move destination of %s): %s", se.Path, se.MoveFrom, text)
	default:
		out.Message = fmt.Sprintf("Failed to write file %s: %s", se.Path, text)
	}
	return &out
}

// commitError words a failure of the commit like the planner's failures:
// Codex frames every file error ("Failed to write file p: …", "Failed to
// delete file p"), and the workspace names the file by the canonical path
// it was given, which the patch may have spelled otherwise. An error of no
// one file (the state directory, say) is left as it is.
func commitError(op string, d patch.Dialect, plan *patch.Plan, err error) error {
	cause := fserr.From(op, "", err)
	// Longest first: one file's canonical path may begin another's.
	var pairs []string
	for _, c := range slices.SortedFunc(slices.Values(plan.Changes), func(a, b patch.Change) int {
		return len(b.Canonical) - len(a.Canonical)
	}) {
		pairs = append(pairs, c.Canonical, c.Path)
	}
	named := strings.NewReplacer(pairs...)
	for _, c := range plan.Changes {
		if cause.Path != c.Canonical {
			continue
		}
		out := *cause
		out.Path = c.Path
		msg := named.Replace(causeText(cause))
		switch {
		case d == patch.AgentZero:
			out.Message = fmt.Sprintf("%s: %s", c.Path, named.Replace(cause.Message))
		case c.Delete:
			out.Message = "Failed to delete file " + c.Path
			out.Hint = fserr.JoinHints(msg, cause.Hint)
		default:
			out.Message = fmt.Sprintf("Failed to write file %s: %s", c.Path, msg)
		}
		return &out
	}
	return cause
}

// causeText is the cause of a file error as Codex words it after the
// file's name: a missing file, or a bare OS error (the workspace's
// "<path>: permission denied"), in Rust's style, "Permission denied (os
// error 13)"; anything else as the workspace words it.
func causeText(cause *fserr.Error) string {
	if cause.Code == fserr.NotFound {
		return "No such file or directory (os error 2)"
	}
	if bare := cause.Errno.Error(); cause.Errno != 0 && (cause.Message == bare || strings.HasSuffix(cause.Message, ": "+bare)) {
		return strings.ToUpper(bare[:1]) + bare[1:] + fmt.Sprintf(" (os error %d)", int(cause.Errno))
	}
	return cause.Message
}

// joinHint puts a cause before a hint, for messages that have no room for
// the cause ("Failed to delete file p" is Codex's whole message).
// patchSource reads the files a patch names through the workspace and
// remembers the version each was planned against. It is a
// patch.LinkSource: a Delete (or a Move away) of a path that is a
// symbolic link removes the link, never the file it points to.
type patchSource struct {
	ws       *workspace.Workspace
	versions map[string]string    // canonical → version planned against
	keys     map[string]string    // path as written → canonical (through links)
	keysRev  map[string]struct{}  // canonical paths the patch named
	links    map[string]namedLink // canonical → the named files with several hard links
	symlinks map[string]string    // path as written → the symbolic link it names (its own Abs)
}

// namedLink is a file with several hard links that a patch names.
type namedLink struct {
	fi   os.FileInfo
	path string // as the patch first wrote it
}

func (s *patchSource) Canonical(p string) (string, error) {
	if k, ok := s.keys[p]; ok {
		return k, nil
	}
	r, err := s.ws.Resolve(p)
	if err != nil {
		return "", err
	}
	return r.Abs, nil
}

// Link implements patch.LinkSource. A path with a trailing slash names the
// directory a link leads to, never the link.
func (s *patchSource) Link(p string) (key, target string, isLink bool, err error) {
	if strings.HasSuffix(p, "/") {
		return "", "", false, nil
	}
	info, err := s.ws.Lstat(p)
	if err != nil || !info.IsSymlink {
		return "", "", false, err
	}
	s.symlinks[p] = info.Path.Abs
	return info.Path.Abs, info.LinkTarget, true, nil
}

// removed is the key of what a Delete of p, or a Move away from p,
// removes: the link p names, or else the file.
func (s *patchSource) removed(p string) string {
	if k, ok := s.symlinks[p]; ok {
		return k
	}
	return s.keys[p]
}

// remember records that the patch named p. Two paths that are hard links
// to one file are refused: the planner would take them for two files, and
// the commit would write the second's content over the first's changes.
// A symbolic link that cannot be followed (dangling, or leading out of
// the workspace) is fine here: removing it needs no target, and anything
// else the planner refuses with the reason.
func (s *patchSource) remember(p string) error {
	_, _, isLink, err := s.Link(p)
	if err != nil {
		return err
	}
	k, err := s.Canonical(p)
	if err != nil {
		if isLink {
			return nil
		}
		return err
	}
	if other := s.linkedTo(k, p); other != "" {
		return fserr.New(fserr.BadRequest, "patch", p, "%s is a hard link to %s, which the patch also names; a patch may name a file by one path only", p, other).
			WithHint("name the file by one path in the whole patch")
	}
	s.keys[p] = k
	s.keysRev[k] = struct{}{}
	return nil
}

// linkedTo returns the path (as written) by which the patch named, before
// p, another hard link to the file at abs; or "".
func (s *patchSource) linkedTo(abs, p string) string {
	if _, ok := s.links[abs]; ok {
		return ""
	}
	f, info, err := s.ws.Open(abs)
	if err != nil {
		return "" // missing, a directory…: the planner reports it
	}
	defer f.Close()
	if info.Nlink < 2 {
		return ""
	}
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	for _, other := range s.links {
		if os.SameFile(fi, other.fi) {
			return other.path
		}
	}
	s.links[abs] = namedLink{fi: fi, path: p}
	return ""
}

// Read implements patch.Source. A file that is not text (binary, not
// UTF-8, above EditLimit) is reported as existing, with the read's error:
// the planner refuses to update it but may delete or replace it, and its
// version, hashed without buffering it, guards that change like any
// other's (undo keeps its bytes within the journal's limits).
func (s *patchSource) Read(abs string) ([]byte, bool, error) {
	tf, err := s.ws.ReadTextLimit(abs, EditLimit)
	switch {
	case fserr.Is(err, fserr.NotFound):
		return nil, false, nil
	case fserr.Is(err, fserr.DecodeError) || fserr.Is(err, fserr.TooLarge):
		v, verr := s.version(abs)
		if verr != nil {
			return nil, false, verr
		}
		s.versions[abs] = v
		return nil, true, err
	case err != nil:
		return nil, false, err
	}
	s.versions[abs] = tf.Version
	return tf.Content, true, nil
}

// version hashes the file at abs as it is now.
func (s *patchSource) version(abs string) (string, error) {
	f, _, err := s.ws.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	v, _, err := workspace.VersionOf(f)
	if err != nil {
		return "", fserr.FromOS("patch", abs, err)
	}
	return v, nil
}

// sameHeader refuses a single-file patch whose "*** Update File:" header
// names another file than path (see PatchRequest.IgnoreHeader). Both are
// resolved, so a link and its target are one file. A path that does not
// resolve is left for the patch itself to report. The usual header, the
// very name path gives, costs no resolution.
func (e *Engine) sameHeader(op, path, header string) error {
	if header == "" || header == path {
		return nil
	}
	same, err := e.SameFile(path, header)
	if err != nil {
		return fserr.From(op, header, err)
	}
	if !same {
		return HeaderMismatch(op, header, path)
	}
	return nil
}

// SameFile reports whether b names the file a names, both resolved (links
// followed), for a front that checks a patch's header against its path
// itself (PatchRequest.IgnoreHeader). A that does not resolve counts as
// the same, for the operation on a to report; b that does not resolve is
// the error.
func (e *Engine) SameFile(a, b string) (bool, error) {
	want, err := e.ws.Resolve(a)
	if err != nil {
		return true, nil
	}
	got, err := e.ws.Resolve(b)
	if err != nil {
		return false, err
	}
	return got.Abs == want.Abs, nil
}

// HeaderMismatch is the refusal of a single-file patch for path whose
// header names another file; fronts that check headers themselves (see
// PatchRequest.IgnoreHeader) answer with it too.
func HeaderMismatch(op, header, path string) *fserr.Error {
	return fserr.New(fserr.BadRequest, op, path, "the patch updates %s, but path names %s", header, path).
		WithHint("omit path to apply a Codex patch to the files it names, or give path the file the hunks are for")
}
