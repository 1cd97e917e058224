package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// DefaultListLimit is the number of entries a listing returns unless told
// otherwise (AIO's cap).
const DefaultListLimit = 10_000

// ListOptions qualify List.
type ListOptions struct {
	// Recursive lists subdirectories too. Links to directories are
	// listed but not descended into.
	Recursive bool
	// MaxDepth bounds a recursive listing: 1 is the directory's own
	// entries, 2 adds theirs, and so on; 0 is unlimited. Ignored when
	// not Recursive.
	MaxDepth int
	// SkipHidden leaves out dot-prefixed names, and does not descend into
	// hidden directories.
	SkipHidden bool
	// Limit caps the entries returned; past it Listing.Truncated is set.
	// 0 means DefaultListLimit.
	Limit int
	// Include, when set, decides which entries are returned and counted
	// against Limit; directories it rejects are still descended into.
	Include func(*Entry) bool
}

// Entry is one listed file.
type Entry struct {
	Name string
	Path string // absolute: the listed directory's Abs joined with Rel
	Rel  string // relative to the listed directory, slash-separated
	// IsDir, Size, Mode and ModTime describe what a symbolic link points
	// to when it leads to something inside the root; a dangling link, or
	// one that leaves the root, is described as the link itself.
	IsDir     bool
	IsSymlink bool
	Size      int64
	Mode      fs.FileMode
	ModTime   time.Time
	Hidden    bool // the name starts with a dot
}

// Listing is the result of List.
type Listing struct {
	Path      Path // the listed directory
	Entries   []Entry
	Truncated bool // more entries existed than Limit
	// WholeDepth, with Truncated, is the depth down to which the listing
	// is whole: 1 when all of the directory's own entries are listed, 2
	// when theirs are too, and so on; 0 when not even its own all fit.
	WholeDepth int
	// Unreadable counts subdirectories of a recursive listing that could
	// not be read (permission denied); they are listed, their contents
	// are not.
	Unreadable int
}

// List lists the directory p: its entries sorted by name, and with
// Recursive each subdirectory's entries right after it. A recursive
// listing is walked breadth first, so one cut at its Limit holds every
// entry down to WholeDepth and then the next level's first entries in
// listing order: one big subdirectory does not push the rest of the top
// level out.
// The state directory is never listed. Listing a file is invalid_target;
// a missing directory is not_found.
func (w *Workspace) List(p string, opts ListOptions) (*Listing, error) {
	const op = "list"
	if err := w.checkOpen(op, p); err != nil {
		return nil, err
	}
	switch {
	case opts.MaxDepth < 0:
		return nil, fserr.New(fserr.BadRequest, op, p, "max depth must not be negative, got %d", opts.MaxDepth)
	case opts.Limit < 0:
		return nil, fserr.New(fserr.BadRequest, op, p, "limit must not be negative, got %d", opts.Limit)
	}
	r, err := w.resolve(op, p)
	if err != nil {
		return nil, err
	}
	fi, err := lstatEntry(r)
	switch {
	case err != nil:
		return nil, osErr(op, p, err)
	case fi == nil:
		return nil, notFound(op, p)
	case !fi.IsDir():
		return nil, fserr.New(fserr.InvalidTarget, op, p, "%s is not a directory", p).WithErrno(syscall.ENOTDIR).
			WithHint("use stat to describe a file")
	}
	l := &lister{w: w, opts: opts, root: r.r, base: r.Abs, out: &Listing{Path: r.Path}}
	if l.opts.Limit == 0 {
		l.opts.Limit = DefaultListLimit
	}
	if !opts.Recursive {
		l.opts.MaxDepth = 1
	}
	level := []listDir{{r.Rel, ""}}
walk:
	for depth := 1; len(level) > 0; depth++ {
		var next []listDir
		for _, d := range level {
			stop, err := l.dir(d, depth, &next)
			if err != nil {
				return nil, osErr(op, p, err)
			}
			if stop {
				l.out.WholeDepth = depth - 1
				break walk
			}
		}
		level = next
	}
	if l.opts.MaxDepth != 1 {
		// Level by level, each directory's entries sorted: into listing
		// order.
		slices.SortFunc(l.out.Entries, func(a, b Entry) int { return compareRel(a.Rel, b.Rel) })
	}
	return l.out, nil
}

