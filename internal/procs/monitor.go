package procs

import (
	"slices"
	"strings"
)

// MonitorSetting is the GODEBUG setting that keeps the Go runtime's
// monitor thread (sysmon) out of its deep sleep. The runtime skips that
// sleep whenever scheduler tracing is on; at the largest period the
// runtime accepts (2³¹−1 ms, 24.8 days) the trace itself is a line on
// standard error once per period (and once at start on a machine up for
// longer than that).
//
// Why: by default, sysmon deep-sleeps whenever every P is idle, and the
// first system call after that wakes it and restarts its polling at 20 µs
// (nanosleep, then a check), for at least 1 ms. A server that answers one
// request at a time is idle between requests, so every request pays a
// futex wake on its path and then the monitor's wake-ups: on a 2-vCPU
// virtual machine, each is a context switch on a CPU the request needs.
// This setting alone took a 4 KiB read through the hub from 342–457 to
// 262–357 µs p50; with the Governor besides, to 141–238 µs (interleaved
// runs, every process sharing the CPUs). Kept out of deep sleep, the
// monitor settles at its slowest tick, 10 ms, and stays there: 100
// wake-ups a second while the process idles, a few microseconds each.
const MonitorSetting = "schedtrace=2147483647"

// MonitorEnv returns environ with MonitorSetting added to GODEBUG, and
// whether it changed anything. It changes nothing when GODEBUG already sets
// schedtrace, to any value: that is the user's choice, or the setting is
// in place already (the process was started with it). Other GODEBUG
// settings are kept.
//
// The runtime reads GODEBUG's schedtrace only at start, so the caller
// starts the program again with the returned environment (see
// syscall.Exec).
func MonitorEnv(environ []string) ([]string, bool) {
	// The first GODEBUG is the one the runtime reads.
	i := slices.IndexFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") })
	if i < 0 {
		return append(slices.Clip(environ), "GODEBUG="+MonitorSetting), true
	}
	v := strings.TrimPrefix(environ[i], "GODEBUG=")
	for f := range strings.SplitSeq(v, ",") {
		if strings.HasPrefix(f, "schedtrace=") {
			return environ, false
		}
	}
	if v != "" {
		v += ","
	}
	out := slices.Clone(environ)
	out[i] = "GODEBUG=" + v + MonitorSetting
	return out, true
}
