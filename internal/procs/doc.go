// Package procs tunes the Go scheduler for fsplane's servers, whose work
// usually comes as one small request at a time (an agent reads a file,
// then edits it) and whose latency is then mostly the scheduler's and the
// kernel's, not fsplane's code: profiled, a small read through the hub
// spends most of its time in thread wake-ups and the context switches
// they cost, 5–20 µs each on a small virtual machine.
//
// Two mechanisms. Measured with bench/connector.sh's processes on a 2-vCPU
// VM, all sharing the CPUs (hub, host, load generator), interleaved runs:
// the 4 KiB read through the hub at 141–238 µs p50 with both against
// 342–457 µs without, the local read at 80–100 against 126–204 µs; either
// alone left it at 223–357 µs:
//   - MonitorEnv keeps the runtime's monitor thread on a steady tick
//     instead of waking it at every request (see MonitorSetting);
//   - Governor runs the process on one P while at most one request is in
//     flight, and on all of them otherwise (see Governor).
package procs
