package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsplane/fsplane/internal/search"
)

// grepFlags are the ripgrep flags fsplane grep and fsplane files accept.
type grepFlags struct {
	regexps      []string
	ignoreCase   bool
	fixed        bool
	after        int
	before       int
	context      int
	globs        []string
	types        []string
	hidden       bool
	noIgnore     bool
	maxFilesize  string
	multiline    bool
	lineNumber   bool
	follow       bool
	noMessages   bool
	threads      int
	maxDepth     int
	multilineAll bool
	word         bool
	filesOnly    bool // -l
	count        bool // -c
	// withFilename (-H) and noHeading are what fsplane grep always does;
	// they are accepted because scripts pass them to rg out of habit.
	withFilename bool
	noHeading    bool
	onlyMatching bool // -o: refused, see runGrep
}

func newGrepCmd() *cobra.Command {
	var f grepFlags
	cmd := &cobra.Command{
		Use:   "grep [flags] PATTERN [PATH...]",
		Short: "Search file contents like ripgrep (path:line:content)",
		Long: `Search the files under each PATH (default: the current directory) for
lines matching PATTERN, a regular expression (RE2 syntax with ripgrep's
Unicode \w, \d and \s), and print them as path:line:content.

The flags and defaults are ripgrep's: ignore files (.gitignore, .ignore,
.git/info/exclude) are honoured and dot-prefixed names skipped unless
--no-ignore / --hidden; binary files (a NUL byte in the first 8 KiB) are
skipped; there is no file size limit unless --max-filesize. Output is in
path order. The exit status is 0 when a line matched, 1 when none did and
2 on an error (as with rg, an error makes it 2 even when lines matched).
-l prints only the paths of the files with a match, -c path:count (the
number of matching lines; with -U and a pattern that can match a line
break, of matches, as rg counts; -c wins over -l, as in rg).

The path is always printed, on every line, and never as a heading above a
file's lines: -H (--with-filename) and --no-heading are accepted and change
nothing. -o (--only-matching) is refused: the engine reports matching lines,
not where in a line a match lies. A lone CR ends a line (as in read and
edit), so on files with CR line endings line numbers differ from rg's.
Other ripgrep flags are refused, not ignored.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGrep(cmd, &f, args)
		},
	}
	fl := cmd.Flags()
	f.addWalkFlags(fl, "search")
	fl.StringArrayVarP(&f.regexps, "regexp", "e", nil, "a pattern to search for (repeatable); the first argument is then a PATH")
	fl.BoolVarP(&f.ignoreCase, "ignore-case", "i", false, "search case-insensitively")
	fl.BoolVarP(&f.fixed, "fixed-strings", "F", false, "treat the patterns as literal text, not regular expressions")
	fl.BoolVarP(&f.word, "word-regexp", "w", false, "only whole words: a match needs a line's start or a non-word character before it, and a line's end or a non-word character after")
	fl.BoolVarP(&f.filesOnly, "files-with-matches", "l", false, "print only the paths of the files with a match")
	fl.BoolVarP(&f.count, "count", "c", false, "print only path:count for each file with a match, the number of lines that match")
	fl.IntVarP(&f.after, "after-context", "A", 0, "show NUM lines after each match")
	fl.IntVarP(&f.before, "before-context", "B", 0, "show NUM lines before each match")
	fl.IntVarP(&f.context, "context", "C", 0, "show NUM lines before and after each match")
	fl.StringVar(&f.maxFilesize, "max-filesize", "", "skip files larger than NUM (K, M or G suffix)")
	fl.BoolVarP(&f.multiline, "multiline", "U", false, "let matches span lines; '.' matches newlines too (rg -U --multiline-dotall)")
	fl.BoolVar(&f.multilineAll, "multiline-dotall", false, "accepted for ripgrep compatibility: -U always implies it")
	fl.BoolVarP(&f.lineNumber, "line-number", "n", true, "show line numbers (always on)")
	fl.BoolVar(&f.noMessages, "no-messages", false, "do not print errors about unreadable files and directories")
	fl.BoolVarP(&f.withFilename, "with-filename", "H", true, "print the path on every line (always on; accepted for ripgrep compatibility)")
	fl.BoolVar(&f.noHeading, "no-heading", true, "never group matches under a heading (always on; accepted for ripgrep compatibility)")
	fl.BoolVarP(&f.onlyMatching, "only-matching", "o", false, "not supported: refused (matching lines are printed whole)")
	return cmd
}

// addWalkFlags registers the flags grep and files share: which files are
// visited. verb is what the command does to them ("search", "list").
func (f *grepFlags) addWalkFlags(fl *pflag.FlagSet, verb string) {
	fl.StringArrayVarP(&f.globs, "glob", "g", nil, "include files matching GLOB, or exclude them with a leading ! (gitignore syntax; repeatable, later wins)")
	fl.StringArrayVarP(&f.types, "type", "t", nil, "only "+verb+" files of TYPE (ripgrep type names: go, py, js, rust...; repeatable)")
	fl.BoolVar(&f.hidden, "hidden", false, verb+" dot-prefixed files and directories too")
	fl.BoolVar(&f.noIgnore, "no-ignore", false, "do not honour .gitignore, .ignore or .git/info/exclude")
	fl.BoolVarP(&f.follow, "follow", "L", false, "follow symbolic links to files and directories inside PATH (without it, as with rg, links met below PATH are skipped)")
	fl.IntVarP(&f.threads, "threads", "j", 0, "number of goroutines that "+verb+" (default: the number of CPUs)")
	fl.IntVar(&f.maxDepth, "max-depth", 0, "descend at most NUM directories below each PATH (0: no limit)")
}

// searchOptions builds the engine options from the flags.
func (f *grepFlags) searchOptions() (search.Options, error) {
	o := search.Options{
		CaseInsensitive: f.ignoreCase,
		FixedStrings:    f.fixed,
		WordRegexp:      f.word,
		Multiline:       f.multiline,
		ContextBefore:   f.before,
		ContextAfter:    f.after,
		Globs:           f.globs,
		Types:           f.types,
		Hidden:          f.hidden,
		RespectIgnore:   !f.noIgnore,
		FollowLinks:     f.follow,
		Workers:         f.threads,
		MaxDepth:        f.maxDepth,
	}
	if f.count || f.filesOnly {
		// Only paths and counts are printed: no context is looked for.
		f.before, f.after, f.context = 0, 0, 0
		o.ContextBefore, o.ContextAfter = 0, 0
	}
	if f.context > 0 {
		if f.before == 0 {
			o.ContextBefore = f.context
		}
		if f.after == 0 {
			o.ContextAfter = f.context
		}
	}
	if f.maxFilesize != "" {
		n, err := search.ParseSize(f.maxFilesize)
		if err != nil {
			return o, err
		}
		o.MaxFileSize = n
	}
	return o, nil
}

func runGrep(cmd *cobra.Command, f *grepFlags, args []string) error {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch {
	case f.onlyMatching:
		// Printing whole lines instead would break a script that counts or
		// parses the matches; refusing says so at once.
		return usageError(cmd, errors.New("-o (--only-matching) is not supported: the search reports matching lines, not where in a line a match lies; drop -o to print the whole lines"))
	case !f.withFilename || !f.noHeading:
		// --with-filename=false or --no-heading=false asks for output
		// fsplane grep never makes.
		return usageError(cmd, errors.New("the path is always printed on every line, without headings: --with-filename and --no-heading cannot be turned off"))
	}
	opts, err := f.searchOptions()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(f.regexps) > 0 {
		opts.Patterns = f.regexps
	} else {
		if len(args) == 0 {
			return usageError(cmd, errors.New("no pattern given"))
		}
		opts.Pattern, args = args[0], args[1:]
	}
	tuneRuntime(&opts)
	q, err := search.Compile(opts)
	if err != nil {
		return &exitError{code: 2, err: grepError(err)}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	r := &grepRenderer{context: opts.ContextBefore > 0 || opts.ContextAfter > 0, count: f.count, filesOnly: f.filesOnly}
	matched := false
	return searchPaths(w, stderr, args, f.noMessages, "no match", &matched, func(root *os.Root, start, prefix string) (search.Stats, error) {
		return search.Stream(ctx, root, start, q, func(fm *search.FileMatches) []byte {
			return r.render(fm, joinDisplay(prefix, fm.Path))
		}, func(_ string, out []byte) error {
			matched = true
			if r.context && r.printed {
				w.WriteString("--\n")
			}
			r.printed = true
			_, err := w.Write(out)
			return err
		})
	})
}

// grepError words a search error for the command line: a hint names the
// command's flags, not the HTTP fields.
func grepError(err error) error {
	var ie *search.InvalidError
	if errors.As(err, &ie) {
		hint := ie.Hint
		if flag, ok := grepFlagNames[ie.Suggests]; ok {
			hint = ie.HintFor(flag)
		}
		if hint != "" {
			return fmt.Errorf("%s\nHint: %s", ie.Message, hint)
		}
		return errors.New(ie.Message)
	}
	return err
}

// grepFlagNames spells the search options a hint may suggest (by their
// AIO names) as fsplane grep's flags.
var grepFlagNames = map[string]string{"fixed_strings": "-F (--fixed-strings)"}

// searchPaths runs one search per PATH argument (the current directory
// when there is none), as ripgrep does: a path that cannot be opened, or a
// walk's errors, are printed (unless quiet) and make the exit status 2;
// otherwise *found decides between 0 and 1 (none is the silent message of
// status 1). Output is flushed before any message, so the two never
// interleave mid-line.
func searchPaths(w *bufio.Writer, stderr io.Writer, args []string, quiet bool, none string, found *bool,
	run func(root *os.Root, start, prefix string) (search.Stats, error)) error {
	errored := false
	report := func(format string, a ...any) {
		errored = true
		if !quiet {
			w.Flush()
			fmt.Fprintf(stderr, format, a...)
		}
	}
	paths := args
	if len(paths) == 0 {
		paths = []string{""}
	}
	for _, p := range paths {
		root, start, prefix, err := openSearchRoot(p)
		if err != nil {
			report("fsplane: %s: %s\n", p, errText(err))
			continue
		}
		st, err := run(root, start, prefix)
		root.Close()
		if err != nil {
			w.Flush()
			return &exitError{code: 2, err: fmt.Errorf("%s: %w", p, grepError(err))}
		}
		for _, e := range st.Errors {
			report("fsplane: %s: %s\n", joinDisplay(prefix, e.Path), errText(e.Err))
		}
		if st.ErrorCount > len(st.Errors) {
			errored = true
		}
	}
	if err := w.Flush(); err != nil {
		return &exitError{code: 2, err: err}
	}
	switch {
	case errored:
		return &exitError{code: 2, silent: true, err: errors.New("errors occurred")}
	case !*found:
		return &exitError{code: 1, silent: true, err: errors.New(none)}
	}
	return nil
}

// errText is an error's text without Go's operation prefixes.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// openSearchRoot opens the root that confines a search of p: p itself
// when it is a directory, its parent when it is a file. prefix is how
// result paths are shown: as given, like rg ("" for the current
// directory when no PATH was given).
func openSearchRoot(p string) (root *os.Root, start, prefix string, err error) {
	dir := p
	if dir == "" {
		dir = "."
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, "", "", err
	}
	if fi.IsDir() {
		root, err = os.OpenRoot(dir)
		return root, ".", p, err
	}
	root, err = os.OpenRoot(filepath.Dir(dir))
	return root, filepath.Base(dir), p, err
}

// tuneRuntime sets up this process for one search: one worker per CPU
// and one P more than workers, so that a worker's read(2) or openat(2)
// does not get its P retaken by sysmon (which happens when no P is idle,
// and costs a thread switch per long syscall); and garbage collection
// paced by a soft memory limit rather than by heap growth: a search
// allocates steadily (listings, results) and drops nearly all of it soon
// after, so collecting at every doubling of a small heap costs more than
// it saves (about 15% of a literal search's CPU here), while the limit
// keeps a search that prints a lot of output within bounds.
// Only the CLI does this: it owns the process.
func tuneRuntime(opts *search.Options) {
	if opts.Workers == 0 {
		opts.Workers = runtime.NumCPU()
		runtime.GOMAXPROCS(opts.Workers + 1)
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(32 << 20)
}

// joinDisplay joins a PATH as given and a path relative to it.
func joinDisplay(prefix, rel string) string {
	switch {
	case rel == "":
		return prefix
	case prefix == "":
		return rel
	case strings.HasSuffix(prefix, "/"):
		return prefix + rel
	}
	return prefix + "/" + rel
}

// grepRenderer formats one file's matches as ripgrep does: path:line:text
// for matching lines, path-line-text for context lines, "--" between
// groups of lines that are not adjacent.
// With count, a file is one line path:count instead (see
// search.FileMatches.Count); with filesOnly, its path.
type grepRenderer struct {
	context   bool
	count     bool
	filesOnly bool
	printed   bool // something was written (for "--" between files); emitter goroutine only
}

// render is called concurrently for different files; it only reads r's
// immutable fields.
func (r *grepRenderer) render(fm *search.FileMatches, path string) []byte {
	switch {
	case r.count:
		out := append([]byte(path), ':')
		out = strconv.AppendInt(out, int64(fm.Count()), 10)
		return append(out, '\n')
	case r.filesOnly:
		return append([]byte(path), '\n')
	}
	nlines := fm.Len()
	size := 0
	for i := 0; i < nlines; i++ {
		size += len(path) + 16 + len(fm.Line(i).Text)
	}
	out := make([]byte, 0, size)
	last := 0 // last line number printed
	line := func(n int, sep byte, text []byte) {
		if r.context && last > 0 && n > last+1 {
			out = append(out, "--\n"...)
		}
		out = append(out, path...)
		out = append(out, sep)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, sep)
		out = append(out, text...)
		out = append(out, '\n')
		last = n
	}
	for i := 0; i < nlines; i++ {
		l := fm.Line(i)
		for k, b := range l.Before {
			if n := l.Number - len(l.Before) + k; n > last {
				line(n, '-', b)
			}
		}
		n := l.Number
		text := l.Text
		for {
			j := bytes.IndexByte(text, '\n')
			if j < 0 {
				break
			}
			if n > last {
				line(n, ':', text[:j])
			}
			text = text[j+1:]
			n++
		}
		if n > last {
			line(n, ':', text)
		}
		if len(l.After) > 0 {
			next := int(^uint(0) >> 1)
			if i+1 < nlines {
				next = fm.Line(i + 1).Number
			}
			for k, a := range l.After {
				if m := n + 1 + k; m > last && m < next {
					line(m, '-', a)
				}
			}
		}
	}
	return out
}
