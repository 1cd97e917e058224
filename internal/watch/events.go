package watch

import (
	"fmt"
	"os"
	"path"
	"time"
)

// read is the reader goroutine: it turns kernel events into watcher
// events until the inotify instance is closed.
func (r *Registry) read(in *inotify, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 256<<10)
	for {
		n, err := in.read(buf)
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
		r.mu.Lock()
		r.batch++
		parseEvents(buf[:n], func(ev kernelEvent) { r.handleLocked(ev, now) })
		r.settleMovesLocked(n > len(buf)-maxEvent)
		r.mu.Unlock()
	}
}

func (r *Registry) handleLocked(ev kernelEvent, now time.Time) {
	if ev.mask&inOverflow != 0 {
		r.log.Warn("inotify queue overflowed; watchers report overflow")
		for _, w := range r.watchers {
			w.markOverflow()
		}
		return
	}
	if len(r.moves) > 0 && (ev.mask&inMovedTo == 0 || r.moves[ev.cookie] == nil) {
		// The kernel queues a rename's two halves back to back: a
		// MOVED_FROM followed by anything else was a move out, and is
		// reported before what follows it.
		r.settleMovesLocked(false)
	}
	dw := r.dirs[ev.wd]
	if dw == nil {
		return
	}
	if ev.mask&inIgnored != 0 {
		// The directory is gone (or unwatched): its watchers rooted
		// there stop.
		r.forgetLocked(dw)
		for w := range dw.subs {
			delete(w.dirs, dw)
			if !w.file && w.root == dw.path {
				w.stop()
			}
		}
		return
	}
	isDir := ev.mask&inIsDir != 0
	if ev.name == "" {
		if ev.mask&inDeleteSelf != 0 {
			for w := range dw.subs {
				if !w.file && w.root == dw.path {
					w.enqueue(rawEvent{typ: Remove, path: dw.path, isDir: true, at: now}, ".")
				}
			}
		}
		return
	}
	full := path.Join(dw.path, ev.name)
	switch {
	case ev.mask&inCreate != 0:
		r.deliverLocked(dw, rawEvent{typ: Create, path: full, isDir: isDir, at: now})
		if isDir {
			r.growLocked(dw, full)
		}
	case ev.mask&inModify != 0:
		if !isDir {
			r.deliverLocked(dw, rawEvent{typ: Write, path: full, at: now})
		}
	case ev.mask&inAttrib != 0:
		r.deliverLocked(dw, rawEvent{typ: Chmod, path: full, isDir: isDir, at: now})
	case ev.mask&inDelete != 0:
		r.deliverLocked(dw, rawEvent{typ: Remove, path: full, isDir: isDir, at: now})
	case ev.mask&inMovedFrom != 0:
		r.moves[ev.cookie] = &move{dir: dw, name: ev.name, isDir: isDir, batch: r.batch, at: now}
	case ev.mask&inMovedTo != 0:
		if m := r.moves[ev.cookie]; m != nil {
			delete(r.moves, ev.cookie)
			r.renamedLocked(m, dw, full, isDir, now)
			return
		}
		r.deliverLocked(dw, rawEvent{typ: Create, path: full, isDir: isDir, at: now})
		if isDir {
			r.growLocked(dw, full)
		}
	}
}

func (r *Registry) deliverLocked(dw *dirWatch, ev rawEvent) {
	for w := range dw.subs {
		w.offer(ev)
	}
}

// growLocked watches a directory that appeared in dw, for the watchers of
// dw that want it, and reports what it already holds as created.
func (r *Registry) growLocked(dw *dirWatch, dir string) {
	ws := make([]*Watcher, 0, len(dw.subs))
	for w := range dw.subs {
		ws = append(ws, w)
	}
	if err := r.addTreeLocked(dir, ws, true); err != nil {
		r.log.Warn("cannot watch a new directory; its watchers report overflow", "dir", dir, "err", err)
	}
}

// addTreeLocked adds watches on dir and, recursively, the directories
// below it, for those of ws that want each. With scan, every entry found
// is offered as created. It fails only when the watch budget is
// exhausted; then each watcher concerned gets an overflow marker, except
// during Create, whose caller fails instead.
func (r *Registry) addTreeLocked(dir string, ws []*Watcher, scan bool) error {
	var mine []*Watcher
	var budgetErr error
	for _, w := range ws {
		if !w.wantsDir(dir) {
			continue
		}
		switch err := r.addDirLocked(dir, w); {
		case err == nil:
			mine = append(mine, w)
		case err == errGone:
		default:
			budgetErr = err
			if scan {
				w.markOverflow()
			}
		}
	}
	if budgetErr != nil && !scan {
		return budgetErr
	}
	walk := scan
	for _, w := range mine {
		walk = walk || (w.cfg.Recursive && !w.file)
	}
	if !walk {
		return budgetErr
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return budgetErr // gone or unreadable: its watch reports what follows
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
		if isDir {
			if err := r.addTreeLocked(full, mine, scan); err != nil && !scan {
				return err
			}
		}
	}
	return budgetErr
}

