package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// GlobOptions describe a glob (AIO's /v1/file/glob). Patterns use
// doublestar syntax (bash globstar): '*' and '?' stay within a path
// component, "**" as a whole component matches any number of them
// (including none), "{a,b}" alternatives, "[...]" classes, '\' escapes.
// A pattern is relative to the start; dot-prefixed names are skipped
// unless IncludeHidden is set, though a literal hidden directory at the
// start of the pattern (".github/*.yml") is searched.
//
// A symbolic link met while walking (in the pattern's literal directories
// too) is reported as itself: an entry that is not a directory, whatever
// it points to, with the link's own size and time (as doublestar with
// WithNoFollow). It is never followed: nothing below a link to a
// directory is listed, and its target is not looked at.
type GlobOptions struct {
	Pattern string
	// Exclude globs skip matching entries (and whole directories). One
	// with '/' is matched against the path relative to the start, one
	// without against the name.
	Exclude       []string
	IncludeHidden bool
	// FilesOnly leaves directories out of the results (they are still
	// searched).
	FilesOnly bool
	// Metadata fills GlobEntry.Size and ModTime.
	Metadata bool
	// SortBy is "path" (default), "name", "size" or "modified";
	// SortDesc reverses it. When MaxResults cuts the walk short, the
	// first MaxResults entries in path order are the ones sorted.
	SortBy   string
	SortDesc bool
	// MaxResults caps the entries (0: no cap); Truncated tells when more
	// were left out.
	MaxResults    int
	RespectIgnore bool
	Workers       int
	SkipDirs      []string // as in Options
}

// GlobEntry is one entry found by Glob or Find.
type GlobEntry struct {
	Path    string // relative to the start, slash-separated
	Name    string
	IsDir   bool      // false for a symbolic link, whatever it points to
	Size    int64     // with Metadata; 0 for directories; a link's own size
	ModTime time.Time // with Metadata
}

// GlobResult is what Glob and Find return.
type GlobResult struct {
	Entries   []GlobEntry
	Truncated bool
	Stats     Stats // only Errors and ErrorCount are used
}

// Glob finds the entries under start (relative to root) whose path
// relative to start matches opts.Pattern. The walk starts at the
// pattern's literal directory prefix and does not descend into
// directories below which nothing can match.
func Glob(ctx context.Context, root *os.Root, start string, opts GlobOptions) (*GlobResult, error) {
	pat := opts.Pattern
	if err := checkGlob("pattern", pat); err != nil {
		return nil, err
	}
	for _, x := range opts.Exclude {
		if err := checkGlob("exclude", x); err != nil {
			return nil, err
		}
	}
	switch opts.SortBy {
	case "", "path", "name", "size", "modified":
	default:
		return nil, &InvalidError{Field: "sort_by", Message: "unknown sort_by " + strconv.Quote(opts.SortBy),
			Hint: "use path, name, size or modified"}
	}
	if opts.MaxResults < 0 {
		return nil, &InvalidError{Field: "max_results", Message: "max_results must not be negative"}
	}
	base, rest := doublestar.SplitPattern(pat)
	if base == "" || base == "/" {
		base = "."
	}
	pr := newPruner(rest)
	excl := opts.Exclude
	baseRel := func(rel string) string { // relative to start
		if base == "." {
			return rel
		}
		return base + "/" + rel
	}
	wo := &walkOptions{
		hidden:      opts.IncludeHidden,
		ignoreFiles: opts.RespectIgnore,
		links:       true,
		workers:     opts.Workers,
		wantDirs:    !opts.FilesOnly,
		skipDirs:    skipSet(opts.SkipDirs),
		filter: func(rel, name string, isDir bool) (bool, bool) {
			if excluded(excl, baseRel(rel), name) {
				return false, false
			}
			ok, _ := doublestar.Match(rest, rel)
			return ok, isDir && pr.canDescend(rel)
		},
	}
	if base != "." && baseExcluded(excl, base) {
		// An excluded directory skips everything below it, the
		// pattern's literal directories too ("src/**/*.go" with exclude
		// "src" finds nothing): the walk, which starts below them, would
		// never test them.
		return &GlobResult{Entries: []GlobEntry{}}, nil
	}
	if base != "." {
		if blocked, link := checkBase(root, start, base, wo.skipDirs); blocked {
			// The walk would stop at a link or a skipped directory among
			// the pattern's literal directories: at most the link itself
			// ("src/**" matches src) is found.
			res := &GlobResult{Entries: []GlobEntry{}}
			if ok, _ := doublestar.Match(pat, base); ok && link != nil && !excluded(excl, base, path.Base(base)) {
				e := GlobEntry{Path: base, Name: path.Base(base)}
				if opts.Metadata {
					e.Size, e.ModTime = link.Size(), link.ModTime()
				}
				res.Entries = append(res.Entries, e)
			}
			return res, nil
		}
	}
	res, err := collectEntries(ctx, root, path.Join(start, base), wo, opts.MaxResults, opts.Metadata, baseRel, base != ".")
	if err != nil {
		return nil, err
	}
	if base != "." && !opts.FilesOnly {
		// "src/**" matches src itself, which the walk (starting there)
		// does not report.
		if ok, _ := doublestar.Match(pat, base); ok && !excluded(excl, base, path.Base(base)) {
			if fi, err := root.Stat(path.Join(start, base)); err == nil && fi.IsDir() {
				e := GlobEntry{Path: base, Name: path.Base(base), IsDir: true}
				if opts.Metadata {
					e.ModTime = fi.ModTime()
				}
				res.Entries = append([]GlobEntry{e}, res.Entries...)
				if opts.MaxResults > 0 && len(res.Entries) > opts.MaxResults {
					res.Entries, res.Truncated = res.Entries[:opts.MaxResults], true
				}
			}
		}
	}
	sortEntries(res.Entries, opts.SortBy, opts.SortDesc)
	return res, nil
}

