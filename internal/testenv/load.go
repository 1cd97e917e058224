package testenv

import "sync"

// Load is a load receiver (httpapi.Options.Load, host.Options.Load) that
// counts what is in flight; its zero value is ready, and it is safe for
// concurrent use.
type Load struct {
	mu               sync.Mutex
	now, most, calls int
}

// Request counts one more in flight until the returned function is called.
func (l *Load) Request() func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now++
	l.calls++
	l.most = max(l.most, l.now)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.now--
	}
}

// Counts returns how many are in flight now, the most there were at once,
// and how many Request calls there were.
func (l *Load) Counts() (now, most, calls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now, l.most, l.calls
}
