package watch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Options configure a Registry; zero fields take AIO's values (or, for
// what AIO does not bound, fsplane's defaults).
type Options struct {
	MaxWatchers int // distinct active watchers; default 128
	RingSize    int // events kept per watcher; default 10,000
	// IdleTimeout expires a watcher no client has polled for this long
	// while no poll is in progress (a long poll or an event stream keeps
	// it alive); default DefaultIdleTimeout. It bounds what a client that
	// created a watcher and went away holds.
	IdleTimeout time.Duration
	// StoppedGrace is how long a stopped watcher stays readable, for its
	// client to read its last events and learn why it stopped, unless
	// read to its end first; default DefaultStoppedGrace.
	StoppedGrace time.Duration
	// Now is the clock of the two above (tests); nil is time.Now.
	Now func() time.Time
	// MaxUserWatches overrides fs.inotify.max_user_watches (tests).
	MaxUserWatches int
	Logger         *slog.Logger
	// OpenDir opens the directory at an absolute path for reading,
	// confined as the caller requires (fsplane: inside a workspace root,
	// refusing a symbolic link as the last component), and reports a
	// missing path with an error that wraps fs.ErrNotExist and one that
	// is not a directory with one that wraps syscall.ENOTDIR. The
	// registry calls it only for the directories watchers are rooted at
	// (a directory watcher's path, a file watcher's or a wait's
	// directory); it reaches everything below them relative to their
	// descriptors (see dirs). The paths given to Create and Wait are
	// then used as given: the caller has resolved them. nil opens paths
	// as they are, following symbolic links, names a watcher's root by
	// its target, and confines nothing above the roots.
	OpenDir func(path string) (*os.File, error)
	// Staging reports whether a name (one path component) is one the
	// caller gives its own staging entries: temps and backups it renames
	// into place or removes (fsplane: workspace.IsStagingName). Whatever
	// a watcher's filters, nothing at or below such a name is reported or
	// watched, and a rename from one onto a name a watcher reports is a
	// create for it: what its client sees is the destination appear
	// (anew or replaced). nil stages nothing.
	Staging func(name string) bool
}

// Registry owns the inotify instance and the watchers. It is safe for
// concurrent use; Close stops everything.
type Registry struct {
	opts   Options
	log    *slog.Logger
	budget int // inotify watches this registry may hold

	mu       sync.Mutex
	in       *inotify // nil until the first watcher
	watchers map[string]*Watcher
	byKey    map[string]*Watcher
	hidden   int
	dirs     map[int32]*dirWatch
	byPath   map[string]*dirWatch
	moves    map[uint32]*move
	// pair is a rename whose two halves were read but which is not
	// handled yet: it may be the first move of an exchange (see
	// pairedLocked).
	pair *pairedMove
	// starved holds the directories of running watchers' trees left
	// unwatched for want of budget, by path, with the watchers that want
	// them; freed records that watches were released since the last try
	// to watch them (see starved.go).
	starved map[string]map[*Watcher]struct{}
	freed   bool
	// astray holds those of starved that were not found at their path
	// when tried, each with where the events then queued ended (see
	// positionLocked), or untried when a move has taken it elsewhere
	// since (see rewatchLocked).
	astray map[string]uint64
	// retired counts the watches in dirs whose directory is gone (see
	// retireLocked): kept for their queued events, they hold no kernel
	// watch and no share of the budget.
	retired int
	// readEnd counts the bytes read from the inotify descriptor: the
	// position, in that stream, of the next event to be read.
	readEnd uint64
	windows []*dirWatch // directories whose scan window is open
	// moveGrace is how long a MOVED_FROM left at the end of a read
	// waits for its MOVED_TO.
	moveGrace time.Duration
	// pairGrace is how long a rename left at the end of a read (see
	// pair) waits for the move back that would make it an exchange.
	pairGrace time.Duration
	// listHook, when set (tests), runs between adding the watch of a
	// directory that appeared and listing it.
	listHook func(dir string)
	// readHook, when set (tests, before the first watcher), runs in the
	// reader before each read of the inotify descriptor, without mu.
	readHook func()
	closed   bool
	done     chan struct{} // closed when the reader exits
	quit     chan struct{} // closed by Close to stop the janitor
	swept    chan struct{} // closed when the janitor exits
	// ended holds why the last maxEnded watchers dropped went (see
	// removeLocked): their ids answer NotFound with that.
	ended      map[string]string
	endedOrder []string // oldest first
}

