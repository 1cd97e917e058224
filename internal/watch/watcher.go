package watch

import (
	"context"
	"path"
	"sync"
	"time"
)

// Event is one change reported to a watcher.
type Event struct {
	Seq          int64
	Type         string // Create, Write, Remove, Rename or Chmod
	Path         string // absolute; a rename's new path
	RelativePath string // below the watched directory (the file's name for a file watcher)
	OldPath      string // a rename's old path
	IsDir        bool
	Time         time.Time // when the first event folded into this one happened
	// Stat describes the file when the event left the debounce queue;
	// nil when it was gone by then (always for Remove).
	Stat *FileStat
}

// FileStat is a file's state at an event.
type FileStat struct {
	ModTime time.Time
	Size    int64
	Inode   uint64
}

// PollResult is a page of events.
type PollResult struct {
	Events []Event
	// Cursor is the sequence number to pass to the next poll: the last
	// one this poll consumed (events and overflow markers).
	Cursor int64
	// Overflow says events after the given cursor were dropped (kernel
	// queue overflow, an unwatchable new directory, or ring wrap): rescan.
	// A page never holds events from both sides of a loss: with Overflow
	// its events all came after it (a rescan may already show them),
	// without it they all came before the next one.
	Overflow bool
	// Unwatched counts the directories of the tree that exist but could
	// not be watched, the watch budget being spent: nothing below them
	// is reported. Each was reported as overflow when it could not be
	// watched, and the registry watches it as soon as watches are
	// released, reporting overflow again then (rescan: what changed
	// there meanwhile went unreported).
	Unwatched int
}

// Info describes a watcher.
type Info struct {
	ID          string
	Path        string
	Recursive   bool
	Status      string // "active" or "stopped"
	StopReason  string // why a stopped watcher stopped ("" while active)
	Subscribers int
	EventCount  int64 // events emitted since creation
	LatestSeq   int64
	Unwatched   int // directories left unwatched for want of watches (see PollResult.Unwatched)
	Created     time.Time
}

// rawEvent is an event on its way into a watcher.
type rawEvent struct {
	typ     string
	path    string
	oldPath string
	isDir   bool
	at      time.Time
}

type pending struct {
	rawEvent
	rel string
	n   int64 // its place in the watcher's queue: 1 for the first ever queued
}

// Watcher is one watcher. Its methods are safe for concurrent use.
type Watcher struct {
	id  string
	cfg Config
	// root is the watched directory (a file watcher's parent): cfg.Path
	// as given when the registry has an opener, else with symbolic links
	// resolved. It names the directory; what is watched is reached by
	// descriptor (see dirs).
	root string
	// shown is root as the config names it: events report paths below
	// it (the two differ when cfg.Path goes through a symbolic link).
	shown   string
	target  string // a file watcher's file: root joined with cfg.Path's name
	rootID  fileID // the root directory's identity at creation
	file    bool   // cfg.Path is a file
	hidden  bool   // an internal watcher (Wait): not listed, not shared
	created time.Time
	reg     *Registry

	// Guarded by reg.mu.
	dirs        map[*dirWatch]struct{}
	subscribers int

	mu sync.Mutex
	// ring is circular and grows as entries arrive (see growRingLocked),
	// up to ringMax entries: an idle watcher holds no ring at all.
	ring     []Event
	ringMax  int // the registry's RingSize
	start    int // index of the oldest entry
	count    int
	seq      int64
	emitted  int64
	queue    []*pending          // debounce queue, oldest first
	lastPath map[string]*pending // latest queued event per path
	queued   int64               // events ever queued (pending.n)
	// cuts holds, for each path a queued remove or rename took away,
	// the n of the latest such event: it ends every name below that
	// path too, so no later event below it folds into an earlier one
	// (see foldsLocked).
	cuts    map[string]int64
	timer   *time.Timer
	notify  chan struct{} // closed and replaced when entries arrive
	stopped bool
	gone    bool // stopped because its directory was removed or moved away
	// stoppedAt is when it stopped, by the registry's clock: a stopped
	// watcher stays readable for Options.StoppedGrace from then.
	stoppedAt time.Time
	reason    string // why it stopped (Info.StopReason)
	// lastRead is when a client last polled it (or created it, or shared
	// it), by the registry's clock, and readers counts the polls in
	// progress (long polls, event streams): a watcher with no reader and
	// no read for Options.IdleTimeout expires.
	lastRead time.Time
	readers  int
	// unwatched counts the directories of its tree left unwatched for
	// want of budget (see starved.go).
	unwatched int
}

// addUnwatched adjusts the count of unwatched directories.
func (w *Watcher) addUnwatched(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unwatched += n
}

