//go:build !unix

package main

// execSelf is nil where a process cannot replace itself: the runtime's
// defaults stay (see keepMonitorAwake).
var execSelf func(env []string) error
