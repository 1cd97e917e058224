package patch

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/edit"
)

// Source gives the planner the current state of the files a patch names.
// Implementations do the I/O; the planner stays pure.
type Source interface {
	// Canonical returns the identity of the file path names: two paths
	// naming one file must return the same string. An error rejects the
	// path (outside the workspace, malformed) and fails the whole plan.
	Canonical(path string) (string, error)
	// Read returns the content of the file with that canonical identity,
	// or exists == false when there is no such file. An error (a
	// directory, an I/O failure) fails the plan, with one exception: a
	// file that is there but is not text (binary, not UTF-8, too large)
	// is reported with exists == true and an error saying why. The plan
	// then fails only if a section needs that content (an Update); a
	// Delete, an Add over the file or a Move onto it replace it unread,
	// as Codex does with any file.
	Read(canonical string) (content []byte, exists bool, err error)
}

// LinkSource is a Source that knows symbolic links. Codex's apply_patch
// writes through a link (Add, Update, a Move's destination) but removes
// the path that a Delete or a Move's source names: the link itself, never
// the file it leads to, which may be a file the patch does not name at
// all. With a plain Source every path is taken for a file of its own.
type LinkSource interface {
	Source
	// Link reports whether the last component of path is a symbolic
	// link. key is then the identity of the link itself, distinct from
	// every Canonical key (Canonical follows the link), and target what
	// it points to. It must work for links that dangle or lead where
	// Canonical refuses to go: removing them is fine. An error fails the
	// plan.
	Link(path string) (key, target string, isLink bool, err error)
}

// Plan is a fully resolved patch: what every touched file becomes.
type Plan struct {
	// Changes holds one entry per file whose final state differs from its
	// current state, in the order the patch first touched them.
	Changes []Change
	// Added, Modified and Deleted list the patch's paths as Codex reports
	// them: Add sections, Update sections (a moved file under its new
	// name), Delete sections, each in patch order.
	Added, Modified, Deleted []string
	// Hunks describes where each chunk landed, in patch order.
	Hunks []HunkResult
}

// Change is the final state of one file.
type Change struct {
	Path      string // the path as the patch wrote it (first mention)
	Canonical string
	Existed   bool
	Old       []byte // content before; nil when it did not exist or is Opaque; a Link's target
	Delete    bool
	New       []byte // content after, when !Delete
	// Opaque: the file existed but is not text (see Source.Read); the
	// change deletes or replaces it without having read it.
	Opaque bool
	// Link: Canonical is a symbolic link the patch removed (see
	// LinkSource): Delete removes the link itself, else New replaces the
	// link with a regular file. The file the link led to is no part of
	// this change.
	Link bool
}

// HunkResult says where a chunk of an Update was applied.
type HunkResult struct {
	Path  string
	Line  int    // 1-based first line of the change in the original file
	Tier  string // ladder tier that located the chunk ("insert" for pure additions)
	Patch int    // 1-based line of the chunk in the patch text
}

// SourceError is a failure of the Source while resolving the file of one
// section; the caller words it for its front (Codex says "Failed to delete
// file …", "Failed to read file to update …").
type SourceError struct {
	Kind Kind   // the section's operation
	Path string // the path as the patch wrote it
	Err  error  // from the Source
	// MoveFrom is set when Path is a "*** Move to:" destination: the
	// file the Update moves there (Kind is then Add: it is written, not
	// read).
	MoveFrom string
}

func (e *SourceError) Error() string { return e.Kind.String() + " " + e.Path + ": " + e.Err.Error() }

func (e *SourceError) Unwrap() error { return e.Err }

type fileState struct {
	path    string
	content []byte
	exists  bool
	// opaque is why content is unknown: the file is there but not text
	// (see Source.Read). Replacing or deleting the file clears it.
	opaque error
	// original state
	origContent []byte
	origExists  bool
	origOpaque  bool
}

// set gives f new content, or none (deleted).
func (f *fileState) set(content []byte, exists bool) {
	f.content, f.exists, f.opaque = content, exists, nil
}

// changed reports whether f's final state differs from its original one.
func (f *fileState) changed() bool {
	switch {
	case f.opaque != nil:
		return false // never replaced
	case f.exists != f.origExists:
		return true
	case !f.exists:
		return false
	case f.origOpaque:
		return true // replaced unread
	}
	return string(f.content) != string(f.origContent)
}