// newWatcher returns a watcher for cfg; root names the directory it
// watches (cfg.Path, or its parent for a file).
func newWatcher(reg *Registry, id string, cfg Config, file, hidden bool, root string) *Watcher {
	w := &Watcher{id: id, cfg: cfg, root: root, shown: cfg.Path, file: file, hidden: hidden, created: time.Now(), reg: reg,
		dirs: map[*dirWatch]struct{}{}, subscribers: 1, ringMax: reg.opts.RingSize,
		lastPath: map[string]*pending{}, notify: make(chan struct{}), lastRead: reg.now()}
	if file {
		w.shown = path.Dir(cfg.Path)
		w.target = path.Join(root, path.Base(cfg.Path))
	}
	return w
}

// shownPath maps a path below root to the same path below shown.
func (w *Watcher) shownPath(p string) string {
	if p == "" || w.shown == w.root {
		return p
	}
	if rel, ok := within(p, w.root); ok {
		return path.Join(w.shown, rel)
	}
	return p
}

// ID returns the watcher's id.
func (w *Watcher) ID() string { return w.id }

// Config returns the watcher's configuration, defaults applied.
func (w *Watcher) Config() Config { return w.cfg }

// LatestSeq returns the sequence number of the newest entry.
func (w *Watcher) LatestSeq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// wantsDir reports whether dir (absolute) is a directory this watcher
// watches.
func (w *Watcher) wantsDir(dir string) bool {
	if w.file {
		return dir == w.root
	}
	rel, ok := within(dir, w.root)
	switch {
	case !ok:
		return false
	case rel == ".":
		return true
	case !w.cfg.Recursive:
		return false
	}
	return !w.cfg.excluded(rel) && !w.reg.staged(rel)
}

// covers reports whether an event on p (absolute) concerns this watcher
// and returns its relative path.
func (w *Watcher) covers(p string) (string, bool) {
	if w.file {
		return path.Base(p), p == w.target
	}
	rel, ok := within(p, w.root)
	if !ok || rel == "." {
		return "", false
	}
	if !w.cfg.Recursive && path.Dir(rel) != "." {
		return "", false
	}
	if w.cfg.excluded(rel) || !w.cfg.included(rel) || w.reg.staged(rel) {
		return "", false
	}
	return rel, true
}

// coversMove is covers for an entry that moved (renamed, or moved out of
// the tree). A directory's move concerns the watcher also when its
// include globs leave the directory's own name out, as long as it watches
// below it: the move took along the files below that it reported (a/x.py
// is now b/x.py, or gone), and no event of their own says so.
func (w *Watcher) coversMove(p string, isDir bool) (string, bool) {
	if rel, ok := w.covers(p); ok || !isDir || w.file || !w.cfg.Recursive {
		return rel, ok
	}
	rel, ok := within(p, w.root)
	if !ok || rel == "." || w.cfg.excluded(rel) || w.reg.staged(rel) {
		return "", false
	}
	return rel, true
}

// staging reports whether p (absolute) is, or lies below, a staging entry
// in the watcher's tree (see Options.Staging).
func (w *Watcher) staging(p string) bool {
	rel, ok := within(p, w.root)
	return ok && rel != "." && w.reg.staged(rel)
}

// inTree reports whether p lies where the watcher looks, filters aside.
func (w *Watcher) inTree(p string) bool {
	if w.file {
		return path.Dir(p) == w.root
	}
	rel, ok := within(p, w.root)
	return ok && rel != "." && (w.cfg.Recursive || path.Dir(rel) == ".")
}

// offer queues ev if it concerns the watcher.
func (w *Watcher) offer(ev rawEvent) {
	rel, ok := w.covers(ev.path)
	if !ok {
		return
	}
	w.enqueue(ev, rel)
}

func (w *Watcher) enqueue(ev rawEvent, rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if last := w.lastPath[ev.path]; last != nil && w.foldsLocked(last, ev) {
		last.isDir = ev.isDir
		return // folded into the queued event
	}
	w.queued++
	p := &pending{rawEvent: ev, rel: rel, n: w.queued}
	w.queue = append(w.queue, p)
	w.lastPath[ev.path] = p
	if ev.typ == Rename && ev.oldPath != ev.path {
		// The rename is an event for the old name too: what comes next
		// there (a new file) does not fold into what came before.
		delete(w.lastPath, ev.oldPath)
		w.cutLocked(ev.oldPath, p.n)
	}
	if ev.typ == Remove || ev.typ == Rename {
		w.cutLocked(ev.path, p.n)
	}
	if len(w.queue) > w.ringMax {
		// A burst larger than the ring: emit the oldest now rather than
		// hold more than the ring could keep anyway.
		w.flushLocked(time.Now(), true)
	}
	w.armLocked()
}

