package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/procs"
)

// ownProcess is set by main: the commands run as the fsplane process
// itself, whose runtime they may tune. Tests run serve and connect inside
// the test binary, which must be neither replaced nor narrowed to one P,
// and leave it false.
var ownProcess bool

// reexec replaces this process with a new run of the same program and
// arguments under env, and returns only on failure (see execSelf; nil
// where a process cannot replace itself).
var reexec = execSelf

// latencyTuningFlag adds --latency-tuning to a server command (serve,
// connect).
func latencyTuningFlag(f *pflag.FlagSet, on *bool, what string) {
	f.BoolVar(on, "latency-tuning", true, "tune the Go scheduler for request latency: "+what+"; false keeps Go's defaults")
	bindEnv(f, "latency-tuning", "FSPLANE_LATENCY_TUNING")
}

// keepMonitorAwake starts the command again, in place (same process id,
// arguments and descriptors), with procs.MonitorSetting in GODEBUG, which
// the Go runtime reads only at start; it returns at once when GODEBUG
// sets schedtrace already (see procs.MonitorEnv), when off, or in tests.
// Call it once the command line has been checked, before any file is
// read. A failed restart is said on stderr and the command runs on
// without the tuning.
func keepMonitorAwake(ctx context.Context, on bool, stderr io.Writer) {
	// A stop asked for already (ctrl-c at once) is not lost in a restart.
	if !on || !ownProcess || reexec == nil || ctx.Err() != nil {
		return
	}
	env, changed := procs.MonitorEnv(os.Environ())
	if !changed {
		return
	}
	if err := reexec(env); err != nil {
		fmt.Fprintf(stderr, "fsplane: cannot restart with the latency tuning (%v); running without it (--latency-tuning=false skips it)\n", err)
	}
}

// governor returns the procs.Governor of serve or connect, or nil when
// off (or in tests, see ownProcess).
func governor(on bool) *procs.Governor {
	if !on || !ownProcess {
		return nil
	}
	return procs.New(os.Getenv)
}

// governed has gov told of o's tree walks and returns it as the load to
// tell of requests or operations: nil when gov is nil, so that the
// receiver sees no load at all rather than a nil *Governor inside the
// interface, which it would call on every request for nothing.
func governed(gov *procs.Governor, o *ops.Options) interface{ Request() func() } {
	if gov == nil {
		return nil
	}
	o.Parallel = gov.Parallel
	return gov
}