// linkEntry is a symbolic link a path of the patch names (see LinkSource).
type linkEntry struct {
	key, target string
	path        string // as the patch first wrote it
	removed     bool   // by a Delete or a Move away; files[key] then holds what the path names since
}

// Build resolves every hunk of every file section of p against the files
// in src and returns the plan, or the first error; on error nothing should
// be applied. Sections apply in order, each to the result of the ones
// before, as if applied one by one; Add overwrites an existing file and a
// Move overwrites its destination (Codex semantics), whether or not that
// file is text.
func Build(p *Patch, src Source) (*Plan, error) {
	return BuildContext(context.Background(), p, src)
}

// BuildContext is Build that gives up, returning ctx.Err(), once ctx is
// done: it looks before every section and every hunk. A patch of 100,000
// hunks takes a minute to plan, which is no reason to go on after the
// caller has left.
func BuildContext(ctx context.Context, p *Patch, src Source) (*Plan, error) {
	pl := &planner{ctx: ctx, src: src, files: map[string]*fileState{}, dialect: p.Dialect,
		linkKeys: map[string]string{}, links: map[string]*linkEntry{}}
	pl.linker, _ = src.(LinkSource)
	plan := &Plan{}
	for _, op := range p.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := pl.apply(op, plan); err != nil {
			return nil, err
		}
	}
	for _, key := range pl.order {
		f := pl.files[key]
		if l := pl.links[key]; l != nil {
			c := Change{Path: l.path, Canonical: key, Existed: true, Old: []byte(l.target), Delete: true, Link: true}
			if f != nil && f.exists {
				c.Delete, c.New = false, f.content
			}
			plan.Changes = append(plan.Changes, c)
			continue
		}
		if !f.changed() {
			continue
		}
		plan.Changes = append(plan.Changes, Change{
			Path: f.path, Canonical: key, Existed: f.origExists, Old: f.origContent,
			Delete: !f.exists, New: f.content, Opaque: f.origOpaque,
		})
	}
	return plan, nil
}

type planner struct {
	ctx      context.Context
	src      Source
	linker   LinkSource // src, when it knows links
	files    map[string]*fileState
	order    []string // keys of files and removed links, as first touched
	dialect  Dialect
	linkKeys map[string]string     // path as written → its link's key ("": not a link)
	links    map[string]*linkEntry // by key: the links the patch named
}

// link returns the symbolic link path names, or nil.
func (pl *planner) link(path string) (*linkEntry, error) {
	if pl.linker == nil {
		return nil, nil
	}
	key, ok := pl.linkKeys[path]
	if !ok {
		k, target, isLink, err := pl.linker.Link(path)
		if err != nil {
			return nil, err
		}
		if isLink {
			key = k
			if pl.links[key] == nil {
				pl.links[key] = &linkEntry{key: key, target: target, path: path}
			}
		}
		pl.linkKeys[path] = key
	}
	return pl.links[key], nil
}

// removeLink records that the patch removes the link l itself.
func (pl *planner) removeLink(l *linkEntry) {
	if !l.removed {
		l.removed = true
		pl.order = append(pl.order, l.key)
	}
}

// state returns the state of the file path names now: through a link the
// patch has not removed, at the link's own place once it has.
func (pl *planner) state(path string) (*fileState, error) {
	l, err := pl.link(path)
	if err != nil {
		return nil, err
	}
	if l != nil && l.removed {
		f := pl.files[l.key]
		if f == nil {
			f = &fileState{path: path}
			pl.files[l.key] = f
		}
		return f, nil
	}
	key, err := pl.src.Canonical(path)
	if err != nil {
		return nil, err
	}
	if f, ok := pl.files[key]; ok {
		return f, nil
	}
	content, exists, err := pl.src.Read(key)
	var opaque error
	if err != nil {
		if !exists {
			return nil, err
		}
		content, opaque = nil, err
	}
	f := &fileState{path: path, content: content, exists: exists, opaque: opaque,
		origContent: content, origExists: exists, origOpaque: opaque != nil}
	pl.files[key] = f
	pl.order = append(pl.order, key)
	return f, nil
}

