#!/usr/bin/env bash
# Load test of fsplane serve: wrk against GET /v2/fs/read and POST
# /v2/fs/write on loopback, side by side in one run. Reports requests/s,
# p99 latency, non-2xx responses, and the server's RSS before and after.
#
#   bench/http.sh                 # 30 s per route
#   DURATION=10s bench/http.sh    # shorter
# Needs wrk (Debian package "wrk").
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-30s}"
CONNS="${CONNS:-32}"
PORT="${PORT:-18193}"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }

work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/fsplane" ./cmd/fsplane
mkdir -p "$work/root"
# A 4 KiB text file to read; writes go to their own file.
python3 -c "
import sys
line='The quick brown fox jumps over the lazy dog; fsplane reads this.\n'
open(sys.argv[1],'w').write(line*64)" "$work/root/read.txt"

"$work/fsplane" serve --listen "127.0.0.1:$PORT" --root "$work/root" --state-dir "$work/state" 2>"$work/server.log" &
pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2" kB"}' "/proc/$pid/status"; }
echo "server RSS at start: $(rss)"

cat > "$work/write.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"path":"written.txt","content":"' .. string.rep("x", 1024) .. '\\n"}'
LUA

run() {
  local name=$1; shift
  echo "== $name ($DURATION, $CONNS connections)"
  wrk -t2 -c"$CONNS" -d"$DURATION" --latency "$@" | tee "$work/$name.out" | grep -E 'Requests/sec|Latency|99%|Non-2xx|Socket errors' || true
  if grep -q 'Non-2xx' "$work/$name.out"; then echo "FAIL: $name had non-2xx responses"; fail=1; fi
  echo "server RSS after $name: $(rss)"
}
fail=0
run read "http://127.0.0.1:$PORT/v2/fs/read?path=read.txt"
run write -s "$work/write.lua" "http://127.0.0.1:$PORT/v2/fs/write"
exit $fail
