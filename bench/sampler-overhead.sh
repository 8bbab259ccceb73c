#!/usr/bin/env bash
# The OS sampler's own overhead: the same steps on the same SQLite target with and without
# the sampler, alternating (A B A B …) so drift hits both; prints the QPS ratio per step.
# Goal: |with/without − 1| < 1 %.
#
# Usage: bench/sampler-overhead.sh [ROUNDS] [SECS]     (defaults: 3 rounds, 5 s per step)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-5}
STEPS='point-query,read-only,update-index'
BIN=${DBDELTA_BIN:-target/release/dbdelta}
[ -x "$BIN" ] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # $1 = run dir, rest = extra flags
  local dir=$1; shift
  "$BIN" run --quiet -t lite=sqlite?journal_mode=WAL --steps "$STEPS" --read-secs "$SECS" \
    --write-secs "$SECS" --warmup-secs 1 --table-size 100000 --run-dir "$dir" "$@" >/dev/null 2>&1
}

for r in $(seq 1 "$ROUNDS"); do
  run "$work/on-$r"
  run "$work/off-$r" --no-os-metrics
done

python3 - "$work" "$ROUNDS" <<'PY'
import glob, json, sys, statistics
work, rounds = sys.argv[1], int(sys.argv[2])
def qps(kind):
    out = {}
    for r in range(1, rounds + 1):
        for f in glob.glob(f"{work}/{kind}-{r}/results/lite/*.dop1.json"):
            res = json.load(open(f))
            if res["kind"] == "measured":
                out.setdefault(res["label"], []).append(res["qps"])
    return out
on, off = qps("on"), qps("off")
print(f"{'step':<28} {'with':>10} {'without':>10} {'ratio':>7}")
for label in sorted(on):
    a, b = statistics.median(on[label]), statistics.median(off.get(label, [float('nan')]))
    print(f"{label:<28} {a:>10.0f} {b:>10.0f} {a / b:>7.3f}")
PY
