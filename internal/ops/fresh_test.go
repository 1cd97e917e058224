package ops

import (
	"strconv"
	"testing"
)

// TestTrackerForgetsTheLeastRecentlySeen fills a caller's tracker past its
// bound: only the file seen longest ago may be forgotten, never one just
// read (a line edit on it would then fail must_read).
func TestTrackerForgetsTheLeastRecentlySeen(t *testing.T) {
	t.Parallel()
	key := func(i int) string { return "/f" + strconv.Itoa(i) }
	tests := []struct {
		name      string
		resee     bool // see f0 again just before the bound is passed
		forgotten string
	}{
		{name: "oldest goes first", forgotten: key(0)},
		{name: "a file seen again is no longer the oldest", resee: true, forgotten: key(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			for i := range maxTrackedFiles {
				tr.Saw("c", key(i), "v")
			}
			if tt.resee {
				tr.Saw("c", key(0), "v2")
			}
			tr.Saw("c", "/new", "v")
			if _, ok := tr.Seen("c", tt.forgotten); ok {
				t.Errorf("%s still remembered after the bound was passed", tt.forgotten)
			}
			kept := 0
			for i := range maxTrackedFiles {
				if _, ok := tr.Seen("c", key(i)); ok {
					kept++
				} else if key(i) != tt.forgotten {
					t.Fatalf("%s forgotten; want only %s forgotten", key(i), tt.forgotten)
				}
			}
			if kept != maxTrackedFiles-1 {
				t.Errorf("kept %d files, want %d", kept, maxTrackedFiles-1)
			}
			if v, ok := tr.Seen("c", "/new"); !ok || v != "v" {
				t.Errorf("Seen(/new) = %q, %v; want v, true", v, ok)
			}
			if tt.resee {
				if v, _ := tr.Seen("c", key(0)); v != "v2" {
					t.Errorf("Seen(%s) = %q, want v2", key(0), v)
				}
			}
		})
	}
}

func TestTrackerForgetAndDrop(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	tr.Saw("", "/a", "v") // stateless caller: never recorded
	if _, ok := tr.Seen("", "/a"); ok {
		t.Error("the empty caller was recorded")
	}
	tr.Saw("c", "/a", "v1")
	tr.Saw("c", "/b", "v1")
	tr.Forget("c", "/a")
	tr.Forget("other", "/a")
	if _, ok := tr.Seen("c", "/a"); ok {
		t.Error("/a remembered after Forget")
	}
	if v, ok := tr.Seen("c", "/b"); !ok || v != "v1" {
		t.Errorf("Seen(/b) = %q, %v; want v1, true", v, ok)
	}
	tr.DropCaller("c")
	if _, ok := tr.Seen("c", "/b"); ok {
		t.Error("/b remembered after DropCaller")
	}
}

// TestTrackerBoundsCallers: callers that come and go without saying so
// (a new connector context per call) cost a bounded amount: past
// maxCallers the least recently active caller is forgotten, past
// maxTotalFiles the least recently active callers lose their oldest
// files, and a caller ID's length costs nothing.
func TestTrackerBoundsCallers(t *testing.T) {
	t.Parallel()
	t.Run("callers", func(t *testing.T) {
		t.Parallel()
		tr := NewTracker()
		tr.Saw("first", "/a", "v")
		tr.Saw("busy", "/a", "v")
		for i := range maxCallers - 2 {
			tr.Saw("c"+strconv.Itoa(i), "/a", "v")
			tr.Seen("busy", "/a") // a caller that keeps reading stays
		}
		tr.Saw("one more", "/a", "v")
		if _, ok := tr.Seen("first", "/a"); ok {
			t.Error("the least recently active caller is still remembered past maxCallers")
		}
		for _, c := range []string{"busy", "one more", "c0"} {
			if _, ok := tr.Seen(c, "/a"); !ok {
				t.Errorf("caller %s forgotten", c)
			}
		}
		if n := len(tr.states); n != maxCallers {
			t.Errorf("%d callers remembered, want %d", n, maxCallers)
		}
	})
	t.Run("files across callers", func(t *testing.T) {
		t.Parallel()
		tr := NewTracker()
		per := maxTrackedFiles
		callers := maxTotalFiles / per
		for c := range callers {
			for i := range per {
				tr.Saw("c"+strconv.Itoa(c), "/f"+strconv.Itoa(i), "v")
			}
		}
		tr.Saw("late", "/x", "v")
		if tr.total != maxTotalFiles {
			t.Errorf("total %d, want %d", tr.total, maxTotalFiles)
		}
		if _, ok := tr.Seen("c0", "/f0"); ok {
			t.Error("the oldest file of the least recently active caller is still remembered")
		}
		if _, ok := tr.Seen("c0", "/f1"); !ok {
			t.Error("more than the oldest file was forgotten")
		}
		if _, ok := tr.Seen("late", "/x"); !ok {
			t.Error("the new file was not remembered")
		}
		count := 0
		for el := tr.callers.Front(); el != nil; el = el.Next() {
			count += el.Value.(*seenFiles).order.Len()
		}
		if count != tr.total {
			t.Errorf("files remembered %d, total says %d", count, tr.total)
		}
	})
	t.Run("long ids", func(t *testing.T) {
		t.Parallel()
		tr := NewTracker()
		long := string(make([]byte, 1<<20))
		tr.Saw(long, "/a", "v")
		if v, ok := tr.Seen(long, "/a"); !ok || v != "v" {
			t.Fatalf("Seen with a long caller = %q, %v", v, ok)
		}
		for k := range tr.states {
			if len(k) > maxCallerKey {
				t.Errorf("a caller key of %d bytes is kept", len(k))
			}
		}
		if _, ok := tr.Seen(long[:len(long)-1], "/a"); ok {
			t.Error("another long caller shares the first's files")
		}
		tr.DropCaller(long)
		if _, ok := tr.Seen(long, "/a"); ok || tr.total != 0 {
			t.Errorf("DropCaller of a long caller: still seen %v, total %d", ok, tr.total)
		}
	})
}