// listDir is a directory a listing is to read: rootRel below the root,
// rel below the listed directory.
type listDir struct{ rootRel, rel string }

// compareRel orders slash-separated paths as a listing does: by name,
// component by component, a directory right before what it holds.
func compareRel(x, y string) int {
	for {
		xn, xrest, xmore := strings.Cut(x, "/")
		yn, yrest, ymore := strings.Cut(y, "/")
		if c := strings.Compare(xn, yn); c != 0 {
			return c
		}
		switch {
		case !xmore && !ymore:
			return 0
		case !xmore:
			return -1
		case !ymore:
			return 1
		}
		x, y = xrest, yrest
	}
}

type lister struct {
	w    *Workspace
	opts ListOptions
	root *wsRoot
	base string
	out  *Listing
}

// dir lists the directory d at depth and adds the subdirectories to
// descend into to next. Entries are examined lazily, so a capped listing
// of a huge directory costs one stat per returned entry; one directory
// is open at a time. stop reports that the cap was reached.
func (l *lister) dir(d listDir, depth int, next *[]listDir) (stop bool, err error) {
	rootRel, rel := d.rootRel, d.rel
	names, err := readNames(l.root.root, rootRel)
	if err != nil {
		if depth > 1 && (errors.Is(err, fs.ErrPermission) || gone(err)) {
			if !gone(err) {
				l.out.Unreadable++
			}
			return false, nil
		}
		return false, err
	}
	slices.Sort(names)
	var sub *os.Root
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	for _, name := range names {
		hidden := name[0] == '.'
		if hidden && l.opts.SkipHidden {
			continue
		}
		childRoot, childRel := path.Join(rootRel, name), path.Join(rel, name)
		if sub == nil {
			if sub, err = l.root.root.OpenRoot(rootRel); err != nil {
				if depth > 1 && gone(err) {
					return false, nil // removed meanwhile
				}
				return false, err
			}
		}
		fi, err := sub.Lstat(name)
		if err != nil {
			if gone(err) {
				continue // removed meanwhile
			}
			return false, err
		}
		if fi.IsDir() && l.w.isStateDir(l.root, childRoot, fi) {
			continue
		}
		e := Entry{
			Name: name, Path: filepath.Join(l.base, childRel), Rel: childRel,
			IsDir: fi.IsDir(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), Hidden: hidden,
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			e.IsSymlink = true
			if t := l.w.linkTarget(l.root, childRoot); t != nil {
				e.IsDir, e.Size, e.Mode, e.ModTime = t.IsDir(), t.Size(), t.Mode(), t.ModTime()
			}
		}
		if l.opts.Include == nil || l.opts.Include(&e) {
			if len(l.out.Entries) >= l.opts.Limit {
				l.out.Truncated = true
				return true, nil
			}
			l.out.Entries = append(l.out.Entries, e)
		}
		if fi.IsDir() && (l.opts.MaxDepth == 0 || depth < l.opts.MaxDepth) {
			*next = append(*next, listDir{childRoot, childRel})
		}
	}
	return false, nil
}

// linkTarget describes what the symbolic link rel points to, when that
// lies inside the root and exists; else nil.
func (w *Workspace) linkTarget(root *wsRoot, rel string) fs.FileInfo {
	target, _, inState, err := w.follow("list", rel, root, rel)
	if err != nil || inState {
		return nil
	}
	fi, err := root.root.Lstat(target)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	if fi.IsDir() && w.isStateDir(root, target, fi) {
		return nil
	}
	return fi
}

// readNames returns the names in directory rel, unsorted.
func readNames(root *os.Root, rel string) ([]string, error) {
	d, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// sortedNames is readNames, sorted.
func sortedNames(root *os.Root, rel string) ([]string, error) {
	names, err := readNames(root, rel)
	slices.Sort(names)
	return names, err
}
