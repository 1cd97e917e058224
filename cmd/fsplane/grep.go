package main

import (
	"bufio"
	"bytes"
	"context"
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
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsplane/fsplane/internal/search"
)

// grepFlags are the ripgrep flags fsplane grep and fsplane files accept.
type grepFlags struct {
	regexps    []string
	ignoreCase bool
	fixed      bool

	// after and before are the lines of context -A, -B and -C ask for:
	// each flag sets its sides, and for each side the last flag given
	// wins (as in GNU grep and rg 14: -C1 -A3 is one line before and
	// three after, -A3 -C1 one and one, -C2 -A0 two before and none
	// after; see contextValue). afterFlag and beforeFlag name the flag
	// that set each side, for errors.
	after, before         int
	afterFlag, beforeFlag string

	globs    []string
	types    []string
	hidden   bool
	noIgnore bool
	// noIgnoreGlobal: git's global excludes file is not honoured (rg
	// --no-ignore-global; --no-ignore implies it).
	noIgnoreGlobal bool
	maxFilesize    string
	multiline      bool
	lineNumber     bool
	follow         bool
	noMessages     bool
	threads        int
	maxDepth       depthValue
	multilineAll   bool
	word           bool
	filesOnly      bool // -l
	count          bool // -c
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
.git/info/exclude, also those of the directories above PATH, and inside
git repositories git's global excludes file, core.excludesFile or
~/.config/git/ignore) are honoured and dot-prefixed names skipped unless
--no-ignore (--no-ignore-global for the global file) / --hidden; binary files
are rg's: one found under a PATH is skipped when it has a NUL byte in its
first 64 KiB, and searched up to a later one ("WARNING: stopped searching
binary file after match"; -c leaves it out), while one named as PATH is
searched and a match in it reported as "binary file matches"; there is no
file size limit unless --max-filesize. A symbolic link named as PATH is
followed; a PATH that cannot be read is reported and the others searched. Output is in
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
	fl.VarP(&contextValue{f: &f, after: true}, "after-context", "A", "show NUM lines after each match")
	fl.VarP(&contextValue{f: &f, before: true}, "before-context", "B", "show NUM lines before each match")
	fl.VarP(&contextValue{f: &f, before: true, after: true}, "context", "C", "show NUM lines before and after each match (-A and -B given after it change their side)")
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
	fl.StringArrayVarP(&f.globs, "glob", "g", nil, "include files matching GLOB, or exclude them with a leading ! (gitignore syntax with {a,b} alternatives; repeatable, later wins)")
	fl.StringArrayVarP(&f.types, "type", "t", nil, "only "+verb+" files of TYPE (ripgrep type names: go, py, js, rust...; repeatable)")
	fl.BoolVar(&f.hidden, "hidden", false, verb+" dot-prefixed files and directories too")
	fl.BoolVar(&f.noIgnore, "no-ignore", false, "do not honour .gitignore, .ignore, .git/info/exclude or git's global excludes file")
	fl.BoolVar(&f.noIgnoreGlobal, "no-ignore-global", false, "do not honour git's global excludes file (core.excludesFile, default ~/.config/git/ignore)")
	fl.BoolVarP(&f.follow, "follow", "L", false, "follow symbolic links to files and directories inside PATH (without it, as with rg, links met below PATH are skipped)")
	fl.IntVarP(&f.threads, "threads", "j", 0, "number of goroutines that "+verb+" (default: the number of CPUs)")
	fl.Var(&f.maxDepth, "max-depth", "descend at most NUM directories below each PATH (0: only the files named as PATH, as rg; default: no limit)")
}

// contextValue is the value of -A (after), -B (before) or -C (both): it
// sets the lines of context of its sides when it is parsed, so that the
// flag given last decides each side, whatever its number (an explicit 0
// too). rg 13 let -A or -B drop a -C given before entirely (-C1 -A3 gave
// no line before), which ripgrep 14 fixed (ripgrep#2288); this is rg 14's
// way, and GNU grep's.
type contextValue struct {
	f             *grepFlags
	before, after bool
	n             int // the last value given, for String
}

