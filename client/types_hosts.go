package client

// HostInfo describes a connected host (GET /v2/hosts).
type HostInfo struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Mode         string   `json:"mode" jsonschema:"read_only or read_write, as the person at the host chose"`
	Roots        []string `json:"roots"`
	ConnectedAt  string   `json:"connected_at" jsonschema:"RFC 3339"`
	Capabilities []string `json:"capabilities" jsonschema:"the operations the host executes"`
	Features     []string `json:"features,omitempty" jsonschema:"what the host honours in ops older hosts also run: undo_held (undo held to expected_version and to the caller's view; without it the hub refuses such an undo)"`
	Version      string   `json:"version"`
}

// HostList is the data of GET /v2/hosts.
type HostList struct {
	Hosts []HostInfo `json:"hosts"`
}

// LineEdit is one edit by line numbers (1-based, inclusive; to absent or
// to = from-1 inserts before from; content null deletes).
type LineEdit struct {
	From    int     `json:"from"`
	To      *int    `json:"to,omitempty"`
	Content *string `json:"content,omitempty"`
}

// TextEditorRequest is the body of POST /v2/hosts/{host}/text_editor:
// Agent Zero's text_editor_remote arguments.
type TextEditorRequest struct {
	Action    string     `json:"action,omitempty" jsonschema:"read, write or patch"`
	Path      string     `json:"path,omitempty"`
	LineFrom  *int       `json:"line_from,omitempty" jsonschema:"read: 1-based first line"`
	LineTo    *int       `json:"line_to,omitempty" jsonschema:"read: 1-based last line, inclusive"`
	Content   *string    `json:"content,omitempty" jsonschema:"write: the whole new content"`
	Edits     []LineEdit `json:"edits,omitempty" jsonschema:"patch: line edits; need a fresh read in the same context"`
	PatchText *string    `json:"patch_text,omitempty" jsonschema:"patch: context patch (@@ anchors, ' '/'-'/'+' lines)"`
	OldText   *string    `json:"old_text,omitempty" jsonschema:"patch: exact text to replace (must match once)"`
	NewText   *string    `json:"new_text,omitempty" jsonschema:"patch: replacement for old_text"`
	ContextID string     `json:"context_id,omitempty" jsonschema:"the agent context; freshness of line edits is per context (default: default)"`
}

// TextEditorResult is the data of a text_editor call: Agent Zero's output
// text plus structured fields.
type TextEditorResult struct {
	Output     string `json:"output"`
	OK         bool   `json:"ok"`
	Action     string `json:"action"`
	Path       string `json:"path"`
	Host       string `json:"host"`
	Version    string `json:"version,omitempty"`
	TotalLines int    `json:"total_lines,omitempty"`
	LineFrom   int    `json:"line_from,omitempty"`
	LineTo     int    `json:"line_to,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	NextLine   int    `json:"next_line,omitempty"`
	Notice     string `json:"notice,omitempty" jsonschema:"a patch or replace applied to a file that changed since this context last read it (also in output)"`
	Code       string `json:"error_type,omitempty" jsonschema:"the error code when ok is false"`
}

// HostDownloadQuery is the query of GET /v2/hosts/{host}/fs/download.
type HostDownloadQuery struct {
	Path string `json:"path" jsonschema:"file to download from the host"`
}
