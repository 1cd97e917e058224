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
	"sync"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Options configure a Registry; zero fields take AIO's values.
type Options struct {
	MaxWatchers int // distinct watchers; default 128
	RingSize    int // events kept per watcher; default 10,000
	// MaxUserWatches overrides fs.inotify.max_user_watches (tests).
	MaxUserWatches int
	Logger         *slog.Logger
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
	// moveGrace is how long a MOVED_FROM left at the end of a read
	// waits for its MOVED_TO.
	moveGrace time.Duration
	closed    bool
	done      chan struct{} // closed when the reader exits
}

// dirWatch is one inotify watch on a directory, shared by watchers.
type dirWatch struct {
	wd   int32
	id   fileID // the directory's identity when the watch was added
	path string
	subs map[*Watcher]struct{}
}

// move is a MOVED_FROM waiting for its MOVED_TO.
type move struct {
	dir   *dirWatch
	name  string
	isDir bool
	at    time.Time
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
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, log: log.With("component", "watch"), watchers: map[string]*Watcher{}, byKey: map[string]*Watcher{},
		dirs: map[int32]*dirWatch{}, byPath: map[string]*dirWatch{}, moves: map[uint32]*move{}}
}

// Created is what Create reports besides the watcher.
type Created struct {
	Reused bool
	// InitialCursor is the cursor to poll from to see only what happens
	// from now on: 0 for a new watcher, its latest sequence number for a
	// shared one.
	InitialCursor int64
}

// Create starts a watcher for cfg, or, when one with an identical config
// exists, adds a subscriber to it (Reused). Errors (*Error): Invalid for
// a bad config, NotFound when the path does not exist, Limit when
// MaxWatchers watchers exist, Unavailable when inotify is missing or the
// tree needs more watches than the kernel allows. A path that exists but
// cannot be examined is an *fserr.Error (permission_denied, invalid_path
// for a link loop, io_error).
func (r *Registry) Create(cfg Config) (*Watcher, Created, error) {
	return r.create(cfg, false)
}

func (r *Registry) create(cfg Config, hidden bool) (*Watcher, Created, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, Created{}, err
	}
	fi, err := os.Stat(cfg.Path)
	switch {
	case err == nil:
	case !isAbsent(err):
		return nil, Created{}, statErr(cfg.Path, "cannot watch "+cfg.Path, err)
	case !hidden:
		return nil, Created{}, &Error{Kind: NotFound, Message: fmt.Sprintf("cannot watch %s: it does not exist", cfg.Path)}
	default:
		fi = nil // Wait on a path that does not exist yet
	}
	// A wait is for events on the exact path, a directory's too: it
	// watches the parent like a file watcher.
	file := hidden || fi == nil || !fi.IsDir()
	if hidden {
		dir := path.Dir(cfg.Path)
		pfi, err := os.Stat(dir)
		if err != nil && !isAbsent(err) {
			return nil, Created{}, statErr(dir, "cannot wait for "+cfg.Path, err)
		}
		if err != nil || !pfi.IsDir() {
			return nil, Created{}, &Error{Kind: NotFound, Message: fmt.Sprintf("cannot wait for %s: its directory does not exist", cfg.Path)}
		}
	}
	// The watches go on the directory itself, not on a symbolic link to
	// it (IN_DONT_FOLLOW): resolve the root; events name it as given.
	root := cfg.Path
	if file {
		root = path.Dir(cfg.Path)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, Created{}, &Error{Kind: Unavailable, Message: "the watch service is shutting down"}
	}
	key := cfg.key()
	if !hidden {
		if w := r.byKey[key]; w != nil && !w.Stopped() {
			w.subscribers++
			return w, Created{Reused: true, InitialCursor: w.LatestSeq()}, nil
		}
		if len(r.watchers)-r.hidden >= r.opts.MaxWatchers {
			return nil, Created{}, &Error{Kind: Limit, Message: fmt.Sprintf("Watcher limit reached: %d watchers are active; stop one (DELETE /v2/watch/{id}) or reuse one with an identical config", r.opts.MaxWatchers)}
		}
	} else if r.hidden >= r.opts.MaxWatchers {
		return nil, Created{}, &Error{Kind: Limit, Message: fmt.Sprintf("too many waits in progress (%d); retry later", r.opts.MaxWatchers)}
	}
	if err := r.startLocked(); err != nil {
		return nil, Created{}, err
	}
	w := newWatcher(r, newID(), cfg, file, hidden, root)
	if err := r.addTreeLocked(w.root, []*Watcher{w}, false); err != nil {
		r.dropWatcherLocked(w)
		return nil, Created{}, err
	}
	if !r.rootWatchedLocked(w) {
		// Removed (or replaced by a file) since the stat above.
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
	return nil
}

// rootWatchedLocked reports whether w's root directory is among its
// watched directories.
func (r *Registry) rootWatchedLocked(w *Watcher) bool {
	_, ok := w.dirs[r.byPath[w.root]]
	return ok
}

// Get returns the watcher with this id (listed or not).
func (r *Registry) Get(id string) (*Watcher, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.watchers[id]; w != nil && !w.hidden {
		return w, nil
	}
	return nil, unknown(id)
}

func unknown(id string) *Error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf("watcher %s not found; list watchers with GET /v2/watch", id)}
}

// List describes the watchers, oldest first.
func (r *Registry) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
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
	w := r.watchers[id]
	if w == nil || w.hidden {
		return Info{}, unknown(id)
	}
	r.releaseLocked(w)
	return w.info(), nil
}

func (r *Registry) releaseLocked(w *Watcher) {
	if w.subscribers--; w.subscribers > 0 {
		return
	}
	r.dropWatcherLocked(w)
	delete(r.watchers, w.id)
	if w.hidden {
		r.hidden--
	} else if r.byKey[w.cfg.key()] == w {
		delete(r.byKey, w.cfg.key())
	}
	w.stop(false)
}

// dropWatcherLocked releases the watcher's directory watches.
func (r *Registry) dropWatcherLocked(w *Watcher) {
	for dw := range w.dirs {
		r.unsubscribeLocked(dw, w)
	}
}

// rootGoneLocked stops a watcher whose directory was removed or moved
// away, after reporting the root removed when report is set, and
// releases its watches.
func (r *Registry) rootGoneLocked(w *Watcher, report bool, now time.Time) {
	if report && !w.file {
		w.enqueue(rawEvent{typ: Remove, path: w.root, isDir: true, at: now}, ".")
	}
	r.dropWatcherLocked(w)
	w.stop(true)
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
		w.stop(false)
	}
	in, done := r.in, r.done
	r.mu.Unlock()
	if in == nil {
		return nil
	}
	err := in.close()
	<-done
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
		if fi, err := os.Lstat(w.target); err == nil {
			ev := w.eventOf(&pending{rawEvent: rawEvent{typ: Create, path: w.target, isDir: fi.IsDir(), at: time.Now()}, rel: path.Base(p)})
			return ev, nil
		}
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
