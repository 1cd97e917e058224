package ops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/search"
)

// Search limits and defaults, AIO's (see aio-file-api.md §4.7–4.8).
const (
	DefaultGrepMaxResults = 500
	DefaultGrepMaxSize    = "1M"
	FindMaxResults        = 10000
	GlobMaxResults        = 5000
)

// GrepRequest is AIO's FileGrepRequest: a content search under Path (a
// directory, or one file).
type GrepRequest struct {
	Path            string
	Pattern         string   // RE2 regular expression, or literal with FixedStrings
	Include         []string // globs (ripgrep -g syntax) a file must match one of
	Exclude         []string // globs of files and directories to skip
	CaseInsensitive bool
	FixedStrings    bool
	ContextBefore   int
	ContextAfter    int
	MaxResults      int    // 0 means DefaultGrepMaxResults
	MaxFileSize     string // "" means DefaultGrepMaxSize; "0" means no limit; "500K", "1M", bytes
	Multiline       bool   // rg -U --multiline-dotall
	Offset          int    // matches to skip first (paging)
	Type            string // ripgrep type name: go, py, js, rust...
	Recursive       *bool  // nil means true; false searches Path's own files only
	// RespectGitignore honours .gitignore, .ignore and .git/info/exclude
	// (an extension; AIO does not).
	RespectGitignore bool
	// IncludeHidden searches dot-prefixed names too (an extension).
	IncludeHidden bool
	// NamedFileUnlimited lifts MaxFileSize when Path names one file (an
	// extension): the cap keeps a tree search off huge files, but a file
	// named on purpose is what the caller asked to search.
	NamedFileUnlimited bool
}

// GrepMatch is one match; File is absolute.
type GrepMatch struct {
	File          string
	LineNumber    int // 1-based
	LineContent   string
	ContextBefore []string
	ContextAfter  []string
}

// GrepResult is AIO's FileGrepResult plus what was left out, so a front
// can say so: an empty Matches means "not there" only when nothing was.
type GrepResult struct {
	Path             string // absolute, resolved
	Pattern          string
	Matches          []GrepMatch
	MatchCount       int  // len(Matches)
	Truncated        bool // more matches exist after the ones returned
	FilesSearched    int
	FilesMatched     int
	FilesSkippedSize int // larger than MaxFileSize
	// FilesSkippedBinary counts the binary files (a NUL byte in the first
	// 8 KiB) left out.
	FilesSkippedBinary int
	// FilesCutBinary counts the files, among FilesSearched, searched only
	// up to a NUL byte after their first 8 KiB: their lines from there on
	// were not (see search.Stats.FilesCutBinary). CutBinary locates the
	// first few, in path order. Both are zero in the result of a host
	// older than them.
	FilesCutBinary int
	CutBinary      []BinaryCut
	// FilesUnreadable counts the files and directories that could not be
	// read (permissions, I/O errors) and were left out.
	FilesUnreadable int
	Unreadable      *Unreadable // an example of them; nil when none
}

// BinaryCut is where the search of a file stopped at a NUL byte: the
// lines before Line were searched, Line (the NUL's) and the rest not.
type BinaryCut struct {
	Path   string // absolute
	Line   int    // 1-based, as GrepMatch.LineNumber
	Offset int64  // the NUL byte's, in the file
}

// Unreadable is one path a search could not read.
type Unreadable struct {
	Path  string // absolute
	Error string // why, as the system says it ("permission denied")
}

// firstUnreadable is the example of st's unreadable paths.
func (t *searchTarget) firstUnreadable(st search.Stats) *Unreadable {
	if len(st.Errors) == 0 {
		return nil
	}
	e := st.Errors[0]
	err := e.Err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Unreadable{Path: t.join(e.Path), Error: err.Error()}
}