// maxEnded bounds the ids of gone watchers kept to explain a NotFound.
const maxEnded = 1024

// now reads the registry's clock.
func (r *Registry) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// errNoProcFD: /proc/self/fd does not lead to this process's
// descriptors, so watches cannot be added by descriptor; they are never
// added by path instead (see inotify.addDir).
var errNoProcFD = &Error{Kind: Unavailable, Message: "file watching is unavailable: it needs /proc mounted (watches are added through /proc/self/fd, on the directories opened inside the watched tree, never by path)"}

// staged reports whether a component of rel (a relative path) is a
// staging name (see Options.Staging).
func (r *Registry) staged(rel string) bool {
	if r.opts.Staging == nil {
		return false
	}
	for rel != "" {
		name, rest, _ := strings.Cut(rel, "/")
		if r.opts.Staging(name) {
			return true
		}
		rel = rest
	}
	return false
}

// openDir opens the directory p through the configured opener.
func (r *Registry) openDir(p string) (*os.File, error) {
	if r.opts.OpenDir != nil {
		return r.opts.OpenDir(p)
	}
	return openPath(p)
}

// dirWatch is one inotify watch on a directory, shared by watchers.
type dirWatch struct {
	wd   int32
	id   fileID // the directory's identity when the watch was added
	path string
	// subs holds the watchers of the directory, each with the position
	// (see Registry.positionLocked) where its events of this watch begin:
	// 0 for those that added the watch, where the stream then was for
	// those that joined them. What a watch queued before a watcher joined
	// it happened before that watcher started (see sees).
	subs map[*Watcher]uint64
	scan *scanWindow // nil unless just listed (see scanWindow)
	// listed records that a scan reported entries of the directory as
	// created (see renamedLocked).
	listed  bool
	retired bool // see retireLocked
	// unreached holds the directories that appeared in this one (made
	// or moved in) while it could not be reached at its path, because
	// it was moved (or replaced) and the reader has yet to see that:
	// name → the watchers that saw the directory appear. They are
	// watched and scanned once the watch is moved to where its
	// directory now is (see relocateLocked), or forgotten when they go.
	unreached map[string][]*Watcher
}

// sees reports whether w gets ev, an event of dw's watch: w watches dw
// and ev was queued since it joined, or ev is a write or an attribute
// change that was the last event queued when it joined. The kernel folds
// an event into the last one queued when they are the same (a file
// written twice), so that one may stand for a change made since; an
// earlier one cannot (scanWindow keeps these for the same reason).
func (dw *dirWatch) sees(w *Watcher, ev kernelEvent) bool {
	since, ok := dw.subs[w]
	return ok && (ev.pos >= since || ev.end == since && ev.mask&(inModify|inAttrib) != 0)
}

// joinedAfter reports whether w joined dw after ev, an event of dw's
// watch, was queued.
func (dw *dirWatch) joinedAfter(w *Watcher, ev kernelEvent) bool {
	since, ok := dw.subs[w]
	return ok && ev.pos < since
}

// move is a MOVED_FROM waiting for its MOVED_TO.
type move struct {
	dir   *dirWatch
	ev    kernelEvent // the MOVED_FROM
	name  string
	isDir bool
	at    time.Time
}

// pairedMove is a MOVED_FROM matched with its MOVED_TO (to, newPath),
// waiting for the next event to tell whether it is the first half of an
// exchange.
type pairedMove struct {
	m       *move
	to      *dirWatch
	newPath string
	isDir   bool
	at      time.Time
}