// FindOptions describe a find by name (AIO's /v2/fs/search and
// /v1/file/find). Symbolic links are reported as themselves and never
// followed, as in Glob.
type FindOptions struct {
	// Pattern is a doublestar glob. Without '/' it is matched against
	// each entry's name at any depth (like find -name); with '/' against
	// the path relative to the start (like Glob).
	Pattern       string
	Hidden        bool
	FilesOnly     bool
	MaxResults    int // 0: no cap
	RespectIgnore bool
	Workers       int
	SkipDirs      []string // as in Options
}

// Find returns the entries under start whose name (or path, see
// FindOptions.Pattern) matches, in path order.
func Find(ctx context.Context, root *os.Root, start string, opts FindOptions) (*GlobResult, error) {
	if strings.Contains(opts.Pattern, "/") {
		return Glob(ctx, root, start, GlobOptions{Pattern: opts.Pattern, IncludeHidden: opts.Hidden,
			FilesOnly: opts.FilesOnly, MaxResults: opts.MaxResults, RespectIgnore: opts.RespectIgnore, Workers: opts.Workers,
			SkipDirs: opts.SkipDirs})
	}
	if err := checkGlob("pattern", opts.Pattern); err != nil {
		return nil, err
	}
	if opts.MaxResults < 0 {
		return nil, &InvalidError{Field: "max_results", Message: "max_results must not be negative"}
	}
	pat := opts.Pattern
	wo := &walkOptions{
		hidden:      opts.Hidden,
		ignoreFiles: opts.RespectIgnore,
		links:       true,
		workers:     opts.Workers,
		wantDirs:    !opts.FilesOnly,
		skipDirs:    skipSet(opts.SkipDirs),
		filter: func(rel, name string, isDir bool) (bool, bool) {
			ok, _ := doublestar.Match(pat, name)
			return ok, isDir
		},
	}
	return collectEntries(ctx, root, start, wo, opts.MaxResults, false, func(rel string) string { return rel }, false)
}

// checkBase looks at the pattern's literal directories (base, below
// start) one at a time, as the walk would meet them: blocked when one is
// a symbolic link or a directory in skip, which the walk would neither
// follow nor enter. link describes the link when it is base itself.
func checkBase(root *os.Root, start, base string, skip map[string]bool) (blocked bool, link fs.FileInfo) {
	comps := strings.Split(base, "/")
	p := start
	for i, c := range comps {
		p = cleanRel(path.Join(p, c))
		if skip[p] {
			return true, nil
		}
		fi, err := root.Lstat(p)
		if err != nil {
			return false, nil // missing or unreadable: the walk says so
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if i == len(comps)-1 {
				return true, fi
			}
			return true, nil
		}
	}
	return false, nil
}

