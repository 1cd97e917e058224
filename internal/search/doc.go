// Package search is fsplane's file search: a parallel, confined directory
// walker with its own gitignore matcher, a grep engine (a literal
// prefilter from regexp/syntax in front of the standard regexp), and
// glob/find by name. It knows nothing of HTTP or of fsplane's error codes;
// internal/ops adapts it to AIO's requests.
//
// # Confinement
//
// Every search runs inside an *os.Root and a start path relative to it.
// Directories are read and files opened one path component at a time,
// relative to the directory's own descriptor and with O_NOFOLLOW (see
// fs_linux.go), so no name can lead out of the tree. As with ripgrep
// (without -L), a symbolic link met while walking is not followed, to a
// file no more than to a directory: grep and Files skip it, Glob and
// Find report it as itself (not a directory, with the link's own size
// and time) and never open it. Its target was never checked the way a
// path the caller names is (fsplane's state directory, an MCP session's
// roots), so following it would let a link reach what the caller may not.
// The start itself may be a link (opened through the os.Root): a caller
// names it, and the caller checks it. With FollowLinks (rg -L, the CLI
// only) links whose target stays inside the root are followed (relative
// ones: os.Root refuses absolute targets, so an absolute link is skipped
// even when it points inside; rg follows it), files
// searched under the link's name and directories entered with loop
// protection (a directory that is its own ancestor is reported and
// skipped); links that leave the root, or dangle, are skipped silently.
// Nothing above the root is read, not even ignore files: a caller that
// may read there (the CLI) reads them with ReadAncestorIgnores and hands
// them in (Options.Ancestors).
//
// # Walking
//
// A bounded pool of workers (Options.Workers, default GOMAXPROCS) reads
// directories and searches files. Names starting with '.' are skipped
// unless Hidden is set (the start itself is always searched), ".git" is
// always skipped, and with RespectIgnore the ignore files are honoured the
// way git and ripgrep do: .gitignore, .ignore and .git/info/exclude in
// every directory (and in the start's ancestors up to the root), last
// matching line wins, "!" re-includes, a trailing "/" matches directories
// only, a "/" elsewhere anchors to the file's directory, "**" matches any
// number of directories, "[...]" classes, "\" escapes. An ignored
// directory is not entered, so nothing below it can be re-included (as in
// git). The selections decide in ripgrep's order: a glob (Globs,
// Include, Exclude) that matches an entry decides alone, over the ignore
// files; then the ignore files, then the file types; and a hidden entry
// is skipped unless a glob, a type or a "!" line selected it (rg -g
// '*.log' and rg -t log list .x.log, so does a .gitignore's "!.x.log"). Across files, .ignore beats .gitignore beats .git/info/exclude,
// and within a kind the deepest directory decides; .gitignore files above
// a directory holding ".git" do not apply inside it. Unlike ripgrep,
// .gitignore applies outside git repositories too (rg --no-require-git).
// Git's global excludes file (core.excludesFile) ranks below them all
// and, as in ripgrep, applies inside git repositories only; the engine
// is handed its contents (Options.GlobalIgnore) and never looks for it:
// the CLI reads the user's git configuration, while the workspace fronts
// (HTTP, MCP) serve a workspace, not the environment of whoever runs the
// server, and do without it. The matcher is tested against `git
// check-ignore`.
//
// # Order
//
// Results are reported in path order whatever the parallelism: depth
// first, a directory's entries sorted by name byte-wise ("a/b" before
// "a-c", as rg --sort path), a directory before its contents. Workers
// take work in roughly that order, and results done ahead of their turn
// wait, within a memory bound (maxHeld), for the emission to catch up.
//
// # Grep
//
// A pattern is an RE2 regular expression (Go's regexp syntax) with
// ripgrep's line semantics: ^ and $ (and \A and \z) match at line
// boundaries, a match never spans lines (a pattern with a literal "\n"
// is refused; classes lose their '\n') unless Multiline is set, which
// also lets '.' match '\n' (rg -U --multiline-dotall). \w, \d and \s are Unicode, as in ripgrep; \b is
// ASCII (Go has no Unicode word boundary), and bytes that are not UTF-8
// match as U+FFFD. Before running the regexp, the engine looks for a
// literal every match must contain (required literals, inner literals,
// alternations of up to 32 literals, case-folded literals for (?i)),
// finding it with memchr on its rarest byte, and runs the regexp on the
// lines that contain it only; when the literal is the whole pattern the
// regexp is not run at all. Without a literal the regexp runs over the
// whole buffer. A file with a NUL byte in its first 8 KiB is binary and
// skipped (counted in Stats.FilesSkippedBinary), except a start that is
// such a file with SearchBinaryStart, which is searched with its NULs
// read as line breaks (ripgrep's way with a file it is given by name);
// a NUL further on ends the search of that file (at the line before it),
// which Stats.FilesCutBinary counts and Stats.CutBinary locates, so that
// a caller can say the rest was not searched;
// with RipgrepBinary, binary files are ripgrep's instead (see Binary
// files). A UTF-8 byte order mark at the start of a file is not part
// of its first line, neither for matching nor in the text reported (as
// ripgrep and fsplane's read see it). Files up to 1 MiB are read whole into a reused buffer,
// larger ones in chunks with the unfinished line (and the context lines)
// carried over; multiline search reads a file whole (up to 256 MiB).
// Files over MaxFileSize are skipped and counted.
//
// # Binary files
//
// With RipgrepBinary (the command line), a file's NUL bytes do what they
// do to ripgrep 13 with its defaults, which the CLI's tests compare byte
// for byte. Offsets are in the text after a byte order mark, as rg's.
// ripgrep searches a file one of two ways: line by line, reading it into
// a 64 KiB buffer, fill after fill; or whole, as one slice, when it maps
// the file into memory (a file named, see RipgrepMapped) or in multiline
// mode when the pattern can match a line break or has a ^ or $. And it
// treats a file met while walking a directory as quit, one named as
// convert:
//
//   - Quit, line by line: a NUL byte in the first fill of the buffer (its
//     first 64 KiB, or its first 3 bytes when they hold a line break and
//     no byte order mark precedes: rg's decoder hands them on alone)
//     skips the file. A later one stops the search before the fill that
//     brought it: the lines searched before are reported, and
//     FileMatches.Stopped (rg's "WARNING: stopped searching binary file
//     after match"); rg -c leaves the file out. Where the fills end
//     depends on the lines (their LFs: a lone CR, which ends a line
//     here, does not end one for rg) and on the context lines rg keeps
//     (rgReplay).
//   - Quit, whole: a NUL byte in the first 64 KiB skips the file; later,
//     the first line to be shown (a match, or a context line) that has
//     one stops the search there, Stopped. rg shows matches in blocks:
//     a match that starts on a line of the one before or on the line
//     after it joins its block, and a NUL byte in any line of a block
//     stops the search before the block.
//   - Convert, line by line: NUL bytes are read as line breaks, and
//     from the fill that brings the first one, the next line to be shown
//     stops the search; FileMatches.Binary (rg's "binary file matches")
//     when a match was shown or was that line.
//   - Convert, whole: NUL bytes are bytes like any other; one in the
//     first 64 KiB stops the search at the first line to be shown,
//     otherwise the first line to be shown that has one stops it (before
//     its block, as above); Binary as above. rg -c counts every match in
//     a file named.
//
// ripgrep's buffer keeps its growth from one file to the next (one per
// thread), so where its fills end after a line longer than 64 KiB is not
// known; the replay takes a fresh buffer for each file.
//
// # Concurrency
//
// A *Query is immutable and can serve any number of concurrent searches.
// Stream calls collect on worker goroutines, concurrently for different
// files, and emit on one goroutine at a time (never concurrently), in
// path order. Searches stop early when the context is cancelled or emit
// returns an error; every descriptor is closed before they return.
package search
