package tui

import (
	"fmt"
	"io"
	"slices"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/fsplane/fsplane/internal/connector/host"
)

// Feed carries a host's events to the interface without making the host
// wait for the screen. The host calls OnEvent for every operation, in
// order, and waits for it to return: handing each event straight to
// tea.Program.Send made the operations wait until the program took it,
// and at a terminal that stopped reading (a stalled SSH connection, a
// console whose text is being selected) the program's writes blocked,
// then its loop, then every operation. A Feed queues the events instead,
// and Run sends them on, in order, from a goroutine of its own.
//
// The queue is bounded: past max messages the oldest log-only events
// (operations and notices) are dropped (Run may hold as many more, the
// batch it is sending). The model keeps only its last
// MaxLog lines, so with max at least MaxLog none it would show is lost.
// State and mode events, which set what the screen shows, and DoneMsg
// are kept.
type Feed struct {
	max  int
	wake chan struct{} // a message was queued

	mu      sync.Mutex
	msgs    []tea.Msg
	dropped int // log-only events dropped since Run last took the queue
}

// DroppedMsg stands where a Feed dropped N log-only events: the reader
// was not keeping up. The model ignores it (its log keeps only the newest
// lines anyway); PlainFeed says so in the text log.
type DroppedMsg struct{ N int }

// NewFeed returns a Feed queueing at most max log-only events; 0 means
// as many as the model's log keeps by default.
func NewFeed(max int) *Feed {
	if max <= 0 {
		max = defaultMaxLog
	}
	return &Feed{max: max, wake: make(chan struct{}, 1)}
}

// Event queues a host event (host.Options.OnEvent). It never blocks.
func (f *Feed) Event(ev host.Event) { f.push(EventMsg(ev)) }

// Done queues DoneMsg, after every event queued before it: the host's
// Failed event, worded for the screen, comes first.
func (f *Feed) Done(err error) { f.push(DoneMsg{Err: err}) }

func (f *Feed) push(msg tea.Msg) {
	f.mu.Lock()
	f.msgs = append(f.msgs, msg)
	if len(f.msgs) > f.max {
		if i := slices.IndexFunc(f.msgs, logOnly); i >= 0 {
			f.msgs = slices.Delete(f.msgs, i, i+1)
			f.dropped++
		}
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// logOnly tells the events that only add a log line.
func logOnly(msg tea.Msg) bool {
	ev, ok := msg.(EventMsg)
	return ok && (ev.Kind == host.EventOp || ev.Kind == host.EventNotice)
}

// Run sends the queued messages to send (tea.Program.Send), in order,
// until stop is closed.
func (f *Feed) Run(send func(tea.Msg), stop <-chan struct{}) {
	for {
		f.mu.Lock()
		msgs := f.msgs
		f.msgs = nil
		if f.dropped > 0 {
			// The oldest log lines went: say so where the log lines
			// left start.
			i := slices.IndexFunc(msgs, logOnly)
			if i < 0 {
				i = len(msgs)
			}
			msgs = slices.Insert(msgs, i, tea.Msg(DroppedMsg{N: f.dropped}))
			f.dropped = 0
		}
		f.mu.Unlock()
		for _, msg := range msgs {
			send(msg)
		}
		if len(msgs) > 0 {
			continue
		}
		select {
		case <-f.wake:
		case <-stop:
			return
		}
	}
}

// PlainFeed is Plain through a Feed: the host never waits for w (a pipe
// into a pager nobody scrolls, a stalled terminal), and w gets the lines
// in order, with a line saying how many were dropped where the queue
// overflowed. Done queues the last message; wait returns once every line
// queued before it was written.
func PlainFeed(w io.Writer, max int) (f *Feed, wait func()) {
	f = NewFeed(max)
	write := Plain(w)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		f.Run(func(msg tea.Msg) {
			switch m := msg.(type) {
			case EventMsg:
				write(host.Event(m))
			case DroppedMsg:
				_, _ = fmt.Fprintf(w, "(%d log lines dropped: the output was not being read)\n", m.N)
			case DoneMsg:
				close(stop)
			}
		}, stop)
	}()
	return f, func() { <-done }
}
