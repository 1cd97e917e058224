package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
)

// defaultMoveGrace is how long a MOVED_FROM left at the end of a read
// waits for its MOVED_TO before it counts as a move out. The kernel
// queues a rename's two halves one after the other, not at once: a read
// can end between them.
const defaultMoveGrace = 20 * time.Millisecond

// read is the reader goroutine: it turns kernel events into watcher
// events until the inotify instance is closed.
func (r *Registry) read(in *inotify, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 256<<10)
	grace, pairGrace := r.moveGrace, r.pairGrace
	if grace <= 0 {
		grace = defaultMoveGrace
	}
	if pairGrace <= 0 {
		// The halves of an exchange are queued as close together as
		// those of a rename.
		pairGrace = defaultMoveGrace
	}
	waiting := false // a read deadline is set for pending MOVED_FROMs or a held rename
	for {
		// Read holding mu (see readLocked), so that Create finds every
		// event taken from the kernel handled: where a new subscriber's
		// events begin is then known (see dirWatch.subs).
		n, err := in.readLocked(buf, &r.mu, r.readHook)
		if waiting && errors.Is(err, os.ErrDeadlineExceeded) {
			// No MOVED_TO came: moved out; no move back came: the
			// held rename is one.
			_ = in.setDeadline(time.Time{})
			waiting = false
			r.mu.Lock()
			r.settleMovesLocked()
			if r.freed || len(r.astray) > 0 {
				r.rewatchLocked()
			}
			r.mu.Unlock()
			continue
		}
		if err != nil {
			r.mu.Lock()
			closed := r.closed
			r.mu.Unlock()
			if !closed {
				r.log.Error("inotify read failed; file watching stopped", "err", err)
				r.mu.Lock()
				for _, w := range r.watchers {
					w.markOverflow()
				}
				r.mu.Unlock()
			}
			return
		}
		now := time.Now()
		base := r.readEnd
		r.readEnd += uint64(n)
		parseEvents(buf[:n], func(ev kernelEvent, off, end int) {
			ev.pos, ev.end = base+uint64(off), base+uint64(end)
			r.handleLocked(ev, now)
			if r.freed {
				// Watches were released: watch what could not be
				// watched, before what follows is handled.
				r.rewatchLocked()
			}
		})
		r.closeWindowsLocked()
		if len(r.astray) > 0 {
			// Directories left unwatched were not at their paths: what
			// was queued is handled now, the moves that took them
			// elsewhere too (held ones once settled, above).
			r.rewatchLocked()
		}
		pending := len(r.moves) > 0 || r.pair != nil
		wait := grace
		if len(r.moves) == 0 {
			wait = pairGrace
		}
		if pending && in.setDeadline(time.Now().Add(wait)) != nil {
			r.settleMovesLocked() // cannot wait: settle now
			pending = false
		}
		r.mu.Unlock()
		if waiting && !pending {
			_ = in.setDeadline(time.Time{})
		}
		waiting = pending
	}
}