func (v *contextValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return err
	}
	v.n = int(n)
	name := "context"
	switch {
	case !v.before:
		name = "after-context"
	case !v.after:
		name = "before-context"
	}
	if v.before {
		v.f.before, v.f.beforeFlag = v.n, name
	}
	if v.after {
		v.f.after, v.f.afterFlag = v.n, name
	}
	return nil
}

func (v *contextValue) Type() string   { return "int" }
func (v *contextValue) String() string { return strconv.Itoa(v.n) }

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
		MaxDepth:        f.maxDepth.n, // 0 (no limit) for an explicit 0 too: searchPaths skips directory PATHs
		// Binary files are rg's: a file named as PATH is searched even
		// when binary, as rg searches it (see grepRenderer).
		SearchBinaryStart: true,
		RipgrepBinary:     true,
	}
	if f.count || f.filesOnly {
		// Only paths and counts are printed, but rg looks at the context
		// lines all the same: a NUL byte in one can stop a file, which
		// rg -c then leaves out and -l does not list. The search takes
		// at most search.MaxContext lines (rg any number).
		o.ContextBefore = min(o.ContextBefore, search.MaxContext)
		o.ContextAfter = min(o.ContextAfter, search.MaxContext)
	}
	if f.threads < 0 {
		return o, fmt.Errorf("-j (--threads) must not be negative (got %d)\nHint: pass 0 (one per CPU, the default) or more", f.threads)
	}
	if f.maxFilesize != "" {
		n, err := search.ParseSize(f.maxFilesize)
		if err != nil {
			return o, fmt.Errorf("--max-filesize: %w", err)
		}
		if n == 0 {
			// rg would search only empty files, in which nothing
			// matches; the engine's 0 means no limit.
			return o, errors.New("--max-filesize 0 would skip every file that is not empty\nHint: give a size of at least 1 (such as 1K), or drop --max-filesize")
		}
		o.MaxFileSize = n
	}
	return o, nil
}

// depthValue is --max-depth: n directories below each PATH, and whether it
// was given, since an explicit 0 means rg's "only the files named as PATH"
// while the engine's MaxDepth 0 means no limit.
type depthValue struct {
	n   int
	set bool
}

func (d *depthValue) String() string {
	if !d.set {
		return ""
	}
	return strconv.Itoa(d.n)
}

func (d *depthValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of directories (0 or more)", s)
	}
	d.n, d.set = n, true
	return nil
}

func (d *depthValue) Type() string { return "int" }

// filesOnly reports whether PATHs that are directories are not walked at
// all (--max-depth 0).
func (d *depthValue) filesOnly() bool { return d.set && d.n == 0 }

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
	opts.RipgrepMapped = rgMaps(args)
	tuneRuntime(&opts)
	q, err := search.Compile(opts)
	if err != nil {
		return &exitError{code: 2, err: f.describe(err)}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	r := &grepRenderer{context: opts.ContextBefore > 0 || opts.ContextAfter > 0, count: f.count, filesOnly: f.filesOnly}
	matched := false
	searched := 0 // files opened to be searched, as rg counts them
	err = searchPaths(ctx, w, stderr, cmd.CommandPath(), f, args, "no match", &matched, func(sr *searchRoot) (search.Stats, error) {
		st, err := search.Stream(ctx, sr.root, sr.start, q.WithAncestors(sr.ancestors).WithGlobalIgnore(sr.global).WithGlobPrefix(sr.globPrefix), func(fm *search.FileMatches) grepOutput {
			return r.render(fm, joinDisplay(sr.prefix, fm.Path))
		}, func(_ string, out grepOutput) error {
			if len(out.text) == 0 {
				return nil
			}
			matched = matched || out.matched
			if r.context && r.printed && out.lines {
				w.WriteString("--\n")
			}
			r.printed = true
			_, err := w.Write(out.text)
			return err
		})
		searched += st.FilesSearched + st.FilesSkippedBinary + st.ErrorCount
		return st, err
	})
	var ee *exitError
	if len(args) == 0 && searched == 0 && errors.As(err, &ee) && ee.code == 1 {
		// As rg, which says so when the current directory (no PATH
		// given) had no file to search, and exits 2 (even with
		// --no-messages, which only drops the words).
		return &exitError{code: 2, silent: f.noMessages, err: errors.New("no files were searched: there are none here, or the filters skipped them all (ignore files, dot-prefixed names, -g, -t, --max-depth, --max-filesize)\nHint: name the files or directories to search, or pass --hidden, --no-ignore or other -g or -t")}
	}
	return err
}