// Grep searches file contents under a directory (or in one file) of the
// workspace. It reads files only. Paths in the result are absolute.
// Matches are in path order, then line order; see search.Grep. Symbolic
// links met while walking are skipped, as ripgrep skips them: their
// targets never went through the checks a named path does (the state
// directory, a session's roots). Path itself may be a link: it is
// resolved and checked like any path.
func (e *Engine) Grep(ctx context.Context, req GrepRequest) (*GrepResult, error) {
	const op = "grep"
	maxRes := req.MaxResults
	switch {
	case req.Pattern == "":
		return nil, fserr.New(fserr.BadRequest, op, req.Path, "pattern is required").
			WithHint("pass a regular expression, or a literal with fixed_strings")
	case maxRes < 0:
		return nil, fserr.New(fserr.BadRequest, op, req.Path, "max_results must not be negative (got %d)", maxRes).
			WithHint("omit max_results (or pass 0) for the default of %d", DefaultGrepMaxResults)
	case maxRes == 0:
		maxRes = DefaultGrepMaxResults
	}
	sizeText := req.MaxFileSize
	if sizeText == "" {
		sizeText = DefaultGrepMaxSize
	}
	maxSize, err := search.ParseSize(sizeText)
	if err != nil {
		return nil, fserr.New(fserr.BadRequest, op, req.Path, "max_file_size: %s", err).
			WithHint(`use a number of bytes or a K/M/G suffix, such as "500K" or "1M"; "0" for no limit`)
	}
	opts := search.Options{
		Pattern:         req.Pattern,
		FixedStrings:    req.FixedStrings,
		CaseInsensitive: req.CaseInsensitive,
		Multiline:       req.Multiline,
		ContextBefore:   req.ContextBefore,
		ContextAfter:    req.ContextAfter,
		Include:         req.Include,
		Exclude:         req.Exclude,
		MaxResults:      maxRes,
		Offset:          req.Offset,
		MaxFileSize:     maxSize,
		Hidden:          req.IncludeHidden,
		RespectIgnore:   req.RespectGitignore,
	}
	if req.Type != "" {
		opts.Types = []string{req.Type}
	}
	if req.Recursive != nil && !*req.Recursive {
		opts.MaxDepth = 1
	}
	t, err := e.searchTarget(op, req.Path, false)
	if err != nil {
		return nil, err
	}
	defer t.close()
	opts.SkipDirs = t.skip
	if req.NamedFileUnlimited && !t.isDir {
		opts.MaxFileSize = 0
	}
	if t.isDir {
		var done func()
		opts.Workers, done = e.walking()
		defer done()
	}
	q, err := search.Compile(opts)
	if err != nil {
		return nil, invalid(op, req.Path, err)
	}
	res, err := search.Grep(ctx, t.root, t.rel, q)
	if err != nil {
		return nil, t.walkErr(op, req.Path, err)
	}
	out := &GrepResult{
		Path: t.abs, Pattern: req.Pattern, Matches: make([]GrepMatch, len(res.Matches)),
		MatchCount: len(res.Matches), Truncated: res.Truncated,
		FilesSearched: res.FilesSearched, FilesMatched: res.FilesMatched, FilesSkippedSize: res.FilesSkippedSize,
		FilesSkippedBinary: res.FilesSkippedBinary, FilesUnreadable: res.ErrorCount, Unreadable: t.firstUnreadable(res.Stats),
	}
	for i, m := range res.Matches {
		out.Matches[i] = GrepMatch{File: t.join(m.Path), LineNumber: m.LineNumber, LineContent: m.LineContent,
			ContextBefore: m.ContextBefore, ContextAfter: m.ContextAfter}
	}
	out.FilesCutBinary = res.FilesCutBinary
	for _, c := range res.CutBinary {
		out.CutBinary = append(out.CutBinary, BinaryCut{Path: t.join(c.Path), Line: c.Line, Offset: c.Offset})
	}
	return out, nil
}

// FileSearchRequest is AIO's v1 /v1/file/search: one file, one regex.
type FileSearchRequest struct {
	File  string
	Regex string
}

// FileSearchResult lists the matching lines and their 0-based numbers.
type FileSearchResult struct {
	File        string // absolute
	Matches     []string
	LineNumbers []int // 0-based, as AIO's v1 returns them
	// Cut is where the search stopped at a NUL byte past the file's first
	// 8 KiB (see GrepResult.CutBinary): its lines from there on were not
	// searched. nil when the whole file was.
	Cut *BinaryCut
}

// Search finds the lines of one file that match a regular expression.
// A binary file is decode_error; a directory invalid_target.
func (e *Engine) Search(ctx context.Context, req FileSearchRequest) (*FileSearchResult, error) {
	const op = "search"
	if req.Regex == "" {
		return nil, fserr.New(fserr.BadRequest, op, req.File, "regex is required").
			WithHint("pass the regular expression the file's lines should match")
	}
	t, err := e.searchTarget(op, req.File, false)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if t.isDir {
		return nil, fserr.New(fserr.InvalidTarget, op, req.File, "%s is a directory; search takes one file", req.File).WithErrno(syscall.EISDIR).
			WithHint("use grep to search a directory")
	}
	q, err := search.Compile(search.Options{Pattern: req.Regex, Hidden: true})
	if err != nil {
		if ie, ok := errors.AsType[*search.InvalidError](err); ok && ie.Suggests == "multiline" {
			// This route has no multiline; grep has.
			return nil, fserr.New(fserr.BadRequest, op, req.File, "%s: %s", ie.Field, ie.Message).
				WithHint("search matches one line at a time: use grep with multiline to match across lines")
		}
		return nil, invalid(op, req.File, err)
	}
	res, err := search.Grep(ctx, t.root, t.rel, q)
	if err != nil {
		return nil, t.walkErr(op, req.File, err)
	}
	if res.FilesSkippedBinary > 0 {
		return nil, fserr.New(fserr.DecodeError, op, req.File, "%s is a binary file (it has a NUL byte)", req.File)
	}
	out := &FileSearchResult{File: t.abs, Matches: make([]string, len(res.Matches)), LineNumbers: make([]int, len(res.Matches))}
	for i, m := range res.Matches {
		out.Matches[i] = m.LineContent
		out.LineNumbers[i] = m.LineNumber - 1
	}
	if len(res.CutBinary) > 0 {
		c := res.CutBinary[0]
		out.Cut = &BinaryCut{Path: t.abs, Line: c.Line, Offset: c.Offset}
	}
	return out, nil
}

