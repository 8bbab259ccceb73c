#!/usr/bin/env bash
# FerretDB on SQLite vs FerretDB on PostgreSQL: YCSB A, B, C and E on documents at quick
# scale, then the report a cost comparison reads like: ops/s, p99 per operation type and
# operations per hour per dollar.
#
#   examples/ferretdb/run.sh [RUN_DIR] [SQLITE_DOLLARS_PER_HOUR] [PG_DOLLARS_PER_HOUR]
#
# dbdelta builds FerretDB v1.24.2 from the Go module proxy into its build cache the first
# time (a few minutes; Go must be installed), starts it on a loopback port in front of SQLite
# files in the run directory, then again in front of a PostgreSQL 15 it also starts
# (/usr/lib/postgresql/15/bin; apt-get install postgresql-15), and stops both at the end.
# Both servers share this machine, so the prices default to one hourly price for both; give
# the prices of the machines you would run each on to compare them as the write-up does.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DBDELTA=${DBDELTA:-$HERE/../../target/release/dbdelta}
RUN=${1:-./dbdelta-runs/ferretdb-sqlite-vs-postgres}
SQLITE_PRICE=${2:-0.10}
PG_PRICE=${3:-0.10}
[ -x "$DBDELTA" ] || DBDELTA=$(command -v dbdelta) || {
    echo "no dbdelta binary: cargo build --release, or set DBDELTA" >&2
    exit 2
}
"$DBDELTA" run --suite ycsb --scale quick \
    --steps 'workload-a,workload-b,workload-c,workload-e' \
    -t 'sqlite=ferretdb:?backend=sqlite' \
    -t 'pg=ferretdb:?backend=postgresql' \
    --no-store --run-dir "$RUN" || [ $? -eq 3 ] # 3: some step failed; report the rest
"$DBDELTA" report "$RUN" --format md \
    --cost "sqlite=$SQLITE_PRICE" --cost "pg=$PG_PRICE" | tee "$RUN/report-cost.md"
