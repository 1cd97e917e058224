// Package client is the Go SDK for fsplane's HTTP API: typed requests and
// results for every route (v2 first, then AIO's v1, but for v1's watcher
// list and event stream: use Watches and WatchEvents on v2), context-aware
// calls, and failures as *Error values that carry the server's error data.
//
// The types in this file are also the server's wire types: internal/httpapi
// decodes and encodes exactly these structs, so the SDK cannot drift from
// the server. Fields without omitempty are required in requests.
package client

// UserQuery is the optional ?user= of mutating v2 routes: the account that owns new files and directories.
type UserQuery struct {
	User string `json:"user,omitempty" jsonschema:"account that owns new files and directories"`
}

// ReadQuery is GET /v2/fs/read's query.
type ReadQuery struct {
	Path      string `json:"path" jsonschema:"file to read"`
	StartLine *int   `json:"start_line,omitempty" jsonschema:"0-based first line, inclusive"`
	EndLine   *int   `json:"end_line,omitempty" jsonschema:"0-based end line, exclusive"`
	User      string `json:"user,omitempty" jsonschema:"accepted for compatibility; reads use the daemon's account"`
}

// ReadResult is the data of a read (v1 and v2).
type ReadResult struct {
	Content    string `json:"content"`
	File       string `json:"file"`
	Version    string `json:"version" jsonschema:"content hash of the whole file; pass as expected_version"`
	TotalLines int    `json:"total_lines"`
	BOM        bool   `json:"bom,omitempty" jsonschema:"extension: the file starts with a UTF-8 byte order mark; content then starts with U+FEFF when the range starts at the first line, as AIO's does, so writing content back keeps it"`
}

// WriteRequest is POST /v2/fs/write's body. Unknown fields are rejected, as AIO does.
type WriteRequest struct {
	Path            string  `json:"path"`
	Content         string  `json:"content"`
	Encoding        *string `json:"encoding,omitempty" jsonschema:"utf-8 (default), base64 or raw (one byte per character)"`
	Append          bool    `json:"append,omitempty"`
	LeadingNewline  bool    `json:"leading_newline,omitempty" jsonschema:"utf-8 only"`
	TrailingNewline bool    `json:"trailing_newline,omitempty" jsonschema:"utf-8 only"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: write only if the file still has this version (409 stale_version otherwise)"`
}

// EditRequest is POST /v2/fs/edit's body.
type EditRequest struct {
	Command         string  `json:"command" jsonschema:"str_replace, insert or undo_edit"`
	Path            string  `json:"path"`
	OldStr          *string `json:"old_str,omitempty"`
	NewStr          *string `json:"new_str,omitempty"`
	InsertLine      *int    `json:"insert_line,omitempty" jsonschema:"insert after this line; 0 inserts at the top"`
	ReplaceMode     *string `json:"replace_mode,omitempty" jsonschema:"ALL, FIRST or LAST; absent means old_str must match exactly once"`
	Match           *string `json:"match,omitempty" jsonschema:"extension: exact (default, as AIO) or tolerant (fsplane's matching ladder)"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: 409 stale_version unless the file has this version"`
}

// PatchRequest is POST /v2/fs/patch's body (extension).
type PatchRequest struct {
	Patch            string            `json:"patch" jsonschema:"Codex apply_patch text, or Agent Zero patch_text when path is set"`
	Path             string            `json:"path,omitempty" jsonschema:"single-file form: the file the patch_text updates"`
	DryRun           bool              `json:"dry_run,omitempty" jsonschema:"plan and diff without writing"`
	Diff             bool              `json:"diff,omitempty" jsonschema:"include unified diffs"`
	ExpectedVersions map[string]string `json:"expected_versions,omitempty" jsonschema:"path → version the patch was written against"`
	ExpectedVersion  string            `json:"expected_version,omitempty" jsonschema:"with path: the version of that file the patch was written against (409 stale_version if it changed)"`
}