// NewRegistry returns a registry; the inotify instance is created with
// the first watcher.
func NewRegistry(opts Options) *Registry {
	if opts.MaxWatchers <= 0 {
		opts.MaxWatchers = DefaultMaxWatchers
	}
	if opts.RingSize <= 0 {
		opts.RingSize = DefaultRingSize
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.StoppedGrace <= 0 {
		opts.StoppedGrace = DefaultStoppedGrace
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, log: log.With("component", "watch"), watchers: map[string]*Watcher{}, byKey: map[string]*Watcher{},
		dirs: map[int32]*dirWatch{}, byPath: map[string]*dirWatch{}, moves: map[uint32]*move{}, ended: map[string]string{}}
}

// Created is what Create reports besides the watcher.
type Created struct {
	Reused bool
	// InitialCursor is the cursor to poll from to see only what happens
	// from now on: 0 for a new watcher, its latest sequence number for a
	// shared one.
	InitialCursor int64
}

// Create starts a watcher for cfg, or, when one with an identical active
// config exists, adds a subscriber to it (Reused). Errors (*Error):
// Invalid for a bad config, NotFound when the path does not exist, Limit
// when MaxWatchers watchers are active (stopped ones make room, oldest
// stop first), Unavailable when inotify is missing, /proc
// is not mounted (see the package doc) or the tree needs more watches
// than the kernel allows. A path that exists but cannot be examined is
// an *fserr.Error (permission_denied, invalid_path for a link loop,
// io_error; with Options.OpenDir, whatever it reports, outside_root
// included).
func (r *Registry) Create(cfg Config) (*Watcher, Created, error) {
	return r.create(cfg, false)
}

func (r *Registry) create(cfg Config, hidden bool) (*Watcher, Created, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, Created{}, err
	}
	if err := r.start(); err != nil {
		return nil, Created{}, err
	}
	d, file, err := r.openTarget(cfg, hidden)
	if err != nil {
		return nil, Created{}, err
	}
	defer d.Close()
	top, err := statDir(d)
	if err != nil {
		return nil, Created{}, statErr(cfg.Path, "cannot watch "+cfg.Path, err)
	}
	// The watches go on the directory opened, whatever its path leads to
	// by now; the root names it. Without an opener, a root given through
	// a symbolic link is named by its target; events name it as given.
	root := cfg.Path
	if file {
		root = path.Dir(cfg.Path)
	}
	if r.opts.OpenDir == nil {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, Created{}, &Error{Kind: Unavailable, Message: "the watch service is shutting down"}
	}
	key := cfg.key()
	if !hidden {
		r.sweepLocked(r.now())
		if w := r.byKey[key]; w != nil && !w.Stopped() {
			w.subscribers++
			w.touch() // its new subscriber has yet to poll
			return w, Created{Reused: true, InitialCursor: w.LatestSeq()}, nil
		}
		if !r.makeRoomLocked() {
			return nil, Created{}, &Error{Kind: Limit, Message: fmt.Sprintf("Watcher limit reached: %d watchers are active; stop one (DELETE /v2/watch/{id}) or reuse one with an identical config", r.opts.MaxWatchers)}
		}
	} else if r.hidden >= r.opts.MaxWatchers {
		return nil, Created{}, &Error{Kind: Limit, Message: fmt.Sprintf("too many waits in progress (%d); retry later", r.opts.MaxWatchers)}
	}
	if err := r.startLocked(); err != nil {
		return nil, Created{}, err
	}
	w := newWatcher(r, newID(), cfg, file, hidden, root)
	w.rootID = top.id
	if err := r.addTreeLocked(d, w.root, []*Watcher{w}, treeCreate); err != nil {
		r.dropWatcherLocked(w)
		return nil, Created{}, err
	}
	if !r.rootWatchedLocked(w) {
		// Removed (or replaced) since it was opened.
		r.dropWatcherLocked(w)
		return nil, Created{}, &Error{Kind: NotFound, Message: fmt.Sprintf("cannot watch %s: it vanished", cfg.Path)}
	}
	r.watchers[w.id] = w
	if hidden {
		r.hidden++
	} else {
		r.byKey[key] = w
	}
	return w, Created{}, nil
}

// start creates the inotify instance unless the registry is closed.
func (r *Registry) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return &Error{Kind: Unavailable, Message: "the watch service is shutting down"}
	}
	return r.startLocked()
}

