package watch

import (
	"path"
	"time"
)

// An exchange (renameat2 with RENAME_EXCHANGE) swaps the entries at two
// paths, a and b, at once. The kernel reports it as two moves, a to b
// and then b to a, each a MOVED_FROM and MOVED_TO pair with its own
// cookie, queued back to back while the two directories are locked
// (only the MOVE_SELF of a moved directory, and writes or attribute
// changes made meanwhile by others, can come between them). Read as two
// renames, a client would move what it knew at a to b, and then all of
// it back: what was at b is lost from its view. So a rename is held
// until the next event (pairGoesOnLocked), and a move back of its
// destination to its source is, when the disk says so (isExchangeLocked),
// one exchange (exchangeLocked).

// Results of pairGoesOnLocked.
const (
	pairEnds    = iota // not part of the pair: handle the pair first
	pairGoesOn         // the move back, under way: hold the pair
	pairOwnMove        // the moved directory's own MOVE_SELF: drop it
	pairPasses         // unrelated, and changes no watch: handle it, holding the pair
)

// pairGoesOnLocked tells what ev, the event read after the held rename
// r.pair (or after the MOVED_FROM that followed it), is to the pair. A
// write or attribute change elsewhere (another process's, queued between
// an exchange's two moves) passes: it names neither of the two names nor
// anything below them, whose paths the pair has yet to change, and
// changes no watch, so handling it first reorders nothing a client could
// tell.
func (r *Registry) pairGoesOnLocked(ev kernelEvent) int {
	p := r.pair
	if ev.mask&(inModify|inAttrib) != 0 && ev.mask&^(inModify|inAttrib|inIsDir) == 0 {
		a, b := path.Join(p.m.dir.path, p.m.name), p.newPath
		dw := r.dirs[ev.wd]
		if dw == nil {
			return pairPasses // a watch forgotten: dropped
		}
		full := path.Join(dw.path, ev.name)
		_, inA := within(full, a)
		_, inB := within(full, b)
		if !inA && !inB {
			return pairPasses
		}
	}
	switch {
	case ev.mask&inMovedFrom != 0:
		if len(r.moves) == 0 && ev.wd == p.to.wd && ev.name == path.Base(p.newPath) {
			return pairGoesOn
		}
	case ev.mask&inMovedTo != 0:
		if m := r.moves[ev.cookie]; m != nil && len(r.moves) == 1 && m.dir == p.to && m.name == path.Base(p.newPath) &&
			ev.wd == p.m.dir.wd && ev.name == p.m.name {
			return pairGoesOn
		}
	case ev.mask&inMoveSelf != 0 && ev.name == "":
		// Queued right after the move of the directory it is on, whose
		// watch the pair has yet to move: handled as it would be after
		// a rename, where it changes nothing.
		if dw := r.dirs[ev.wd]; p.isDir && dw != nil && dw == r.byPath[path.Join(p.m.dir.path, p.m.name)] {
			return pairOwnMove
		}
	}
	return pairEnds
}

// settlePairLocked handles the held rename, if any, as the rename it is.
func (r *Registry) settlePairLocked() {
	if p := r.pair; p != nil {
		r.pair = nil
		r.renamedLocked(p.m, p.to, p.newPath, p.isDir, p.at)
	}
}

// pairedLocked handles the held rename p (a to b) and the move back m2
// (b, in the directory p.to, to a, in to2: kev is its MOVED_TO) that
// followed it: one exchange, or a move there and back. When the disk
// does not say which for sure (see isExchangeLocked), a move there and
// back is reported as the rename there, then a remove of b and a create
// of a (with what it holds): right either way, as a client that trusts
// the create fetches a anew.
func (r *Registry) pairedLocked(p *pairedMove, m2 *move, to2 *dirWatch, kev kernelEvent, isDir2 bool, now time.Time) {
	exchange, sure := r.isExchangeLocked(p, isDir2)
	if exchange {
		r.exchangeLocked(p, isDir2, now)
		return
	}
	back := path.Join(to2.path, kev.name)
	r.renamedLocked(p.m, p.to, p.newPath, p.isDir, p.at)
	if sure {
		r.renamedLocked(m2, to2, back, isDir2, now)
		return
	}
	// As a move of b out of the trees, and of something else into a.
	b := path.Join(m2.dir.path, m2.name)
	for w := range m2.dir.subs {
		if rel, ok := w.coversMove(b, m2.isDir); ok && m2.dir.sees(w, m2.ev) {
			w.enqueue(rawEvent{typ: Remove, path: b, isDir: m2.isDir, at: now}, rel)
		}
	}
	if m2.isDir {
		r.goneLocked(b, true, now)
		r.unstarveBelowLocked(b)
	}
	r.deliverLocked(to2, kev, rawEvent{typ: Create, path: back, isDir: isDir2, at: now})
	if isDir2 {
		r.growLocked(to2, kev, back)
	}
}