// PatchFile is one file section's outcome.
type PatchFile struct {
	Path    string `json:"path"`
	From    string `json:"from,omitempty" jsonschema:"a move's source"`
	Action  string `json:"action" jsonschema:"add, update, delete or move"`
	Version string `json:"version,omitempty"`
	Diff    string `json:"diff,omitempty"`
}

// PatchResult is the data of a patch.
type PatchResult struct {
	Files   []PatchFile `json:"files"`
	Output  string      `json:"output" jsonschema:"Codex's success listing"`
	DryRun  bool        `json:"dry_run"`
	Diff    string      `json:"diff,omitempty"`
	Notices []string    `json:"notices,omitempty"`
	// UndoRecorded is false when a file the patch changed has no undo
	// record (the hint names them).
	UndoRecorded *bool `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert the change of some file (the hint names them and says why); absent when it can revert every file"`
}

// UndoRequest is POST /v2/fs/undo's body (extension).
type UndoRequest struct {
	Path            string `json:"path"`
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"undo only if the file still has this version, the one you read (409 stale_version otherwise): undo reverts the newest change, whoever made it"`
}

// UndoResult is the data of an undo.
type UndoResult struct {
	UndoFile
	// Also lists the other files the same undo reverted: undoing a move's
	// destination brings its source back, and the reverse.
	Also []UndoFile `json:"also,omitempty" jsonschema:"other files the same undo reverted (a move's other side)"`
}

// UndoFile is what an undo did to one file.
type UndoFile struct {
	Path    string `json:"path"`
	Undone  string `json:"undone" jsonschema:"the operation that was reverted"`
	Deleted bool   `json:"deleted" jsonschema:"the reverted change created the file, so it was removed"`
	Version string `json:"version,omitempty"`
	// AlreadyUndone: the file was already as the undo leaves it (removed,
	// for a change that created it; else back to its earlier content), put
	// back by another writer or an interrupted earlier undo; nothing changed.
	AlreadyUndone bool `json:"already_undone,omitempty" jsonschema:"the file was already as the undo leaves it (gone, for a change that created it; else its earlier content); nothing changed"`
}

// WriteResult is the data of a write (v1 and v2).
type WriteResult struct {
	File         string `json:"file"`
	BytesWritten int    `json:"bytes_written"`
	Version      string `json:"version" jsonschema:"content hash after the write"`
	Created      bool   `json:"created"`
	UndoRecorded *bool  `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// EditorResult is AIO's StrReplaceEditorResult plus fsplane's fields.
type EditorResult struct {
	Output     string         `json:"output" jsonschema:"cat -n snippet around the change"`
	Path       string         `json:"path"`
	PrevExist  bool           `json:"prev_exist"`
	OldContent *string        `json:"old_content"`
	NewContent *string        `json:"new_content"`
	Error      *string        `json:"error"`
	Metadata   map[string]any `json:"metadata"`
	Version    string         `json:"version,omitempty" jsonschema:"content hash after the command"`
	MatchTier  string         `json:"match_tier,omitempty" jsonschema:"ladder tier that located old_str"`
	Count      int            `json:"replaced_count,omitempty"`
	StartLine  int            `json:"start_line,omitempty" jsonschema:"1-based first line changed"`
	EndLine    int            `json:"end_line,omitempty" jsonschema:"1-based last line changed"`
	// UndoRecorded is set by create, str_replace and insert.
	UndoRecorded *bool `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// V1ReadRequest is POST /v1/file/read's body.
type V1ReadRequest struct {
	File      string `json:"file" jsonschema:"file path"`
	StartLine *int   `json:"start_line,omitempty" jsonschema:"0-based first line"`
	EndLine   *int   `json:"end_line,omitempty" jsonschema:"end line, not inclusive"`
	Sudo      *bool  `json:"sudo,omitempty" jsonschema:"accepted for compatibility"`
}

// V1WriteRequest is POST /v1/file/write's body.
type V1WriteRequest struct {
	File            string  `json:"file"`
	Content         string  `json:"content"`
	Encoding        *string `json:"encoding,omitempty" jsonschema:"utf-8 (default), base64 or raw"`
	Append          bool    `json:"append,omitempty"`
	LeadingNewline  bool    `json:"leading_newline,omitempty"`
	TrailingNewline bool    `json:"trailing_newline,omitempty"`
	Sudo            *bool   `json:"sudo,omitempty"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: write only if the file still has this version"`
}

// V1EditorRequest is POST /v1/file/str_replace_editor's body.
type V1EditorRequest struct {
	Command         string  `json:"command" jsonschema:"view, create, str_replace, insert or undo_edit"`
	Path            string  `json:"path"`
	FileText        *string `json:"file_text,omitempty" jsonschema:"create: the new file's content"`
	OldStr          *string `json:"old_str,omitempty"`
	NewStr          *string `json:"new_str,omitempty"`
	InsertLine      *int    `json:"insert_line,omitempty" jsonschema:"insert after this line; 0 inserts at the top"`
	ViewRange       []int   `json:"view_range,omitempty" jsonschema:"1-based [start, end]; -1 as end means the last line"`
	ReplaceMode     *string `json:"replace_mode,omitempty" jsonschema:"ALL, FIRST or LAST"`
	Match           *string `json:"match,omitempty" jsonschema:"extension: exact (default) or tolerant"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: 409-style stale_version unless the file has this version"`
	// Document-format fields of AIO 1.x, accepted and ignored: fsplane
	// edits text files only.
	PageRange      any   `json:"page_range,omitempty"`
	SheetName      any   `json:"sheet_name,omitempty"`
	RowRange       any   `json:"row_range,omitempty"`
	SlideRange     any   `json:"slide_range,omitempty"`
	EnableMetadata *bool `json:"enable_metadata,omitempty"`
	EnableLinting  *bool `json:"enable_linting,omitempty"`
}

// V1ReplaceRequest is POST /v1/file/replace's body.
type V1ReplaceRequest struct {
	File    string `json:"file"`
	OldStr  string `json:"old_str"`
	NewStr  string `json:"new_str"`
	Sudo    *bool  `json:"sudo,omitempty"`
	Match   string `json:"match,omitempty" jsonschema:"extension: exact (default) or tolerant"`
	Version string `json:"expected_version,omitempty" jsonschema:"extension"`
}

// ReplaceResult is the data of /v1/file/replace.
type ReplaceResult struct {
	File          string `json:"file"`
	ReplacedCount int    `json:"replaced_count"`
	Version       string `json:"version"`
	UndoRecorded  *bool  `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// Health is GET /health's body (no envelope).
type Health struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Server   string `json:"server"`
	Revision string `json:"revision"`
}

// Capabilities is GET /v1/capabilities's data.
type Capabilities struct {
	Schema          string          `json:"schema"`
	Files           map[string]bool `json:"files"`
	Exec            map[string]bool `json:"exec"`
	Bins            map[string]any  `json:"bins"`
	Browser         map[string]any  `json:"browser"`
	CodeInterpreter map[string]any  `json:"code_interpreter"`
	Computer        map[string]any  `json:"computer"`
	// Extensions says which fsplane extensions this server has.
	Extensions map[string]bool `json:"extensions"`
}

// SandboxInfo is GET /v2/sandbox's data.
type SandboxInfo struct {
	WorkspaceDir string        `json:"workspace_dir"`
	Workspace    string        `json:"workspace"`
	Version      string        `json:"version"`
	Roots        []string      `json:"roots"`
	Detail       SandboxDetail `json:"detail"`
	Capabilities Capabilities  `json:"capabilities"`
}

// V1Sandbox is GET /v1/sandbox's answer in AIO 1.x's layout
// (SandboxResponse): not an envelope, the fields at the top level, data a
// text summary. home_dir is the first root, where AIO clients build their
// absolute paths from.
type V1Sandbox struct {
	Success      bool            `json:"success"`
	Message      string          `json:"message"`
	Data         string          `json:"data"`
	Hint         *string         `json:"hint"`
	HomeDir      string          `json:"home_dir"`
	WorkspaceDir string          `json:"workspace_dir"`
	Workspace    string          `json:"workspace"`
	Version      string          `json:"version"`
	Detail       V1SandboxDetail `json:"detail"`
}

// V1SandboxDetail is AIO 1.x's SandboxDetail. fsplane runs no code, so
// runtime and utils are empty.
type V1SandboxDetail struct {
	System  V1SystemEnv         `json:"system"`
	Runtime map[string][]string `json:"runtime"`
	Utils   []string            `json:"utils"`
}

// V1SystemEnv is AIO 1.x's SystemEnv.
type V1SystemEnv struct {
	OS            string `json:"os"`
	OSVersion     string `json:"os_version"`
	Arch          string `json:"arch"`
	User          string `json:"user"`
	HomeDir       string `json:"home_dir"`
	Workspace     string `json:"workspace"`
	Timezone      string `json:"timezone"`
	OccupiedPorts []int  `json:"occupied_ports"`
}

// SandboxDetail holds system details.
type SandboxDetail struct {
	System SystemInfo `json:"system"`
}

// SystemInfo describes the machine the server runs on.
type SystemInfo struct {
	OS           string `json:"os"`
	Arch         string `json:"arch"`
	User         string `json:"user"`
	Timezone     string `json:"timezone"`
	WorkspaceDir string `json:"workspace_dir"`
	Workspace    string `json:"workspace"`
	Hostname     string `json:"hostname"`
	UptimeSec    int64  `json:"uptime_seconds"`
}

// FileError is AIO's FileOperationError, the data of a failed file call.
type FileError struct {
	Errno         *int    `json:"errno"`
	ErrnoName     *string `json:"errno_name"`
	ErrorType     string  `json:"error_type"`
	ExceptionType *string `json:"exception_type"`
	Message       string  `json:"message"`
	Operation     string  `json:"operation"`
	Path          string  `json:"path"`
	Retryable     bool    `json:"retryable"`
	// Lines lists the candidate lines of an ambiguous match (extension).
	Lines []int `json:"lines,omitempty"`
}

// ValidationError is one schema violation.
type ValidationError struct {
	Location []string `json:"location"`
	Message  string   `json:"message"`
	Type     string   `json:"type"`
}

// StatQuery is GET /v2/fs/stat's query.
type StatQuery struct {
	Path           string `json:"path"`
	FollowSymlinks *bool  `json:"follow_symlinks,omitempty" jsonschema:"describe the link's target (default true) or the link itself"`
	User           string `json:"user,omitempty"`
}

// V1StatRequest is POST /v1/file/stat's body.
type V1StatRequest struct {
	Path           string `json:"path"`
	FollowSymlinks *bool  `json:"follow_symlinks,omitempty"`
}

// StatResult is AIO's FileStatResult plus the content version.
type StatResult struct {
	Path         string  `json:"path"`
	Size         int64   `json:"size"`
	Permissions  string  `json:"permissions" jsonschema:"octal, like 644"`
	IsDirectory  bool    `json:"is_directory"`
	IsSymlink    bool    `json:"is_symlink"`
	ModifiedTime *string `json:"modified_time" jsonschema:"RFC 3339"`
	Version      string  `json:"version,omitempty" jsonschema:"content hash of a regular file up to 16 MiB"`
}

// ListQuery is GET /v2/fs/list's query.
type ListQuery struct {
	Path       string `json:"path"`
	Recursive  bool   `json:"recursive,omitempty"`
	ShowHidden *bool  `json:"show_hidden,omitempty" jsonschema:"default true"`
	MaxDepth   *int   `json:"max_depth,omitempty"`
	User       string `json:"user,omitempty"`
}

// V1ListRequest is POST /v1/file/list's body.
type V1ListRequest struct {
	Path               string   `json:"path"`
	Recursive          bool     `json:"recursive,omitempty"`
	ShowHidden         *bool    `json:"show_hidden,omitempty" jsonschema:"default true"`
	FileTypes          []string `json:"file_types,omitempty" jsonschema:"extensions such as .py"`
	MaxDepth           *int     `json:"max_depth,omitempty"`
	IncludeSize        *bool    `json:"include_size,omitempty" jsonschema:"default true"`
	IncludePermissions bool     `json:"include_permissions,omitempty"`
	SortBy             string   `json:"sort_by,omitempty" jsonschema:"name (default), size, modified or type"`
	SortDesc           bool     `json:"sort_desc,omitempty"`
}

// FileInfo is one listed entry.
type FileInfo struct {
	Name         string  `json:"name"`
	Path         string  `json:"path"`
	IsDirectory  bool    `json:"is_directory"`
	Size         *int64  `json:"size"`
	Extension    *string `json:"extension"`
	ModifiedTime *string `json:"modified_time"`
	Permissions  *string `json:"permissions,omitempty"`
	IsHidden     bool    `json:"is_hidden,omitempty"`
	IsSymlink    bool    `json:"is_symlink,omitempty"`
}

// ListResult is AIO's FileListResult.
type ListResult struct {
	Path           string     `json:"path"`
	Files          []FileInfo `json:"files"`
	TotalCount     int        `json:"total_count"`
	DirectoryCount int        `json:"directory_count"`
	FileCount      int        `json:"file_count"`
	Truncated      bool       `json:"truncated"`
}

// MkdirRequest is the body of POST /v2/fs/mkdir and /v1/file/mkdir.
type MkdirRequest struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents,omitempty" jsonschema:"mkdir -p: create parents, succeed if it exists"`
}

// MkdirResult is the data of mkdir.
type MkdirResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// CopyRequest is the body of POST /v2/fs/copy and /v1/file/copy.
type CopyRequest struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Overwrite   bool   `json:"overwrite,omitempty"`
}

