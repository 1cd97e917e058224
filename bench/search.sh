#!/usr/bin/env bash
# Search benchmark: fsplane grep/files against ripgrep on the Go source
# tree ($(go env GOROOT)/src), warm cache, side by side in one hyperfine
# run per case. Both search the same files (--hidden --no-ignore: rg
# honours .gitignore only inside a git repository). Prints the medians,
# the ratios and the issue's targets, the peak RSS of whole-tree greps,
# and the warm in-process figure (ops.Engine.Grep, BenchmarkGrepGoroot).
#
#   bench/search.sh               # 30 runs per command
#   RUNS=10 bench/search.sh       # quicker
# Needs hyperfine, ripgrep and GNU time (Debian packages hyperfine,
# ripgrep, time) and python3.
set -euo pipefail
set -f # the commands below hold globs for the tools, not for the shell
cd "$(dirname "$0")/.."
RUNS="${RUNS:-30}"
for tool in hyperfine rg python3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install hyperfine ripgrep python3)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "GNU time is not installed (apt-get install time)"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/fsplane" ./cmd/fsplane
fs="$work/fsplane"
src="$(go env GOROOT)/src"
cd "$src"
echo "tree: $src ($(find . -type f | wc -l) files, $(du -sh . | cut -f1)); $(nproc) CPUs; $(rg --version | head -1); load average$(uptime | sed "s/.*load average//")"

# case name | target ratio | fsplane command | rg command. The commands
# are shell words: hyperfine -N parses them like a shell, without one.
cases=(
  "literal ErrNotExist|1.2|$fs grep --hidden --no-ignore ErrNotExist|rg --no-config --hidden --no-ignore -n ErrNotExist"
  "regex with literal \\w+Handler\\(|1.5|$fs grep --hidden --no-ignore '\\w+Handler\\('|rg --no-config --hidden --no-ignore -n '\\w+Handler\\('"
  "case-insensitive -i errnotexist|1.5|$fs grep --hidden --no-ignore -i errnotexist|rg --no-config --hidden --no-ignore -n -i errnotexist"
  "no-literal regex \\w{5}\\s+\\w{5}\\(|10|$fs grep --hidden --no-ignore '\\w{5}\\s+\\w{5}\\('|rg --no-config --hidden --no-ignore -n '\\w{5}\\s+\\w{5}\\('"
  "files **/*.go vs --files -g *.go|1.2|$fs files --hidden --no-ignore -g '**/*.go'|rg --no-config --files --hidden --no-ignore -g '*.go'"
)

# Both commands of a case must print the same lines.
for c in "${cases[@]}"; do
  IFS='|' read -r name _ fcmd rcmd <<<"$c"
  a=$(bash -c "$fcmd" | sort | md5sum); b=$(bash -c "$rcmd" | sort | md5sum)
  [ "$a" = "$b" ] || { echo "outputs differ for $name"; exit 1; }
done

rows="$work/rows"
: >"$rows"
for c in "${cases[@]}"; do
  IFS='|' read -r name target fcmd rcmd <<<"$c"
  hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$work/h.json" "$fcmd" "$rcmd" >/dev/null 2>&1
  python3 - "$work/h.json" "$name" "$target" >>"$rows" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
f, r = (statistics.median(x["times"]) * 1000 for x in d["results"])
t = float(sys.argv[3])
print(f"{sys.argv[2]}\t{f:.1f}\t{r:.1f}\t{f/r:.2f}\t{t:g}\t{'yes' if f/r <= t else 'NO'}")
PY
done

# Warm daemon: the engine in process, repeated (no process start), with
# rg's literal search measured again right before it; medians of 7.
cd - >/dev/null
go test -c -o "$work/ops.test" ./internal/ops/
cd "$src"
hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$work/h.json" "rg --no-config --hidden --no-ignore -n ErrNotExist" >/dev/null 2>&1
"$work/ops.test" -test.run '^$' -test.bench '^BenchmarkGrepGoroot$' -test.benchtime 10x -test.count 7 >"$work/warm.txt"
python3 - "$work/h.json" "$work/warm.txt" >>"$rows" <<'PY'
import json, statistics, sys
r = statistics.median(json.load(open(sys.argv[1]))["results"][0]["times"]) * 1000
w = statistics.median(float(l.split()[2]) / 1e6 for l in open(sys.argv[2]) if l.startswith("BenchmarkGrepGoroot"))
print(f"warm in-process ops.Grep ErrNotExist\t{w:.1f}\t{r:.1f}\t{w/r:.2f}\t1\t{'yes' if w/r <= 1 else 'NO'}")
PY

peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {printf "%.1f MiB", $2/1024}'; }
echo
printf '%-44s %12s %12s %7s %7s %4s\n' case "fsplane ms" "rg ms" ratio target ok
awk -F'\t' '{printf "%-44s %12s %12s %7s %7s %4s\n", $1, $2, $3, $4, "<=" $5, $6}' "$rows"
echo
echo "peak RSS, whole-tree grep (target < 64 MiB for fsplane):"
for pat in ErrNotExist 'e'; do
  printf '  %-14s fsplane %-10s rg %s\n' "$pat" "$(peak $fs grep --hidden --no-ignore "$pat")" "$(peak rg --no-config --hidden --no-ignore -n "$pat")"
done