func (pl *planner) apply(op FileOp, plan *Plan) error {
	fail := func(kind Kind, path string, err error) error { return &SourceError{Kind: kind, Path: path, Err: err} }
	switch op.Kind {
	case Add:
		if err := fileName(op.Path); err != nil {
			return fail(Add, op.Path, err)
		}
		f, err := pl.state(op.Path)
		if err != nil {
			return fail(Add, op.Path, err)
		}
		var sb strings.Builder
		for _, l := range op.Lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
		f.set([]byte(sb.String()), true)
		plan.Added = append(plan.Added, op.Path)
	case Delete:
		l, err := pl.link(op.Path)
		if err != nil {
			return fail(Delete, op.Path, err)
		}
		if l != nil && !l.removed {
			// Codex's remove_file unlinks the path: the link.
			pl.removeLink(l)
			plan.Deleted = append(plan.Deleted, op.Path)
			return nil
		}
		f, err := pl.state(op.Path)
		if err != nil {
			return fail(Delete, op.Path, err)
		}
		if !f.exists {
			return &edit.Error{Code: "not_found", Message: "Failed to delete file " + op.Path,
				Hint: "the file does not exist; check the path or drop this Delete section"}
		}
		f.set(nil, false)
		plan.Deleted = append(plan.Deleted, op.Path)
	case Update:
		l, err := pl.link(op.Path)
		if err != nil {
			return fail(Update, op.Path, err)
		}
		f, err := pl.state(op.Path)
		if err != nil {
			return fail(Update, op.Path, err)
		}
		if !f.exists {
			if pl.dialect == AgentZero {
				return &edit.Error{Code: "not_found", Message: "File not found: " + op.Path}
			}
			return &edit.Error{Code: "not_found", Message: fmt.Sprintf("Failed to read file to update %s: No such file or directory (os error 2)", op.Path),
				Hint: "use '*** Add File:' to create a file"}
		}
		if f.opaque != nil {
			return fail(Update, op.Path, f.opaque)
		}
		updated, hunks, err := pl.update(op, f.content)
		if err != nil {
			return err
		}
		plan.Hunks = append(plan.Hunks, hunks...)
		if op.MoveTo == "" {
			f.set(updated, true)
			plan.Modified = append(plan.Modified, op.Path)
			return nil
		}
		moveFail := func(err error) error {
			return &SourceError{Kind: Add, Path: op.MoveTo, Err: err, MoveFrom: op.Path}
		}
		if err := fileName(op.MoveTo); err != nil {
			return moveFail(err)
		}
		dl, err := pl.link(op.MoveTo)
		if err != nil {
			return moveFail(err)
		}
		dst, err := pl.state(op.MoveTo)
		if err != nil {
			return moveFail(err)
		}
		switch {
		case l != nil && !l.removed && dl != l:
			// The source path is a link: Codex removes the link and
			// leaves the file it led to (dst may be that very file).
			pl.removeLink(l)
		case dst != f:
			f.set(nil, false)
		}
		dst.set(updated, true)
		plan.Modified = append(plan.Modified, op.MoveTo)
	default:
		return &edit.Error{Code: edit.CodeBadRequest, Message: fmt.Sprintf("unknown file operation %d for %s", op.Kind, op.Path)}
	}
	return nil
}

// fileName refuses to make a file at a path that ends with "/": it names
// a directory (as in POSIX, and as the workspace treats every other
// write), and Codex fails to write there too. Updates and Deletes need no
// check: such a path names no file the Source could return.
func fileName(path string) error {
	if !strings.HasSuffix(path, "/") {
		return nil
	}
	return &edit.Error{Code: "invalid_target", Message: path + " ends with /, which names a directory, not a file",
		Hint: "drop the trailing / to make a file there"}
}

