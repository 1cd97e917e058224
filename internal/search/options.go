package search

import (
	"fmt"
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
	// relative to the start (after GlobPrefix). When Include is not empty, files must match
	// one of them; a file or directory matching an Exclude glob is
	// skipped. Globs are ripgrep -g globs; a leading '!' in Globs excludes.
	Include []string
	Exclude []string
	Globs   []string
	// GlobPrefix is put before the path relative to the start when the
	// globs are matched, so that one with a '/' matches GlobPrefix+rel:
	// ripgrep matches its -g globs against the path it walks, PATH as
	// given joined with the entry's, relative to the current directory
	// (`rg -g 'src/*.go' x src` selects src/a.go, `rg -g 'a/*.go' x src`
	// not src/a/b.go), and the command line sets it so. "" (the
	// workspace fronts) matches them against the path relative to the
	// start.
	GlobPrefix string
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
	// Ancestors are the ignore files of the directories above the root,
	// outermost first, honoured (with RespectIgnore) as ripgrep honours
	// the ignore files of a searched directory's parents. The engine
	// never reads above the root itself: a caller that may read there
	// (the CLI) hands them in, read by ReadAncestorIgnores.
	Ancestors []AncestorIgnores
	// GlobalIgnore is git's global excludes file, honoured with
	// RespectIgnore as ripgrep honours it (see GlobalIgnore). The engine
	// never looks for it: the CLI reads the user's git configuration;
	// the workspace fronts (HTTP, MCP) leave it nil, as they serve a
	// workspace, not the environment of the user who runs the server.
	GlobalIgnore *GlobalIgnore
	// SearchBinaryStart searches a start that is itself a binary file
	// instead of skipping it, as ripgrep searches a file named on its
	// command line. Without RipgrepBinary its NUL bytes are read as line
	// breaks and FileMatches.Binary says it was binary. Binary files met
	// while walking are skipped either way.
	SearchBinaryStart bool
	// RipgrepBinary makes binary files what they are to ripgrep 13 run
	// with its defaults (the command line), instead of skipping those
	// with a NUL byte in their first 8 KiB: where it looks for NUL
	// bytes, which lines it searches and reports before it stops, and
	// what it says then (FileMatches.Binary, Stopped, BinaryOffset).
	// See "Binary files" in the package documentation.
	RipgrepBinary bool
	// RipgrepMapped says, with RipgrepBinary, that ripgrep would map a
	// start that is a file into memory rather than read it: it does for
	// the files named on its command line when they are at most 10 and
	// all regular files, except on macOS. It then looks for NUL bytes
	// differently (see "Binary files").
	RipgrepMapped bool
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
	if err := checkContext("context_before", opts.ContextBefore); err != nil {
		return nil, err
	}
	if err := checkContext("context_after", opts.ContextAfter); err != nil {
		return nil, err
	}
	switch {
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

// WithAncestors returns a copy of q that honours the ignore files above
// the root in a (see Options.Ancestors), for a search of another root
// with the same pattern and filters; q itself is unchanged.
func (q *Query) WithAncestors(a []AncestorIgnores) *Query {
	c := *q
	c.opts.Ancestors = a
	return &c
}

// WithGlobPrefix returns a copy of q whose globs match prefix+rel (see
// Options.GlobPrefix), for a search of another start; q itself is
// unchanged.
func (q *Query) WithGlobPrefix(prefix string) *Query {
	c := *q
	c.opts.GlobPrefix = prefix
	return &c
}

// WithGlobalIgnore returns a copy of q that honours g (see
// Options.GlobalIgnore), for a search of another root, whose Base
// differs; q itself is unchanged.
func (q *Query) WithGlobalIgnore(g *GlobalIgnore) *Query {
	c := *q
	c.opts.GlobalIgnore = g
	return &c
}

// GlobalIgnore is git's global excludes file (core.excludesFile, by
// default ~/.config/git/ignore) as ripgrep applies it: it ranks below
// every other ignore file (a "!" line of a .gitignore re-includes what
// it ignores), and it applies only to entries inside a git repository
// (whose directory, or an ancestor's, Ancestors included, holds ".git"),
// even though .gitignore files apply outside repositories too.
type GlobalIgnore struct {
	Path    string // where it was read, for diagnostics
	Content []byte
	// Base is the start as the caller shows it, ripgrep's PATH as given
	// ("" when none was). ripgrep matches the global patterns against
	// the paths it prints, so a pattern with a '/' matches Base/rel
	// with a leading "./" and then "/" dropped: it is anchored at the
	// current directory for a relative PATH (git anchors it at the
	// repository's top; the two agree when searching from there).
	Base string
}

// globalPrefix is what is put before a path relative to the start for
// the global patterns to match it (see GlobalIgnore.Base): WalkPrefix,
// and then, as ripgrep's global matcher, one leading "/" dropped.
func globalPrefix(base string) string {
	return strings.TrimPrefix(WalkPrefix(base), "/")
}

// WalkPrefix is what ripgrep puts before the path of an entry below the
// PATH base when it matches the entry against globs: base joined with
// the entry's path, and a leading "./" dropped twice (once when the walk
// joins, once by the matcher). "" for no PATH (rg walks "./").
func WalkPrefix(base string) string {
	const mark = "\x00" // stands for the path below base
	s := mark
	switch {
	case base == "":
	case strings.HasSuffix(base, "/"):
		s = base + mark
	default:
		s = base + "/" + mark
	}
	s = strings.TrimPrefix(s, "./")
	s = strings.TrimPrefix(s, "./")
	return strings.TrimSuffix(s, mark)
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

// MaxContext is the most lines of context before or after a match
// (Options.ContextBefore, ContextAfter) a search takes.
const MaxContext = 1000

// checkContext checks a number of context lines; field is the option's
// AIO name, which the error names (a front that spells it otherwise, the
// command line's -B, words the hint with HintFor).
func checkContext(field string, n int) error {
	switch {
	case n < 0:
		return suggesting(field, fmt.Sprintf("context lines must not be negative (got %d)", n),
			"pass 0 (no context) or more lines to %s", field)
	case n > MaxContext:
		return suggesting(field, fmt.Sprintf("at most %d lines of context (got %d)", MaxContext, n),
			fmt.Sprintf("pass at most %d to %%s; to see more of a file, read it around the match", MaxContext), field)
	}
	return nil
}

// compileFilters sets q's glob and type filters from its options.
func (q *Query) compileFilters() error {
	var globs []fieldGlob
	for _, g := range q.opts.Globs {
		globs = append(globs, fieldGlob{"glob", g})
	}
	for _, g := range q.opts.Include {
		globs = append(globs, fieldGlob{"include", g})
	}
	for _, g := range q.opts.Exclude {
		globs = append(globs, fieldGlob{"exclude", "!" + g})
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
		ancestors:   q.opts.Ancestors,
		followLinks: q.opts.FollowLinks,
		maxDepth:    q.opts.MaxDepth,
		workers:     q.opts.Workers,
		skipDirs:    skipSet(q.opts.SkipDirs),
	}
	if g := q.opts.GlobalIgnore; g != nil && q.opts.RespectIgnore {
		o.global = parseIgnore(g.Path, g.Content)
		o.globalPrefix = globalPrefix(g.Base)
	}
	o.globs, o.types, o.globPrefix = q.globs, q.types, q.opts.GlobPrefix
	o.unhide = q.globs != nil && q.globs.whitelist || q.types != nil || o.global.negates()
	return o
}

// globFilter is ripgrep's override globs (-g): gitignore syntax with the
// meaning inverted, last match wins, and {a,b} alternatives (see
// expandBraces). A glob includes, "!glob" excludes; when any glob
// includes, files that match none are skipped. Directories are pruned only
// by excluding globs.
type globFilter struct {
	list      *ignoreList
	whitelist bool
}

// fieldGlob is a glob and the option it came from ("glob", "include",
// "exclude"), which an error names.
type fieldGlob struct {
	field, glob string
}

func newGlobFilter(globs []fieldGlob) (*globFilter, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	f := &globFilter{list: &ignoreList{source: "globs"}}
	for i, fg := range globs {
		g := fg.glob
		body, include := g, true
		if strings.HasPrefix(g, "!") {
			body, include = g[1:], false
		}
		if fg.field == "exclude" {
			g = body // as the caller wrote it, without the '!' added
		}
		if strings.TrimSpace(body) == "" {
			return nil, &InvalidError{Field: fg.field, Message: "empty glob",
				Hint: `pass a glob such as "*.go" or "src/**", or leave the option out`}
		}
		alts, err := expandBraces(body)
		if err != nil {
			return nil, &InvalidError{Field: fg.field, Message: "invalid glob " + strconv.Quote(g) + ": " + err.Error(),
				Hint: `close every "{" with "}" (alternatives: "*.{go,md}"), or escape a literal brace as "\{"`}
		}
		// The alternatives, one after another, decide as the glob would:
		// they all include, or all exclude.
		for _, alt := range alts {
			if alt == "" {
				continue // "{,x}": the empty alternative names nothing
			}
			if strings.HasPrefix(alt, "#") {
				// A comment in an ignore file, not in a glob.
				alt = `\` + alt
			}
			line := alt
			if include {
				line = "!" + alt
				f.whitelist = true
			}
			if err := checkClasses(alt); err != nil {
				return nil, &InvalidError{Field: fg.field, Message: "invalid glob " + strconv.Quote(g) + ": " + err.Error(),
					Hint: `close every "[" with "]" (a class: "[abc]", "[a-z]"), or escape a literal bracket as "\["`}
			}
			p, ok := parsePattern(line)
			if !ok {
				return nil, &InvalidError{Field: fg.field, Message: "invalid glob " + strconv.Quote(g)}
			}
			p.line = i + 1
			f.list.pats = append(f.list.pats, p)
		}
	}
	return f, nil
}

// checkClasses refuses a glob with a malformed character class (a '['
// never closed, or an unknown [:name:]). In an ignore file such a
// pattern matches nothing, as in git; a -g glob is rg's, which refuses
// it ("unclosed character class"), since a selection that silently
// selects nothing reads as "no matches".
func checkClasses(glob string) error {
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '\\':
			i++
		case '[':
			_, end, valid := matchClass(glob, i, 0, true)
			if !valid {
				return fmt.Errorf("unclosed or malformed character class at byte %d", i)
			}
			i = end
		}
	}
	return nil
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
