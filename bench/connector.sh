#!/usr/bin/env bash
# Connector benchmark: a 4 KiB read through the hub vs the same read on the
# local route (p50 latency, one connection, wrk; with the CPU time the
# hub and host processes spent per request), and a 100 MiB download
# through the hub (curl, MB/s, median of 7). Then the floor of any relay
# on this machine (bench/relayfloor: an HTTP handler that does nothing vs
# one that first round-trips 200 bytes over a WebSocket to another
# process, and one whose round trip brings 4 KiB back, as a relayed 4 KiB
# read must), to read the hub's ratio against.
#
# It measures in two CPU layouts, each with its own hub, host and floor:
#   split   the hub (and the floor's server) on CPU 1; wrk, curl and the
#           host (the floor's echo) on CPU 0. The host does not take the
#           hub's CPU, as when it runs on a person's own computer, which
#           is where `fsplane connect` runs; the local route still has a
#           CPU per process (wrk, hub). Go sizes GOMAXPROCS by the
#           affinity mask: both fsplane processes run with 1. The 4 KiB
#           target (hub p50 <= 2x local) is read in this layout.
#   shared  nothing pinned: wrk, hub and host share every CPU, as when the
#           host runs on the hub's own machine. On 2 CPUs, three busy
#           processes compete, and even the relay floor is near or past
#           2x there.
#
# Latencies are measured in alternation: ROUNDS rounds, each a DURATION-long
# wrk run of every route in turn (local, hub; no-op, relayed, relayed
# 4 KiB), and each route's p50 is the median of its rounds' p50s. This
# machine's speed drifts by 1.5x within minutes; measured one after the
# other, the local and the hub route could each catch a different speed.
# The ratio printed is the median of the rounds' ratios.
#
#   bench/connector.sh                  # both layouts, 5 rounds of 2 s per route
#   ROUNDS=9 DURATION=3s bench/connector.sh
#   LAYOUTS=split bench/connector.sh    # one layout (split needs 2 CPUs)
#   CPUS=0 LAYOUTS=shared bench/connector.sh  # every process on CPU 0
#   SPIN_WAIT=0 bench/connector.sh      # the hub without its spin wait
#   TUNING=false bench/connector.sh     # fsplane and the floor on Go's scheduler defaults
# Needs wrk, curl and taskset.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-2s}"
ROUNDS="${ROUNDS:-5}"
PORT="${PORT:-18194}"
SPIN_WAIT="${SPIN_WAIT:-}"
TOKEN=bench-token
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
if [ -z "${LAYOUTS:-}" ]; then
  LAYOUTS=shared
  [ "$(nproc)" -ge 2 ] && LAYOUTS="split shared"
fi

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/fsplane" ./cmd/fsplane
go build -o "$work/relayfloor" ./bench/relayfloor
mkdir -p "$work/hubroot" "$work/hostroot"
# 3072 random bytes are 4096 base64 characters; with -w 64 the line breaks
# come on top, and the first 4096 bytes are kept. (Piping base64 into
# head -c could kill base64 with SIGPIPE, which pipefail and set -e turned
# into a silent exit.)
head -c 3072 /dev/urandom | base64 -w 64 > "$work/b64"
head -c 4096 "$work/b64" > "$work/hubroot/small.txt"
cp "$work/hubroot/small.txt" "$work/hostroot/small.txt"
head -c $((100 << 20)) /dev/urandom > "$work/hostroot/big.bin"