// rgMaps says whether rg would map the files named by paths into memory
// rather than read them, which changes how it looks for NUL bytes in
// them (see search.Options.RipgrepMapped): it does when they are at most
// 10 and all regular files (following symbolic links), except on macOS.
func rgMaps(paths []string) bool {
	if len(paths) == 0 || len(paths) > 10 || runtime.GOOS == "darwin" {
		return false
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// describe words a search error for the command line: the message and
// its hint name the command's flags, not the HTTP fields.
func (f *grepFlags) describe(err error) error {
	var ie *search.InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	msg, hint := ie.Message, ie.Hint
	if flag, ok := f.flagName(ie.Field); ok && ie.Field != "pattern" {
		msg = flag + ": " + msg
	}
	if flag, ok := f.flagName(ie.Suggests); ok {
		hint = ie.HintFor(flag)
	}
	if hint != "" {
		return fmt.Errorf("%s\nHint: %s", msg, hint)
	}
	return errors.New(msg)
}

// flagName spells a search option (by its AIO name, as errors name it)
// as the flag of this command line that set it.
func (f *grepFlags) flagName(opt string) (string, bool) {
	switch opt {
	case "fixed_strings":
		return "-F (--fixed-strings)", true
	case "multiline":
		return "-U (--multiline)", true
	case "context_before":
		if f.beforeFlag == "context" {
			return "-C (--context)", true
		}
		return "-B (--before-context)", true
	case "context_after":
		if f.afterFlag == "context" {
			return "-C (--context)", true
		}
		return "-A (--after-context)", true
	case "glob", "include", "exclude":
		return "-g (--glob)", true
	case "type":
		return "-t (--type)", true
	}
	return "", false
}

// searchPaths runs one search per PATH argument (the current directory
// when there is none), as ripgrep does: a path that cannot be opened or
// searched, and a walk's errors, are printed as "fsplane grep: PATH:
// message" (unless --no-messages) and make the exit status 2, and the
// next PATH is searched all the same; otherwise *found decides between 0
// and 1 (none is the silent message of status 1). Only what no other
// PATH could escape ends the run at once: options the engine refuses,
// output that cannot be written, a stop (ctx done, see searchStopped).
// Output is flushed before any message, so the two never interleave
// mid-line.
func searchPaths(ctx context.Context, w *bufio.Writer, stderr io.Writer, cmd string, f *grepFlags, args []string, none string, found *bool,
	run func(sr *searchRoot) (search.Stats, error)) error {
	errored := false
	var global *search.GlobalIgnore
	if !f.noIgnore && !f.noIgnoreGlobal {
		// A config git would refuse is worth a word but fails no
		// search (rg reads it without a word).
		global = readGlobalIgnore(os.Getenv, func(err error) {
			if !f.noMessages {
				fmt.Fprintf(stderr, "%s: warning: global gitignore: %s\n", cmd, err)
			}
		})
	}
	report := func(path string, err error) {
		errored = true
		if !f.noMessages {
			w.Flush()
			fmt.Fprintf(stderr, "%s: %s: %s\n", cmd, path, errText(err))
		}
	}
	paths := args
	if len(paths) == 0 {
		paths = []string{""}
	}
	cwd := ""
	if len(f.globs) > 0 {
		// rg's -g globs are anchored at the current directory (see
		// rgGlobPrefix); without it, an absolute PATH is matched whole.
		cwd, _ = syscall.Getwd()
	}
	for _, p := range paths {
		shown := p
		if shown == "" {
			if len(args) > 0 {
				// "$DIR" with DIR unset: searching the current
				// directory instead would answer another question.
				report(`""`, errors.New("an empty PATH names no file (an unset variable?)\nHint: name a file or directory; . is the current one"))
				continue
			}
			shown = "."
		}
		sr, err := openSearchRoot(p, !f.noIgnore)
		if err != nil {
			report(shown, err)
			continue
		}
		if sr.start == "." && f.maxDepth.filesOnly() {
			// As rg: a directory PATH is not entered, and counts as no
			// file searched.
			sr.root.Close()
			continue
		}
		if len(f.globs) > 0 {
			sr.globPrefix = rgGlobPrefix(p, cwd)
		}
		if global != nil && sr.start == "." {
			g := *global
			g.Base = p // rg matches it against the paths it prints
			sr.global = &g
		}
		st, err := run(sr)
		sr.root.Close()
		if ctx.Err() != nil {
			// Checked whatever run returned: a file named as PATH comes
			// back from a stop as searched, with the matches found
			// before it.
			if ferr := w.Flush(); ferr != nil {
				return &exitError{code: 2, err: ferr}
			}
			return searchStopped(ctx)
		}
		if err != nil {
			var ie *search.InvalidError
			if ferr := w.Flush(); ferr != nil {
				return &exitError{code: 2, err: ferr}
			}
			if errors.As(err, &ie) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return &exitError{code: 2, err: f.describe(err)}
			}
			report(shown, err)
			continue
		}
		for _, e := range st.Errors {
			report(joinDisplay(sr.prefix, e.Path), e.Err)
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

// searchStopped is the error of a search that ctx stopped before it
// finished (a SIGINT): what it printed is not all there is, so neither
// success nor "no match" (exit 1, which scripts act on) would be true.
// A signal makes the status 128 plus its number (130 for SIGINT), as rg
// killed by it exits; else it is 2, an error.
func searchStopped(ctx context.Context) error {
	err := fmt.Errorf("stopped (%s) before the search finished: what was printed is not all there is; run it again to search everything", stopReason(ctx))
	if sig := stopSignal(ctx); sig != 0 {
		return &exitError{code: 128 + int(sig), err: err}
	}
	return &exitError{code: 2, err: err}
}

// rgGlobPrefix is what ripgrep's -g globs see before the path of an
// entry below the PATH p ("" when none was given): search.WalkPrefix,
// and from an absolute path inside the current directory cwd, cwd and
// the "/" after it dropped. So a glob with a '/' is anchored at the
// current directory: `-g 'src/*.go' x src` selects src/a.go,
// `-g 'a/*.go' x src` does not select src/a/b.go. (rg drops cwd as a
// byte prefix, even from /tmp/ab when cwd is /tmp/a; this drops it as
// directories only.)
func rgGlobPrefix(p, cwd string) string {
	s := search.WalkPrefix(p)
	switch {
	case cwd == "" || !strings.HasPrefix(s, "/"):
	case cwd == "/":
		s = s[1:]
	case strings.HasPrefix(s, cwd+"/"):
		s = s[len(cwd)+1:]
	}
	return s
}

// errText is an error's text without Go's operation prefixes.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// searchRoot is one PATH opened for a search.
type searchRoot struct {
	root   *os.Root
	start  string // where to search, relative to root
	prefix string // how result paths are shown: as given, like rg ("" for the current directory when no PATH was given)
	// ancestors are the ignore files above root (when they are honoured).
	ancestors []search.AncestorIgnores
	// global is git's global excludes file, with its Base set for this
	// PATH (nil when it is not honoured, or PATH is a file).
	global *search.GlobalIgnore
	// globPrefix is what -g globs see before a path below PATH (see
	// rgGlobPrefix).
	globPrefix string
}

// openSearchRoot opens the root that confines a search of p: p itself
// when it is a directory, its parent when it is a file. A symbolic link
// named as p is resolved first and followed wherever it leads, as rg
// follows a link named on its command line: this is the user's own tool
// on the user's own files, and the os.Root (which would refuse a link
// out of the parent) then starts at the target. With ignores, the ignore
// files above the directory searched are read too (see
// search.ReadAncestorIgnores), so that, as with rg, a PATH below a
// repository's top (or the current directory there) honours the
// repository's .gitignore; a file named as p is searched whatever they
// say. What is neither a file nor a directory is refused (see
// unsearchable).
func openSearchRoot(p string, ignores bool) (*searchRoot, error) {
	dir := p
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// Before EvalSymlinks: bash's <(cmd) is /dev/fd/63, a link to
	// "pipe:[N]", which resolves to no path ("no such file or
	// directory", of something that is there).
	if fi, serr := os.Stat(abs); serr == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, unsearchable(fi.Mode())
	}
	real, err := filepath.EvalSymlinks(abs)
	if p == "-" && errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("standard input cannot be searched: fsplane searches files and directories\nHint: save the input to a file and name that file")
	}
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	sr := &searchRoot{start: ".", prefix: p}
	if !fi.IsDir() {
		real, sr.start = filepath.Dir(real), filepath.Base(real)
	} else if ignores {
		sr.ancestors = search.ReadAncestorIgnores(real)
	}
	if sr.root, err = os.OpenRoot(real); err != nil {
		return nil, err
	}
	return sr, nil
}

// unsearchable is the error for a PATH of mode m, neither a regular file
// nor a directory (rg reads pipes and devices as a stream; the engine
// searches files through an os.Root), saying what to name instead.
func unsearchable(m fs.FileMode) error {
	kind, hint := "a device", "name regular files or directories"
	switch m.Type() {
	case fs.ModeNamedPipe:
		kind, hint = "a pipe or FIFO", "save the output to a file and name that file"
	case fs.ModeSocket:
		kind = "a socket"
	}
	return fmt.Errorf("%s (%s): fsplane searches files and directories\nHint: %s", search.ErrNotRegular, kind, hint)
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
// search.FileMatches.Count); with filesOnly, its path. Binary files are
// rg's (search.Options.RipgrepBinary): after the lines rg shows of one,
// a file named as PATH may have rg's line "path: binary file matches
// (found "\0" byte around offset N)" (FileMatches.Binary), and one met
// while walking "path: WARNING: stopped searching binary file after match
// (found "\0" byte around offset N)" (FileMatches.Stopped, when lines
// were shown); rg -c leaves the latter out.
type grepRenderer struct {
	context   bool
	count     bool
	filesOnly bool
	printed   bool // something was written (for "--" between files); emitter goroutine only
}

// grepOutput is what is printed of one file: text, which starts with a
// line of the file when lines is set (rather than with a note on it);
// matched says the file counts as a match for the exit status (rg's
// context lines of a binary file's match it did not show do not).
type grepOutput struct {
	text           []byte
	lines, matched bool
}

// render is called concurrently for different files; it only reads r's
// immutable fields.
func (r *grepRenderer) render(fm *search.FileMatches, path string) grepOutput {
	switch {
	case r.count:
		if fm.Stopped {
			return grepOutput{}
		}
		out := append([]byte(path), ':')
		out = strconv.AppendInt(out, int64(fm.Count()), 10)
		return grepOutput{text: append(out, '\n'), matched: true}
	case r.filesOnly:
		if fm.Stopped && fm.Len() == 0 {
			// rg met a NUL byte before the first match it would show.
			// A file named is listed for any match (Binary or not).
			return grepOutput{}
		}
		return grepOutput{text: append([]byte(path), '\n'), matched: true}
	}
	out := r.lines(fm, path)
	lines := len(out) > 0
	matched := fm.Len() > 0 || fm.Binary
	if fm.Separated {
		out = append(out, "--\n"...)
	}
	switch {
	case fm.Binary:
		// rg's note stands for the rest of a binary file's lines, which
		// are no text to print.
		out = fmt.Appendf(out, "%s: binary file matches (found \"\\0\" byte around offset %d)\n", path, fm.BinaryOffset)
	case fm.Stopped && fm.Len() > 0:
		out = fmt.Appendf(out, "%s: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset %d)\n", path, fm.BinaryOffset)
	}
	return grepOutput{text: out, lines: lines, matched: matched}
}

// lines formats the matching lines and their context.
func (r *grepRenderer) lines(fm *search.FileMatches, path string) []byte {
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
	before := func(l search.LineMatch) {
		for k, b := range l.Before {
			if n := l.Number - len(l.Before) + k; n > last {
				line(n, '-', b)
			}
		}
	}
	for i := 0; i < nlines; i++ {
		l := fm.Line(i)
		before(l)
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
	if l, ok := fm.Partial(); ok {
		before(l)
	}
	return out
}
