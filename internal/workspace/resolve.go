package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
	"golang.org/x/sys/unix"
)

// maxLinks bounds the symbolic links followed while resolving one path,
// as Linux's MAXSYMLINKS does.
const maxLinks = 40

// maxPathLen is the longest path, in bytes, the system takes: PATH_MAX
// counts the terminating NUL. *os.Root walks a path a component at a time
// and would take any length, but nothing else on the system could name a
// longer one, and each component may cost a directory created (a write's
// missing parents) or a lookup.
const maxPathLen = unix.PathMax - 1

// Path is a resolved path.
type Path struct {
	Given string // as the caller gave it
	Root  int    // index of the root it lies in
	// Rel is the path inside the root, slash-separated, without ".." and
	// with every symbolic link that stays inside the root followed; "." is
	// the root itself. Components after the first missing one are kept as
	// given (cleaned), so Rel also names files about to be created.
	Rel string
	Abs string // the root's configured path joined with Rel
}

// resolved is a Path plus what only resolution knows.
type resolved struct {
	Path
	r        *wsRoot
	viaLink  bool   // the last component of the given path was a symlink
	canonKey string // root's real path joined with Rel: one key per file
	dirOnly  bool   // given with a trailing slash and missing: no file may be made there (see checkSlash)
	// mode is Rel's type and permissions as the walk saw them, when it
	// looked Rel up last (modeKnown): what is there, without a stat more.
	mode      fs.FileMode
	modeKnown bool
}

// Resolve maps p to a file inside a root, following symbolic links that
// stay inside it. It reports outside_root for paths and links that leave
// every root and invalid_path for empty paths, NUL bytes and link loops.
// The file need not exist.
func (w *Workspace) Resolve(p string) (Path, error) {
	if err := w.checkOpen("resolve", p); err != nil {
		return Path{}, err
	}
	r, err := w.resolve("resolve", p)
	if err != nil {
		return Path{}, err
	}
	return r.Path, nil
}

func (w *Workspace) resolve(op, p string) (*resolved, error) {
	if p == "" {
		return nil, fserr.New(fserr.InvalidPath, op, p, "empty path").WithHint("name a file inside the workspace")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, fserr.New(fserr.InvalidPath, op, p, "path %q contains a NUL byte", p)
	}
	idx, rel, err := w.lexical(op, p)
	if err != nil {
		return nil, err
	}
	root := w.roots[idx]
	dw := dirWalk{root: root.root}
	defer dw.close()
	rel, viaLink, inState, err := w.followIn(&dw, op, p, root, rel)
	if err != nil {
		return nil, err
	}
	r := &resolved{
		Path:     Path{Given: p, Root: idx, Rel: rel, Abs: filepath.Join(root.path, rel)},
		r:        root,
		viaLink:  viaLink,
		canonKey: filepath.Join(root.real, rel),
		mode:     dw.lastMode, modeKnown: dw.lastSeen,
	}
	// The journals are not workspace files: writing a manifest would let
	// a caller steer the next recovery, reading a blob would show another
	// workspace's undo history.
	if inState || w.inStateByPath(root, rel) {
		return nil, w.inStateErr(op, p)
	}
	return r, checkSlash(op, r)
}

// checkSlash applies what a trailing slash means, as in POSIX: the path
// names a directory, so "a.txt/" is not a.txt. So does a last component
// "." or ".." (lexical cleaning would drop it: "new/." would make a file
// "new", "a.txt/." would name a.txt). An existing target that is not a
// directory (after links) is invalid_target; a missing one is marked
// dirOnly, and operations that would create a file there refuse
// (refuseDirOnly) while those that create a directory go ahead.
func checkSlash(op string, r *resolved) error {
	end := dirEnding(r.Given)
	if end == "" {
		return nil
	}
	fi, err := r.r.root.Stat(r.Rel)
	switch {
	case err == nil && !fi.IsDir():
		return fserr.New(fserr.InvalidTarget, op, r.Given, "%s is not a directory, yet the path ends with %s", r.Given, end).WithErrno(syscall.ENOTDIR).
			WithHint("drop the trailing %s to name the file", end)
	case errors.Is(err, fs.ErrNotExist):
		r.dirOnly = true
	}
	return nil // other errors surface in the operation itself
}

