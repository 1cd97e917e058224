#!/usr/bin/env bash
# Download and upload throughput of fsplane serve on loopback.
#
# Download: curl fetches the same 1 GiB file from fsplane
# (GET /v2/fs/download, sendfile path) and from nginx (Debian package,
# run as an unprivileged loopback server with its own config in a temp
# dir, sendfile on), alternating, in one run. Reports MB/s of each (the
# median of RUNS) and the ratio fsplane/nginx (target >= 0.90). Both are
# warmed first: page cache, and fsplane's ETag (content hash) cache; the
# first, cold fsplane download (which hashes the file) is reported too.
#
# Upload: curl posts the 1 GiB file as multipart/form-data
# (POST /v2/fs/upload): streamed to a part file, fsynced, renamed.
# Reports MB/s (target >= 500), fsync included, and, run by run, dd
# writing the same bytes with fsync into the same directory: on a
# virtual disk whose fresh blocks are slow to write, that baseline says
# what the disk allowed at that moment.
#
#   bench/transfer.sh              # 1 GiB, 5 runs
#   SIZE_MB=256 RUNS=3 bench/transfer.sh
# Installs nginx with apt-get when it is missing (needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB="${SIZE_MB:-1024}"
RUNS="${RUNS:-5}"
PORT="${PORT:-18194}"
NGINX_PORT="${NGINX_PORT:-18195}"

if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/fsplane" ./cmd/fsplane
mkdir -p "$work/root" "$work/nginx/logs" "$work/nginx/tmp"
chmod 755 "$work" "$work/root" # nginx workers drop root
head -c "$((SIZE_MB << 20))" /dev/urandom > "$work/root/big.bin"
size=$(stat -c %s "$work/root/big.bin")

cat > "$work/nginx/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  types { application/octet-stream bin; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $work/root;
  }
}
CONF
"$NGINX" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
pids+=($!)
"$work/fsplane" serve --listen "127.0.0.1:$PORT" --root "$work/root" --state-dir "$work/state" 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && curl -sfI "http://127.0.0.1:$NGINX_PORT/big.bin" >/dev/null && break
  sleep 0.1
done

fs_url="http://127.0.0.1:$PORT/v2/fs/download?path=big.bin"
ng_url="http://127.0.0.1:$NGINX_PORT/big.bin"
# speed prints bytes/s of one download, after checking its size.
speed() {
  local out
  out=$(curl -s -o /dev/null -w '%{size_download} %{speed_download}' "$1")
  [ "${out%% *}" = "$size" ] || { echo "short download from $1: $out" >&2; exit 1; }
  echo "${out##* }"
}
mbps() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "== download of $SIZE_MB MiB on loopback, curl, median of $RUNS ($(nproc) CPUs)"
cat "$work/root/big.bin" >/dev/null # page cache
cold=$(speed "$fs_url")
echo "fsplane cold (hashes the file for its ETag): $(mbps "$cold") MB/s"
speed "$ng_url" >/dev/null
fs=(); ng=()
for _ in $(seq "$RUNS"); do
  fs+=("$(speed "$fs_url")")
  ng+=("$(speed "$ng_url")")
done
fs_med=$(printf '%s\n' "${fs[@]}" | median)
ng_med=$(printf '%s\n' "${ng[@]}" | median)
echo "fsplane: $(mbps "$fs_med") MB/s   (runs: $(for s in "${fs[@]}"; do printf '%s ' "$(mbps "$s")"; done))"
echo "nginx:   $(mbps "$ng_med") MB/s   (runs: $(for s in "${ng[@]}"; do printf '%s ' "$(mbps "$s")"; done))"
ratio=$(awk -v a="$fs_med" -v b="$ng_med" 'BEGIN { printf "%.2f", a / b }')
echo "ratio fsplane/nginx: $ratio (target >= 0.90)"

echo "== upload of $SIZE_MB MiB (multipart, spooled, fsynced, renamed), median of $RUNS"
up=(); dd=()
for i in $(seq "$RUNS"); do
  out=$(curl -s -o "$work/up.json" -w '%{time_total}' -F "path=up$i.bin" -F "file=@$work/root/big.bin" "http://127.0.0.1:$PORT/v2/fs/upload")
  grep -q "\"file_size\":$size" "$work/up.json" || { echo "upload failed: $(cat "$work/up.json")"; exit 1; }
  up+=("$(awk -v s="$size" -v t="$out" 'BEGIN { printf "%.0f", s / t }')")
  rm -f "$work/root/up$i.bin"
  # The same bytes written by dd (1 MiB blocks, fsync) into the same
  # directory right after: what the disk allows at this moment.
  t=$( { /usr/bin/time -f %e dd if="$work/root/big.bin" of="$work/root/dd.bin" bs=1M conv=fsync status=none; } 2>&1 )
  dd+=("$(awk -v s="$size" -v t="$t" 'BEGIN { printf "%.0f", s / t }')")
  rm -f "$work/root/dd.bin"
done
up_med=$(printf '%s\n' "${up[@]}" | median)
dd_med=$(printf '%s\n' "${dd[@]}" | median)
echo "upload: $(mbps "$up_med") MB/s   (runs: $(for s in "${up[@]}"; do printf '%s ' "$(mbps "$s")"; done); target >= 500)"
echo "dd baseline (same bytes, 1 MiB blocks, fsync): $(mbps "$dd_med") MB/s   (runs: $(for s in "${dd[@]}"; do printf '%s ' "$(mbps "$s")"; done))"
echo "upload/dd: $(awk -v a="$up_med" -v b="$dd_med" 'BEGIN { printf "%.2f", a / b }')"
echo "server RSS after: $(awk '/VmRSS/ {print $2" kB"}' "/proc/${pids[1]}/status")"