// openTarget opens the directory a watcher for cfg is rooted at: cfg.Path
// when it is a directory (file is false), else its parent (file is
// true; always for a wait, which watches the exact path from its
// directory). A watcher's path must exist; a wait's need not, its
// directory must.
func (r *Registry) openTarget(cfg Config, hidden bool) (d *os.File, file bool, err error) {
	what := "cannot watch " + cfg.Path
	if hidden {
		what = "cannot wait for " + cfg.Path
	}
	if !hidden {
		d, err := r.openDir(cfg.Path)
		switch {
		case err == nil:
			return d, false, nil
		case errors.Is(err, syscall.ENOTDIR):
			// A file, or a component above it is one: the parent tells.
		case isAbsent(err):
			return nil, false, &Error{Kind: NotFound, Message: what + ": it does not exist"}
		default:
			return nil, false, statErr(cfg.Path, what, err)
		}
	}
	dir := path.Dir(cfg.Path)
	d, err = r.openDir(dir)
	switch {
	case err == nil:
	case !isAbsent(err):
		return nil, false, statErr(dir, what, err)
	case hidden:
		return nil, false, &Error{Kind: NotFound, Message: what + ": its directory does not exist"}
	default:
		return nil, false, &Error{Kind: NotFound, Message: what + ": it does not exist"}
	}
	if hidden {
		return d, true, nil
	}
	e, err := statAt(d, path.Base(cfg.Path))
	switch {
	case err == nil && !e.isDir:
		return d, true, nil
	case err == nil:
		err = &Error{Kind: NotFound, Message: what + ": it was replaced while the watch was set up; retry"}
	case isAbsent(err):
		err = &Error{Kind: NotFound, Message: what + ": it does not exist"}
	default:
		err = statErr(cfg.Path, what, err)
	}
	d.Close()
	return nil, false, err
}

// isAbsent reports whether a stat error means the path does not exist
// (ENOTDIR: a component of it is a file).
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// statErr reports a path that exists but cannot be examined (permission
// denied, a link loop, an I/O error) as what it is, with fserr's code
// for the errno, rather than as missing.
func statErr(p, what string, err error) *fserr.Error {
	e := fserr.FromOS("watch", p, err)
	e.Message = what + ": " + e.Message
	return e
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startLocked creates the inotify instance and its reader.
func (r *Registry) startLocked() error {
	if r.in != nil {
		return nil
	}
	in, err := newInotify()
	if err != nil {
		return err
	}
	if err := in.checkProcFD(); err != nil {
		in.close()
		return err
	}
	max := r.opts.MaxUserWatches
	if max <= 0 {
		max = maxUserWatches()
	}
	if max <= 0 {
		max = 8192
	}
	r.budget = max - max/20
	r.in, r.done = in, make(chan struct{})
	go r.read(in, r.done)
	r.quit, r.swept = make(chan struct{}), make(chan struct{})
	go r.janitor(r.quit, r.swept)
	return nil
}

// positionLocked returns where the next event the kernel queues will be
// in the stream read from the inotify descriptor: every event queued so
// far lies before it. The reader reads holding mu (see
// inotify.readLocked), so no event is between what was read and what is
// queued.
func (r *Registry) positionLocked() uint64 { return r.readEnd + r.in.queued() }

// watchesLocked counts the watches that hold a share of the budget.
func (r *Registry) watchesLocked() int { return len(r.dirs) - r.retired }

// rootWatchedLocked reports whether w's root directory is among its
// watched directories.
func (r *Registry) rootWatchedLocked(w *Watcher) bool {
	_, ok := w.dirs[r.byPath[w.root]]
	return ok
}

// Get returns the listed watcher with this id, for a poll: it counts as
// one (see Options.IdleTimeout).
func (r *Registry) Get(id string) (*Watcher, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(r.now())
	if w := r.watchers[id]; w != nil && !w.hidden {
		w.touch()
		return w, nil
	}
	return nil, r.unknownLocked(id)
}

// unknownLocked is the NotFound error for id: why it went when the
// registry still knows.
func (r *Registry) unknownLocked(id string) *Error {
	if why, ok := r.ended[id]; ok {
		return &Error{Kind: NotFound, Message: why}
	}
	return &Error{Kind: NotFound, Message: fmt.Sprintf("watcher %s not found; list watchers with GET /v2/watch", id)}
}

// List describes the watchers, active and stopped, oldest first.
func (r *Registry) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(r.now())
	out := []Info{}
	for _, w := range r.watchers {
		if !w.hidden {
			out = append(out, w.info())
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return a.Created.Compare(b.Created) })
	return out
}

// Release drops one subscriber of the watcher; the last one stops it.
// It returns the watcher's state afterwards.
func (r *Registry) Release(id string) (Info, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(r.now())
	w := r.watchers[id]
	if w == nil || w.hidden {
		return Info{}, r.unknownLocked(id)
	}
	r.releaseLocked(w)
	if r.freed {
		r.rewatchLocked()
	}
	return w.info(), nil
}