// FindRequest finds entries by name (AIO's /v2/fs/search and
// /v1/file/find).
type FindRequest struct {
	Path string
	// Pattern is a glob: without '/' matched against names at any depth
	// ("*.py"), with '/' against paths relative to Path ("**/*.py").
	Pattern          string
	MaxResults       int // 0 or more than FindMaxResults means FindMaxResults
	IncludeHidden    bool
	RespectGitignore bool
}

// FindResult lists absolute paths in path order.
type FindResult struct {
	Path      string
	Files     []string
	Truncated bool
	// EntriesUnreadable counts the directories (or entries) that could not
	// be read and were left out.
	EntriesUnreadable int
	Unreadable        *Unreadable // an example of them; nil when none
}

// Find lists the files and directories under a directory whose name (or
// relative path) matches a glob, skipping dot-prefixed names unless
// asked. A symbolic link is listed as itself and never followed.
func (e *Engine) Find(ctx context.Context, req FindRequest) (*FindResult, error) {
	const op = "find"
	t, err := e.searchTarget(op, req.Path, true)
	if err != nil {
		return nil, err
	}
	defer t.close()
	workers, done := e.walking()
	defer done()
	res, err := search.Find(ctx, t.root, t.rel, search.FindOptions{
		Pattern: req.Pattern, Hidden: req.IncludeHidden, RespectIgnore: req.RespectGitignore,
		MaxResults: capResults(req.MaxResults, FindMaxResults), SkipDirs: t.skip, Workers: workers,
	})
	if err != nil {
		return nil, t.walkErr(op, req.Path, err)
	}
	out := &FindResult{Path: t.abs, Files: make([]string, len(res.Entries)), Truncated: res.Truncated,
		EntriesUnreadable: res.Stats.ErrorCount, Unreadable: t.firstUnreadable(res.Stats)}
	for i, en := range res.Entries {
		out.Files[i] = t.join(en.Path)
	}
	return out, nil
}

// GlobRequest is AIO's FileGlobRequest.
type GlobRequest struct {
	Path            string
	Pattern         string   // doublestar glob relative to Path: "**/*.go", "src/*.{ts,tsx}"
	Exclude         []string // globs of entries to leave out (and directories not to enter)
	IncludeHidden   bool
	FilesOnly       *bool // nil means true
	IncludeMetadata *bool // nil means true
	MaxResults      int   // 0 or more than GlobMaxResults means GlobMaxResults
	SortBy          string
	SortDesc        bool
	// RespectGitignore honours ignore files (an extension).
	RespectGitignore bool
}

// GlobFile is AIO's GlobFileInfo; Size and ModifiedTime are nil without
// metadata (Size also for directories).
type GlobFile struct {
	Path         string // absolute
	Name         string
	IsDirectory  bool
	Size         *int64
	ModifiedTime *time.Time
}

// GlobResult is AIO's FileGlobResult.
type GlobResult struct {
	Path       string
	Pattern    string
	Files      []GlobFile
	TotalCount int // len(Files)
	Truncated  bool
	// EntriesUnreadable counts the directories (or entries) that could not
	// be read and were left out.
	EntriesUnreadable int
	Unreadable        *Unreadable // an example of them; nil when none
}