// update resolves op's chunks against content, in order from a cursor.
func (pl *planner) update(op FileOp, content []byte) ([]byte, []HunkResult, error) {
	doc := edit.NewDoc(content)
	cursor, prev := 0, -1 // prev: the line where the last hunk matched
	// A pure addition put before a blank last line (see below) lands
	// inside any hunk that changes that line and the one before it:
	// before, the first such addition (its line in the file and in the
	// patch); tail, the hunk whose lines end the file.
	before, beforePatch := -1, 0
	tail, tailPatch := -1, 0
	var edits []edit.Edit
	var hunks []HunkResult
	for _, ch := range op.Chunks {
		if err := pl.ctx.Err(); err != nil {
			return nil, nil, err
		}
		from, anchor := cursor, -1
		for _, a := range ch.Anchors {
			line, ok := doc.FindLine(a, from)
			if !ok {
				return nil, nil, pl.anchorMissing(op.Path, a)
			}
			anchor, from = line, line+1
		}
		if len(ch.Old) == 0 {
			at := doc.Len()
			switch {
			case anchor >= 0 && !ch.EOF:
				at = anchor + 1
			case at > 0 && doc.Text(at-1) == "":
				// Codex appends before a blank last line, which stays
				// last.
				at--
				if tail >= 0 && tail < at {
					return nil, nil, appendOverlap(op.Path, ch.Line, at, tailPatch)
				}
				if before < 0 {
					before, beforePatch = at, ch.Line
				}
			}
			edits = append(edits, doc.Insert(at, ch.New))
			hunks = append(hunks, HunkResult{Path: op.Path, Line: at + 1, Tier: "insert", Patch: ch.Line})
			// An append at the end does not move the cursor there: as in
			// Codex (compute_replacements), only an anchor moves it, so
			// the next chunk is still searched from here.
			cursor = from
			continue
		}
		// Behind an anchor the first block wins; without one, every block
		// of the deciding tier is needed to report an ambiguity.
		find := doc.FindBlock
		if anchor >= 0 {
			find = doc.FindFirstBlock
		}
		tier, blocks := find(ch.Old, from, ch.EOF)
		if len(blocks) == 0 && anchor >= 0 {
			// The anchor may itself be the first line to change
			// ("@@ x" / "-x" / "+y").
			tier, blocks = doc.FindFirstBlock(ch.Old, anchor, ch.EOF)
		}
		old, repl := ch.Old, ch.New
		if pl.dialect == Codex && old[len(old)-1] == "" && (len(blocks) == 0 || tier > edit.TierTrailingSpace) {
			// Codex retries without a last empty context line (it may
			// stand for the file's final newline, or be the blank line
			// that separates chunks). The trimmed tier matches without
			// every blank line at the ends, and leaves them all out of
			// the result, also one that is there: what the retry
			// matches at a stricter tier wins. Old lines that are all
			// blank leave none: an empty pattern matches at the
			// cursor, so the '+' lines go there. (Agent Zero splits the
			// file differently; its chunks are left as they are.)
			o, r := old[:len(old)-1], repl
			if len(r) > 0 && r[len(r)-1] == "" {
				r = r[:len(r)-1]
			}
			switch t, bs := find(o, from, ch.EOF); {
			case len(o) == 0 && len(blocks) == 0:
				edits = append(edits, doc.Insert(from, r))
				hunks = append(hunks, HunkResult{Path: op.Path, Line: from + 1, Tier: "insert", Patch: ch.Line})
				cursor = from
				continue
			case len(bs) > 0 && (len(blocks) == 0 || t < tier):
				tier, blocks, old, repl = t, bs, o, r
			}
		}
		if len(blocks) == 0 {
			return nil, nil, pl.contextMissing(doc, op.Path, ch, cursor, prev)
		}
		if anchor < 0 && len(blocks) > 1 {
			return nil, nil, pl.ambiguous(op.Path, ch, blocks)
		}
		b := blocks[0]
		if b.Line+b.Count == doc.Len() {
			if before >= 0 && b.Line < before {
				return nil, nil, appendOverlap(op.Path, beforePatch, before, ch.Line)
			}
			tail, tailPatch = b.Line, ch.Line
		}
		edits = append(edits, doc.Splice(b, old, repl))
		hunks = append(hunks, HunkResult{Path: op.Path, Line: b.Line + 1, Tier: tier.String(), Patch: ch.Line})
		cursor, prev = b.Line+b.Count, b.Line
	}
	out, err := doc.Apply(edits)
	if err != nil {
		return nil, nil, err
	}
	return out, hunks, nil
}

