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
	// made is the version the caller's own last change left, whether it
	// knew the rest of the file or not (see MayUndo); "" after an undo.
	made string
	// gone: the file was deleted or moved away (see Gone); the entry
	// counts as none, except to Returned, until it is seen again.
	gone bool
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
		if f.gone {
			// A new file at the path: nothing of the gone one's carries.
			*f = seenFile{key: key, version: version}
		}
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
// them only as well as it knew from's. Either way, the change is the
// caller's own to undo (see MayUndo).
func (t *Tracker) Changed(caller, key, from, to string, knew, linesMoved bool) {
	if caller == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.lookupLocked(caller, key)
	if knew || f != nil && f.version == from {
		f = t.sawLocked(caller, key, to)
		f.linesUnknown = f.linesUnknown || linesMoved
	}
	if f != nil {
		f.made = to
	}
}

// Made records that caller's own change left key at version without
// showing it the file, and without its view advancing (it did not know
// the content changed; see Changed): its view stays as it was, but the
// change is its own to undo (see MayUndo).
func (t *Tracker) Made(caller, key, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.lookupLocked(caller, key); f != nil {
		f.made = version
	}
}

// Reverted records that caller changed key from version from back to an
// earlier version to (an undo), without being shown it. Only a caller
// whose view was current (it had seen from) and that saw to before has
// now seen to; any other view stays as it was: stale, or unread.
func (t *Tracker) Reverted(caller, key, from, to string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.lookupLocked(caller, key)
	if f == nil {
		return
	}
	// The undo is no change of the caller's to undo in turn: the change
	// before it is someone's, which MayUndo holds to the caller's view.
	f.made = ""
	if f.version == from && slices.Contains(f.earlier, to) {
		t.sawLocked(caller, key, to)
	}
}

// MayUndo reports whether caller may undo the change that left key at
// version: undo reverts a file's newest change, whoever made it, so a
// caller that saw key in another version since its last read would
// revert a change it never saw, believing it undoes its own. It may when
// it saw version, or made it (its own change, on a view outdated or
// not), or knows nothing of key (it never read it; a stateless front):
// there is no view to hold it to.
func (t *Tracker) MayUndo(caller, key, version string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.lookupLocked(caller, key)
	return f == nil || f.version == version || f.made == version
}

// Moved records that caller moved key from to key to, whose version is
// then version (a rename, or a patch's "Move to" before its hunks: see
// Changed). A view of from at that version moves to to, line numbers
// known as well as they were; any other, and what caller saw of to
// before, is not carried: to is then unread. from is gone (see Gone).
func (t *Tracker) Moved(caller, from, to, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.lookupLocked(caller, from)
	t.goneLocked(caller, from)
	t.forgetLocked(caller, to)
	if old == nil || old.version != version {
		return
	}
	f := t.sawLocked(caller, to, version)
	f.linesUnknown, f.made = old.linesUnknown, version
}

// lookupLocked returns what caller saw of key, or nil (t.mu held); a
// gone file's entry counts as none. The
// check and the update of Changed and Reverted happen under one lock, so
// a concurrent Saw is not overwritten.
func (t *Tracker) lookupLocked(caller, key string) *seenFile {
	if f := t.entryLocked(caller, key); f != nil && !f.gone {
		return f
	}
	return nil
}

// entryLocked returns caller's entry of key, gone or not, or nil (t.mu
// held).
func (t *Tracker) entryLocked(caller, key string) *seenFile {
	if s := t.stateLocked(caller, false); s != nil {
		if el, ok := s.byKey[key]; ok {
			return el.Value.(*seenFile)
		}
	}
	return nil
}

// Gone records that the file at key was deleted (or moved away) by
// caller: it is no longer seen, as after Forget, but what caller saw of it
// is kept, so that an undo bringing that very content back brings the
// caller's view back with it (see Returned).
func (t *Tracker) Gone(caller, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.goneLocked(caller, key)
}

// goneLocked is Gone for a caller that holds t.mu.
func (t *Tracker) goneLocked(caller, key string) {
	if f := t.entryLocked(caller, key); f != nil {
		f.gone = true
	}
}

// Returned records that an undo re-created the file at key with version,
// which it had before it was deleted or moved away (see Gone). A caller
// whose view of it then was of version has that view again, line numbers
// known as well as they were. Any other view, and none, leaves the file
// unread.
func (t *Tracker) Returned(caller, key, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.entryLocked(caller, key); f != nil && f.gone && f.version == version {
		f.gone = false
	}
}

// Forget drops what caller saw of key (the file was deleted).
func (t *Tracker) Forget(caller, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgetLocked(caller, key)
}

// forgetLocked is Forget for a caller that holds t.mu.
func (t *Tracker) forgetLocked(caller, key string) {
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