// Glob lists the entries under a directory whose relative path matches a
// glob. A symbolic link is listed as itself (not a directory, with the
// link's own size and time) and never followed.
func (e *Engine) Glob(ctx context.Context, req GlobRequest) (*GlobResult, error) {
	const op = "glob"
	t, err := e.searchTarget(op, req.Path, true)
	if err != nil {
		return nil, err
	}
	defer t.close()
	filesOnly := req.FilesOnly == nil || *req.FilesOnly
	meta := req.IncludeMetadata == nil || *req.IncludeMetadata
	workers, done := e.walking()
	defer done()
	res, err := search.Glob(ctx, t.root, t.rel, search.GlobOptions{
		Pattern: req.Pattern, Exclude: req.Exclude, IncludeHidden: req.IncludeHidden, FilesOnly: filesOnly,
		Metadata: meta, SortBy: req.SortBy, SortDesc: req.SortDesc, RespectIgnore: req.RespectGitignore,
		MaxResults: capResults(req.MaxResults, GlobMaxResults), SkipDirs: t.skip, Workers: workers,
	})
	if err != nil {
		return nil, t.walkErr(op, req.Path, err)
	}
	out := &GlobResult{Path: t.abs, Pattern: req.Pattern, Files: make([]GlobFile, len(res.Entries)),
		TotalCount: len(res.Entries), Truncated: res.Truncated,
		EntriesUnreadable: res.Stats.ErrorCount, Unreadable: t.firstUnreadable(res.Stats)}
	for i, en := range res.Entries {
		f := GlobFile{Path: t.join(en.Path), Name: en.Name, IsDirectory: en.IsDir}
		if meta {
			mt := en.ModTime
			f.ModifiedTime = &mt
			if !en.IsDir {
				sz := en.Size
				f.Size = &sz
			}
		}
		out.Files[i] = f
	}
	return out, nil
}

func capResults(n, limit int) int {
	if n <= 0 || n > limit {
		return limit
	}
	return n
}

// searchTarget is a resolved search path: the root it lies in, opened
// for the search, and where in it to start.
type searchTarget struct {
	root  *os.Root
	rel   string // start, relative to the root
	abs   string // start, absolute
	isDir bool
	skip  []string // directories not to search, relative to the root
}

func (t *searchTarget) close() { t.root.Close() }

// join turns a path relative to the start into an absolute one.
func (t *searchTarget) join(rel string) string {
	if rel == "" {
		return t.abs
	}
	return filepath.Join(t.abs, filepath.FromSlash(rel))
}

// searchTarget resolves p (which must exist; a directory when wantDir)
// and opens its root. Search goes through the *os.Root, so nothing
// outside it is read even if links change during the walk.
func (e *Engine) searchTarget(op, p string, wantDir bool) (*searchTarget, error) {
	info, err := e.ws.Stat(p)
	if err != nil {
		return nil, fserr.From(op, p, err)
	}
	if !info.Exists {
		return nil, fserr.New(fserr.NotFound, op, p, "%s does not exist", p).
			WithHint("check the path; list its parent directory to see what is there")
	}
	if wantDir && !info.IsDir {
		return nil, fserr.New(fserr.InvalidTarget, op, p, "%s is not a directory", p).WithErrno(syscall.ENOTDIR).
			WithHint("pass the directory to search in as path")
	}
	rootPath := e.ws.Roots()[info.Path.Root]
	root, err := os.OpenRoot(rootPath)
	if err != nil {
		return nil, fserr.FromOS(op, p, err)
	}
	t := &searchTarget{root: root, rel: info.Path.Rel, abs: info.Path.Abs, isDir: info.IsDir}
	// The state directory is not part of the workspace (its journals hold
	// other files' history), even when it lies inside a root.
	for _, sd := range []string{e.ws.StateDir(), evalOr(e.ws.StateDir())} {
		for _, base := range []string{rootPath, evalOr(rootPath)} {
			if rel, err := filepath.Rel(base, sd); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
				t.skip = append(t.skip, filepath.ToSlash(rel))
			}
		}
	}
	return t, nil
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// invalid maps a search option error to bad_request.
func invalid(op, path string, err error) error {
	var ie *search.InvalidError
	if errors.As(err, &ie) {
		fe := fserr.New(fserr.BadRequest, op, path, "%s: %s", ie.Field, ie.Message)
		if ie.Hint != "" {
			fe.WithHint("%s", ie.Hint)
		}
		fe.Err = err
		return fe
	}
	return fserr.From(op, path, err)
}

// walkErr maps an error of the search itself (not of single files, which
// are counted and skipped).
func (t *searchTarget) walkErr(op, path string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fserr.New(fserr.IOError, op, path, "search cancelled: %v", err)
	}
	var ie *search.InvalidError
	if errors.As(err, &ie) {
		return invalid(op, path, err)
	}
	if errors.Is(err, search.ErrNotRegular) {
		return fserr.New(fserr.InvalidTarget, op, path, "%s is not a regular file or a directory (a FIFO, socket or device cannot be searched)", path).
			WithHint("search a regular file or a directory")
	}
	return fserr.FromOS(op, path, err)
}