p50() { # wrk's 50% latency in microseconds
  "${pin[@]}" wrk -t1 -c1 -d"$DURATION" --latency "$1" >"$work/wrk.out" 2>&1 || true
  if ! grep -q '^ *50%' "$work/wrk.out" || grep -q 'Non-2xx\|Socket errors' "$work/wrk.out"; then
    echo "wrk on $1 failed:" >&2; cat "$work/wrk.out" >&2; return 1
  fi
  awk '/^ +50%/ {v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+/,"",v);
    if (u=="ms") v*=1000; else if (u=="s") v*=1000000; print v}
    /requests in/ {print $1 > "'"$work"'/count"}' "$work/wrk.out"
}
# fail WHAT LOG: a process did not come up; say so with its log.
fail() { echo "$1; its log:" >&2; cat "$2" >&2; exit 1; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; } # user+system CPU, 1/100 s
# alternate "PIDS" URL...: ROUNDS rounds of a wrk run of each URL in turn.
# URL i's p50s go to $work/p50.i, one per round; its requests add up in
# $work/req.i, and the CPU ticks each of PIDS spent during its runs in
# $work/cpu.i.PID.
alternate() {
  local procs=($1) i p r t
  shift
  local urls=("$@")
  for i in "${!urls[@]}"; do
    : >"$work/p50.$i"; echo 0 >"$work/req.$i"
    for p in "${procs[@]}"; do echo 0 >"$work/cpu.$i.$p"; done
  done
  for r in $(seq "$ROUNDS"); do
    for i in "${!urls[@]}"; do
      t=()
      for p in "${procs[@]}"; do t+=($(ticks "$p")); done
      p50 "${urls[$i]}" >>"$work/p50.$i" || exit 1
      echo $(($(cat "$work/req.$i") + $(cat "$work/count"))) >"$work/req.$i"
      local k=0
      for p in "${procs[@]}"; do
        echo $(($(cat "$work/cpu.$i.$p") + $(ticks "$p") - ${t[$k]})) >"$work/cpu.$i.$p"
        k=$((k + 1))
      done
    done
  done
}
median() { sort -n "$1" | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
# cpu_per_req I PID: CPU µs PID spent per request of URL i's runs.
cpu_per_req() { awk -v t="$(cat "$work/cpu.$1.$2")" -v n="$(cat "$work/req.$1")" 'BEGIN {printf "%.0f", t*10000/n}'; }
# ratios I J: the median and range of the rounds' ratios of URL j's p50 to URL i's.
ratios() {
  paste "$work/p50.$1" "$work/p50.$2" | awk '{print $2/$1}' >"$work/ratios"
  printf '%s %s %s' "$(median "$work/ratios")" "$(sort -n "$work/ratios" | head -n1)" "$(sort -n "$work/ratios" | tail -n1)"
}
stop() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

# measure LAYOUT PORT: one layout's figures, printed.
measure() {
  local layout=$1 port=$2
  pin=() hubpin=() hostpin=()
  case $layout in
  split)
    [ "$(nproc)" -ge 2 ] || { echo "the split layout needs two CPUs"; return 1; }
    pin=(taskset -c 0) hubpin=(taskset -c 1) hostpin=(taskset -c 0) ;;
  shared)
    [ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS") hubpin=(taskset -c "$CPUS") hostpin=(taskset -c "$CPUS") ;;
  *) echo "unknown layout $layout: use split or shared"; return 1 ;;
  esac
  local hubflags=()
  [ -n "$SPIN_WAIT" ] && hubflags=(--spin-wait "$SPIN_WAIT")
  [ -n "${TUNING:-}" ] && hubflags+=(--latency-tuning="$TUNING")
  "${hubpin[@]}" "$work/fsplane" serve --listen "127.0.0.1:$port" --root "$work/hubroot" --state-dir "$work/s1-$layout" \
    --connector-token "$TOKEN" "${hubflags[@]}" 2>"$work/hub-$layout.log" &
  local hub_pid=$!
  pids+=($hub_pid)
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/health" >/dev/null || fail "the hub did not start on port $port" "$work/hub-$layout.log"
  FSPLANE_CONNECTOR_TOKEN=$TOKEN "${hostpin[@]}" "$work/fsplane" connect "http://127.0.0.1:$port" --name bench --root "$work/hostroot" \
    --no-tui --state-dir "$work/s2-$layout" ${TUNING:+--latency-tuning="$TUNING"} >"$work/host-$layout.log" 2>&1 &
  local host_pid=$!
  pids+=($host_pid)
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/v2/hosts" | grep -q '"bench"' && break; sleep 0.1; done
  curl -s "http://127.0.0.1:$port/v2/hosts" | grep -q '"bench"' || fail "the host did not connect" "$work/host-$layout.log"

  alternate "$hub_pid $host_pid" "http://127.0.0.1:$port/v2/fs/read?path=small.txt" "http://127.0.0.1:$port/v2/hosts/bench/fs/read?path=small.txt"
  local local_us local_cpu hub_us hub_cpu host_cpu ratio
  local_us=$(median "$work/p50.0"); hub_us=$(median "$work/p50.1")
  local_cpu=$(cpu_per_req 0 $hub_pid); hub_cpu=$(cpu_per_req 1 $hub_pid); host_cpu=$(cpu_per_req 1 $host_pid)
  ratio=$(ratios 0 1)
  local speeds=() dl
  for _ in 1 2 3 4 5 6 7; do
    speeds+=($("${pin[@]}" curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$port/v2/hosts/bench/fs/download?path=big.bin"))
  done
  dl=$(printf '%s\n' "${speeds[@]}" | sort -n | sed -n 4p)
  stop $hub_pid $host_pid

  local floor_addr="127.0.0.1:$((port + 1))" fs fe noop_us relay_us relay4k_us
  # The floor runs with fsplane's scheduler tuning (see internal/procs):
  # the monitor's GODEBUG setting on both sides, and one P for the
  # server, as the governor gives fsplane serve with one request in
  # flight. SPIN_WAIT does not apply to it (it never spins).
  local tuned=(env GODEBUG=schedtrace=2147483647) tunedserve=(env GODEBUG=schedtrace=2147483647 GOMAXPROCS=1)
  if [ "${TUNING:-true}" = false ]; then tuned=() tunedserve=(); fi
  "${hubpin[@]}" "${tunedserve[@]}" "$work/relayfloor" serve "$floor_addr" &
  fs=$!
  pids+=($fs)
  for _ in $(seq 50); do curl -s -o /dev/null "http://$floor_addr/local" && break; sleep 0.1; done
  "${hostpin[@]}" "${tuned[@]}" "$work/relayfloor" echo "$floor_addr" &
  fe=$!
  pids+=($fe)
  for _ in $(seq 50); do curl -sf -o /dev/null "http://$floor_addr/ready" && break; sleep 0.1; done
  alternate "$fs $fe" "http://$floor_addr/local" "http://$floor_addr/relay" "http://$floor_addr/relay?reply=4096"
  noop_us=$(median "$work/p50.0"); relay_us=$(median "$work/p50.1"); relay4k_us=$(median "$work/p50.2")
  local floor_cpu floor_echo_cpu
  floor_cpu=$(cpu_per_req 2 $fs); floor_echo_cpu=$(cpu_per_req 2 $fe)
  stop $fs $fe

  awk -v lay="$layout" -v l="$local_us" -v h="$hub_us" -v m="$dl" -v n="$noop_us" -v r="$relay_us" -v r4="$relay4k_us" \
    -v lc="$local_cpu" -v hc="$hub_cpu" -v sc="$host_cpu" -v fc="$floor_cpu" -v ec="$floor_echo_cpu" -v ratio="$ratio" -v rounds="$ROUNDS" 'BEGIN {
    split(ratio, q, " ")
    printf "[%s] 4 KiB read p50: local %.0f µs, through the hub %.0f µs, ratio %.2fx (target <= 2x; %d rounds: %.2f-%.2fx)\n", lay, l, h, q[1], rounds, q[2], q[3]
    printf "  CPU per request: local route %d µs (server); through the hub %d µs (hub) + %d µs (host)\n", lc, hc, sc
    printf "  100 MiB download through the hub: %.0f MB/s median of 7 (target >= 300 MB/s)\n", m/1e6
    printf "  relay floor: no-op handler %.0f µs, relayed no-op %.0f µs (+%.0f µs),\n", n, r, r-n
    printf "    relayed with 4 KiB back %.0f µs (+%.0f µs): a hub adding only that to the local read\n", r4, r4-n
    printf "    would be at %.2fx (%.2fx with 200 bytes back); fsplane adds %.0f µs, %.0f over that floor\n", (l+r4-n)/l, (l+r-n)/l, h-l, h-l-(r4-n)
    printf "    CPU per relayed 4 KiB: %d µs (floor server) + %d µs (floor echo)\n", fc, ec
  }'
}

i=0
for layout in $LAYOUTS; do
  measure "$layout" $((PORT + 2 * i))
  i=$((i + 1))
done
