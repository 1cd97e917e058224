package search

import (
	"strconv"
	"strings"
)

// Options describe a content search. Field names follow AIO's grep
// request (pattern, fixed_strings, case_insensitive, ...); the zero value
// of every field is ripgrep's default, except that the caller must set a
// pattern. Front ends apply AIO's defaults (MaxResults 500, MaxFileSize
// 1 MiB, recursive) themselves.
type Options struct {
	// Pattern is an RE2 regular expression (Go syntax) with ripgrep's
	// Unicode \w, \d and \s, or a literal when FixedStrings is set.
	Pattern string
	// Patterns are more alternatives (rg -e PATTERN, repeated).
	Patterns        []string
	FixedStrings    bool
	CaseInsensitive bool
	// WordRegexp keeps only matches that are whole words (rg -w): with
	// the start of a line or a non-word character (Unicode \W) before
	// them, and the end of a line or a non-word character after. As in
	// ripgrep, the match found then includes those characters. So in
	// multiline mode a match of a pattern that ends with a line break
	// also touches the next line (ripgrep reports the pattern's lines).
	WordRegexp bool
	// Multiline lets a match span lines and '.' match '\n' (rg -U
	// --multiline-dotall). A match is reported once, at its first line,
	// with the text of all the lines it touches.
	Multiline     bool
	ContextBefore int // lines of context before each match (rg -B)
	ContextAfter  int // lines of context after each match (rg -A)

	// Include and Exclude are globs (gitignore syntax, like rg -g): a glob
	// without '/' matches a name at any depth, one with '/' the path
	// relative to the start. When Include is not empty, files must match
	// one of them; a file or directory matching an Exclude glob is
	// skipped. Globs are ripgrep -g globs; a leading '!' in Globs excludes.
	Include []string
	Exclude []string
	Globs   []string
	// Types are ripgrep type names (go, py, js, rust...): files must match
	// one of them.
	Types []string

	// MaxResults caps the matches returned (after Offset); 0 means no cap.
	MaxResults int
	// Offset skips this many matches first (paging).
	Offset int
	// MaxFileSize skips larger files (counted in Stats.FilesSkippedSize);
	// 0 means no limit.
	MaxFileSize int64
	// MaxDepth limits the descent: 1 searches only the start's own files
	// (AIO recursive=false); 0 means no limit.
	MaxDepth int

	// Hidden includes dot-prefixed names (rg --hidden).
	Hidden bool
	// RespectIgnore honours .gitignore, .ignore and .git/info/exclude
	// (ripgrep's default; AIO's respect_gitignore).
	RespectIgnore bool
	// FollowLinks follows the symbolic links met while walking, to files
	// and to directories, when their target stays inside the root (rg
	// -L). Without it, as with ripgrep, they are skipped: only a link
	// named as the start is followed (by the os.Root). A followed link's
	// target is checked against nothing but the root, so this is for
	// callers that may read all of it (the CLI): it cannot be combined
	// with SkipDirs, and fsplane's workspace fronts never set it.
	FollowLinks bool
	// Workers bounds the goroutines that read directories and search
	// files; 0 means GOMAXPROCS.
	Workers int
	// SkipDirs are directories, relative to the root (not the start),
	// that are never searched: fsplane's state directory when it lies
	// inside a workspace root.
	SkipDirs []string
}

// Query is a compiled search: pattern, filters and walk settings. It is
// immutable and safe for concurrent use; compile once, search many times.
type Query struct {
	opts  Options
	m     *matcher
	globs *globFilter
	types *typeFilter
}

