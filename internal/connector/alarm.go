package connector

import (
	"sync"
	"time"
)

// Alarms runs functions at deadlines, on one runtime timer armed at the
// earliest deadline it knows of. Adding a later alarm, or stopping one,
// leaves that timer alone.
//
// Why not time.AfterFunc or context.WithTimeout per message: arming a
// runtime timer that is due before every other timer of its P wakes a
// thread to watch it (runtime.wakeNetPoller: a futex wake and a context
// switch). The host's 1 ms handoff budget is such a timer on nearly every
// message, so each operation paid a thread wake-up for a timer that almost
// never fires. With Alarms a stream of short operations costs one timer
// event per budget period instead of one or more per operation.
//
// Alarms are for deadlines that are rarely reached; a fired alarm's
// function runs on the timer's goroutine, after the others due at the same
// moment, so it must return promptly (start a goroutine for real work).
// An Alarms is safe for concurrent use; its zero value is ready.
type Alarms struct {
	mu    sync.Mutex
	timer *time.Timer
	armed time.Time // when timer fires; zero when it is not armed
	set   map[*Alarm]struct{}
}

// Alarm is one pending deadline of an Alarms.
type Alarm struct {
	s  *Alarms
	at time.Time
	f  func()
}

// After runs f once d has passed, unless the returned alarm is stopped
// first.
func (s *Alarms) After(d time.Duration, f func()) *Alarm {
	a := &Alarm{s: s, at: time.Now().Add(d), f: f}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[*Alarm]struct{}{}
	}
	s.set[a] = struct{}{}
	if s.armed.IsZero() || a.at.Before(s.armed) {
		s.armed = a.at
		if s.timer == nil {
			s.timer = time.AfterFunc(d, s.fire)
		} else {
			s.timer.Reset(d)
		}
	}
	return a
}

// Stop cancels the alarm. It reports whether it did: false when the
// function has run or is about to (or the alarm was stopped already).
func (a *Alarm) Stop() bool {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pending := s.set[a]
	delete(s.set, a)
	return pending
}

// fire runs the alarms that are due.
func (s *Alarms) fire() {
	for _, a := range s.take(time.Now()) {
		a.f()
	}
}

// take removes the alarms due at now and re-arms the timer for the
// earliest one left.
func (s *Alarms) take(now time.Time) (due []*Alarm) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for a := range s.set {
		switch {
		case !a.at.After(now):
			due = append(due, a)
			delete(s.set, a)
		case next.IsZero() || a.at.Before(next):
			next = a.at
		}
	}
	s.armed = next
	if !next.IsZero() {
		s.timer.Reset(next.Sub(now))
	}
	return due
}
