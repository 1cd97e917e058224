package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// forceWait is how long a command may take, after the second signal, to
// remove its temporary files before the process exits regardless.
const forceWait = 2 * time.Second

// stopSignals turns SIGINT and SIGTERM into the two stages of a stop:
// the first cancels ctx (servers stop accepting work and finish, within
// their grace period, what they were doing); the second closes forced
// (servers cut what is still running, remove their temporary files and
// return), and forceWait later the process exits whatever the command is
// doing.
//
// A stop that was asked for and completed is not a failure: the command
// returns nil and the exit status is 0. A forced stop exits with 128 plus
// the signal's number (130 for SIGINT, 143 for SIGTERM), as a process
// killed by the signal would, since work was cut short. So does a one-shot
// command (apply) that the first signal stopped before it did its work
// (see stopSignal).
type stopSignals struct {
	ctx    context.Context
	forced <-chan struct{}
	first  atomic.Int32 // the first signal's number, once received
	signal atomic.Int32 // the forcing signal's number, once forced
	stop   func()
}

func notifyStop() *stopSignals {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	forced := make(chan struct{})
	s := &stopSignals{forced: forced}
	s.ctx = context.WithValue(withForced(ctx, forced), firstKey{}, &s.first)
	done := make(chan struct{})
	s.stop = func() { signal.Stop(ch); close(done) }
	go func() {
		select {
		case sig := <-ch:
			// Stored before cancel, so whoever sees ctx done sees it.
			s.first.Store(int32(sig.(syscall.Signal)))
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			n := int32(sig.(syscall.Signal))
			s.signal.Store(n)
			close(forced)
			time.AfterFunc(forceWait, func() { os.Exit(128 + int(n)) })
		case <-done:
		}
	}()
	return s
}

// exitCode is the process's exit status once the command returned with
// status code.
func (s *stopSignals) exitCode(code int) int {
	s.stop()
	if n := s.signal.Load(); n != 0 {
		return 128 + int(n)
	}
	return code
}

type forcedKey struct{}

func withForced(ctx context.Context, forced <-chan struct{}) context.Context {
	return context.WithValue(ctx, forcedKey{}, forced)
}

// forcedStop returns a channel closed when the user forces the stop (a
// second SIGINT or SIGTERM); nil, which never fires, when ctx has none.
func forcedStop(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(forcedKey{}).(<-chan struct{})
	return ch
}

type firstKey struct{}

// stoppedError is err as a one-shot command's failure: exit 128 plus the
// signal's number when a signal stopped ctx, else 1.
func stoppedError(ctx context.Context, err error) *exitError {
	if sig := stopSignal(ctx); sig != 0 {
		return &exitError{code: 128 + int(sig), err: err}
	}
	return &exitError{code: 1, err: err}
}

// stopSignal returns the signal that stopped ctx (the first SIGINT or
// SIGTERM), or 0 when ctx has not been stopped by one: a command that a
// stop cut short before it did its work exits with 128 plus its number,
// as the shell expects of an interrupted command.
func stopSignal(ctx context.Context) syscall.Signal {
	if n, ok := ctx.Value(firstKey{}).(*atomic.Int32); ok && ctx.Err() != nil {
		return syscall.Signal(n.Load())
	}
	return 0
}