func checkGlob(field, p string) error {
	switch {
	case p == "":
		return &InvalidError{Field: field, Message: "empty glob pattern", Hint: `for example "**/*.go"`}
	case strings.HasPrefix(p, "/"):
		return &InvalidError{Field: field, Message: "glob pattern " + strconv.Quote(p) + " is absolute",
			Hint: "patterns are relative to the path searched; pass the directory as path"}
	case !doublestar.ValidatePattern(p):
		return &InvalidError{Field: field, Message: "invalid glob pattern " + strconv.Quote(p),
			Hint: "check brackets and braces: [...] must be closed and non-empty, {a,b} closed"}
	}
	if depth, alts := braces(p); depth > maxBraceDepth || alts > maxAlternatives {
		// doublestar's matching costs about the square of these for
		// every entry walked: a 2 KB pattern of 1000 nested braces took
		// 90 s over 20,000 files.
		return &InvalidError{Field: field, Message: fmt.Sprintf("glob pattern has %d levels of {} and %d alternatives; at most %d and %d are allowed", depth, alts, maxBraceDepth, maxAlternatives),
			Hint: "split it into several searches, or use a simpler pattern"}
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return &InvalidError{Field: field, Message: "glob pattern " + strconv.Quote(p) + " climbs out with ..",
				Hint: "patterns are relative to the path searched; pass the directory as path"}
		}
	}
	return nil
}

// Bounds of a glob's {a,b} alternatives (see checkGlob).
const (
	maxBraceDepth   = 10
	maxAlternatives = 256
)

// braces returns the deepest nesting of {} in glob pattern p and the
// number of its alternatives (every { and unescaped ',' inside one).
func braces(p string) (depth, alts int) {
	level := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			level++
			depth = max(depth, level)
			alts++
		case '}':
			level = max(level-1, 0)
		case ',':
			if level > 0 {
				alts++
			}
		}
	}
	return depth, alts
}

func excluded(globs []string, rel, name string) bool {
	for _, g := range globs {
		subject := rel
		if !strings.Contains(g, "/") {
			subject = name
		}
		if ok, _ := doublestar.Match(g, subject); ok {
			return true
		}
	}
	return false
}

// baseExcluded reports whether an exclude glob matches one of the
// directories of base, a pattern's literal prefix ("src/deep" for
// "src/deep/*.go"), as the walk would have tested them.
func baseExcluded(globs []string, base string) bool {
	for i := 0; i <= len(base); i++ {
		if i == len(base) || base[i] == '/' {
			if dir := base[:i]; excluded(globs, dir, path.Base(dir)) {
				return true
			}
		}
	}
	return false
}

// collectEntries walks and gathers up to max entries (0: all); their
// paths are mapped by relPath (walk start → search start).
func collectEntries(ctx context.Context, root *os.Root, start string, wo *walkOptions, max int, meta bool,
	relPath func(string) string, mayBeMissing bool) (*GlobResult, error) {
	res := &GlobResult{Entries: []GlobEntry{}}
	var process func(*fileRef, *any) fileMeta
	if meta {
		process = func(f *fileRef, _ *any) fileMeta {
			if !f.viaLink {
				// The entry's own: a link's, and a file's without
				// opening it, which takes a read permission its size
				// and time do not.
				size, mtime, err := f.dir.lstat(f.Name)
				return fileMeta{size: size, mtime: mtime, ok: err == nil}
			}
			fh, err := f.open()
			if err != nil {
				return fileMeta{}
			}
			defer fh.close()
			size, _, mtime, err := fh.stat()
			if err != nil {
				return fileMeta{}
			}
			return fileMeta{size: size, mtime: mtime, ok: true}
		}
	}
	walkRoot := cleanRel(start)
	if fi, err := root.Stat(walkRoot); err == nil && !fi.IsDir() {
		if mayBeMissing {
			return res, nil // the pattern's base is a file: nothing below it
		}
		return nil, &fs.PathError{Op: "glob", Path: start, Err: syscall.ENOTDIR}
	}
	errs, nErr, err := walkTree(ctx, root, walkRoot, wo, process, func(n *node[fileMeta]) error {
		if max > 0 && len(res.Entries) >= max {
			res.Truncated = true
			return ErrStop
		}
		e := GlobEntry{Path: relPath(n.rel), Name: n.name, IsDir: n.isDir()}
		if meta {
			if n.isDir() {
				if fi, err := root.Stat(path.Join(walkRoot, n.rel)); err == nil {
					e.ModTime = fi.ModTime()
				}
			} else if n.res.ok {
				e.Size, e.ModTime = n.res.size, time.Unix(0, n.res.mtime)
			}
		}
		res.Entries = append(res.Entries, e)
		return nil
	})
	for _, e := range errs {
		res.Stats.Errors = append(res.Stats.Errors, PathError{Path: relPath(e.Rel), Err: e.Err})
	}
	res.Stats.ErrorCount = nErr
	switch {
	case errors.Is(err, ErrStop):
	case mayBeMissing && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
		// The pattern's literal base does not exist: nothing matches.
	case err != nil:
		return nil, err
	}
	return res, nil
}

