package connector

import (
	"testing"
	"time"
)

func TestAlarmsArmOnlyForEarlier(t *testing.T) {
	t.Parallel()
	var s Alarms
	nop := func() {}
	late := s.After(time.Hour, nop)
	armed := s.armed
	s.After(2*time.Hour, nop)
	if s.armed != armed {
		t.Fatalf("a later alarm re-armed the timer: %v, was %v", s.armed, armed)
	}
	early := s.After(time.Minute, nop)
	if s.armed != early.at {
		t.Fatalf("an earlier alarm left the timer at %v, want %v", s.armed, early.at)
	}
	if !early.Stop() || early.Stop() {
		t.Fatal("Stop of a pending alarm must report true once, then false")
	}
	// Stopping leaves the timer alone; when it fires, it finds nothing
	// due and re-arms for the earliest alarm left.
	if s.armed != early.at {
		t.Fatalf("Stop moved the timer to %v", s.armed)
	}
	if due := s.take(early.at); len(due) != 0 {
		t.Fatalf("take at the stopped alarm's time returned %d alarms", len(due))
	}
	if s.armed != late.at {
		t.Fatalf("after firing early the timer is at %v, want the next alarm %v", s.armed, late.at)
	}
	if due := s.take(late.at.Add(3 * time.Hour)); len(due) != 2 {
		t.Fatalf("take after both deadlines returned %d alarms, want 2", len(due))
	}
	if !s.armed.IsZero() || len(s.set) != 0 {
		t.Fatalf("with nothing left the timer is still armed at %v (%d alarms)", s.armed, len(s.set))
	}
	if late.Stop() {
		t.Fatal("Stop of a fired alarm reported true")
	}
}

func TestAlarmsFire(t *testing.T) {
	t.Parallel()
	var s Alarms
	fired := make(chan int, 3)
	s.After(20*time.Millisecond, func() { fired <- 2 })
	stopped := s.After(time.Millisecond, func() { fired <- 0 })
	s.After(time.Millisecond, func() { fired <- 1 })
	if !stopped.Stop() {
		t.Fatal("Stop before the deadline reported false")
	}
	for want := 1; want <= 2; want++ {
		select {
		case got := <-fired:
			if got != want {
				t.Fatalf("alarm %d fired, want %d (0 was stopped)", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("alarm %d did not fire", want)
		}
	}
}