func (r *Registry) releaseLocked(w *Watcher) {
	if w.subscribers--; w.subscribers > 0 {
		return
	}
	r.removeLocked(w, "released by its last subscriber (DELETE)",
		fmt.Sprintf("watcher %s was stopped: its last subscriber released it (DELETE); create a new one to watch again", w.id))
}

// removeLocked stops w, unless stopped already, for reason, and forgets
// it; its id answers NotFound with why from then on.
func (r *Registry) removeLocked(w *Watcher, reason, why string) {
	if !r.closed {
		// After Close the inotify descriptor is closed, and its number
		// may belong to another file by now.
		r.dropWatcherLocked(w)
	}
	w.stop(false, reason)
	if r.watchers[w.id] != w {
		return // a failed create, or removed already
	}
	delete(r.watchers, w.id)
	if w.hidden {
		r.hidden--
		return
	}
	if r.byKey[w.cfg.key()] == w {
		delete(r.byKey, w.cfg.key())
	}
	r.ended[w.id] = why
	r.endedOrder = append(r.endedOrder, w.id)
	if len(r.endedOrder) > maxEnded {
		delete(r.ended, r.endedOrder[0])
		r.endedOrder = r.endedOrder[1:]
	}
}

// stoppedWhy is how a NotFound explains a stopped watcher dropped for
// the reason given.
func stoppedWhy(w *Watcher, dropped string) string {
	w.mu.Lock()
	reason := w.reason
	w.mu.Unlock()
	return fmt.Sprintf("watcher %s stopped (%s) and was dropped: %s; create a new watcher to watch again", w.id, reason, dropped)
}

// sweepLocked drops the watchers whose time is up (see the package doc):
// a stopped one StoppedGrace after it stopped, an active one nobody
// polled for IdleTimeout.
func (r *Registry) sweepLocked(now time.Time) {
	if r.closed {
		return
	}
	for _, w := range r.watchers {
		if w.hidden {
			continue
		}
		w.mu.Lock()
		stopped, stoppedAt, idle := w.stopped, w.stoppedAt, w.readers == 0 && now.Sub(w.lastRead) >= r.opts.IdleTimeout
		w.mu.Unlock()
		switch {
		case stopped && now.Sub(stoppedAt) >= r.opts.StoppedGrace:
			r.removeLocked(w, "", stoppedWhy(w, fmt.Sprintf("stopped watchers are kept %v for their last events to be read", r.opts.StoppedGrace)))
		case !stopped && idle:
			r.removeLocked(w, fmt.Sprintf("expired: not polled for %v", r.opts.IdleTimeout),
				fmt.Sprintf("watcher %s expired: nobody polled it for %v (watchers not polled for that long are stopped); create it again and poll it (or keep an event stream open)", w.id, r.opts.IdleTimeout))
		}
	}
	if r.freed {
		r.rewatchLocked()
	}
}

// makeRoomLocked reports whether a new watcher may start: fewer than
// MaxWatchers are active. It first drops stopped watchers, the oldest
// stop first, until the watchers kept, stopped ones included, number
// fewer than MaxWatchers, so that what they hold stays within the bound
// it always had.
func (r *Registry) makeRoomLocked() bool {
	type stop struct {
		w  *Watcher
		at time.Time
	}
	var stopped []stop
	kept := 0
	for _, w := range r.watchers {
		if w.hidden {
			continue
		}
		kept++
		if w.Stopped() {
			stopped = append(stopped, stop{w, w.stoppedTime()})
		}
	}
	if kept-len(stopped) >= r.opts.MaxWatchers {
		return false
	}
	slices.SortFunc(stopped, func(a, b stop) int { return a.at.Compare(b.at) })
	for _, s := range stopped {
		if kept < r.opts.MaxWatchers {
			break
		}
		r.removeLocked(s.w, "", stoppedWhy(s.w, "its slot went to a new watcher"))
		kept--
	}
	return true
}

// readThrough is told by a poll that read the stopped watcher w to its
// end: w is dropped, as its client has all it will ever get, unless
// other subscribers share it (the registry cannot tell which of them
// read; they have StoppedGrace).
func (r *Registry) readThrough(w *Watcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.watchers[w.id] != w || w.subscribers > 1 {
		return
	}
	r.removeLocked(w, "", stoppedWhy(w, "its last events were read"))
	if r.freed {
		r.rewatchLocked()
	}
}