// foldsLocked reports whether ev, an event for last's path, folds into
// last, the latest event queued for that path: it is of the same type
// (never a rename), and no event queued since took away a directory
// above the path. A directory removed or moved away (or renamed over)
// ends the names below it, without an event of their own when it moved
// out of the tree: a create, write or remove of a name below it that
// came after is another file's, and folding it into an event queued
// before would report it before the directory went (mkdir d; touch
// d/f; mv d e; mkdir d; touch d/f would leave the client without the
// new d/f).
func (w *Watcher) foldsLocked(last *pending, ev rawEvent) bool {
	if last.typ != ev.typ || ev.typ == Rename {
		return false
	}
	if len(w.cuts) == 0 {
		return true
	}
	for d := path.Dir(ev.path); ; d = path.Dir(d) {
		if n, ok := w.cuts[d]; ok && n > last.n {
			return false
		}
		if d == "/" || d == "." || d == w.root {
			return true
		}
	}
}

// cutLocked records that the event n took p away (see cuts).
func (w *Watcher) cutLocked(p string, n int64) {
	if w.cuts == nil {
		w.cuts = map[string]int64{}
	}
	w.cuts[p] = n
}

// pruneCutsLocked forgets the cuts no queued event predates: only an
// event still queued can be folded into. Each cut came with an event
// queued, so they are swept only once they outnumber the queue twice
// (a burst of removes leaving the queue one by one costs no sweep
// each).
func (w *Watcher) pruneCutsLocked() {
	if len(w.queue) == 0 {
		clear(w.cuts)
		return
	}
	if len(w.cuts) <= 2*len(w.queue)+16 {
		return
	}
	oldest := w.queue[0].n
	for p, n := range w.cuts {
		if n <= oldest {
			delete(w.cuts, p)
		}
	}
}

// armLocked makes sure the timer fires when the oldest queued event is due.
func (w *Watcher) armLocked() {
	if len(w.queue) == 0 || w.timer != nil {
		return
	}
	due := time.Until(w.queue[0].at.Add(w.cfg.Debounce))
	w.timer = time.AfterFunc(max(due, 0), w.onTimer)
}

func (w *Watcher) onTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.stopped {
		return
	}
	w.flushLocked(time.Now(), false)
	w.armLocked()
}

// flushLocked moves due events (all of them with force, down to the ring
// size) from the queue to the ring.
func (w *Watcher) flushLocked(now time.Time, force bool) {
	var c dirs
	defer c.close()
	n := 0
	for n < len(w.queue) {
		p := w.queue[n]
		overfull := force && len(w.queue)-n > w.ringMax
		if !overfull && p.at.Add(w.cfg.Debounce).After(now) {
			break
		}
		n++
		if w.lastPath[p.path] == p {
			delete(w.lastPath, p.path)
		}
		w.appendLocked(w.eventOf(p, &c))
	}
	if n > 0 {
		clear(w.queue[:n])
		w.queue = w.queue[n:]
		w.pruneCutsLocked()
		w.broadcastLocked()
	}
}

// eventOf makes the event of p, with the file's current state as c finds
// it: by descriptor, through the watched directories (see dirs), never by
// path. An entry that cannot be reached that way (gone, or a link swapped
// in on the way) gets no Stat.
func (w *Watcher) eventOf(p *pending, c *dirs) Event {
	ev := Event{Type: p.typ, Path: w.shownPath(p.path), RelativePath: p.rel, OldPath: w.shownPath(p.oldPath), IsDir: p.isDir, Time: p.at}
	if p.typ != Remove {
		if e, err := c.stat(w, p.path); err == nil {
			st := e.stat
			ev.Stat = &st
			ev.IsDir = e.isDir
		}
	}
	return ev
}

func (w *Watcher) appendLocked(ev Event) {
	w.seq++
	ev.Seq = w.seq
	if ev.Type != overflow {
		w.emitted++
	}
	if w.count == len(w.ring) && len(w.ring) < w.ringMax {
		w.growRingLocked()
	}
	if w.count < len(w.ring) {
		w.ring[(w.start+w.count)%len(w.ring)] = ev
		w.count++
		return
	}
	w.ring[w.start] = ev
	w.start = (w.start + 1) % len(w.ring)
}

// ringMin is the size of a ring's first allocation.
const ringMin = 16

// growRingLocked replaces the full ring with one twice its size (at least
// ringMin, at most ringMax entries), oldest entry first. Doubling keeps
// the copying amortised to one per entry; the ring never shrinks, so a
// watcher that once held ringMax entries keeps that memory.
func (w *Watcher) growRingLocked() {
	ring := make([]Event, min(w.ringMax, max(ringMin, 2*len(w.ring))))
	n := copy(ring, w.ring[w.start:])
	copy(ring[n:], w.ring[:w.start])
	w.ring, w.start = ring, 0
}

func (w *Watcher) broadcastLocked() {
	close(w.notify)
	w.notify = make(chan struct{})
}

