package client

// GrepRequest is the body of POST /v2/fs/grep and /v1/file/grep.
type GrepRequest struct {
	Path             string   `json:"path" jsonschema:"file or directory to search"`
	Pattern          string   `json:"pattern" jsonschema:"regular expression (RE2), or a literal with fixed_strings"`
	Include          []string `json:"include,omitempty" jsonschema:"globs a file must match"`
	Exclude          []string `json:"exclude,omitempty" jsonschema:"globs of files and directories to skip"`
	CaseInsensitive  bool     `json:"case_insensitive,omitempty"`
	FixedStrings     bool     `json:"fixed_strings,omitempty"`
	ContextBefore    int      `json:"context_before,omitempty"`
	ContextAfter     int      `json:"context_after,omitempty"`
	MaxResults       *int     `json:"max_results,omitempty" jsonschema:"default 500"`
	MaxFileSize      string   `json:"max_file_size,omitempty" jsonschema:"skip larger files: 1M (default), 500K, bytes; 0 for no limit"`
	Multiline        bool     `json:"multiline,omitempty" jsonschema:"rg -U --multiline-dotall"`
	Offset           int      `json:"offset,omitempty" jsonschema:"matches to skip (paging)"`
	Type             string   `json:"type,omitempty" jsonschema:"ripgrep file type: go, py, js, rust, ..."`
	Recursive        *bool    `json:"recursive,omitempty" jsonschema:"default true"`
	RespectGitignore bool     `json:"respect_gitignore,omitempty" jsonschema:"extension: skip files ignored by .gitignore, .ignore and .git/info/exclude"`
	IncludeHidden    bool     `json:"include_hidden,omitempty" jsonschema:"extension: also search dot-prefixed names"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	File          string   `json:"file"`
	LineNumber    int      `json:"line_number" jsonschema:"1-based"`
	LineContent   string   `json:"line_content"`
	ContextBefore []string `json:"context_before"`
	ContextAfter  []string `json:"context_after"`
}

// GrepResult is AIO's FileGrepResult.
type GrepResult struct {
	Path             string      `json:"path"`
	Pattern          string      `json:"pattern"`
	Matches          []GrepMatch `json:"matches"`
	MatchCount       int         `json:"match_count"`
	Truncated        bool        `json:"truncated"`
	FilesSearched    int         `json:"files_searched"`
	FilesMatched     int         `json:"files_matched"`
	FilesSkippedSize int         `json:"files_skipped_size" jsonschema:"files over max_file_size"`
	// The fields below are extensions, present when not zero; the
	// envelope's hint then says what was left out and what to do.
	FilesSkippedBinary int `json:"files_skipped_binary,omitempty" jsonschema:"binary files (a NUL byte in the first 8 KiB), not searched"`
	FilesUnreadable    int `json:"files_unreadable,omitempty" jsonschema:"files and directories that could not be read (permissions, I/O errors), not searched"`
	// FilesCutBinary and BinaryCuts are v2's (and the host routes'): v1
	// keeps AIO's data and tells of such files in the hint only.
	FilesCutBinary int         `json:"files_cut_binary,omitempty" jsonschema:"v2: files among files_searched whose first NUL byte comes after their first 8 KiB, searched only up to the line before it (see binary_cuts)"`
	BinaryCuts     []BinaryCut `json:"binary_cuts,omitempty" jsonschema:"v2: where the first files_cut_binary files (at most 10) stopped, in path order"`
}

// BinaryCut is where the search of a file stopped at a NUL byte.
type BinaryCut struct {
	File       string `json:"file"`
	LineNumber int    `json:"line_number" jsonschema:"1-based: the line holding the NUL byte, the first not searched"`
	Offset     int64  `json:"offset" jsonschema:"the NUL byte's offset in the file, in bytes"`
}

// V1SearchRequest is the body of POST /v1/file/search (one file).
type V1SearchRequest struct {
	File  string `json:"file"`
	Regex string `json:"regex"`
	Sudo  *bool  `json:"sudo,omitempty"`
}

// SearchResult is the data of /v1/file/search.
type SearchResult struct {
	File        string   `json:"file"`
	Matches     []string `json:"matches"`
	LineNumbers []int    `json:"line_numbers" jsonschema:"0-based"`
}

// FindQuery is GET /v2/fs/search's query (find by name).
type FindQuery struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern" jsonschema:"glob over names and paths, e.g. **/*.py"`
	User    string `json:"user,omitempty"`
}

// V1FindRequest is the body of POST /v1/file/find.
type V1FindRequest struct {
	Path string `json:"path"`
	Glob string `json:"glob" jsonschema:"filename glob"`
}

// FindResult is AIO's FileFindResult.
type FindResult struct {
	Path      string   `json:"path"`
	Files     []string `json:"files"`
	Truncated bool     `json:"truncated"`
	// EntriesUnreadable is an extension, present when not zero; the
	// envelope's hint then names one.
	EntriesUnreadable int `json:"entries_unreadable,omitempty" jsonschema:"directories that could not be read (permissions, I/O errors), not searched"`
}

// GlobRequest is the body of POST /v1/file/glob.
type GlobRequest struct {
	Path            string   `json:"path"`
	Pattern         string   `json:"pattern" jsonschema:"**, *, ?, [...], {a,b}"`
	Exclude         []string `json:"exclude,omitempty"`
	IncludeHidden   bool     `json:"include_hidden,omitempty"`
	FilesOnly       *bool    `json:"files_only,omitempty" jsonschema:"default true"`
	IncludeMetadata *bool    `json:"include_metadata,omitempty" jsonschema:"default true"`
	MaxResults      *int     `json:"max_results,omitempty" jsonschema:"default and cap 5000"`
	SortBy          string   `json:"sort_by,omitempty" jsonschema:"path (default), name, size or modified"`
	SortDesc        bool     `json:"sort_desc,omitempty"`
}

// GlobFileInfo is one glob match.
type GlobFileInfo struct {
	Path         string  `json:"path"`
	Name         string  `json:"name"`
	IsDirectory  bool    `json:"is_directory"`
	Size         *int64  `json:"size"`
	ModifiedTime *string `json:"modified_time"`
}

// GlobResult is AIO's FileGlobResult.
type GlobResult struct {
	Path       string         `json:"path"`
	Pattern    string         `json:"pattern"`
	Files      []GlobFileInfo `json:"files"`
	TotalCount int            `json:"total_count"`
	Truncated  bool           `json:"truncated"`
	// EntriesUnreadable is an extension, present when not zero; the
	// envelope's hint then names one.
	EntriesUnreadable int `json:"entries_unreadable,omitempty" jsonschema:"directories that could not be read (permissions, I/O errors), not searched"`
}
