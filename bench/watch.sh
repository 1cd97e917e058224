#!/usr/bin/env bash
# File watch latency and burst behaviour of fsplane serve on loopback.
#
# Latency: a client long-polls GET /v2/watch/{id}/poll; the benchmark
# writes a file and measures until the poll answers (write → event
# available to a long-poller). Reported as p50/p99 and each minus the
# debounce (target p50 <= debounce + 2 ms), for debounce 300 (AIO's
# default) and 50 ms (the minimum).
#
# Burst: 10,000 file creations in a watched directory while a client
# polls: every creation delivered, or overflow set, never a silent loss.
#
#   bench/watch.sh                 # 100 latency samples per debounce
#   SAMPLES=30 bench/watch.sh
# The measurements are Go benchmarks (internal/httpapi/watch_bench_test.go)
# run against the real binary.
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES="${SAMPLES:-100}"
PORT="${PORT:-18196}"

work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/fsplane" ./cmd/fsplane
go test -c -o "$work/httpapi.test" ./internal/httpapi
mkdir -p "$work/root"
"$work/fsplane" serve --listen "127.0.0.1:$PORT" --root "$work/root" --state-dir "$work/state" 2>"$work/server.log" &
pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
export FSPLANE_BENCH_URL="http://127.0.0.1:$PORT" FSPLANE_BENCH_ROOT="$work/root"

for d in 300 50; do
  echo "== latency, debounce $d ms, $SAMPLES samples ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
  FSPLANE_BENCH_DEBOUNCE=$d "$work/httpapi.test" -test.run '^$' -test.bench '^BenchmarkWatchLatency$' -test.benchtime "${SAMPLES}x" |
    grep -o '[0-9.]* p[0-9]*-[a-z-]*ms' | awk '{ printf "  %-22s %8.2f ms\n", $2, $1 }'
done
echo "== burst of 10,000 file creations"
"$work/httpapi.test" -test.run '^$' -test.bench '^BenchmarkWatchBurst$' -test.benchtime 1x |
  grep -o '[0-9.]* [a-z/]*' | grep -E 'delivered|overflow|creations' | awk '{ printf "  %-12s %s\n", $2, $1 }'
echo "server RSS after: $(awk '/VmRSS/ {print $2" kB"}' "/proc/$pid/status")"