// markOverflow records that events were lost at this point: what was
// queued before goes out first, then a marker.
func (w *Watcher) markOverflow() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.flushAllLocked()
	w.appendLocked(Event{Type: overflow, Time: time.Now()})
	w.broadcastLocked()
}

func (w *Watcher) flushAllLocked() {
	var c dirs
	defer c.close()
	for _, p := range w.queue {
		w.appendLocked(w.eventOf(p, &c))
	}
	clear(w.queue)
	w.queue = w.queue[:0]
	clear(w.lastPath)
	clear(w.cuts)
}

// stop ends the watcher: queued events are emitted, waiters wake up.
// gone records that its directory was removed or moved away; reason says
// why it stopped, for its clients.
func (w *Watcher) stop(gone bool, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.gone, w.reason, w.stoppedAt = gone, reason, w.reg.now()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.flushAllLocked()
	w.stopped = true
	w.broadcastLocked()
}

// touch records a read now (see Options.IdleTimeout).
func (w *Watcher) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastRead = w.reg.now()
}

// stoppedTime is when the watcher stopped (zero while active).
func (w *Watcher) stoppedTime() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stoppedAt
}

// StopReason says why the watcher stopped ("" while it runs).
func (w *Watcher) StopReason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

// Stopped reports whether the watcher was stopped (released, its root
// removed, or the registry closed).
func (w *Watcher) Stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// collectLocked returns the events after cursor, at most limit.
func (w *Watcher) collectLocked(cursor int64, limit int) PollResult {
	res := PollResult{Cursor: cursor, Events: []Event{}, Unwatched: w.unwatched}
	if cursor > w.seq {
		// Not a cursor this watcher gave out (another watcher's, or one
		// from before a restart): waiting for it to come round would
		// skip every event until then. Resync from the latest.
		res.Cursor, res.Overflow = w.seq, true
		return res
	}
	oldest := w.seq - int64(w.count) + 1
	if w.count > 0 && cursor < oldest-1 {
		res.Overflow = true
	}
	if cursor >= w.seq {
		return res
	}
	skip := 0
	if cursor >= oldest {
		skip = int(cursor - oldest + 1)
	}
	for i := skip; i < w.count && len(res.Events) < limit; i++ {
		ev := w.ring[(w.start+i)%len(w.ring)]
		if ev.Type == overflow {
			if len(res.Events) > 0 {
				// The page ends before the loss: its events all come
				// before a marker or all after one, so that a client
				// that rescans on overflow and then applies the page
				// replays nothing from before its rescan.
				break
			}
			res.Cursor, res.Overflow = ev.Seq, true
			continue
		}
		res.Cursor = ev.Seq
		res.Events = append(res.Events, ev)
	}
	return res
}

// Poll returns the events with a sequence number above cursor, at most
// limit of them. With a timeout it waits until there is at least one
// event (or an overflow) to return, the timeout passes, the watcher
// stops or ctx ends; a zero timeout returns at once. cursor 0 replays
// the ring.
//
// A poll is what keeps a watcher from expiring (Options.IdleTimeout):
// none expires while a poll is in progress. A poll that reads a stopped
// watcher to its end lets the registry drop it (see Registry).
func (w *Watcher) Poll(ctx context.Context, cursor int64, limit int, timeout time.Duration) PollResult {
	if limit <= 0 {
		limit = 1
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	w.mu.Lock()
	w.readers++
	w.lastRead = w.reg.now()
	w.mu.Unlock()
	readAll := false
	defer func() {
		w.mu.Lock()
		w.readers--
		w.lastRead = w.reg.now()
		w.mu.Unlock()
		if readAll && !w.hidden {
			w.reg.readThrough(w)
		}
	}()
	for {
		w.mu.Lock()
		res := w.collectLocked(cursor, limit)
		ch, stopped := w.notify, w.stopped
		// Nothing is added once stopped: this poll saw the last entry.
		readAll = stopped && res.Cursor >= w.seq
		w.mu.Unlock()
		if len(res.Events) > 0 || res.Overflow || timeout <= 0 || stopped {
			return res
		}
		select {
		case <-ch:
		case <-deadline:
			return res
		case <-ctx.Done():
			return res
		}
	}
}

// info describes the watcher; the caller holds reg.mu.
func (w *Watcher) info() Info {
	w.mu.Lock()
	defer w.mu.Unlock()
	status := "active"
	if w.stopped {
		status = "stopped"
	}
	return Info{ID: w.id, Path: w.cfg.Path, Recursive: w.cfg.Recursive && !w.file, Status: status, StopReason: w.reason,
		Subscribers: w.subscribers, EventCount: w.emitted, LatestSeq: w.seq, Unwatched: w.unwatched, Created: w.created}
}
