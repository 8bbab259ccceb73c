#!/usr/bin/env bash
# Server writes to ±3 % (issue 29 item 2): A/A of two managed PostgreSQL 15 targets on the six
# write steps at --scale quick, one run per alternative, each followed by the half-widths of
# QPS and of server CPU per operation per step (bench/trust-writes.py). Prints `uptime` before
# each run: the machine is shared.
#
# usage: bench/trust-writes.sh DBDELTA_BINARY OUT_DIR [ALTERNATIVE...]
#   alternatives: base (the quick preset: 10 rounds of 0.2 s), long (10 rounds of 1 s),
#   quiet (long + autovacuum off, no checkpoint inside the run, same shared_buffers),
#   resolve (--resolve 3% --budget $BUDGET, default 10m), resolve-quiet (both),
#   resolve-long (quiet with 1 s windows and --resolve)
set -euo pipefail
BIN=${1:?dbdelta binary}
OUT=${2:?output directory}
shift 2
ALTS=${*:-base long quiet resolve}
PG=/usr/lib/postgresql/15/bin
STEPS='update-index,update-nonindex,insert,delete,write-only,read-write'
QUIET='autovacuum=off&checkpoint_timeout=1d&max_wal_size=20GB&shared_buffers=256MB'
mkdir -p "$OUT"
for alt in $ALTS; do
  a="a=postgres:$PG"; b="b=postgres:$PG"; extra=()
  case $alt in
    base) ;;
    long) extra=(--write-secs 1 --insert-secs 1 --read-secs 1) ;;
    quiet) a="$a?$QUIET"; b="$b?$QUIET"; extra=(--write-secs 1 --insert-secs 1 --read-secs 1) ;;
    resolve) extra=(--resolve 3% --budget "${BUDGET:-10m}") ;;
    resolve-quiet) a="$a?$QUIET"; b="$b?$QUIET"; extra=(--resolve 3% --budget "${BUDGET:-10m}") ;;
    resolve-long) a="$a?$QUIET"; b="$b?$QUIET"
      extra=(--write-secs 1 --insert-secs 1 --read-secs 1 --resolve 3% --budget "${BUDGET:-10m}") ;;
    *) echo "unknown alternative $alt" >&2; exit 2 ;;
  esac
  rd="$OUT/$alt"
  rm -rf "$rd"
  echo "== $alt: $(uptime)"
  start=$(date +%s)
  cmd=("$BIN" run --no-store -t "$a" -t "$b" --steps "$STEPS" --run-dir "$rd" "${extra[@]}")
  echo "\$ ${cmd[*]}"
  "${cmd[@]}" > "$rd.log" 2>&1 || echo "exit $?"
  echo "   wall $(( $(date +%s) - start )) s; after: $(uptime)"
  grep '^\[resolve\]\|Noise floor' "$rd.log" | sed 's/^/   /' || true
  python3 "$(dirname "$0")/trust-writes.py" "$rd"
done
