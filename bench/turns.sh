#!/usr/bin/env bash
# turns.sh -- what do turns buy? The same A/A run with --turn-ms 0 (a window per target in
# every round) and with the default turns of 10 ms, interleaved (off, on, off, on, …), on an
# embedded engine (SQLite) and a server engine (managed PostgreSQL 15: reads take turns,
# writes keep a window per target). Per run: steps flagged (A/A: every flag is false) and
# the median 95 % half-width of target/base, overall and for the steps in turns.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBDELTA=$ROOT/target/release/dbdelta
ENGINES="sqlite postgres"
REPS=1
PG_BIN=/usr/lib/postgresql/15/bin
OUT=""
usage() {
    cat <<'USAGE'
usage: bench/turns.sh [--dbdelta PATH] [--engines "sqlite postgres"] [--reps N] [--pg-bin DIR] [--out FILE]
  --dbdelta PATH     binary to test (default <repo>/target/release/dbdelta; never built here)
  --engines LIST     sqlite and/or postgres (default both)
  --reps N           off/on pairs per engine (default 1)
  --pg-bin DIR       PostgreSQL bin directory (default /usr/lib/postgresql/15/bin)
  --out FILE         Markdown summary (default bench/results-turns-<UTC time>.md)
USAGE
}
while [ $# -gt 0 ]; do
    case "$1" in
    --dbdelta) DBDELTA=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --pg-bin) PG_BIN=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "--reps: not a positive integer: '$REPS'" >&2; exit 2; }
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release)" >&2; exit 2; }
command -v jq >/dev/null || { echo "missing: jq" >&2; exit 2; }
: "${OUT:=$HERE/results-turns-$(date -u +%Y%m%d-%H%M%S).md}"
WORK=$(mktemp -d /tmp/turns.XXXXXX)
chmod 755 "$WORK" # managed servers run as their own user and must reach their data
trap 'rc=$?; [ $rc = 0 ] && rm -rf "$WORK" || echo "scratch kept: $WORK" >&2; exit $rc' EXIT
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# median of the 95 % half-widths (percent) of the verdict cells JQFILTER selects
half() {
    jq -r "(.tables[0].rows | map({(.label): .group}) | add) as \$group | [.verdicts[] | select($2) | (.high - .low) / 2 / .ratio * 100] | sort
           | if length == 0 then \"NA\" else (.[(length - 1) / 2 | floor] + .[length / 2 | floor]) / 2 | . * 10 | round / 10 end" \
        "$1/report.json"
}
# point and range steps (the report's groups, by label)
READS='.label as $l | ($group[$l] == "point" or $group[$l] == "range")'
flagged() { jq -r '[.verdicts[] | select(.verdict != "no significant change")] | length' "$1/report.json"; }
compared() { jq -r '.verdicts | length' "$1/report.json"; }

{
    echo "# Turns or a window per target: A/A noise -- $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $(nproc) CPUs, load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Binary: $DBDELTA. Produced by \`bench/turns.sh --engines \"$ENGINES\" --reps $REPS\`."
    echo "Default quick suite (42 steps, 10 rounds of 0.2 s); the same target twice."
    echo
    echo "| engine | rep | --turn-ms | wall s | flagged | median ±half-width, all | reads (point, range) | writes | steps in turns |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT"

for engine in $ENGINES; do
    case $engine in
    sqlite) targets=(-t 'a=sqlite?journal_mode=WAL&synchronous=NORMAL' -t 'b=sqlite?journal_mode=WAL&synchronous=NORMAL') ;;
    postgres) targets=(-t "a=postgres:$PG_BIN" -t "b=postgres:$PG_BIN") ;;
    *) echo "--engines: unknown engine '$engine' (sqlite, postgres)" >&2; exit 2 ;;
    esac
    for rep in $(seq 1 "$REPS"); do
        for ms in 0 10; do
            name=$engine-$rep-$ms
            log "$name"
            t0=$(date +%s.%N)
            "$DBDELTA" run --quiet --no-store --run-dir "$WORK/$name" --turn-ms "$ms" "${targets[@]}" \
                >"$WORK/$name.log" 2>&1 || { tail -5 "$WORK/$name.log" >&2; exit 1; }
            secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
            steps=$(cat "$WORK/$name"/results/a/*.json | jq -rs '[.[] | select(.turns != null) | .label] | unique | length')
            d=$WORK/$name
            echo "| $engine | $rep | $ms | $secs | $(flagged "$d") of $(compared "$d") | ±$(half "$d" true) % | ±$(half "$d" "$READS") % | ±$(half "$d" "($READS) | not") % | $steps |" >>"$OUT"
        done
    done
done
log "written to $OUT"
cat "$OUT"
}