func (r *Registry) handleLocked(ev kernelEvent, now time.Time) {
	if ev.mask&inOverflow != 0 {
		r.log.Warn("inotify queue overflowed; watchers report overflow")
		r.settlePairLocked()
		// Watches first, then the marker: a client that rescans on
		// seeing it misses nothing made after its rescan.
		r.resyncLocked(now)
		for _, w := range r.watchers {
			w.markOverflow()
		}
		return
	}
	if r.pair != nil {
		switch r.pairGoesOnLocked(ev) {
		case pairOwnMove:
			return // the moved directory's MOVE_SELF: the pair moves its watch
		case pairEnds:
			r.settlePairLocked()
		}
	}
	if len(r.moves) > 0 && (ev.mask&inMovedTo == 0 || r.moves[ev.cookie] == nil) {
		// The kernel queues a rename's two halves back to back: a
		// MOVED_FROM followed by anything else was a move out, and is
		// reported before what follows it.
		r.settleMovesLocked()
	}
	dw := r.dirs[ev.wd]
	if dw == nil {
		return
	}
	if dw.scan != nil && ev.name != "" && !dw.scan.keeps(ev) {
		if ev.mask&inMovedTo != 0 && r.moves[ev.cookie] != nil {
			// Moved in from a watched directory before the listing,
			// which reported it created: gone from where it was.
			r.settleMovesLocked()
		}
		return
	}
	if ev.mask&inIgnored != 0 {
		// The directory is gone (or unwatched): its watchers rooted
		// there stop (a directory watcher was told by DELETE_SELF).
		r.forgetLocked(dw)
		var gone []*Watcher
		for w := range dw.subs {
			delete(w.dirs, dw)
			if w.root == dw.path {
				gone = append(gone, w)
			}
		}
		for _, w := range gone {
			r.rootGoneLocked(w, false, now)
		}
		return
	}
	isDir := ev.mask&inIsDir != 0
	if ev.name == "" {
		switch {
		case ev.mask&inDeleteSelf != 0:
			for w := range dw.subs {
				if !w.file && w.root == dw.path && dw.sees(w, ev) {
					w.enqueue(rawEvent{typ: Remove, path: dw.path, isDir: true, at: now}, ".")
				}
			}
		case ev.mask&inMoveSelf != 0:
			// A watcher's own directory moved where no watched
			// directory saw it go (a rename seen in a watched parent
			// has moved the watch already, and stopped the watchers
			// rooted there).
			for w := range dw.subs {
				if w.root == dw.path {
					r.goneLocked(dw.path, true, now)
					break
				}
			}
		}
		return
	}
	full := path.Join(dw.path, ev.name)
	if ev.mask&(inDelete|inMovedFrom) != 0 {
		delete(dw.unreached, ev.name) // gone before it could be watched
	}
	switch {
	case ev.mask&inCreate != 0:
		r.deliverLocked(dw, ev, rawEvent{typ: Create, path: full, isDir: isDir, at: now})
		if isDir {
			r.growLocked(dw, ev, full)
		}
	case ev.mask&inModify != 0:
		if !isDir {
			r.deliverLocked(dw, ev, rawEvent{typ: Write, path: full, at: now})
		}
	case ev.mask&inAttrib != 0:
		r.deliverLocked(dw, ev, rawEvent{typ: Chmod, path: full, isDir: isDir, at: now})
	case ev.mask&inDelete != 0:
		r.deliverLocked(dw, ev, rawEvent{typ: Remove, path: full, isDir: isDir, at: now})
		if isDir {
			// Its own DELETE_SELF comes only once nothing holds it (a
			// cwd, an open descriptor), maybe after a new directory of
			// the same name appeared: drop its watch now. (It was
			// empty: nothing below it is watched.)
			r.goneLocked(full, false, now)
			r.unstarveBelowLocked(full)
		}
	case ev.mask&inMovedFrom != 0:
		r.moves[ev.cookie] = &move{dir: dw, ev: ev, name: ev.name, isDir: isDir, at: now}
	case ev.mask&inMovedTo != 0:
		if m := r.moves[ev.cookie]; m != nil {
			delete(r.moves, ev.cookie)
			if p := r.pair; p != nil {
				// The move back of the pair's destination to its
				// source (pairGoesOnLocked let nothing else through).
				r.pair = nil
				r.pairedLocked(p, m, dw, ev, isDir, now)
				return
			}
			r.pair = &pairedMove{m: m, to: dw, newPath: full, isDir: isDir, at: now}
			return
		}
		r.deliverLocked(dw, ev, rawEvent{typ: Create, path: full, isDir: isDir, at: now})
		if isDir {
			r.growLocked(dw, ev, full)
		}
	}
}