// TestTrackerChanged: a caller's own change that moved lines unseen keeps
// its version current (no "changed since you last read it") but its line
// numbers unknown, through later changes of its own, until it sees the
// file whole again; a view that was stale or unread stays so unless the
// caller proved it knew the version changed.
func TestTrackerChanged(t *testing.T) {
	t.Parallel()
	type change struct {
		from, to         string
		knew, linesMoved bool
	}
	tests := []struct {
		name       string
		seen       string // "" never read
		changes    []change
		sawAfter   string // a Saw of this version after the changes
		version    string // want; "" not tracked
		linesKnown bool
	}{
		{"in place", "v1", []change{{"v1", "v2", false, false}}, "", "v2", true},
		{"lines moved", "v1", []change{{"v1", "v2", false, true}}, "", "v2", false},
		{"lines moved, then in place", "v1", []change{{"v1", "v2", false, true}, {"v2", "v3", true, false}}, "", "v3", false},
		{"lines moved, then seen whole", "v1", []change{{"v1", "v2", false, true}}, "v2", "v2", true},
		{"a stale view stays stale", "v0", []change{{"v1", "v2", false, true}}, "", "v0", true},
		{"unread stays unread", "", []change{{"v1", "v2", false, false}}, "", "", false},
		{"knew records the version", "v0", []change{{"v1", "v2", true, true}}, "", "v2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			if tt.seen != "" {
				tr.Saw("c", "/f", tt.seen)
			}
			for _, c := range tt.changes {
				tr.Changed("c", "/f", c.from, c.to, c.knew, c.linesMoved)
				tr.Changed("", "/f", c.from, c.to, true, c.linesMoved) // stateless: never recorded
			}
			if tt.sawAfter != "" {
				tr.Saw("c", "/f", tt.sawAfter)
			}
			v, known, ok := tr.SeenLines("c", "/f")
			if v != tt.version || ok != (tt.version != "") || ok && known != tt.linesKnown {
				t.Errorf("SeenLines = %q, %v, %v; want %q, lines known %v", v, known, ok, tt.version, tt.linesKnown)
			}
			if _, ok := tr.Seen("", "/f"); ok {
				t.Error("the stateless caller was recorded")
			}
		})
	}
}

// TestTrackerGoneAndReturned: a deleted file's view is no view (a line
// edit of a file made again there needs a read), unless an undo brings
// back the very content it was of, line numbers known as well as before.
func TestTrackerGoneAndReturned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		then       func(tr *Tracker)
		want       string // the version seen; "" for none
		linesKnown bool
	}{
		{"gone", func(*Tracker) {}, "", false},
		{"the same content back", func(tr *Tracker) { tr.Returned("c", "/f", "v1") }, "v1", false},
		{"other content back", func(tr *Tracker) { tr.Returned("c", "/f", "v2") }, "", false},
		{"a new file read", func(tr *Tracker) { tr.Saw("c", "/f", "v1") }, "v1", true},
		{"a new file changed unseen", func(tr *Tracker) { tr.Changed("c", "/f", "v1", "v2", false, false) }, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			tr.Saw("c", "/f", "v1")
			tr.Changed("c", "/f", "v1", "v1b", false, true) // lines moved unseen
			tr.Changed("c", "/f", "v1b", "v1", false, true)
			tr.Gone("c", "/f")
			tt.then(tr)
			v, linesKnown, ok := tr.SeenLines("c", "/f")
			if v != tt.want || ok != (tt.want != "") || ok && linesKnown != tt.linesKnown {
				t.Errorf("SeenLines = %q, %v, %v; want %q, %v", v, linesKnown, ok, tt.want, tt.linesKnown)
			}
		})
	}
}