type fileMeta struct {
	size  int64
	mtime int64
	ok    bool
}

func sortEntries(es []GlobEntry, by string, desc bool) {
	var c func(a, b GlobEntry) int
	switch by {
	case "name":
		c = func(a, b GlobEntry) int { return cmp.Or(strings.Compare(a.Name, b.Name), comparePaths(a.Path, b.Path)) }
	case "size":
		c = func(a, b GlobEntry) int { return cmp.Or(cmp.Compare(a.Size, b.Size), comparePaths(a.Path, b.Path)) }
	case "modified":
		c = func(a, b GlobEntry) int { return cmp.Or(a.ModTime.Compare(b.ModTime), comparePaths(a.Path, b.Path)) }
	default:
		if !desc {
			return // already in path order
		}
		c = func(a, b GlobEntry) int { return comparePaths(a.Path, b.Path) }
	}
	if desc {
		slices.SortStableFunc(es, func(a, b GlobEntry) int { return c(b, a) })
		return
	}
	slices.SortStableFunc(es, c)
}

// comparePaths orders slash-separated paths component by component, the
// walk's order ("a/b" before "a-c").
func comparePaths(a, b string) int {
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		ac, bc := a, b
		if ai >= 0 {
			ac = a[:ai]
		}
		if bi >= 0 {
			bc = b[:bi]
		}
		if c := strings.Compare(ac, bc); c != 0 {
			return c
		}
		switch {
		case ai < 0 && bi < 0:
			return 0
		case ai < 0:
			return -1
		case bi < 0:
			return 1
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

// pruner tells whether anything below a directory can match a pattern,
// comparing the pattern's components with the directory's.
type pruner struct {
	comps []string // nil: cannot tell (braces), always descend
}

func newPruner(pattern string) pruner {
	if strings.ContainsAny(pattern, "{\\") {
		return pruner{}
	}
	return pruner{comps: strings.Split(pattern, "/")}
}

func (p pruner) canDescend(dir string) bool {
	if p.comps == nil {
		return true
	}
	pc := p.comps
	for dc := range strings.SplitSeq(dir, "/") {
		if len(pc) == 0 {
			return false
		}
		if pc[0] == "**" {
			return true
		}
		if ok, _ := doublestar.Match(pc[0], dc); !ok {
			return false
		}
		pc = pc[1:]
	}
	return len(pc) > 0
}

// Files calls emit, in path order, with the path (relative to start) of
// every file a search with opts would look at: ripgrep's --files. The
// pattern is ignored. As with rg, symbolic links met while walking are
// left out unless opts.FollowLinks.
func Files(ctx context.Context, root *os.Root, start string, opts Options, emit func(path string) error) (Stats, error) {
	if err := checkFollow(&opts); err != nil {
		return Stats{}, err
	}
	q := &Query{opts: opts}
	if err := q.compileFilters(); err != nil {
		return Stats{}, err
	}
	var st Stats
	errs, nErr, err := walkTree(ctx, root, start, q.walkOptions(), nil, func(n *node[struct{}]) error {
		return emit(n.rel)
	})
	for _, e := range errs {
		st.Errors = append(st.Errors, PathError{Path: e.Rel, Err: e.Err})
	}
	st.ErrorCount = nErr
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return st, err
}