// janitor sweeps now and then, so that what nobody asks about (a
// registry whose clients all left) is dropped too; every call that
// looks watchers up sweeps first anyway.
func (r *Registry) janitor(quit, swept chan struct{}) {
	defer close(swept)
	every := min(r.opts.IdleTimeout, r.opts.StoppedGrace) / 4
	t := time.NewTicker(min(max(every, time.Second), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			r.mu.Lock()
			r.sweepLocked(r.now())
			// Room may have freed up outside this process too.
			r.freed = true
			r.rewatchLocked()
			r.mu.Unlock()
		}
	}
}

// dropWatcherLocked releases the watcher's directory watches.
func (r *Registry) dropWatcherLocked(w *Watcher) {
	for dw := range w.dirs {
		r.unsubscribeLocked(dw, w)
	}
	r.forgetStarvedLocked(w)
}

// rootGoneLocked stops a watcher whose directory was removed or moved
// away, after reporting the root removed when report is set, and
// releases its watches.
func (r *Registry) rootGoneLocked(w *Watcher, report bool, now time.Time) {
	if report && !w.file {
		w.enqueue(rawEvent{typ: Remove, path: w.root, isDir: true, at: now}, ".")
	}
	r.dropWatcherLocked(w)
	what := "its directory"
	if w.file {
		what = "the directory of the watched file"
	}
	w.stop(true, fmt.Sprintf("%s %s was removed or moved away", what, w.shown))
}

func (r *Registry) unsubscribeLocked(dw *dirWatch, w *Watcher) {
	delete(dw.subs, w)
	delete(w.dirs, dw)
	if len(dw.subs) == 0 {
		r.in.remove(dw.wd)
		r.forgetLocked(dw)
	}
}

func (r *Registry) forgetLocked(dw *dirWatch) {
	if r.dirs[dw.wd] == dw {
		delete(r.dirs, dw.wd)
		if dw.retired {
			r.retired--
		} else {
			r.freed = true
		}
	}
	if r.byPath[dw.path] == dw {
		delete(r.byPath, dw.path)
	}
}

// Close stops every watcher and the inotify instance.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for _, w := range r.watchers {
		w.stop(false, "the watch service shut down")
	}
	in, done, quit, swept := r.in, r.done, r.quit, r.swept
	r.mu.Unlock()
	if in == nil {
		return nil
	}
	close(quit)
	err := in.close()
	<-done
	<-swept
	return err
}

// Wait waits up to timeout for the first event of one of types on the
// exact path p (absolute, clean; it need not exist, its directory must).
// When p exists and types include Create it returns a create at once.
// A timeout is an Error of kind Timeout; p and its directory fail as in
// Create.
func (r *Registry) Wait(ctx context.Context, p string, types []string, timeout time.Duration) (Event, error) {
	want := map[string]bool{}
	for _, t := range types {
		want[t] = true
	}
	w, _, err := r.create(Config{Path: p, Debounce: MinDebounce, Exclude: []string{}}, true)
	if err != nil {
		return Event{}, err
	}
	defer func() {
		r.mu.Lock()
		r.releaseLocked(w)
		r.mu.Unlock()
	}()
	if want[Create] {
		var c dirs
		e, err := c.stat(w, w.target)
		if err == nil {
			ev := w.eventOf(&pending{rawEvent: rawEvent{typ: Create, path: w.target, isDir: e.isDir, at: time.Now()}, rel: path.Base(p)}, &c)
			c.close()
			return ev, nil
		}
		c.close()
	}
	deadline := time.Now().Add(timeout)
	var cursor int64
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		res := w.Poll(ctx, cursor, 1000, left)
		cursor = res.Cursor
		for _, ev := range res.Events {
			if want[ev.Type] {
				return ev, nil
			}
		}
		if ctx.Err() != nil {
			return Event{}, &Error{Kind: Timeout, Message: "the request ended before a file event arrived"}
		}
		if w.Stopped() {
			w.mu.Lock()
			gone := w.gone
			w.mu.Unlock()
			if gone {
				return Event{}, &Error{Kind: NotFound, Message: fmt.Sprintf("cannot wait for %s: its directory was removed or moved", p)}
			}
			break
		}
	}
	return Event{}, &Error{Kind: Timeout, Message: "timed out waiting for file event"}
}
