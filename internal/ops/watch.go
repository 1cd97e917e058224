package ops

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/watch"
	"github.com/fsplane/fsplane/internal/workspace"
)

// watchState is the engine's watch registry, created with the first
// watcher and stopped by Close. The zero value is ready.
type watchState struct {
	mu     sync.Mutex
	reg    *watch.Registry
	opts   watch.Options
	closed bool
}

func (e *Engine) watches() (*watch.Registry, error) {
	s := &e.watch
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &watch.Error{Kind: watch.Unavailable, Message: "the watch service is shutting down"}
	}
	if s.reg == nil {
		opts := s.opts
		if opts.Logger == nil {
			opts.Logger = e.log
		}
		if opts.OpenDir == nil {
			// Watches are added on directories opened inside the roots,
			// never by path: a path swapped for a link after it was
			// resolved cannot put a watch outside them.
			opts.OpenDir = func(p string) (*os.File, error) {
				f, _, err := e.ws.OpenDir(p)
				return f, err
			}
		}
		if opts.Staging == nil {
			opts.Staging = workspace.IsStagingName
		}
		s.reg = watch.NewRegistry(opts)
	}
	return s.reg, nil
}

// Close stops every watcher (ending long polls and event streams) and
// releases the inotify instance. The engine's other operations keep
// working; creating a watcher after Close fails. Close is idempotent.
func (e *Engine) Close() error {
	s := &e.watch
	s.mu.Lock()
	reg := s.reg
	s.closed = true
	s.mu.Unlock()
	if reg == nil {
		return nil
	}
	return reg.Close()
}

// WatchRequest creates (or shares) a watcher.
type WatchRequest struct {
	Path      string // file or directory inside the workspace
	Recursive bool
	Debounce  time.Duration // 0: watch.DefaultDebounce
	Exclude   []string      // nil: watch.DefaultExclude
	Include   []string
}

// WatchCreated describes a created or shared watcher.
type WatchCreated struct {
	Watcher       *watch.Watcher
	Path          string // absolute
	Created       time.Time
	Reused        bool
	InitialCursor int64
}

// Watch starts a watcher on a path inside the workspace (resolved and
// confined like every path), or shares an identical one. The watcher's
// directories are opened inside the root (Workspace.OpenDir) and watched
// through their descriptors, so what it reports stays inside. Errors are
// *fserr.Error for the path (not_found, outside_root…) and *watch.Error
// for the watch itself (limits, bad debounce or globs).
func (e *Engine) Watch(_ context.Context, req WatchRequest) (*WatchCreated, error) {
	const op = "watch"
	info, err := e.ws.Stat(req.Path)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	if !info.Exists {
		return nil, fserr.New(fserr.NotFound, op, req.Path, "cannot watch %s: it does not exist", req.Path).
			WithHint("check the path; list the parent directory")
	}
	reg, err := e.watches()
	if err != nil {
		return nil, err
	}
	w, c, err := reg.Create(watch.Config{Path: filepath.Clean(info.Path.Abs), Recursive: req.Recursive, Debounce: req.Debounce,
		Exclude: req.Exclude, Include: req.Include})
	if err != nil {
		return nil, err
	}
	wi, _ := e.WatcherInfo(w.ID())
	return &WatchCreated{Watcher: w, Path: w.Config().Path, Created: wi.Created, Reused: c.Reused, InitialCursor: c.InitialCursor}, nil
}

// Watcher returns a listed watcher by id (*watch.Error NotFound otherwise).
func (e *Engine) Watcher(id string) (*watch.Watcher, error) {
	reg, err := e.watches()
	if err != nil {
		return nil, err
	}
	return reg.Get(id)
}

// WatcherInfo describes a watcher.
func (e *Engine) WatcherInfo(id string) (watch.Info, error) {
	reg, err := e.watches()
	if err != nil {
		return watch.Info{}, err
	}
	for _, i := range reg.List() {
		if i.ID == id {
			return i, nil
		}
	}
	_, err = reg.Get(id)
	return watch.Info{}, err
}

// Watchers lists the watchers, oldest first.
func (e *Engine) Watchers() ([]watch.Info, error) {
	reg, err := e.watches()
	if err != nil {
		return nil, err
	}
	return reg.List(), nil
}

// StopWatch releases one subscriber of a watcher; the last stops it.
func (e *Engine) StopWatch(id string) (watch.Info, error) {
	reg, err := e.watches()
	if err != nil {
		return watch.Info{}, err
	}
	return reg.Release(id)
}

// WaitRequest waits for one event on one path.
type WaitRequest struct {
	Path    string // the exact file or directory; it need not exist yet
	Timeout time.Duration
	Types   []string // nil: all
}

// WaitEvent waits for the first event of one of req.Types on req.Path;
// *watch.Error Timeout when none comes in time.
func (e *Engine) WaitEvent(ctx context.Context, req WaitRequest) (*watch.Event, error) {
	const op = "watch"
	p, err := e.ws.Resolve(req.Path)
	if err != nil {
		return nil, fserr.From(op, req.Path, err)
	}
	if p.Rel == "." {
		// A wait watches its path from the directory above, which for a
		// root lies outside the workspace.
		return nil, fserr.New(fserr.InvalidTarget, op, req.Path, "cannot wait for %s: it is a workspace root, whose directory is outside the workspace", req.Path).
			WithHint("watch the root instead (POST /v2/watch) and poll its events")
	}
	reg, err := e.watches()
	if err != nil {
		return nil, err
	}
	types := req.Types
	if len(types) == 0 {
		types = watch.Types
	}
	ev, err := reg.Wait(ctx, filepath.Clean(p.Abs), types, req.Timeout)
	if err != nil {
		return nil, err
	}
	return &ev, nil
}
