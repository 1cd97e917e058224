package ops

import (
	"log/slog"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/transfer"
	"github.com/fsplane/fsplane/internal/watch"
	"github.com/fsplane/fsplane/internal/workspace"
)

// Options configure an Engine. The zero value is a read-write engine that
// logs nothing.
type Options struct {
	// ReadOnly refuses every mutating operation with read_only.
	ReadOnly bool
	// Logger receives one line per mutating operation (op, path, result);
	// never file contents. Nil discards.
	Logger *slog.Logger
	// DefaultUser owns the files and directories that operations create
	// when a request names no user (AIO_DEFAULT_USER). "" is the daemon's
	// own account: nothing is chowned.
	DefaultUser string
	// Watch configures the file watch registry (limits); zero fields
	// take AIO's values. Close stops it.
	Watch watch.Options
	// Parallel, when set, is called as a search starts to walk a
	// directory tree, a worker per CPU: it returns how many workers the
	// walk runs (0: GOMAXPROCS) and a function to call when it ends.
	// fsplane serve and connect pass their procs.Governor's, which gives
	// the process its CPUs meanwhile.
	Parallel func() (workers int, done func())
}

// Engine runs operations on one workspace.
type Engine struct {
	ws       *workspace.Workspace
	readOnly bool
	log      *slog.Logger
	fresh    *Tracker
	user     string // Options.DefaultUser
	watch    watchState
	versions *transfer.VersionCache // download ETags
	locks    fileLocks              // held from read to commit (see replan)
	hooks    testHooks
	parallel func() (workers int, done func()) // Options.Parallel
}

// testHooks let tests act between the steps of an operation. They are nil
// outside tests.
type testHooks struct {
	beforeCommit func() // planned, about to commit (Engine.commit)
}

// New returns an engine over ws. The engine does not own ws; the caller
// closes it after the engine's last use.
func New(ws *workspace.Workspace, opts Options) *Engine {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{ws: ws, readOnly: opts.ReadOnly, log: log.With("component", "ops"), fresh: NewTracker(), user: opts.DefaultUser,
		versions: transfer.NewVersionCache(versionCacheSize)}
	e.watch.opts = opts.Watch
	e.parallel = opts.Parallel
	return e
}

// walking brackets a search's walk of a directory tree (see
// Options.Parallel): the walk runs workers goroutines (0: GOMAXPROCS), and
// calls done when it ends.
func (e *Engine) walking() (workers int, done func()) {
	if e.parallel == nil {
		return 0, func() {}
	}
	return e.parallel()
}

// Workspace returns the engine's workspace.
func (e *Engine) Workspace() *workspace.Workspace { return e.ws }

// Tracker returns the engine's freshness tracker.
func (e *Engine) Tracker() *Tracker { return e.fresh }

// owner resolves the account that gets what a request creates: its user,
// else the engine's default user; nil means no chown.
func (e *Engine) owner(op, path, user string) (*workspace.Owner, error) {
	if user == "" {
		user = e.user
	}
	o, err := workspace.LookupOwner(user)
	if err != nil {
		return nil, fserr.From(op, path, err)
	}
	return o, nil
}

func (e *Engine) writable(op, path string) error {
	if e.readOnly {
		return fserr.New(fserr.ReadOnly, op, path, "%s refused: this workspace is read-only", op).
			WithHint("only read, list, stat and search operations are available")
	}
	return nil
}
