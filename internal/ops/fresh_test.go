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