// resyncLocked brings the watches up to date after the kernel dropped
// events: directories made meanwhile are watched (the watchers' clients
// rescan what happened; what happens next is reported), and a watcher
// whose directory went meanwhile stops.
func (r *Registry) resyncLocked(now time.Time) {
	for _, w := range r.watchers {
		if w.Stopped() {
			continue
		}
		var c dirs
		d, err := c.get(w, w.root)
		if err == nil {
			if err := r.addTreeLocked(d, w.root, []*Watcher{w}, treeRewatch); err != nil && !isBudget(err) {
				r.log.Warn("cannot watch every directory after an overflow", "watcher", w.id, "err", err)
			}
		}
		c.close()
		if err != nil || !r.rootWatchedLocked(w) {
			// Its directory is no longer at its path.
			r.rootGoneLocked(w, true, now)
		}
	}
	// Directories removed or moved out meanwhile lost their IN_IGNORED
	// or MOVED_FROM with the other dropped events, and the walk above
	// does not meet them: their watches would stay held, counted against
	// the budget, for as long as their watchers live.
	var c dirs
	defer c.close()
	var stale []*dirWatch
	for p, dw := range r.byPath {
		if id, ok := r.identifyLocked(&c, dw.subs, p); !ok || id != dw.id {
			stale = append(stale, dw)
		}
	}
	r.dropLocked(stale, now)
	// The walks may have watched directories left unwatched; and the
	// marker that follows covers what changed in them.
	r.freed = true
}

// deliverLocked offers ev, made of the kernel's kev, to the watchers of
// dw that see kev (see dirWatch.sees).
func (r *Registry) deliverLocked(dw *dirWatch, kev kernelEvent, ev rawEvent) {
	for w := range dw.subs {
		if dw.sees(w, kev) {
			w.offer(ev)
		}
	}
}

// growLocked watches a directory that appeared in dw (ev), for the
// watchers of dw that want it and see ev, and reports what it already
// holds as created. Those that joined dw later found it in place.
func (r *Registry) growLocked(dw *dirWatch, ev kernelEvent, dir string) {
	ws := make([]*Watcher, 0, len(dw.subs))
	for w := range dw.subs {
		if dw.sees(w, ev) {
			ws = append(ws, w)
		}
	}
	r.addBelowLocked(dw, path.Base(dir), ws)
}

// addBelowLocked watches the directory name that appeared in the
// directory dw watches, and what it holds, for those of ws that want
// it, reporting its entries as created. The directory is opened relative
// to dw's own directory, reached by descriptor from a watcher's root: when
// that is no longer possible (a link swapped in on the way, the
// directory moved or replaced) nothing is added; the events of that
// change follow.
func (r *Registry) addBelowLocked(dw *dirWatch, name string, ws []*Watcher) {
	dir := path.Join(dw.path, name)
	var c dirs
	defer c.close()
	d, err := r.openInLocked(&c, dw, name)
	if err != nil {
		if err == errGone && r.byPath[dw.path] == dw && r.dirs[dw.wd] == dw {
			// dw's directory is not at its path any more: moved (or
			// replaced), and the event that says so is still to come.
			// What it holds is reached once its watch follows it.
			if dw.unreached == nil {
				dw.unreached = map[string][]*Watcher{}
			}
			dw.unreached[name] = ws
			return
		}
		overflowOnFDLimit(err, ws)
		return
	}
	defer d.Close()
	if err := r.addTreeLocked(d, dir, ws, treeScan); err != nil {
		r.log.Warn("cannot watch a new directory; its watchers report overflow", "dir", dir, "err", err)
	}
}

// overflowOnFDLimit marks overflow for ws when err says the process is
// out of descriptors: a directory exists that could not be watched.
func overflowOnFDLimit(err error, ws []*Watcher) {
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		for _, w := range ws {
			w.markOverflow()
		}
	}
}

// openInLocked opens the directory name in the directory dw watches,
// reached through the trees of dw's watchers; errGone when dw's
// directory is no longer at its path (or dw was retired). The caller closes the file.
func (r *Registry) openInLocked(c *dirs, dw *dirWatch, name string) (*os.File, error) {
	if r.byPath[dw.path] != dw {
		// Retired: its directory is gone, and the one at its path now
		// may even have its inode number.
		return nil, errGone
	}
	for w := range dw.subs {
		if _, ok := within(dw.path, w.root); !ok {
			continue
		}
		parent, err := c.get(w, dw.path)
		if err != nil {
			continue // another watcher's root may still lead there
		}
		if e, err := statDir(parent); err != nil || e.id != dw.id {
			return nil, errGone
		}
		return openSub(parent, name)
	}
	return nil, errGone
}

