#!/usr/bin/env bash
# fsplane mcp against @modelcontextprotocol/server-filesystem, one run, the
# same TypeScript SDK client (test/mcp-e2e/bench.mjs) driving both over
# stdio on the same folder: read of a 1 MB file, an edit in a 1 MB and in a
# 50 MB file, a name search over the Go source tree. Prints median latency
# per call and the speed-up (targets: >= 2x on small operations, >= 5x on
# the 50 MB edit), then correctness checks where the peer is known to fail
# (CRLF kept, mode kept, ambiguous match refused). Exits 1 when fsplane
# fails a check or misses a target.
#
#   bench/mcp.sh                  # 20 calls per operation, 5 for 50 MB
#   ITER=50 ITER_BIG=10 bench/mcp.sh
# Needs go, node >= 20 and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "node is not installed"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/fsplane" ./cmd/fsplane
if [ ! -d test/mcp-e2e/node_modules ]; then
  (cd test/mcp-e2e && npm ci --no-audit --no-fund --loglevel=error)
fi
export GOROOT_SRC="${GOROOT_SRC:-$(go env GOROOT)/src}"
echo "fsplane $("$work/fsplane" version | cut -d' ' -f2), server-filesystem $(node -p 'require("./test/mcp-e2e/node_modules/@modelcontextprotocol/server-filesystem/package.json").version'), node $(node --version), $(nproc) CPUs"
FSPLANE_BIN="$work/fsplane" BENCH_DIR="$work/bench" node test/mcp-e2e/bench.mjs
