package watch

import (
	"errors"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"syscall"
)

// Directories over the watch budget. A directory that appears in a
// running watcher's tree when the budget is spent (Registry.budget, or
// the kernel's ENOSPC when other programs hold the rest of
// fs.inotify.max_user_watches) cannot be watched: its watchers report
// overflow, and nothing below it is reported, however long that lasts.
// The registry remembers it (starveLocked), by path, as the top of an
// unwatched subtree, and tries again whenever watches are released (a
// directory removed, a watcher released or expired) and now and then
// (the janitor: room may free up outside this process). When it gets
// the watch, its watchers report overflow once more: what changed below
// it meanwhile went unreported, so their clients rescan, and what
// happens there from then on is reported. Meanwhile Info.Unwatched and
// PollResult.Unwatched count such directories, so a client can tell
// that part of its tree is not watched. A remembered directory follows
// renames of the directories above it (moveStarvedLocked), and is
// forgotten when it, or a directory above it, is removed or moved out
// (unstarveBelowLocked); one moved within a watched tree is tried as any
// directory that appears there. A try may come (from Release, a sweep,
// the janitor) before the reader has handled a rename above it, so one
// not found at its path is kept (Registry.astray) and tried again once
// the reader has handled what was queued then, having followed the
// rename; one still not there, with no move of it handled meanwhile, is
// gone without a word (its removal lost with a kernel queue overflow),
// and forgotten.

// untried marks a directory of Registry.astray that a move took
// elsewhere since it was not found: it has yet to be tried where it is.
const untried = math.MaxUint64

// starveLocked records that dir, in w's tree, could not be watched for
// want of budget.
func (r *Registry) starveLocked(dir string, w *Watcher) {
	if r.starved == nil {
		r.starved = map[string]map[*Watcher]struct{}{}
	}
	ws := r.starved[dir]
	if ws == nil {
		ws = map[*Watcher]struct{}{}
		r.starved[dir] = ws
	}
	if _, ok := ws[w]; ok {
		return
	}
	ws[w] = struct{}{}
	w.addUnwatched(1)
}

// unstarveLocked forgets dir as unwatched, for every watcher.
func (r *Registry) unstarveLocked(dir string) {
	for w := range r.starved[dir] {
		w.addUnwatched(-1)
	}
	delete(r.starved, dir)
	delete(r.astray, dir)
}

// unstarveBelowLocked forgets the unwatched directories at and below p
// (removed, or moved out of every watched tree).
func (r *Registry) unstarveBelowLocked(p string) {
	for dir := range r.starved {
		if _, ok := within(dir, p); ok {
			r.unstarveLocked(dir)
		}
	}
}

// forgetStarvedLocked forgets w's unwatched directories (it stops).
func (r *Registry) forgetStarvedLocked(w *Watcher) {
	for dir, ws := range r.starved {
		if _, ok := ws[w]; ok {
			delete(ws, w)
			w.addUnwatched(-1)
			if len(ws) == 0 {
				delete(r.starved, dir)
				delete(r.astray, dir)
			}
		}
	}
}

// moveStarvedLocked moves the unwatched directories at and below each
// {from, to} of moves to the same places below to (see
// moveWatchesLocked). Those not found at their old paths are to be
// tried at their new ones.
func (r *Registry) moveStarvedLocked(moves [][2]string) {
	moved := map[string]map[*Watcher]struct{}{}
	var astray []string
	for p, ws := range r.starved {
		for _, mv := range moves {
			if rel, ok := within(p, mv[0]); ok {
				to := path.Join(mv[1], rel)
				delete(r.starved, p)
				moved[to] = ws
				if _, ok := r.astray[p]; ok {
					delete(r.astray, p)
					astray = append(astray, to)
				}
				break
			}
		}
	}
	for _, p := range astray {
		r.astray[p] = untried
	}
	for p, ws := range moved {
		if old := r.starved[p]; old != nil {
			for w := range ws {
				if _, ok := old[w]; ok {
					w.addUnwatched(-1) // counted twice
				}
				old[w] = struct{}{}
			}
			continue
		}
		r.starved[p] = ws
	}
}

// rewatchLocked tries to watch the unwatched directories, parents
// first, for their watchers that still want them, and marks overflow for
// each watcher that gained a watch. Once the budget is spent again it
// only looks for those of r.astray (see the top of this file): one found
// waits for room as the others do, one still missing is forgotten when
// the reader has handled what was queued when it was first missed. It
// waits while a move's halves are being paired: it reaches directories
// by path, which the move may have changed.
func (r *Registry) rewatchLocked() {
	if len(r.starved) == 0 || r.closed || r.in == nil || r.pair != nil || len(r.moves) > 0 {
		return
	}
	r.freed = false
	told := map[*Watcher]bool{}
	full := false
	for _, dir := range slices.Sorted(maps.Keys(r.starved)) {
		ws, ok := r.starved[dir]
		if !ok {
			continue
		}
		room := !full && r.watchesLocked() < r.budget
		missed, astray := r.astray[dir]
		if !room && !astray {
			continue
		}
		var want []*Watcher
		for w := range ws {
			if !w.Stopped() && w.wantsDir(dir) {
				want = append(want, w)
			}
		}
		r.unstarveLocked(dir)
		if len(want) == 0 {
			continue
		}
		var c dirs
		var d *os.File
		var err error
		for _, w := range want {
			if d, err = c.get(w, dir); err == nil {
				break
			}
		}
		if err != nil {
			c.close()
			if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) {
				if astray && missed != untried && missed <= r.readEnd {
					// Every event queued when it was missed is handled,
					// and none moved it: gone.
					continue
				}
				// Gone, or a directory above it was moved and the
				// reader has yet to handle that.
				if !astray || missed == untried {
					missed, astray = r.positionLocked(), true
				}
			}
			for _, w := range want {
				r.starveLocked(dir, w)
			}
			if astray {
				if r.astray == nil {
					r.astray = map[string]uint64{}
				}
				r.astray[dir] = missed
			}
			continue
		}
		if !room {
			// Found: it waits for room as the others do.
			c.close()
			for _, w := range want {
				r.starveLocked(dir, w)
			}
			continue
		}
		had := map[*Watcher]bool{}
		if dw := r.byPath[dir]; dw != nil {
			for w := range dw.subs {
				had[w] = true
			}
		}
		err = r.addTreeLocked(d, dir, want, treeRewatch)
		c.close()
		if dw := r.byPath[dir]; dw != nil {
			for _, w := range want {
				if _, ok := dw.subs[w]; ok && !had[w] {
					told[w] = true
				}
			}
		}
		if isBudget(err) {
			full = true // no room after all (the kernel's limit, other programs holding the rest)
		} else if err != nil {
			r.log.Warn("cannot watch a directory left unwatched for want of watches", "dir", dir, "err", err)
		}
	}
	for w := range told {
		w.markOverflow()
	}
}

// isBudget reports whether err says the watch budget is spent.
func isBudget(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Kind == Unavailable && err != errNoProcFD
}