// identifyLocked returns the identity of the entry at p, not following a
// symbolic link there, reached by descriptor through the tree of one of
// ws (watchers whose trees hold p).
func (r *Registry) identifyLocked(c *dirs, ws map[*Watcher]uint64, p string) (fileID, bool) {
	for w := range ws {
		if _, ok := within(p, w.root); !ok {
			continue
		}
		if e, err := c.stat(w, p); err == nil {
			return e.id, true
		}
	}
	return fileID{}, false
}

// treeMode says why addTreeLocked adds watches.
type treeMode int

const (
	// treeCreate: a watcher is being created. A directory over the
	// watch budget fails it (its caller drops it).
	treeCreate treeMode = iota
	// treeScan: the directory appeared in a running watcher's tree (made
	// or moved in). Every entry found is offered as created; a directory
	// over the budget is left unwatched (see starveLocked) and its
	// watchers get an overflow marker.
	treeScan
	// treeRewatch: the tree is running and its client told to rescan
	// (after a kernel queue overflow, or when unwatched directories are
	// watched after all); nothing is offered, and a directory over the
	// budget is left unwatched (see starveLocked), the caller marking
	// overflow.
	treeRewatch
)

// addTreeLocked adds watches on dir, which d holds open, and,
// recursively, the directories below it, for those of ws that want each.
// Every directory below is opened relative to its parent's descriptor,
// refusing symbolic links, and every watch is added through the
// descriptor (see inotify.addDir): no path is resolved again, so none can
// be swapped for a link that leads out of the tree. With treeScan, every
// entry found is offered as created. It fails when the watch budget is
// exhausted (with treeCreate, at once; otherwise after the rest of the
// tree was tried, each directory over the budget recorded unwatched), or
// without /proc.
func (r *Registry) addTreeLocked(d *os.File, dir string, ws []*Watcher, mode treeMode) error {
	scan, running := mode == treeScan, mode != treeCreate
	var mine []*Watcher
	var budgetErr error
	before := r.byPath[dir]
	for _, w := range ws {
		if !w.wantsDir(dir) || w.Stopped() {
			continue
		}
		var alias *aliasError
		switch err := r.addDirLocked(d, dir, w); {
		case err == nil:
			mine = append(mine, w)
		case err == errGone:
		case errors.As(err, &alias):
			if !running && dir == w.root {
				return &Error{Kind: Invalid, Message: fmt.Sprintf("cannot watch %s: it is the same directory as %s (a bind mount or another alias), which is already watched; watch %s instead",
					w.cfg.Path, alias.other, alias.other)}
			}
			r.log.Warn("a directory watched under two paths is watched under the first only; its watchers report overflow", "dir", dir, "watched", alias.other)
			w.markOverflow()
		case err == errNoProcFD:
			return err
		default:
			budgetErr = err
			if running {
				r.starveLocked(dir, w)
			}
			if scan {
				w.markOverflow()
			}
		}
	}
	if budgetErr != nil && !running {
		return budgetErr
	}
	walk := scan
	for _, w := range mine {
		walk = walk || (w.cfg.Recursive && !w.file)
	}
	if !walk || len(mine) == 0 {
		return budgetErr
	}
	var from uint64 // see scanWindow
	if scan {
		if r.listHook != nil {
			r.listHook(dir)
		}
		from = r.positionLocked()
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return budgetErr // gone or unreadable: its watch reports what follows
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if dw := r.byPath[dir]; scan && dw != nil {
		if dw != before {
			r.openWindowLocked(dw, from, ents)
		}
		dw.listed = dw.listed || len(ents) > 0
	}
	now := time.Now()
	for _, e := range ents {
		full := path.Join(dir, e.Name())
		isDir := e.IsDir() // a link is not a directory here
		if scan {
			for _, w := range mine {
				w.offer(rawEvent{typ: Create, path: full, isDir: isDir, at: now})
			}
		}
		if !isDir {
			continue
		}
		sub, err := openSub(d, e.Name())
		if err != nil {
			// Gone, or no longer a directory: its events follow. Out of
			// descriptors: its watchers must rescan.
			overflowOnFDLimit(err, mine)
			continue
		}
		err = r.addTreeLocked(sub, full, mine, mode)
		sub.Close()
		switch {
		case err == nil:
		case !running || !isBudget(err):
			return err
		case budgetErr == nil:
			budgetErr = err
		}
	}
	return budgetErr
}

// scanWindow covers the events of a directory watched and listed while
// its watchers run (it appeared: made or moved in) that were queued
// before the listing ended. Its watch is added before it is listed, so
// that nothing made in between goes unseen, and the listing reports each
// entry as created. An event queued before the listing began is in it or
// about an entry it never saw (made and removed, or moved away, before
// it): reporting that one removed, renamed or written would name a path
// the watchers never heard of. So those are dropped, except writes and
// attribute changes of listed entries (the kernel may have merged a later
// one of the same file into them). One queued while the listing ran may
// or may not be in it: a new entry is reported (maybe twice), and a
// change to an entry only when it is known, listed or reported since.
type scanWindow struct {
	from  uint64   // the position of the first event queued during the listing
	until uint64   // and of the first one queued after it
	names []string // the entries listed, sorted
	// made and gone record entries reported created or removed since the
	// listing began.
	made, gone map[string]bool
}

// keeps reports whether ev, an event on the directory's entry ev.name,
// is reported, and notes what it reports.
func (s *scanWindow) keeps(ev kernelEvent) bool {
	switch {
	case ev.pos >= s.until:
		return true
	case ev.pos < s.from:
		return ev.mask&(inModify|inAttrib) != 0 && s.listed(ev.name)
	case ev.mask&(inCreate|inMovedTo) != 0:
		delete(s.gone, ev.name)
		if s.made == nil {
			s.made = map[string]bool{}
		}
		s.made[ev.name] = true
		return true
	case !s.made[ev.name] && (s.gone[ev.name] || !s.listed(ev.name)):
		return false // never reported
	case ev.mask&(inDelete|inMovedFrom) != 0:
		delete(s.made, ev.name)
		if s.gone == nil {
			s.gone = map[string]bool{}
		}
		s.gone[ev.name] = true
	}
	return true
}

func (s *scanWindow) listed(name string) bool {
	_, ok := slices.BinarySearch(s.names, name)
	return ok
}

// openWindowLocked opens dw's scan window: from, read before the listing,
// and now, after it, are where the events then queued end. Adding a watch
// and listing happen in the reader, while it handles the events read up
// to readEnd: the events queued at a moment are those read so far plus
// those still in the kernel's queue.
func (r *Registry) openWindowLocked(dw *dirWatch, from uint64, ents []fs.DirEntry) {
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	if dw.scan == nil {
		r.windows = append(r.windows, dw)
	}
	dw.scan = &scanWindow{from: from, until: r.positionLocked(), names: names}
}

// closeWindowsLocked closes the scan windows that every event read so far
// has passed (or whose watch is gone).
func (r *Registry) closeWindowsLocked() {
	if len(r.windows) == 0 {
		return
	}
	r.windows = slices.DeleteFunc(r.windows, func(dw *dirWatch) bool {
		if dw.scan != nil && dw.scan.until > r.readEnd && r.dirs[dw.wd] == dw {
			return false
		}
		dw.scan = nil
		return true
	})
}

// errGone: the directory vanished or is no longer a directory.
var errGone = &Error{Kind: NotFound, Message: "directory vanished"}

// aliasError: the directory is watched already under another path that
// still leads to it (a bind mount); one inotify watch has one path.
type aliasError struct{ dir, other string }

func (e *aliasError) Error() string { return e.dir + " is the directory watched as " + e.other }

// addDirLocked adds (or shares) the watch on dir, which d holds open, for
// w. Which watch a directory has is the kernel's word: inotify_add_watch
// returns the watch the directory already has in this instance, or a new
// one. Its (device, inode) alone cannot tell: the inode number of a
// removed directory is soon given to a new one (rm -rf d && mkdir d),
// while the old directory's last events (its entries' removal, its
// DELETE_SELF and IGNORED) may still wait in the queue under its watch.
func (r *Registry) addDirLocked(d *os.File, dir string, w *Watcher) error {
	e, err := statDir(d)
	if err != nil {
		return errGone
	}
	if old := r.byPath[dir]; old != nil && e.id != old.id {
		// The watch is on a directory that is no longer there.
		r.goneLocked(dir, true, time.Now())
		if w.Stopped() { // it was rooted there
			return errGone
		}
	}
	wd, err := r.in.addDir(d)
	if err != nil {
		if isNoSpace(err) {
			return r.budgetError(w)
		}
		if perr := r.in.checkProcFD(); perr != nil {
			return perr
		}
		return errGone
	}
	dw := r.dirs[wd]
	switch {
	case dw == nil:
		if old := r.byPath[dir]; old != nil {
			// The same device and inode number, yet not the directory
			// that watch is on: that one was removed and its number
			// reused. Retired first: it no longer counts.
			r.retireLocked(old, time.Now())
			if w.Stopped() { // it was rooted there
				r.in.remove(wd)
				return errGone
			}
		}
		if r.watchesLocked() >= r.budget {
			r.in.remove(wd)
			return r.budgetError(w)
		}
		dw = &dirWatch{wd: wd, id: e.id, path: dir, subs: map[*Watcher]uint64{}}
		r.dirs[wd] = dw
	case dw.path != dir:
		var c dirs
		cur, ok := r.identifyLocked(&c, dw.subs, dw.path)
		c.close()
		if ok && cur == dw.id {
			return &aliasError{dir: dir, other: dw.path}
		}
		// The same directory, moved where no watched directory saw it
		// go.
		r.relocateLocked(dw.path, dir, time.Now())
		if r.dirs[wd] != dw { // its last watcher was rooted at the old path
			return r.addDirLocked(d, dir, w)
		}
	}
	if _, ok := dw.subs[w]; !ok {
		var since uint64 // the watch's first watcher: all its events are w's
		if len(dw.subs) > 0 {
			since = r.positionLocked()
		}
		dw.subs[w] = since
	}
	r.byPath[dir] = dw
	w.dirs[dw] = struct{}{}
	return nil
}

// retireLocked takes dw, whose directory is gone although a directory
// with its device and inode number is at its path, off that path. Its
// watchers rooted there stop (their directory was removed); the others
// keep it for the events still queued for it, until its IGNORED forgets
// it. Nothing is added through it any more (see openInLocked), and it no
// longer counts against the budget: the kernel dropped its watch with the
// directory (the number was free to reuse), IGNORED being queued then.
func (r *Registry) retireLocked(dw *dirWatch, now time.Time) {
	if r.byPath[dw.path] == dw {
		delete(r.byPath, dw.path)
	}
	if !dw.retired && r.dirs[dw.wd] == dw {
		dw.retired = true
		r.retired++
		r.freed = true
	}
	var gone []*Watcher
	for w := range dw.subs {
		if w.root == dw.path {
			gone = append(gone, w)
		}
	}
	for _, w := range gone {
		r.rootGoneLocked(w, true, now)
	}
}

func (r *Registry) budgetError(w *Watcher) *Error {
	return &Error{Kind: Unavailable, Message: fmt.Sprintf(
		"cannot watch %s: it needs more directory watches than the kernel allows fsplane (%d of fs.inotify.max_user_watches; %d in use); exclude large directories (exclude), watch a smaller tree, or raise the limit (sysctl fs.inotify.max_user_watches)",
		w.cfg.Path, r.budget, r.watchesLocked())}
}

// renamedLocked handles a MOVED_FROM/MOVED_TO pair: one rename event for
// watchers that see both names, a create or remove for those that see
// one, and, for a directory, watches moved along (dropped where no longer
// wanted, added and scanned where newly wanted).
func (r *Registry) renamedLocked(m *move, to *dirWatch, newPath string, isDir bool, now time.Time) {
	oldPath := path.Join(m.dir.path, m.name)
	// The watch at the old name may be on a directory made there since
	// (mkdir a; mv a b; mkdir -p a/x, read late): the creation of a,
	// read after all that, opened the new a and reported what it holds
	// (a/x). For the watchers of that watch the old name's entries are
	// the new directory's, not the one that moved: when there are any,
	// the move is a remove of the old name and a create of the new one
	// (listed below), not a rename that would carry them along. (Every
	// event of the new directory comes after the move: only a listing
	// can have reported its entries yet.)
	top, moved := r.byPath[oldPath], true
	if isDir && top != nil {
		var c dirs
		id, ok := r.identifyLocked(&c, to.subs, newPath)
		c.close()
		moved = !ok || id == top.id
	}
	replaced := func(w *Watcher) bool {
		if moved || !top.listed {
			return false
		}
		_, ok := top.subs[w]
		return ok
	}
	ws := map[*Watcher]struct{}{}
	for w := range m.dir.subs {
		ws[w] = struct{}{}
	}
	for w := range to.subs {
		ws[w] = struct{}{}
	}
	for w := range ws {
		// A watcher that joined one of the two watches after the
		// rename (its MOVED_FROM was queued first) sees only the other
		// half: it never knew the old name (joined the source later),
		// or found the new one by listing the destination when it
		// joined it. For it the rename is what that half says: a
		// create of the new name, or a remove of the old one.
		fromLate, toLate := m.dir.joinedAfter(w, m.ev), to.joinedAfter(w, m.ev)
		oldRel, oldIn := w.coversMove(oldPath, isDir)
		rel, newIn := w.coversMove(newPath, isDir)
		removed := rawEvent{typ: Remove, path: oldPath, isDir: isDir, at: now}
		switch {
		case fromLate && toLate:
			// Renamed before w started: not w's.
		case toLate:
			if oldIn {
				w.enqueue(removed, oldRel)
			}
		case fromLate:
			if newIn {
				w.enqueue(rawEvent{typ: Create, path: newPath, isDir: isDir, at: now}, rel)
			}
		case replaced(w):
			if oldIn {
				w.enqueue(removed, oldRel)
			}
			if newIn {
				w.enqueue(rawEvent{typ: Create, path: newPath, isDir: isDir, at: now}, rel)
			}
		case newIn && w.inTree(oldPath) && !w.staging(oldPath):
			// A rename onto a reported name is a rename even when the
			// old name is filtered out (*.tmp excluded).
			w.enqueue(rawEvent{typ: Rename, path: newPath, oldPath: oldPath, isDir: isDir, at: now}, rel)
		case newIn:
			// Moved in, or a staging entry put into place: created.
			w.enqueue(rawEvent{typ: Create, path: newPath, isDir: isDir, at: now}, rel)
		case oldIn:
			w.enqueue(removed, oldRel)
		}
	}
	if !isDir {
		return
	}
	// Unwatched directories below go along. (relocateLocked, when the
	// directory is watched, moves them too, through moveWatchesLocked,
	// and finds them moved already.)
	r.moveStarvedLocked([][2]string{{oldPath, newPath}})
	had := map[*Watcher]bool{}
	if top != nil && moved {
		// A watch on a directory made at the old name since stays.
		had = r.relocateLocked(oldPath, newPath, now)
	}
	var fresh []*Watcher
	for w := range to.subs {
		if !had[w] && !to.joinedAfter(w, m.ev) {
			fresh = append(fresh, w)
		}
	}
	if len(fresh) > 0 {
		r.addBelowLocked(to, path.Base(newPath), fresh)
	}
}

// reachLocked watches and scans the directories that appeared in dw
// while it could not be reached (see dirWatch.unreached), now that its
// watch has followed it, for those of their watchers that still watch
// dw. Any that still cannot be reached wait for the next move.
func (r *Registry) reachLocked(dw *dirWatch) {
	if len(dw.unreached) == 0 || r.dirs[dw.wd] != dw || r.byPath[dw.path] != dw {
		return
	}
	todo := dw.unreached
	dw.unreached = nil
	for _, name := range slices.Sorted(maps.Keys(todo)) {
		ws := slices.DeleteFunc(todo[name], func(w *Watcher) bool {
			_, ok := dw.subs[w]
			return !ok
		})
		if len(ws) > 0 {
			r.addBelowLocked(dw, name, ws)
		}
	}
}

// settleMovesLocked turns MOVED_FROM events whose MOVED_TO cannot come
// any more into removes: moved out of every watched directory.
func (r *Registry) settleMovesLocked() {
	r.settlePairLocked() // it came first
	for cookie, m := range r.moves {
		delete(r.moves, cookie)
		oldPath := path.Join(m.dir.path, m.name)
		for w := range m.dir.subs {
			if rel, ok := w.coversMove(oldPath, m.isDir); ok && m.dir.sees(w, m.ev) {
				w.enqueue(rawEvent{typ: Remove, path: oldPath, isDir: m.isDir, at: m.at}, rel)
			}
		}
		if m.isDir {
			r.goneLocked(oldPath, true, m.at)
			r.unstarveBelowLocked(oldPath)
		}
	}
}

// relocateLocked moves the watches at oldPath and below to newPath,
// where that directory now is. Watchers rooted at one of the old paths
// stop (their directory is no longer at their path); watchers that do
// not want a directory at its new path leave it. It returns the
// watchers that still watch the directory at newPath.
func (r *Registry) relocateLocked(oldPath, newPath string, now time.Time) map[*Watcher]bool {
	r.moveWatchesLocked(now, [2]string{oldPath, newPath})
	had := map[*Watcher]bool{}
	if dw := r.byPath[newPath]; dw != nil {
		for w := range dw.subs {
			had[w] = true
		}
	}
	return had
}

// moveWatchesLocked moves, for each {from, to} of moves, the watches at
// from and below to the same places below to, all at once (an exchange
// moves two trees into each other's place; no from lies below another).
// Watchers rooted at one of the old paths stop; watchers that do not want
// a directory at its new path leave it.
func (r *Registry) moveWatchesLocked(now time.Time, moves ...[2]string) {
	type moved struct {
		dw  *dirWatch
		old string
	}
	var ms []moved
	for p, dw := range r.byPath {
		for _, mv := range moves {
			if rel, ok := within(p, mv[0]); ok {
				dw.path = path.Join(mv[1], rel)
				ms = append(ms, moved{dw, p})
				break
			}
		}
	}
	for _, m := range ms {
		delete(r.byPath, m.old)
	}
	r.moveStarvedLocked(moves)
	var gone []*Watcher
	for _, m := range ms {
		r.byPath[m.dw.path] = m.dw
		for w := range m.dw.subs {
			switch {
			case w.root == m.old:
				gone = append(gone, w)
			case !w.wantsDir(m.dw.path):
				r.unsubscribeLocked(m.dw, w)
			}
		}
	}
	for _, w := range gone {
		r.rootGoneLocked(w, true, now)
	}
	for _, m := range ms {
		r.reachLocked(m.dw)
	}
}

// goneLocked drops the watches at p and, with below, under p that are
// no longer on the directory at their path (removed, or moved where no
// watched directory saw it go). Watchers rooted at one of them stop.
// Nothing is dropped while the watch at p is still on the directory
// there.
func (r *Registry) goneLocked(p string, below bool, now time.Time) {
	var c dirs
	defer c.close()
	if dw := r.byPath[p]; dw != nil {
		if id, ok := r.identifyLocked(&c, dw.subs, p); ok && id == dw.id {
			return
		}
	}
	var stale []*dirWatch
	if below {
		for q, dw := range r.byPath {
			if _, ok := within(q, p); ok {
				if id, ok := r.identifyLocked(&c, dw.subs, q); !ok || id != dw.id {
					stale = append(stale, dw)
				}
			}
		}
	} else if dw := r.byPath[p]; dw != nil {
		stale = append(stale, dw)
	}
	r.dropLocked(stale, now)
}

// dropLocked drops the watches stale, whose directories are no longer
// at their paths: the watchers rooted at one of them stop, the others
// leave them.
func (r *Registry) dropLocked(stale []*dirWatch, now time.Time) {
	var gone []*Watcher
	for _, dw := range stale {
		for w := range dw.subs {
			if w.root == dw.path {
				gone = append(gone, w)
			} else {
				r.unsubscribeLocked(dw, w)
			}
		}
	}
	for _, w := range gone {
		r.rootGoneLocked(w, true, now)
	}
}
