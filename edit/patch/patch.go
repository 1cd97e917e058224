// Package patch parses and plans context patches: the Codex apply_patch
// format ("*** Begin Patch" … "*** End Patch") and Agent Zero's patch_text
// form. It is pure: it never touches the file system. Parse turns text into
// a Patch; Plan resolves every hunk of every file against the current
// contents (read through a Source) and yields every file's new content, or
// fails as a whole.
package patch

// Kind is what a FileOp does to its file.
type Kind int

const (
	// Add creates a file (or overwrites an existing one, as Codex does).
	Add Kind = iota + 1
	// Delete removes a file.
	Delete
	// Update changes a file's content and may move it (MoveTo).
	Update
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Delete:
		return "delete"
	case Update:
		return "update"
	}
	return "unknown"
}

// Dialect names the syntax a patch was written in. Error messages follow
// the dialect's own wording.
type Dialect int

const (
	// Codex is OpenAI Codex's apply_patch format.
	Codex Dialect = iota + 1
	// AgentZero is Agent Zero's text_editor_remote patch_text form.
	AgentZero
)

// Patch is a parsed patch: its file operations in patch order.
type Patch struct {
	Dialect Dialect
	Files   []FileOp
}

// FileOp is one file section of a patch.
type FileOp struct {
	Kind   Kind
	Path   string   // as written in the patch (trimmed)
	MoveTo string   // Update only: the destination, or ""
	Lines  []string // Add only: the file's lines, without their "+" and newline
	Chunks []Chunk  // Update only: at least one
	Line   int      // 1-based line of the section header in the patch text
	// Header is, in the Agent Zero dialect, the file an envelope's
	// "*** Update File:" line names ("" without an envelope). Path is
	// the caller's file, which Agent Zero edits whatever Header says;
	// callers decide whether the two must agree.
	Header string
}

// Chunk is one hunk of an Update: optional anchors, then body lines.
//
// Old is the chunk's context and removed lines in order, New its context
// and added lines in order; both exclude the line terminators. Anchors are
// the texts of the "@@ …" lines before the body, outermost first (an "@@"
// line without text adds no anchor); each narrows the search to after the
// line it matches. EOF is set by "*** End of File": the old lines must end
// the file.
type Chunk struct {
	Anchors []string
	Old     []string
	New     []string
	EOF     bool
	Line    int // 1-based line of the chunk's first line in the patch text
}