// Compile validates opts and compiles the pattern and filters. Errors are
// *InvalidError naming the bad field.
func Compile(opts Options) (*Query, error) {
	pats := opts.Patterns
	if opts.Pattern != "" || len(pats) == 0 {
		pats = append([]string{opts.Pattern}, pats...)
	}
	switch {
	case opts.ContextBefore < 0 || opts.ContextAfter < 0:
		return nil, &InvalidError{Field: "context_before", Message: "context lines must not be negative"}
	case opts.ContextBefore > maxContext || opts.ContextAfter > maxContext:
		return nil, &InvalidError{Field: "context_after", Message: "at most 1000 lines of context"}
	case opts.MaxResults < 0:
		return nil, &InvalidError{Field: "max_results", Message: "max_results must not be negative"}
	case opts.Offset < 0:
		return nil, &InvalidError{Field: "offset", Message: "offset must not be negative"}
	case opts.MaxFileSize < 0:
		return nil, &InvalidError{Field: "max_file_size", Message: "max_file_size must not be negative"}
	case opts.MaxDepth < 0:
		return nil, &InvalidError{Field: "recursive", Message: "max depth must not be negative"}
	}
	if err := checkFollow(&opts); err != nil {
		return nil, err
	}
	m, err := compileMatcher(pats, opts.FixedStrings, opts.CaseInsensitive, opts.Multiline, opts.WordRegexp)
	if err != nil {
		return nil, err
	}
	q := &Query{opts: opts, m: m}
	if err := q.compileFilters(); err != nil {
		return nil, err
	}
	return q, nil
}

// checkFollow refuses FollowLinks with SkipDirs: a followed link could
// lead into a skipped directory (fsplane's state directory) by a path the
// walk never compares.
func checkFollow(opts *Options) error {
	if opts.FollowLinks && len(opts.SkipDirs) > 0 {
		return &InvalidError{Field: "follow_links", Message: "symbolic links cannot be followed in a search that must skip directories"}
	}
	return nil
}

const maxContext = 1000

// compileFilters sets q's glob and type filters from its options.
func (q *Query) compileFilters() error {
	globs := append(append([]string(nil), q.opts.Globs...), q.opts.Include...)
	for _, g := range q.opts.Exclude {
		globs = append(globs, "!"+g)
	}
	var err error
	if q.globs, err = newGlobFilter(globs); err != nil {
		return err
	}
	q.types, err = newTypeFilter(q.opts.Types)
	return err
}

func (q *Query) walkOptions() *walkOptions {
	o := &walkOptions{
		hidden:      q.opts.Hidden,
		ignoreFiles: q.opts.RespectIgnore,
		followLinks: q.opts.FollowLinks,
		maxDepth:    q.opts.MaxDepth,
		workers:     q.opts.Workers,
		skipDirs:    skipSet(q.opts.SkipDirs),
	}
	if q.globs != nil || q.types != nil {
		g, t := q.globs, q.types
		o.filter = func(rel, name string, isDir bool) (bool, bool) {
			if g != nil {
				switch g.decide(rel, name, isDir) {
				case ignored:
					return false, false
				case noMatch:
					if !isDir && g.whitelist {
						return false, false
					}
				}
			}
			if !isDir && t != nil && !t.match(name) {
				return false, false
			}
			return true, isDir
		}
	}
	return o
}

// globFilter is ripgrep's override globs (-g): gitignore syntax with the
// meaning inverted, last match wins. A glob includes, "!glob" excludes;
// when any glob includes, files that match none are skipped. Directories
// are pruned only by excluding globs.
type globFilter struct {
	list      *ignoreList
	whitelist bool
}

func newGlobFilter(globs []string) (*globFilter, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	f := &globFilter{list: &ignoreList{source: "globs"}}
	for i, g := range globs {
		if strings.TrimSpace(g) == "" {
			return nil, &InvalidError{Field: "include", Message: "empty glob"}
		}
		body, include := g, true
		if strings.HasPrefix(g, "!") {
			body, include = g[1:], false
		}
		if strings.HasPrefix(body, "#") {
			// A comment in an ignore file, not in a glob.
			body = `\` + body
		}
		line := body
		if include {
			line = "!" + body
			f.whitelist = true
		}
		p, ok := parsePattern(line)
		if !ok {
			return nil, &InvalidError{Field: "include", Message: "invalid glob " + strconv.Quote(g)}
		}
		p.line = i + 1
		f.list.pats = append(f.list.pats, p)
	}
	return f, nil
}

// decide: ignored means excluded, included means selected.
func (f *globFilter) decide(rel, name string, isDir bool) decision {
	return f.list.match(rel, name, isDir)
}

func skipSet(dirs []string) map[string]bool {
	if len(dirs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		m[cleanRel(d)] = true
	}
	return m
}