// errGone: the directory vanished or is no longer a directory.
var errGone = &Error{Kind: NotFound, Message: "directory vanished"}

func (r *Registry) addDirLocked(dir string, w *Watcher) error {
	if dw := r.byPath[dir]; dw != nil {
		dw.subs[w] = struct{}{}
		w.dirs[dw] = struct{}{}
		return nil
	}
	if len(r.dirs) >= r.budget {
		return r.budgetError(w)
	}
	wd, err := r.in.add(dir)
	if err != nil {
		if isNoSpace(err) {
			return r.budgetError(w)
		}
		return errGone
	}
	dw := r.dirs[wd]
	if dw == nil {
		dw = &dirWatch{wd: wd, subs: map[*Watcher]struct{}{}}
		r.dirs[wd] = dw
	} else {
		delete(r.byPath, dw.path) // the same directory under a new name
	}
	dw.path = dir
	r.byPath[dir] = dw
	dw.subs[w] = struct{}{}
	w.dirs[dw] = struct{}{}
	return nil
}

func (r *Registry) budgetError(w *Watcher) *Error {
	return &Error{Kind: Unavailable, Message: fmt.Sprintf(
		"cannot watch %s: it needs more directory watches than the kernel allows fsplane (%d of fs.inotify.max_user_watches; %d in use); exclude large directories (exclude), watch a smaller tree, or raise the limit (sysctl fs.inotify.max_user_watches)",
		w.cfg.Path, r.budget, len(r.dirs))}
}

// renamedLocked handles a MOVED_FROM/MOVED_TO pair: one rename event for
// watchers that see both names, a create or remove for those that see
// one, and, for a directory, watches moved along (dropped where no longer
// wanted, added and scanned where newly wanted).
func (r *Registry) renamedLocked(m *move, to *dirWatch, newPath string, isDir bool, now time.Time) {
	oldPath := path.Join(m.dir.path, m.name)
	ws := map[*Watcher]struct{}{}
	for w := range m.dir.subs {
		ws[w] = struct{}{}
	}
	for w := range to.subs {
		ws[w] = struct{}{}
	}
	for w := range ws {
		_, oldIn := w.covers(oldPath)
		rel, newIn := w.covers(newPath)
		switch {
		case newIn && w.inTree(oldPath):
			// A rename onto a reported name is a rename even when the
			// old name is filtered out (an upload's excluded .part).
			w.enqueue(rawEvent{typ: Rename, path: newPath, oldPath: oldPath, isDir: isDir, at: now}, rel)
		case newIn:
			w.enqueue(rawEvent{typ: Create, path: newPath, isDir: isDir, at: now}, rel)
		case oldIn:
			w.offer(rawEvent{typ: Remove, path: oldPath, isDir: isDir, at: now})
		}
	}
	if !isDir {
		return
	}
	// Re-key the watched directories below the old name.
	var moved []*dirWatch
	for p, dw := range r.byPath {
		if rel, ok := within(p, oldPath); ok {
			delete(r.byPath, p)
			dw.path = path.Join(newPath, rel)
			moved = append(moved, dw)
		}
	}
	had := map[*Watcher]bool{}
	for _, dw := range moved {
		r.byPath[dw.path] = dw
		for w := range dw.subs {
			if dw.path == newPath {
				had[w] = true
			}
			if !w.wantsDir(dw.path) {
				r.unsubscribeLocked(dw, w)
			}
		}
	}
	var fresh []*Watcher
	for w := range to.subs {
		if !had[w] {
			fresh = append(fresh, w)
		}
	}
	if len(fresh) > 0 {
		if err := r.addTreeLocked(newPath, fresh, true); err != nil {
			r.log.Warn("cannot watch a moved-in directory; its watchers report overflow", "dir", newPath, "err", err)
		}
	}
}

// settleMovesLocked turns MOVED_FROM events whose MOVED_TO cannot come
// any more into removes: moved out of every watched directory. A
// MOVED_FROM at the end of a full read may have its pair in the next
// read, so it waits for one more.
func (r *Registry) settleMovesLocked(bufFull bool) {
	for cookie, m := range r.moves {
		if m.batch == r.batch && bufFull {
			continue // its MOVED_TO may open the next read
		}
		delete(r.moves, cookie)
		oldPath := path.Join(m.dir.path, m.name)
		r.deliverLocked(m.dir, rawEvent{typ: Remove, path: oldPath, isDir: m.isDir, at: m.at})
		if !m.isDir {
			continue
		}
		for p, dw := range r.byPath {
			if _, ok := within(p, oldPath); ok {
				for w := range dw.subs {
					r.unsubscribeLocked(dw, w)
				}
			}
		}
	}
}
