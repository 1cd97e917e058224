package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fsplane/fsplane/internal/connector/host"
)

// TestFeedNeverMakesTheHostWait: while the program takes nothing (its
// terminal stopped reading), the host's events are queued at once, the
// oldest operations dropped past the bound; once it takes them again it
// gets, in order, every state event, the newest operations and DoneMsg
// last.
func TestFeedNeverMakesTheHostWait(t *testing.T) {
	t.Parallel()
	const bound, ops = 10, 1000
	f := NewFeed(bound)
	stalled := make(chan struct{})
	got := make(chan tea.Msg, 2*ops)
	send := func(msg tea.Msg) {
		<-stalled
		got <- msg
	}
	stop := make(chan struct{})
	ran := make(chan struct{})
	go func() {
		f.Run(send, stop)
		close(ran)
	}()
	queued := make(chan struct{})
	go func() {
		f.Event(host.Event(state(0, host.Connected, "h-1", 0, "")))
		for i := range ops {
			f.Event(host.Event(op(time.Duration(i)*time.Millisecond, "stat", "a", "ok", 0)))
			if i == ops/2 {
				f.Event(host.Event(reconnecting(time.Duration(i)*time.Millisecond, time.Second)))
			}
		}
		f.Done(nil)
		close(queued)
	}()
	select {
	case <-queued:
	case <-time.After(10 * time.Second):
		t.Fatal("the host waited for a program that takes nothing")
	}
	close(stalled)
	var msgs []tea.Msg
	for len(msgs) == 0 || !isDone(msgs[len(msgs)-1]) {
		select {
		case m := <-got:
			msgs = append(msgs, m)
		case <-time.After(10 * time.Second):
			t.Fatalf("DoneMsg never came; got %d messages", len(msgs))
		}
	}
	close(stop)
	<-ran
	// Run may have taken a batch before the stall, of at most bound
	// operations; at most bound more are kept behind it, besides the
	// state events and DoneMsg.
	if len(msgs) > 2*bound+3 {
		t.Errorf("%d messages delivered, want at most %d", len(msgs), 2*bound+3)
	}
	var states, opsSeen, dropped int
	last := time.Time{}
	for _, m := range msgs[:len(msgs)-1] {
		if d, ok := m.(DroppedMsg); ok {
			dropped += d.N
			continue
		}
		ev, ok := m.(EventMsg)
		if !ok {
			t.Fatalf("message %T before DoneMsg", m)
		}
		if ev.Kind == host.EventOp {
			opsSeen++
		}
		if ev.Time.Before(last) {
			t.Errorf("event of %v after one of %v: out of order", ev.Time, last)
		}
		last = ev.Time
		if ev.Kind == host.EventState {
			states++
		}
	}
	if states != 2 {
		t.Errorf("%d state events delivered, want both", states)
	}
	if opsSeen+dropped != ops {
		t.Errorf("%d operations delivered and %d said dropped, want %d in all", opsSeen, dropped, ops)
	}
	if ev := msgs[len(msgs)-2].(EventMsg); ev.Kind != host.EventOp || ev.Time != t0.Add((ops-1)*time.Millisecond) {
		t.Errorf("the last event is %+v, want the newest operation", ev)
	}
}

func isDone(m tea.Msg) bool {
	_, ok := m.(DoneMsg)
	return ok
}

// blockingWriter blocks every Write until released, as a terminal or a
// pipe nobody reads does.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     strings.Builder
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestPlainFeedNeverMakesTheHostWait: the text log of --no-tui queues the
// host's lines while its output is not read, and once read writes them
// in order, a line saying how many were dropped, and every state line.
func TestPlainFeedNeverMakesTheHostWait(t *testing.T) {
	t.Parallel()
	const bound, ops = 10, 500
	w := &blockingWriter{release: make(chan struct{})}
	f, wait := PlainFeed(w, bound)
	queued := make(chan struct{})
	go func() {
		f.Event(host.Event(state(0, host.Connected, "h-1", 0, "")))
		for i := range ops {
			f.Event(host.Event(op(time.Duration(i)*time.Millisecond, "stat", fmt.Sprint(i), "ok", 0)))
		}
		f.Event(host.Event(state(time.Second, host.Stopped, "", 0, "")))
		f.Done(nil)
		close(queued)
	}()
	select {
	case <-queued:
	case <-time.After(10 * time.Second):
		t.Fatal("the host waited for output nobody reads")
	}
	close(w.release)
	wait()
	out := w.buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.Contains(lines[0], "connected as h-1") || !strings.Contains(lines[len(lines)-1], "stopped") {
		t.Errorf("first and last lines %q, %q: want the connection and the stop", lines[0], lines[len(lines)-1])
	}
	dropped, shown := 0, 0
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "(%d log lines dropped", &n); err == nil {
			dropped += n
		} else if strings.Contains(l, "stat") {
			shown++
		}
	}
	if dropped == 0 || shown+dropped != ops {
		t.Errorf("%d operation lines written and %d said dropped, want some dropped and %d in all:\n%s", shown, dropped, ops, out)
	}
}
