package ops

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
)

// Tracker remembers, per caller and file, the version of the file the
// caller last saw (read or wrote). Versions are content hashes, so a file
// touched without changing reads as fresh, and a caller's own writes keep
// it fresh — its line numbers too, unless the front cannot tell the caller
// how its change moved lines (see Changed). Callers are opaque IDs (an MCP
// session, a connector context);
// the empty ID is stateless and never recorded. Safe for concurrent use.
//
// Memory is bounded whatever callers do: at most maxTrackedFiles files
// per caller, maxCallers callers and maxTotalFiles files in all; past a
// bound, what was seen least recently is forgotten (the caller least
// recently active loses its oldest files first). Forgetting is always
// safe: a forgotten file needs a fresh read before line edits, never a
// silent pass. Callers come and go without saying so (a connector
// context, a session the hub never tells a host has ended), so the bounds
// are what keeps a long-running host from growing with every new ID.
type Tracker struct {
	mu      sync.Mutex
	states  map[string]*list.Element // by caller key → element of callers
	callers list.List                // of *seenFiles; front is the least recently active
	total   int                      // files remembered across callers
}

// maxTrackedFiles bounds the files remembered per caller; past it the file
// the caller saw least recently is forgotten (it then needs a fresh read
// for line edits, never a silent pass).
const maxTrackedFiles = 10_000

// maxCallers and maxTotalFiles bound the tracker as a whole (a few hundred
// bytes per file: tens of MB at most).
const (
	maxCallers    = 4096
	maxTotalFiles = 100_000
)

// maxCallerKey is the longest caller ID kept as it is; a longer one is
// remembered by its SHA-256, so an ID's length costs nothing.
const maxCallerKey = 128

// seenFiles is one caller's files, least recently seen first.
type seenFiles struct {
	caller string
	byKey  map[string]*list.Element // file key → element of order
	order  list.List                // of *seenFile; front is the oldest
}

type seenFile struct {
	key, version string
	// linesUnknown says the caller knows version's content but not its
	// line numbers: a change of its own moved lines without telling it
	// where (see Tracker.Changed). Only Saw clears it.
	linesUnknown bool
	// earlier holds the versions the caller saw before version, oldest
	// first, at most maxEarlier: an undo brings one of them back.
	earlier []string
}

// maxEarlier bounds the earlier versions remembered per file.
const maxEarlier = 8

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{states: map[string]*list.Element{}} }

// callerKey is how caller is remembered (see maxCallerKey).
func callerKey(caller string) string {
	if len(caller) <= maxCallerKey {
		return caller
	}
	sum := sha256.Sum256([]byte(caller))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Saw records that caller saw version of file key whole, line numbers
// included: it read it, or wrote all of it.
func (t *Tracker) Saw(caller, key, version string) {
	if caller == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sawLocked(caller, key, version).linesUnknown = false
}

// stateLocked returns caller's files, marking the caller active; with
// create it makes them, evicting the least recently active caller when
// there are maxCallers already.
func (t *Tracker) stateLocked(caller string, create bool) *seenFiles {
	ck := callerKey(caller)
	if el, ok := t.states[ck]; ok {
		t.callers.MoveToBack(el)
		return el.Value.(*seenFiles)
	}
	if !create {
		return nil
	}
	if len(t.states) >= maxCallers {
		t.dropLocked(t.callers.Front())
	}
	s := &seenFiles{caller: ck, byKey: map[string]*list.Element{}}
	t.states[ck] = t.callers.PushBack(s)
	return s
}

// dropLocked forgets the caller at el.
func (t *Tracker) dropLocked(el *list.Element) {
	s := t.callers.Remove(el).(*seenFiles)
	delete(t.states, s.caller)
	t.total -= len(s.byKey)
}

// sawLocked records version as the one caller saw of key (t.mu held) and
// returns its entry; whether the caller knows its line numbers is left as
// it was, for the caller to set.
func (t *Tracker) sawLocked(caller, key, version string) *seenFile {
	s := t.stateLocked(caller, true)
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
		return f
	}
	if len(s.byKey) >= maxTrackedFiles {
		t.forgetOldestLocked(s)
	}
	// Over the total, the least recently active callers lose their
	// oldest files. That is never s: s is the most recently active, and
	// one caller holds at most maxTrackedFiles < maxTotalFiles.
	for t.total >= maxTotalFiles {
		front := t.callers.Front()
		if f := front.Value.(*seenFiles); f.order.Len() > 0 {
			t.forgetOldestLocked(f)
			if f.order.Len() > 0 {
				continue
			}
		}
		t.dropLocked(front)
	}
	f := &seenFile{key: key, version: version}
	s.byKey[key] = s.order.PushBack(f)
	t.total++
	return f
}

// forgetOldestLocked forgets the file s saw least recently.
func (t *Tracker) forgetOldestLocked(s *seenFiles) {
	oldest := s.order.Front()
	delete(s.byKey, s.order.Remove(oldest).(*seenFile).key)
	t.total--
}

// Changed records caller's own change of key from version from to version
// to, one that did not show it the whole file (a replace, line edits, a
// patch). Only a caller that had seen from, and so knows the rest of the
// file, has now seen to: one whose view was stale stays stale (someone
// else's change may have moved its line numbers), and one that never read
// stays unread; unless knew says it proved otherwise that it knew from (a
// fresh read checked under the file's lock, an expected version, a file
// it created).
//
// linesMoved says the change moved lines and the caller was not told
// where (Agent Zero's text_editor answers only "patched successfully"):
// it then knows to's content, so nothing will say the file changed behind
// its back, but not to's line numbers, which SeenLines reports until a
// Saw. A change never makes line numbers known again: the caller knows
// them only as well as it knew from's.
func (t *Tracker) Changed(caller, key, from, to string, knew, linesMoved bool) {
	if caller == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); knew || f != nil && f.version == from {
		f := t.sawLocked(caller, key, to)
		f.linesUnknown = f.linesUnknown || linesMoved
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
// check and the update of Changed and Reverted happen under one lock, so
// a concurrent Saw is not overwritten.
func (t *Tracker) lookupLocked(caller, key string) *seenFile {
	if s := t.stateLocked(caller, false); s != nil {
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
	s := t.stateLocked(caller, false)
	if s == nil {
		return
	}
	if el, ok := s.byKey[key]; ok {
		s.order.Remove(el)
		delete(s.byKey, key)
		t.total--
	}
}

// Seen returns the version caller last saw of key.
func (t *Tracker) Seen(caller, key string) (string, bool) {
	version, _, ok := t.SeenLines(caller, key)
	return version, ok
}

// SeenLines is Seen, and says whether caller knows that version's line
// numbers (false after a change of its own moved lines unseen; see
// Changed), which line edits need.
func (t *Tracker) SeenLines(caller, key string) (version string, linesKnown, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); f != nil {
		return f.version, !f.linesUnknown, true
	}
	return "", false, false
}

// DropCaller forgets everything about caller (its session ended).
func (t *Tracker) DropCaller(caller string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.states[callerKey(caller)]; ok {
		t.dropLocked(el)
	}
}