// CopyResult is the data of copy.
type CopyResult struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	FilesCopied int    `json:"files_copied"`
	BytesCopied int64  `json:"bytes_copied"`
	// Extensions: a tree's symbolic links, copied as links, and what was
	// left out (the envelope's hint says so too).
	LinksCopied  int   `json:"links_copied,omitempty" jsonschema:"extension: symbolic links copied as links"`
	LinksSkipped int   `json:"links_skipped,omitempty" jsonschema:"extension: symbolic links not copied because their target would lead outside the workspace"`
	OtherSkipped int   `json:"other_skipped,omitempty" jsonschema:"extension: sockets, FIFOs and devices not copied"`
	UndoRecorded *bool `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// MoveRequest is the body of POST /v2/fs/move and /v1/file/move.
type MoveRequest struct {
	Source          string `json:"source"`
	Destination     string `json:"destination"`
	Overwrite       bool   `json:"overwrite,omitempty"`
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"extension: the source file must still have this version"`
}

// MoveResult is the data of move.
type MoveResult struct {
	Source       string `json:"source"`
	Destination  string `json:"destination"`
	Version      string `json:"version,omitempty"`
	UndoRecorded *bool  `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// DeleteRequest is the body of POST /v2/fs/delete and /v1/file/delete.
type DeleteRequest struct {
	Path            string `json:"path"`
	Recursive       bool   `json:"recursive,omitempty" jsonschema:"remove a directory tree"`
	ExpectedVersion string `json:"expected_version,omitempty" jsonschema:"extension: the file must still have this version"`
}

// DeleteResult is the data of delete.
type DeleteResult struct {
	Path         string `json:"path"`
	IsDirectory  bool   `json:"is_directory"`
	UndoRecorded *bool  `json:"undo_recorded,omitempty" jsonschema:"extension: false when undo cannot revert this change (the hint says why); absent when it can"`
}

// UndoHistoryQuery is GET /v2/fs/undo's query.
type UndoHistoryQuery struct {
	Path string `json:"path"`
}

// UndoEntry is one recorded change, newest first.
type UndoEntry struct {
	Op          string `json:"op"`
	Time        string `json:"time" jsonschema:"RFC 3339"`
	PrevExisted bool   `json:"prev_existed"`
	PrevSize    int64  `json:"prev_size"`
}

// UndoHistory is the data of GET /v2/fs/undo.
type UndoHistory struct {
	Path    string      `json:"path"`
	Entries []UndoEntry `json:"entries"`
}
