#!/usr/bin/env bash
# memory.sh -- client memory of a long, wide step: peak RSS of dbdelta on the mock engine at
# THREADS threads for SECS seconds (one point-query step, no load beyond 10k rows). Before
# bounded recording every worker kept a 3-significant-figure histogram per second, about
# 150 KB a thread-second; now a worker keeps only its current second and the step one
# compact histogram per second. Usage: bench/memory.sh [--dbdelta PATH] [THREADS] [SECS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/dbdelta
if [ "${1:-}" = "--dbdelta" ]; then BIN=$2; shift 2; fi
THREADS=${1:-1000}
SECS=${2:-600}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/time -f "%M" -o "$out/rss" "$BIN" run --quiet --no-store -t m=mock \
  --steps point-query --threads "$THREADS" --read-secs "$SECS" --warmup-secs 0 \
  --run-dir "$out/run" >/dev/null 2>"$out/err" || { cat "$out/err" >&2; exit 1; }
kb=$(cat "$out/rss")
qps=$(grep -o '"value": *[0-9.e+]*' "$out"/run/results/m/*point-query*.json | head -1 | grep -o '[0-9.e+]*$')
printf 'threads %s  seconds %s  peak RSS %.1f MB  (%.1f KB per thread-second)  qps %s\n' \
  "$THREADS" "$SECS" "$(echo "$kb/1024" | bc -l)" "$(echo "$kb/($THREADS*$SECS)" | bc -l)" "$qps"