// isExchangeLocked tells an exchange of a and b from a move of a to b
// and back (mv a b; mv b a), which the kernel reports alike, from what
// is at a and b now, and whether it is sure. The entry moved back is of
// the other type: an exchange. Else, for directories, by their
// identities: the directory moved from a (its watch) is now at b, or the
// one that was at b is now at a: an exchange; the one moved from a is at
// a again: a move there and back. Failing those (files, directories not
// watched, or both gone since), the existence of b decides, unsure: a
// move there and back leaves nothing at b, an exchange leaves what was
// at a. That errs only when b was made again, or removed, since the
// events were queued; the events of that change follow and name b, so
// the paths a client holds end up right either way, and the shapes
// reported then (see pairedLocked, exchangeLocked) have a create of
// every name whose content is in doubt.
func (r *Registry) isExchangeLocked(p *pairedMove, isDir2 bool) (exchange, sure bool) {
	if p.isDir != isDir2 {
		return true, true
	}
	from := path.Join(p.m.dir.path, p.m.name)
	var c dirs
	defer c.close()
	ident := func(q string) (fileID, bool) {
		if id, ok := r.identifyLocked(&c, p.m.dir.subs, q); ok {
			return id, true
		}
		return r.identifyLocked(&c, p.to.subs, q)
	}
	atFrom, okFrom := ident(from)
	atTo, okTo := ident(p.newPath)
	if p.isDir {
		if x := r.byPath[from]; x != nil {
			switch {
			case okTo && atTo == x.id:
				return true, true
			case okFrom && atFrom == x.id:
				return false, true
			}
		}
		if y := r.byPath[p.newPath]; y != nil && (okFrom && atFrom == y.id || okTo && atTo == y.id) {
			return true, true
		}
	}
	return okTo, false
}

// exchangeLocked handles the exchange of the entries at a (p.m: x, a
// directory when p.isDir) and b (p.newPath: y, a directory when yDir).
// Each watcher gets what it takes to go from what it knew to what is
// there now, with the five event types (its client need know nothing of
// exchanges):
//
//   - one that sees both names: a remove of b (y leaves b), a rename of
//     a to b (x, and what a client knows below it, moves there), and a
//     create of a, followed, for a directory, by creates of what it
//     holds (y arrives at a: a client knew it as b's, which the remove
//     dropped);
//   - one that sees one name only: a remove of it and a create of it,
//     followed by creates of what it holds;
//
// in that order. The watches of both trees trade places (moveWatchesLocked):
// a watcher rooted in either stops (its directory moved away), and one
// that does not want a directory where it went leaves it; directories
// that arrive where a watcher wants them are watched as they are listed.
// A watcher that joined a or b's directory after the exchange found it
// as it is: the exchange is not its (as for a rename). The listing of
// what arrived is of the directory as it is when the reader gets there,
// while the events of what changed in it since stay queued: an entry
// made since may be reported created twice, and one removed since
// reported removed though never listed (no scan window is opened on the
// watches that moved: their other watchers did not get the listing).
func (r *Registry) exchangeLocked(p *pairedMove, yDir bool, now time.Time) {
	a, b := path.Join(p.m.dir.path, p.m.name), p.newPath
	from, to := p.m.dir, p.to
	xDir := p.isDir
	ws := map[*Watcher]struct{}{}
	for w := range from.subs {
		ws[w] = struct{}{}
	}
	for w := range to.subs {
		ws[w] = struct{}{}
	}
	var listX, listY []*Watcher // to be told what x (now at b) and y (now at a) hold
	for w := range ws {
		_, inFrom := from.subs[w]
		_, inTo := to.subs[w]
		seesA := inFrom && !from.joinedAfter(w, p.m.ev)
		seesB := inTo && !to.joinedAfter(w, p.m.ev)
		relXa, oldX := w.coversMove(a, xDir)
		relXb, newX := w.coversMove(b, xDir)
		relYb, oldY := w.coversMove(b, yDir)
		_, newY := w.coversMove(a, yDir)
		oldX, newX = oldX && seesA, newX && seesB
		oldY, newY = oldY && seesB, newY && seesA
		if oldY {
			w.enqueue(rawEvent{typ: Remove, path: b, isDir: yDir, at: p.at}, relYb)
		}
		if oldX && newX {
			w.enqueue(rawEvent{typ: Rename, path: b, oldPath: a, isDir: xDir, at: p.at}, relXb)
		} else {
			if oldX {
				w.enqueue(rawEvent{typ: Remove, path: a, isDir: xDir, at: p.at}, relXa)
			}
			if newX {
				w.offer(rawEvent{typ: Create, path: b, isDir: xDir, at: p.at})
				if xDir {
					listX = append(listX, w)
				}
			}
		}
		if newY {
			w.offer(rawEvent{typ: Create, path: a, isDir: yDir, at: now})
			if yDir {
				listY = append(listY, w)
			}
		}
	}
	if !xDir && !yDir {
		return
	}
	r.moveWatchesLocked(now, [2]string{a, b}, [2]string{b, a})
	if len(listY) > 0 {
		r.addBelowLocked(from, p.m.name, listY)
	}
	if len(listX) > 0 {
		r.addBelowLocked(to, path.Base(b), listX)
	}
}
