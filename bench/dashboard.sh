#!/usr/bin/env bash
# dashboard.sh -- the static dashboard of a large results history (issue 34, part 1),
# measured: a synthetic SQLite history of RUNS runs × STEPS steps (one target, a 10 % drop
# planted in one step, a version change halfway) is written, then the time to read it back
# and write the site (what `dbdelta history --store FILE --html DIR` does) and the size of
# index.html are measured. Goals: under 30 s, index under 2 MB.
#
# Builds the example crates/dashboard/examples/history_bench.rs in release mode.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=10000
STEPS=42
DIR=${TMPDIR:-/tmp}/dbdelta-dashboard-bench
OUT=""
usage() {
    cat <<'USAGE'
usage: bench/dashboard.sh [--runs N] [--steps N] [--dir DIR] [--out FILE]
  --runs N     runs in the synthetic history (default 10000)
  --steps N    steps per run (default 42)
  --dir DIR    where the history and the site are written (default $TMPDIR/dbdelta-dashboard-bench)
  --out FILE   Markdown results, appended to (default bench/results-dashboard-<UTC date>.md)
USAGE
}
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "dashboard.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$HERE/results-dashboard-$(date -u +%Y%m%d).md}

cd "$ROOT"
cargo build --release -q -p dbdelta-dashboard --example history_bench
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/history_bench
RESULT=$("$BIN" --runs "$RUNS" --steps "$STEPS" --dir "$DIR")
echo "$RESULT"
get() { echo "$RESULT" | sed -n "s/^$1=//p"; }
{
    echo "## Dashboard of a synthetic history, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "Host: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1 /proc/loadavg) at the end"
    echo "(times are wall clock; total CPU is user + system of every thread, what an idle host"
    echo "would need at most)."
    echo "Command: bench/dashboard.sh --runs $RUNS --steps $STEPS (commit $(git rev-parse --short HEAD))."
    echo
    echo "| runs | steps | points | series | change points | evidence pages | read store (s) | render (s) | total (s) | total CPU (s) | index.html | whole site |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    echo "| $(get runs) | $(get steps) | $(get points) | $(get series) | $(get change_points) | $(get evidence_pages) | $(get read_store_secs) | $(get render_secs) | $(get total_secs) | $(get total_cpu_secs) | $(( $(get index_bytes) / 1024 )) KiB | $(( $(get site_bytes) / 1024 / 1024 )) MiB |"
    echo
} >> "$OUT"
echo "results appended to $OUT"
}