// appendOverlap is the error for a pure addition (the chunk at patch
// line added) that goes before the blank last line, line at (0-based),
// which the chunk at patch line hunk changes together with the line
// before it: the addition would land inside that chunk's lines.
func appendOverlap(path string, added, at, hunk int) error {
	return &edit.Error{Code: edit.CodeBadRequest,
		Message: fmt.Sprintf("Hunks overlap in %s: the hunk at patch line %d adds lines before the file's blank last line (line %d), which the hunk at patch line %d changes", path, added, at+1, hunk),
		Hint:    "hunks must not share lines; merge the two into one hunk, or give the added lines an @@ line or context lines to say where they go"}
}

func (pl *planner) anchorMissing(path, anchor string) error {
	if pl.dialect == AgentZero {
		return &edit.Error{Code: edit.CodeNoMatch, Message: "anchor not found: " + anchor,
			Hint: "the @@ line must repeat a line of the file (searched after the previous hunk); re-read the file"}
	}
	return &edit.Error{Code: edit.CodeNoMatch, Message: fmt.Sprintf("Failed to find context '%s' in %s", anchor, path),
		Hint: "the @@ line must repeat a line of the file, searched after the previous hunk; re-read the file"}
}

// contextMissing is the error for a chunk that matched nowhere at or after
// the cursor. After an earlier hunk it says where the lines do occur, if
// anywhere: before that hunk (the hunks are out of order), or sharing
// lines with it from line prev on (they overlap, and must be one hunk);
// that second search is skipped for the first hunk, which has nothing
// before it to blame.
func (pl *planner) contextMissing(doc *edit.Doc, path string, ch Chunk, cursor, prev int) error {
	e := &edit.Error{Code: edit.CodeNoMatch}
	if pl.dialect == AgentZero {
		e.Message = "context not found:\n" + strings.Join(ch.Old[:min(5, len(ch.Old))], "\n")
	} else {
		e.Message = fmt.Sprintf("Failed to find expected lines in %s:\n%s", path, strings.Join(ch.Old, "\n"))
	}
	if cursor > 0 {
		if _, before := doc.FindFirstBlock(ch.Old, 0, ch.EOF); len(before) > 0 {
			b := before[0]
			if prev >= 0 && b.Line+b.Count > prev {
				e.Hint = fmt.Sprintf("these lines occur at line %d, overlapping the previous hunk (which matched lines %d-%d): hunks must not share lines; merge the two into one hunk", b.Line+1, prev+1, cursor)
			} else {
				e.Hint = fmt.Sprintf("these lines occur at line %d, before the previous hunk; hunks must follow the file's order", b.Line+1)
			}
			return e
		}
	}
	e.Hint = "the context and '-' lines must match the file (tolerating whitespace and indentation differences); re-read the file"
	return e
}

func (pl *planner) ambiguous(path string, ch Chunk, blocks []edit.Block) error {
	lines := make([]int, min(len(blocks), maxReportedLines))
	for i := range lines {
		lines[i] = blocks[i].Line + 1
	}
	strs := make([]string, min(len(blocks), maxListedLines))
	for i := range strs {
		strs[i] = fmt.Sprint(blocks[i].Line + 1)
	}
	listed := strings.Join(strs, ", ")
	if more := len(blocks) - len(strs); more > 0 {
		listed += fmt.Sprintf(" and %d more", more)
	}
	old := strings.Join(ch.Old[:min(5, len(ch.Old))], "\n")
	e := &edit.Error{Code: edit.CodeAmbiguousMatch, Lines: lines,
		Hint: "add an @@ line naming the enclosing function or class, or more context lines, so the hunk matches once"}
	if pl.dialect == AgentZero {
		e.Message = fmt.Sprintf("context matched multiple locations (lines %s); add an @@ anchor or more context:\n%s", listed, old)
	} else {
		e.Message = fmt.Sprintf("Expected lines match %d places in %s (lines %s); add an @@ context line or more context:\n%s",
			len(blocks), path, listed, old)
	}
	return e
}

// An ambiguous hunk lists the first maxListedLines places it matches in
// its message and reports the first maxReportedLines in Error.Lines, as
// edit's ambiguous_match does: a frequent context line ("}") can match
// on hundreds of thousands of lines, and the error must stay small.
const (
	maxListedLines   = 20
	maxReportedLines = 100
)
