package ops

import (
	"sync"
)

// Tracker remembers, per caller and file, the version of the file the
// caller last saw (read or wrote). Versions are content hashes, so a file
// touched without changing reads as fresh, and a caller's own writes keep
// it fresh. Callers are opaque IDs (an MCP session, a connector context);
// the empty ID is stateless and never recorded. Safe for concurrent use.
type Tracker struct {
	mu     sync.Mutex
	states map[string]map[string]string // caller → file key → version
}

// maxTrackedFiles bounds the files remembered per caller; past it the
// oldest half is forgotten (those files then need a fresh read for line
// edits, never a silent pass).
const maxTrackedFiles = 10_000

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{states: map[string]map[string]string{}} }

// Saw records that caller saw version of file key.
func (t *Tracker) Saw(caller, key, version string) {
	if caller == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.states[caller]
	if m == nil {
		m = map[string]string{}
		t.states[caller] = m
	}
	if len(m) >= maxTrackedFiles {
		n := 0
		for k := range m {
			delete(m, k)
			if n++; n >= maxTrackedFiles/2 {
				break
			}
		}
	}
	m[key] = version
}

// Forget drops what caller saw of key (the file was deleted).
func (t *Tracker) Forget(caller, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states[caller], key)
}

// Seen returns the version caller last saw of key.
func (t *Tracker) Seen(caller, key string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.states[caller][key]
	return v, ok
}

// DropCaller forgets everything about caller (its session ended).
func (t *Tracker) DropCaller(caller string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.states, caller)
}
