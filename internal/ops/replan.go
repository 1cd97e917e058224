package ops

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// maxAttempts bounds how often one operation reads, plans and commits a
// file that other writers keep changing (see replan).
const maxAttempts = 10

// changedError marks a commit refused because a file changed since the
// operation read it (stale_version against the version the operation
// planned from): replan starts the operation again.
type changedError struct{ err *fserr.Error }

func (c *changedError) Error() string { return c.err.Error() }
func (c *changedError) Unwrap() error { return c.err }

// commit commits changes planned from the versions they expect (or from
// the files' absence) and reports a stale_version refusal as a
// changedError for replan.
func (e *Engine) commit(op, path string, changes []workspace.Change) ([]workspace.FileResult, error) {
	if e.hooks.beforeCommit != nil {
		e.hooks.beforeCommit()
	}
	res, err := e.ws.Commit(changes, workspace.CommitOptions{Op: op})
	if err != nil {
		fe := fserr.From(op, path, err)
		if fe.Code == fserr.StaleVersion {
			return nil, &changedError{fe}
		}
		return nil, fe
	}
	return res, nil
}

// replan runs attempt, one read → plan → commit of the files keys name
// (see lockKeys; none for a dry run, which commits nothing), until its
// commit no longer finds a file changed since its read. op and path name
// the operation in errors.
//
// Edits, inserts, line edits, appends and patches commit the content they
// planned guarded by the version they read (workspace.Change's
// ExpectedVersion, or ExpectAbsent), so that nothing written between the
// read and the commit is lost. That version is the engine's, not the
// caller's: a caller that named none must not get stale_version because
// another change landed in between. Two mechanisms keep it so.
//
// Within the engine, replan holds a lock per file (fileLocks) from the
// read to the commit, so concurrent changes of one file apply one after
// another, each planned against its predecessor's result, at one read and
// one plan each; and the callers' views (Tracker) are recorded in the
// order of the commits.
//
// The workspace's own lock is not held across the plan: it is a single
// lock for every mutation of the workspace and of every process sharing
// its state directory, held by Commit from validation to cleanup only,
// and a plan may run the matching ladder over a 256 MiB file. So writers
// that do not take the engine's file locks (another process, an editor,
// another engine) can still change the file in between. The commit then
// refuses (attempt returns a changedError, see Engine.commit) and, after a
// short random pause, attempt runs again from the read: every check runs
// again on the new content, so the anchor may now be missing (no_match)
// or ambiguous (ambiguous_match), and a version the caller did name, or
// the read a line edit relies on (DESIGN §5), is now outdated
// (stale_version, as before). After maxAttempts, replan gives up with a
// retryable conflict; nothing of the operation was written.
func (e *Engine) replan(ctx context.Context, op, path string, keys []string, attempt func() error) error {
	unlock, err := e.locks.lock(ctx, keys)
	if err != nil {
		return cancelled(op, path, err)
	}
	defer unlock()
	var last *changedError
	for i := range maxAttempts {
		if i > 0 {
			if err := pause(ctx, i); err != nil {
				return cancelled(op, path, err)
			}
		}
		err := attempt()
		if !errors.As(err, &last) {
			return err
		}
	}
	p := last.err.Path
	if p == "" {
		p = path
	}
	fe := fserr.New(fserr.Conflict, op, p, "%s kept changing while the %s was applied: %d times another writer changed it between the read and the commit; nothing was written", p, op, maxAttempts).
		WithHint("retry the %s; if this persists, find out what keeps rewriting %s", op, p)
	fe.Retryable, fe.Err = true, last.err
	return fe
}

// pause waits a random time before attempt (1, 2, …), up to a bound that
// doubles with each attempt from 1 ms to maxPause, so that writers that
// keep colliding (two processes with queues of changes to one file) drift
// apart and the one that lost gets a turn.
func pause(ctx context.Context, attempt int) error {
	limit := min(time.Millisecond<<min(attempt-1, 16), maxPause)
	t := time.NewTimer(rand.N(limit))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxPause bounds one pause of replan.
const maxPause = 50 * time.Millisecond

func cancelled(op, path string, err error) error {
	fe := fserr.New(fserr.IOError, op, path, "%s of %s cancelled before it could commit; nothing was written", op, path)
	fe.Retryable, fe.Err = true, err
	return fe
}

// lockKeys returns the keys of paths for replan's locks, or
// none when write is false (a dry run commits nothing). Keys are lexical
// (workspace.LexicalKey): the operation resolves its paths itself, and
// resolving them here too cost a walk of system calls per change. Two
// spellings of one file through a link then take different locks; their
// commits still cannot lose each other's change (the later one finds the
// file changed and is planned again). A path outside every root gets no
// lock: the operation reports the error itself.
func (e *Engine) lockKeys(write bool, paths ...string) []string {
	if !write {
		return nil
	}
	keys := make([]string, 0, len(paths))
	for _, p := range paths {
		if k, err := e.ws.LexicalKey(p); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// fileLocks is a set of per-file locks keyed by path (see lockKeys), for the
// operations of one engine (see replan); entries exist only while held or
// awaited. Safe for concurrent use.
type fileLocks struct {
	mu   sync.Mutex
	byID map[string]*fileLock
}

type fileLock struct {
	token chan struct{} // holds a value while the lock is held
	refs  int           // holders and waiters; guarded by fileLocks.mu
}

// lock takes the locks of keys, in sorted order so that operations taking
// several never deadlock, waiting at most until ctx is done. Waiters are
// served in arrival order (a channel's queue of senders).
func (l *fileLocks) lock(ctx context.Context, keys []string) (unlock func(), err error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	for i, k := range keys {
		if err := l.lockOne(ctx, k); err != nil {
			l.unlock(keys[:i])
			return nil, err
		}
	}
	return func() { l.unlock(keys) }, nil
}

func (l *fileLocks) lockOne(ctx context.Context, key string) error {
	l.mu.Lock()
	if l.byID == nil {
		l.byID = map[string]*fileLock{}
	}
	fl := l.byID[key]
	if fl == nil {
		fl = &fileLock{token: make(chan struct{}, 1)}
		l.byID[key] = fl
	}
	fl.refs++
	l.mu.Unlock()
	select {
	case fl.token <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.release(key, fl)
		return ctx.Err()
	}
}

func (l *fileLocks) unlock(keys []string) {
	for _, k := range keys {
		l.mu.Lock()
		fl := l.byID[k]
		l.mu.Unlock()
		<-fl.token
		l.release(k, fl)
	}
}

// release drops one reference to fl, and fl itself with the last.
func (l *fileLocks) release(key string, fl *fileLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fl.refs--; fl.refs == 0 {
		delete(l.byID, key)
	}
}
