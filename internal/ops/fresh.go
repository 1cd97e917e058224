package ops

import (
	"container/list"
	"slices"
	"sync"
)

// Tracker remembers, per caller and file, the version of the file the
// caller last saw (read or wrote). Versions are content hashes, so a file
// touched without changing reads as fresh, and a caller's own writes keep
// it fresh. Callers are opaque IDs (an MCP session, a connector context);
// the empty ID is stateless and never recorded. Safe for concurrent use.
type Tracker struct {
	mu     sync.Mutex
	states map[string]*seenFiles // by caller
}

// maxTrackedFiles bounds the files remembered per caller; past it the file
// the caller saw least recently is forgotten (it then needs a fresh read
// for line edits, never a silent pass).
const maxTrackedFiles = 10_000

// seenFiles is one caller's files, least recently seen first.
type seenFiles struct {
	byKey map[string]*list.Element // file key → element of order
	order list.List                // of *seenFile; front is the oldest
}

type seenFile struct {
	key, version string
	// earlier holds the versions the caller saw before version, oldest
	// first, at most maxEarlier: an undo brings one of them back.
	earlier []string
}

// maxEarlier bounds the earlier versions remembered per file.
const maxEarlier = 8

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{states: map[string]*seenFiles{}} }

// Saw records that caller saw version of file key.
func (t *Tracker) Saw(caller, key, version string) {
	if caller == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sawLocked(caller, key, version)
}

// sawLocked is Saw with t.mu held.
func (t *Tracker) sawLocked(caller, key, version string) {
	s := t.states[caller]
	if s == nil {
		s = &seenFiles{byKey: map[string]*list.Element{}}
		t.states[caller] = s
	}
	if el, ok := s.byKey[key]; ok {
		f := el.Value.(*seenFile)
		if f.version != version {
			f.earlier = append(f.earlier, f.version)
			if len(f.earlier) > maxEarlier {
				f.earlier = f.earlier[1:]
			}
			f.version = version
		}
		s.order.MoveToBack(el)
		return
	}
	if len(s.byKey) >= maxTrackedFiles {
		oldest := s.order.Front()
		delete(s.byKey, s.order.Remove(oldest).(*seenFile).key)
	}
	s.byKey[key] = s.order.PushBack(&seenFile{key: key, version: version})
}

// Advance records that caller changed key from version from to version to
// by an edit that did not show it the whole file (a replace, a patch).
// Only a caller that had seen from, and so knows the rest of the file, has
// now seen to: one whose view was stale stays stale (someone else's change
// may have moved its line numbers), and one that never read stays unread.
func (t *Tracker) Advance(caller, key, from, to string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); f != nil && f.version == from {
		t.sawLocked(caller, key, to)
	}
}

// Reverted records that caller changed key from version from back to an
// earlier version to (an undo), without being shown it. Only a caller
// whose view was current (it had seen from) and that saw to before has
// now seen to; any other view stays as it was: stale, or unread.
func (t *Tracker) Reverted(caller, key, from, to string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); f != nil && f.version == from && slices.Contains(f.earlier, to) {
		t.sawLocked(caller, key, to)
	}
}

// lookupLocked returns what caller saw of key, or nil (t.mu held). The
// check and the update of Advance and Reverted happen under one lock, so
// a concurrent Saw is not overwritten.
func (t *Tracker) lookupLocked(caller, key string) *seenFile {
	if s := t.states[caller]; s != nil {
		if el, ok := s.byKey[key]; ok {
			return el.Value.(*seenFile)
		}
	}
	return nil
}

// Forget drops what caller saw of key (the file was deleted).
func (t *Tracker) Forget(caller, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.states[caller]
	if s == nil {
		return
	}
	if el, ok := s.byKey[key]; ok {
		s.order.Remove(el)
		delete(s.byKey, key)
	}
}

// Seen returns the version caller last saw of key.
func (t *Tracker) Seen(caller, key string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); f != nil {
		return f.version, true
	}
	return "", false
}

// DropCaller forgets everything about caller (its session ended).
func (t *Tracker) DropCaller(caller string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, caller)
}
