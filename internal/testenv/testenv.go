// Package testenv holds what several packages' tests need from the
// machine they run on, and helpers they share.
package testenv

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// GOROOT is the Go toolchain's GOROOT, from `go env GOROOT` (tests search
// its source tree as a large real corpus); "" when the go command is
// missing, and the caller should skip.
var GOROOT = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// WaitFor polls cond until it holds, failing t (named by what) when it
// does not within the given time.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers: a
// server's log, written by its goroutines and read by the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WithoutForks runs f while no goroutine of this process can start a
// child process (os/exec, syscall.ForkExec). A child gets a copy of every
// descriptor open in its parent when it is forked, close-on-exec ones
// included, and keeps it until it execs, which on a loaded machine may be
// long after: a file f opens and closes would then stay alive in the
// child, its blocks in use and its locks held, after f returns. A test
// that checks what f released, in a package whose parallel tests start
// processes, runs f here. A fork copies the descriptors while it holds
// syscall.ForkLock for writing; f runs holding it for reading, so no
// child is forked while f runs, and a child forked before has none of
// f's files. f must not start a process itself, nor take
// syscall.ForkLock's read side again: either can deadlock.
func WithoutForks(f func()) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	f()
}