// refuseDirOnly is the error for making a regular file (or a link) at r
// when r was given with a trailing slash.
func refuseDirOnly(op string, r *resolved) error {
	if !r.dirOnly {
		return nil
	}
	end := dirEnding(r.Given)
	return fserr.New(fserr.InvalidTarget, op, r.Given, "%s ends with %s, which names a directory, not a file", r.Given, end).WithErrno(syscall.EISDIR).
		WithHint("drop the trailing %s to make a file there", end)
}

// dirEnding is the ending of p that makes it name a directory: "/", "/."
// or "/.." (with any slashes after), or "" when it has none. The root's
// own spellings ("/", ".", "..") have none.
func dirEnding(p string) string {
	trimmed := strings.TrimRight(p, "/")
	switch {
	case trimmed == "" || trimmed == "." || trimmed == "..":
		return ""
	case strings.HasSuffix(trimmed, "/."):
		return p[len(trimmed)-2:]
	case strings.HasSuffix(trimmed, "/.."):
		return p[len(trimmed)-3:]
	case len(trimmed) < len(p):
		return p[len(trimmed):]
	}
	return ""
}

func (w *Workspace) inStateErr(op, p string) *fserr.Error {
	return fserr.New(fserr.OutsideRoot, op, p,
		"path %s is inside fsplane's state directory (%s), which is not part of the workspace", p, w.stateDir).
		WithHint("it holds fsplane's undo history and journals: leave it alone, or keep it out of the roots with --state-dir (FSPLANE_STATE_DIR)")
}

// The state directory is recognised two ways. By path string
// (inStateByPath), which also covers missing paths below it. And by
// identity (device and inode, isState), because a path string cannot
// tell that a directory is the state directory when it is spelled
// differently: on a case-insensitive file system ~/.LOCAL/STATE/fsplane
// is the state directory, and so is a bind mount of it or its old path
// after a parent was renamed, yet none of these strings lies under the
// state directory's path.
//
// The identity of every existing directory on a resolved path is
// compared where the path is walked anyway: follow compares each
// component it visits, so resolve and resolveEntry cost no system call
// more than the walk (statting each prefix through the root again would
// cost a walk per prefix, quadratic in the depth). Paths a write derives
// below a resolved one (a tree's entries, the files of a merged copy)
// never pass through resolve; those writes check each new component with
// inStateBelow as they reach it.

// inStateByPath reports whether rel in root is the state directory or lies
// in it by path string, or because the root itself is the state directory
// (wsRoot.isState): the checks that need no system call.
func (w *Workspace) inStateByPath(root *wsRoot, rel string) bool {
	_, in := within(filepath.Join(root.path, rel), w.stateDir)
	_, inReal := within(filepath.Join(root.real, rel), w.stateReal)
	return in || inReal || root.isState
}

// inStateBelow reports whether rel in root is the state directory or lies
// in it, for a path derived below a checked one whose every parent
// directory has been checked too, and found to be a directory, not a
// link: only rel itself is left to compare, by path and by the identity
// fi describes (rel's Lstat; nil when it is missing). A link at rel is
// not followed: the writes that derive paths (merges) replace a link,
// never write through it.
func (w *Workspace) inStateBelow(root *wsRoot, rel string, fi fs.FileInfo) bool {
	return w.inStateByPath(root, rel) || w.isState(fi)
}

// existing is fi when err is nil, else nil: a Stat's result as the
// inStateBelow argument.
func existing(fi fs.FileInfo, err error) fs.FileInfo {
	if err != nil {
		return nil
	}
	return fi
}

