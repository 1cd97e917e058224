package watch

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ringModel is what a ring promises, written without a ring: every
// entry ever appended, of which the last size are kept.
type ringModel struct {
	size int
	all  []Event // seq i+1 at index i
}

func (m *ringModel) add(ev Event) {
	ev.Seq = int64(len(m.all) + 1)
	m.all = append(m.all, ev)
}

// poll is Watcher.collectLocked's contract.
func (m *ringModel) poll(cursor int64, limit int) PollResult {
	latest := int64(len(m.all))
	res := PollResult{Cursor: cursor, Events: []Event{}}
	if cursor > latest {
		return PollResult{Cursor: latest, Overflow: true, Events: []Event{}}
	}
	kept := m.all[max(0, len(m.all)-m.size):]
	if len(kept) > 0 && cursor < kept[0].Seq-1 {
		res.Overflow = true // entries after the cursor were overwritten
	}
	for _, ev := range kept {
		if ev.Seq <= cursor {
			continue
		}
		if len(res.Events) == limit {
			break
		}
		if ev.Type == overflow {
			if len(res.Events) > 0 {
				break // a page holds events from one side of a marker
			}
			res.Cursor, res.Overflow = ev.Seq, true
			continue
		}
		res.Cursor = ev.Seq
		res.Events = append(res.Events, ev)
	}
	return res
}

// ringWatcher is a watcher with no inotify behind it, for its ring alone.
func ringWatcher(size int) *Watcher {
	r := NewRegistry(Options{RingSize: size})
	return newWatcher(r, "ring", Config{Path: "/w", Debounce: MinDebounce}, false, false, "/w")
}

func appendEvent(w *Watcher, ev Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appendLocked(ev)
}

// entry i of a test: an overflow marker every markEvery entries (never
// when markEvery is 0), else a create.
func entry(i, markEvery int) Event {
	if markEvery > 0 && i%markEvery == markEvery-1 {
		return Event{Type: overflow}
	}
	return Event{Type: Create, Path: fmt.Sprintf("/w/f%d", i), RelativePath: fmt.Sprintf("f%d", i)}
}

// TestRingGrowthKeepsSemantics: a ring that grows as entries arrive
// numbers, keeps, wraps and reports overflow exactly as one allocated
// whole (the model), below its cap, at it and past it, including for
// reads made while it grows.
func TestRingGrowthKeepsSemantics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		size      int
		batches   []int // entries appended between two reads
		markEvery int
	}{
		{name: "empty", size: 100, batches: []int{0}},
		{name: "within the first allocation", size: 100, batches: []int{10}},
		{name: "below the cap, grown twice", size: 100, batches: []int{40}},
		{name: "exactly at the cap", size: 100, batches: []int{100}},
		{name: "one past the cap", size: 100, batches: []int{101}},
		{name: "far past the cap", size: 100, batches: []int{1000}},
		{name: "reads across each growth", size: 100, batches: []int{1, 15, 1, 16, 31, 1, 30, 5, 1, 50}},
		{name: "overflow markers across growth", size: 100, batches: []int{20, 20, 70, 3}, markEvery: 7},
		{name: "cap smaller than the first allocation", size: 5, batches: []int{3, 2, 1, 9}},
		{name: "AIO's 10,000 exactly", size: DefaultRingSize, batches: []int{DefaultRingSize}},
		{name: "AIO's 10,000 plus one", size: DefaultRingSize, batches: []int{4000, 5000, 1001}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := ringWatcher(tc.size)
			m := &ringModel{size: tc.size}
			var cursor int64 // a client reading after every batch
			n := 0
			for _, b := range tc.batches {
				for range b {
					ev := entry(n, tc.markEvery)
					appendEvent(w, ev)
					m.add(ev)
					n++
				}
				if len(w.ring) > tc.size {
					t.Fatalf("after %d entries the ring holds %d slots, over its cap %d", n, len(w.ring), tc.size)
				}
				check := func(cursor int64, limit int) PollResult {
					t.Helper()
					got := w.Poll(context.Background(), cursor, limit, 0)
					want := m.poll(cursor, limit)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("after %d entries, poll(cursor %d, limit %d) (-want +got):\n%s", n, cursor, limit, diff)
					}
					return got
				}
				latest := int64(n)
				for _, c := range []int64{0, 1, latest / 2, latest - int64(tc.size), latest - int64(tc.size) + 1, latest - 1, latest, latest + 3} {
					for _, limit := range []int{1, 7, 1000} {
						if c >= 0 {
							check(c, limit)
						}
					}
				}
				for {
					res := check(cursor, max(7, tc.size/50))
					cursor = res.Cursor
					if len(res.Events) == 0 && !res.Overflow {
						break
					}
				}
			}
			if want := min(n, tc.size); w.count != want {
				t.Errorf("%d entries kept, want %d", w.count, want)
			}
		})
	}
}

// TestIdleRingHoldsNothing: a watcher allocates its ring as events come,
// not the whole RingSize (10,000 events, about 1.1 MB) at creation.
func TestIdleRingHoldsNothing(t *testing.T) {
	t.Parallel()
	w := ringWatcher(DefaultRingSize)
	if c := cap(w.ring); c != 0 {
		t.Fatalf("a new watcher's ring has room for %d events, want 0", c)
	}
	appendEvent(w, entry(0, 0))
	if c := cap(w.ring); c != ringMin {
		t.Fatalf("after one event the ring has room for %d, want %d", c, ringMin)
	}
	for range 100 {
		appendEvent(w, entry(1, 0))
	}
	if c := cap(w.ring); c != 128 {
		t.Fatalf("after 101 events the ring has room for %d, want 128 (doubling)", c)
	}
}