// isState reports whether fi describes the state directory itself,
// however it was reached.
func (w *Workspace) isState(fi fs.FileInfo) bool {
	return w.stateID != nil && fi != nil && fi.IsDir() && os.SameFile(fi, w.stateID)
}

// destInside reports whether the directory dir (its FileInfo) is one of
// d's existing ancestors — or d itself, with self — by identity. A copy or
// move of a directory into itself is refused by path first; this catches
// another spelling of the same directory (a case-insensitive file system,
// a bind mount), where copying would recurse into its own copy without
// end. It stats each ancestor through d's root, then the root's own
// ancestors: once per directory copy or move, not per entry.
func destInside(d *resolved, dir fs.FileInfo, self bool) bool {
	same := func(fi fs.FileInfo, err error) bool { return err == nil && os.SameFile(fi, dir) }
	rel := d.Rel
	if !self {
		rel = path.Dir(rel)
	}
	for {
		if same(d.r.root.Stat(rel)) {
			return true
		}
		if rel == "." {
			break
		}
		rel = path.Dir(rel)
	}
	for p := filepath.Dir(d.r.real); ; p = filepath.Dir(p) {
		if same(os.Stat(p)) {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

// locate finds the root that contains the absolute, cleaned path abs,
// preferring the deepest when roots nest, and returns the path inside it.
// Both the configured form of each root and its symlink-free form are
// accepted, so /tmp/x and /private/tmp/x name the same file on macOS.
func (w *Workspace) locate(abs string) (idx int, rel string, ok bool) {
	best := -1
	for i, r := range w.roots {
		for _, base := range []string{r.path, r.real} {
			if rest, in := within(abs, base); in && (best < 0 || len(base) > best) {
				idx, rel, ok, best = i, rest, true, len(base)
			}
		}
	}
	return idx, rel, ok
}

// LexicalKey names p as an absolute path in its root, from the text of p
// alone: no system call, no link followed. Two spellings of one file
// through a link get different keys; callers that need one key per file
// use Resolve.
func (w *Workspace) LexicalKey(p string) (string, error) {
	idx, rel, err := w.lexical("resolve", p)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.roots[idx].path, rel), nil
}

// lexical places p in a root without touching the disk: the root an
// absolute p lies in, or the first root for a relative one, and the
// cleaned path inside it. A ".." that climbs out is outside_root. A path
// longer than maxPathLen, as given or joined to its root, is
// invalid_path: every path a caller names passes through here, so
// nothing longer is ever looked up or made.
func (w *Workspace) lexical(op, p string) (idx int, rel string, err error) {
	if len(p) > maxPathLen {
		return 0, "", tooLong(op, p, "path is %d bytes", len(p))
	}
	if filepath.IsAbs(p) {
		var ok bool
		if idx, rel, ok = w.locate(filepath.Clean(p)); !ok {
			return 0, "", w.outside(op, p)
		}
	} else {
		rel = filepath.Clean(p)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return 0, "", w.climbsOut(op, p, rel)
		}
	}
	root := w.roots[idx].path
	if n := len(filepath.Join(root, rel)); n > maxPathLen {
		return 0, "", tooLong(op, p, "path is %d bytes joined to its root %s", n, root)
	}
	return idx, rel, nil
}

// tooLong is the error for a path longer than maxPathLen; the message
// leaves the path out: it is long.
func tooLong(op, p, format string, args ...any) *fserr.Error {
	return fserr.New(fserr.InvalidPath, op, p, format+"; the longest path this system takes is %d", append(args, maxPathLen)...).
		WithErrno(syscall.ENAMETOOLONG).WithHint("use a shorter path")
}

// within reports whether the cleaned absolute path p lies in base and
// returns the relative remainder ("." for base itself).
func within(p, base string) (string, bool) {
	if p == base {
		return ".", true
	}
	if base == "/" {
		return p[1:], true
	}
	if strings.HasPrefix(p, base) && p[len(base)] == '/' {
		return p[len(base)+1:], true
	}
	return "", false
}

// linkStays reports whether a symbolic link at rel in root, pointing to
// target, leads inside root: an absolute target below the root's path
// (as configured or resolved), a relative one that does not climb above
// it. An empty target, or one with a NUL byte, leads nowhere; one with
// ".." after a name is refused (see DotDotAfterName).
func linkStays(root *wsRoot, rel, target string) bool {
	if target == "" || strings.IndexByte(target, 0) >= 0 || DotDotAfterName(target) {
		return false
	}
	if path.IsAbs(target) {
		c := path.Clean(target)
		_, in := within(c, root.path)
		_, inReal := within(c, root.real)
		return in || inReal
	}
	j := path.Join(path.Dir(rel), target)
	return j != ".." && !strings.HasPrefix(j, "../")
}

// DotDotAfterName reports whether a link target has a ".." component
// after a name. Where such a target leads cannot be read from its text,
// which is all a check made before the link exists has: the name may be
// (or become) a link itself, and with s -> ".", "s/s/../.." climbs two
// levels above the link while reading as its own directory. ".." may only
// lead a relative target ("../../lib/x").
func DotDotAfterName(target string) bool {
	named := false
	for c := range strings.SplitSeq(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// outside and linkOutside keep what to do in the hint, not the message:
// fronts show a hint on its own (the HTTP envelope's hint, a Hint: line
// on the command line), and a message that carries it shows none.
func (w *Workspace) outside(op, p string) *fserr.Error {
	return fserr.New(fserr.OutsideRoot, op, p,
		"path %s is outside the workspace roots (%s)", p, w.rootList()).WithHint("%s", w.insideHint())
}

// climbsOut is the error for a relative path whose ".." (rel, cleaned)
// leaves the first root, where relative paths resolve. Where it would
// land lexically may be inside another root, but it is not taken there:
// a relative path names a file of the first root, through that root's
// os.Root; a file of another root is named by its absolute path, which
// the hint gives when it is one.
func (w *Workspace) climbsOut(op, p, rel string) *fserr.Error {
	first := w.roots[0].path
	msg := fmt.Sprintf("path %s leads outside the workspace root (%s) with ..", p, first)
	if len(w.roots) > 1 {
		msg = fmt.Sprintf("path %s leads outside the first root (%s) with ..: relative paths resolve inside the first root", p, first)
	}
	e := fserr.New(fserr.OutsideRoot, op, p, "%s", msg)
	if abs, ok := w.inOtherRoot(w.roots[0], filepath.Join(first, rel)); ok {
		return e.WithHint("to reach a file in another root, name it by its absolute path: %s", abs)
	}
	return e.WithHint("%s", w.insideHint())
}

// inOtherRoot reports whether the absolute path abs lies in a root other
// than from, and returns abs cleaned.
func (w *Workspace) inOtherRoot(from *wsRoot, abs string) (string, bool) {
	abs = filepath.Clean(abs)
	idx, _, ok := w.locate(abs)
	return abs, ok && w.roots[idx] != from
}

// insideHint is the hint of a path outside the roots.
func (w *Workspace) insideHint() string {
	if len(w.roots) > 1 {
		return "use a path inside one of the roots (" + w.rootList() + "); relative paths start at " + w.roots[0].path
	}
	return "use a path inside one of the roots; relative paths start at " + w.roots[0].path
}

// follow walks rel component by component with Lstat and Readlink through
// the root, replacing each symbolic link by its target. A link may point
// anywhere inside its own root (relative, or absolute under the root);
// anything else is outside_root. The result contains no symbolic links at
// the time of the walk; the *os.Root operations that use it refuse a link
// swapped in afterwards if it leads out. viaLink reports that the last
// component of rel was a link; inState that a directory of the result
// is the state directory, by identity (the root itself is not compared:
// see wsRoot.isState).
//
// Each component is looked up in the directory reached so far, held open
// (dirWalk), so a walk costs a few system calls per component, not a walk
// from the root per component (quadratic in the depth). Below a missing
// component nothing is looked up: nothing there can exist.
func (w *Workspace) follow(op, given string, root *wsRoot, rel string) (res string, viaLink, inState bool, err error) {
	dw := dirWalk{root: root.root}
	defer dw.close()
	return w.followIn(&dw, op, given, root, rel)
}

// followIn is follow walking with dw, whose lookups tests count.
func (w *Workspace) followIn(dw *dirWalk, op, given string, root *wsRoot, rel string) (res string, viaLink, inState bool, err error) {
	pending := splitRel(rel)
	var done []string
	// stateAt is len(done) once done reaches the state directory, 0 while
	// it does not. A ".." from a link target that climbs back out of it
	// resets it: the result then merely passed through.
	stateAt := 0
	// missingAt is len(done) once done names something missing (or a
	// file, below which nothing is), 0 while it does not; a ".." from a
	// link target may climb back out of it.
	missingAt := 0
	links := 0
	var lastLink, lastTarget string // the link expanded last, for messages
	// The given path's own components are always the tail of pending;
	// origLeft counts them, so we know when its last one is a link.
	origLeft := len(pending)
	for len(pending) > 0 {
		c := pending[0]
		dw.lastSeen = false
		last := false
		if len(pending) == origLeft {
			origLeft--
			last = origLeft == 0
		}
		pending = pending[1:]
		switch c {
		case ".", "":
			continue
		case "..":
			// Cleaning removed the given path's own "..", so this one
			// comes from a link target, resolved against the link's
			// directory as the kernel does.
			if len(done) == 0 {
				if lastLink != "" {
					// Above the root, where the rest leads lexically.
					lands := filepath.Join(append([]string{filepath.Dir(root.real)}, pending...)...)
					return "", false, false, w.linkOutside(op, given, root, lastLink, lastTarget, lands)
				}
				return "", false, false, w.outside(op, given)
			}
			done = done[:len(done)-1]
			dw.up(len(done))
			if len(done) < stateAt {
				stateAt = 0
			}
			if len(done) < missingAt {
				missingAt = 0
			}
			continue
		}
		if missingAt > 0 {
			done = append(done, c)
			continue
		}
		fi, err := dw.lstat(done, c)
		if err != nil {
			if isEscape(err) {
				return "", false, false, w.outside(op, given)
			}
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				// Missing: the rest names something to be created. Keep
				// walking lexically; a ".." from a link target may lead
				// back into existing directories.
				done = append(done, c)
				missingAt = len(done)
				continue
			}
			return "", false, false, osErr(op, given, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(pending) == 0 {
				dw.lastMode, dw.lastSeen = fi.Mode(), true
			}
			done = append(done, c)
			if !fi.IsDir() {
				missingAt = len(done) // nothing is below a file
			}
			if stateAt == 0 && w.isState(fi) {
				stateAt = len(done)
			}
			continue
		}
		if last {
			viaLink = true
		}
		links++
		if links > maxLinks {
			return "", false, false, fserr.New(fserr.InvalidPath, op, given, "path %s: too many levels of symbolic links", given)
		}
		cur := path.Join(append(done, c)...)
		target, err := dw.readlink(done, c)
		if err != nil {
			return "", false, false, osErr(op, given, err)
		}
		if target == "" {
			return "", false, false, fserr.New(fserr.InvalidPath, op, given, "path %s: empty symbolic link %s", given, cur)
		}
		lastLink, lastTarget = cur, target
		if filepath.IsAbs(target) {
			t := filepath.Clean(target)
			inner, ok := within(t, root.path)
			if !ok {
				inner, ok = within(t, root.real)
			}
			if !ok {
				lands := filepath.Join(append([]string{t}, pending...)...)
				return "", false, false, w.linkOutside(op, given, root, cur, target, lands)
			}
			done, stateAt = done[:0], 0
			dw.up(0)
			pending = append(splitRel(inner), pending...)
		} else {
			// Relative to the link's directory, which is done.
			pending = append(splitRel(target), pending...)
		}
	}
	if len(done) == 0 {
		return ".", false, false, nil
	}
	return path.Join(done...), viaLink, stateAt > 0, nil
}

// dirWalk keeps the directory a walk has reached open, as a root of its
// own, so that looking up the next component is one call relative to it.
// It is opened lazily, when a component below it is looked up: the last
// component of a path is never opened. The walk's path (done) may only
// grow by appending while the directory is held; a walk that shortens it
// (a ".." from a link target) calls up, and the directory is opened again
// from the root when next needed.
type dirWalk struct {
	root *os.Root
	dir  *os.Root // the directory named by done[:n]; nil: the root itself
	n    int
	// lookups counts the components looked up, those walked to reopen a
	// directory included: the measure of a walk's cost that tests bound.
	lookups int
	// lastMode is the mode of the walk's result, when its last lookup
	// was of the result itself (lastSeen).
	lastMode fs.FileMode
	lastSeen bool
}

// up tells dw that the walk's path is now n components long.
func (dw *dirWalk) up(n int) {
	if n < dw.n {
		dw.close()
	}
}

// reach returns the directory done names, opening what it lacks below the
// one held.
func (dw *dirWalk) reach(done []string) (*os.Root, error) {
	if dw.n == len(done) {
		return dw.current(), nil
	}
	rest := done[dw.n:]
	dw.lookups += len(rest)
	d, err := dw.current().OpenRoot(path.Join(rest...))
	if err != nil {
		return nil, err
	}
	dw.close()
	dw.dir, dw.n = d, len(done)
	return d, nil
}

func (dw *dirWalk) current() *os.Root {
	if dw.dir != nil {
		return dw.dir
	}
	return dw.root
}

// lstat is Lstat of c in the directory done names.
func (dw *dirWalk) lstat(done []string, c string) (fs.FileInfo, error) {
	d, err := dw.reach(done)
	if err != nil {
		return nil, err
	}
	dw.lookups++
	return d.Lstat(c)
}

// readlink is Readlink of c in the directory done names.
func (dw *dirWalk) readlink(done []string, c string) (string, error) {
	d, err := dw.reach(done)
	if err != nil {
		return "", err
	}
	return d.Readlink(c)
}

func (dw *dirWalk) close() {
	if dw.dir != nil {
		dw.dir.Close()
	}
	dw.dir, dw.n = nil, 0
}

// linkOutside is the error for a path whose symbolic link link -> target
// in root leads out of root; lands is where the path then goes,
// lexically. A link may lead anywhere inside its own root only: each
// root is confined through its own os.Root, which cannot follow a link
// into another, so one that lands in another root is refused too, and
// the message says so rather than call it outside the roots.
func (w *Workspace) linkOutside(op, given string, root *wsRoot, link, target, lands string) *fserr.Error {
	if abs, ok := w.inOtherRoot(root, lands); ok {
		return fserr.New(fserr.OutsideRoot, op, given,
			"path %s leads through the symbolic link %s -> %s into another root; a symbolic link may not lead from one root into another",
			given, link, target).WithHint("name the file by its absolute path in that root: %s", abs)
	}
	return fserr.New(fserr.OutsideRoot, op, given,
		"path %s leads outside the workspace roots (%s) through the symbolic link %s -> %s",
		given, w.rootList(), link, target).WithHint("%s", w.insideHint())
}

func splitRel(rel string) []string {
	if rel == "" || rel == "." {
		return nil
	}
	return strings.Split(rel, "/")
}

// parentDirs returns the ancestors of rel, outermost first, excluding ".".
func parentDirs(rel string) []string {
	var out []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}
