#!/usr/bin/env bash
# table-age.sh -- does update-index depend on the table's history? (issue 16, item 7)
#
# bench/vs-sysbench.sh found dbdelta's update-index QPS below sysbench's on PostgreSQL 18 in
# 9 of 9 paired repeats. dbdelta loads a fresh table for every run; sysbench's table had been
# updated and vacuumed by the runs before. This script takes dbdelta out of the question:
# sysbench alone, `oltp_update_index` on two tables of one server, interleaved:
#   fresh: dropped and prepared again (then VACUUM ANALYZE + CHECKPOINT) before every run,
#          as dbdelta's table is;
#   aged:  prepared once and updated by every earlier run (VACUUM ANALYZE + CHECKPOINT
#          before each run, as dbdelta's settle does);
# the order alternates (fresh first, then aged first). Per run: QPS, the server's CPU µs per
# statement (/proc, postmaster tree) and how much the table grew (pg_relation_size).
# Prints each run and the geometric mean of fresh/aged with its 95 % t-interval.
#
# usage: bench/table-age.sh [--bin PGBIN] [--rows N] [--secs S] [--reps R] [--threads T]
# Run as root (the server runs as an unprivileged user it creates if missing: dbdelta).
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

BIN=/usr/lib/postgresql/15/bin ROWS=100000 SECS=10 REPS=4 THREADS=1 RUN_USER=dbdelta
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) BIN=$2; shift ;;
    --rows) ROWS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 2; }
command -v sysbench >/dev/null || { echo "sysbench is needed: apt-get install sysbench" >&2; exit 2; }
id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_USER"

WORK=$(mktemp -d /var/tmp/dbdelta-table-age.XXXXXX)
chmod 755 "$WORK"
PG=$WORK/pg
cleanup() {
    [ -f "$PG/data/postmaster.pid" ] && runuser -u "$RUN_USER" -- "$PGB/pg_ctl" -D "$PG/data" -m fast stop >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A bin dir the unprivileged user cannot run (pip's wheel under /root) is copied.
PGB=$BIN LDP=""
if ! runuser -u "$RUN_USER" -- test -x "$BIN/postgres"; then
    cp -a "$(dirname "$BIN")" "$WORK/install"
    mkdir -p "$WORK/install/extra-libs"
    ldd "$BIN/postgres" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | grep -v -E '^/(usr/)?lib' |
        sort -u | xargs -r cp -t "$WORK/install/extra-libs"
    chmod -R a+rX "$WORK/install"
    PGB=$WORK/install/$(basename "$BIN") LDP=$WORK/install/extra-libs
fi
export LD_LIBRARY_PATH=$LDP
mkdir -p "$PG" && chown "$RUN_USER" "$PG"
runuser -u "$RUN_USER" -- env LD_LIBRARY_PATH="$LDP" "$PGB/initdb" -D "$PG/data" -U postgres --auth=trust >/dev/null
PORT=$((20000 + RANDOM % 30000))
runuser -u "$RUN_USER" -- env LD_LIBRARY_PATH="$LDP" "$PGB/pg_ctl" -D "$PG/data" -l "$PG/log" -w -o \
    "-p $PORT -k $PG -c listen_addresses=127.0.0.1 -c shared_buffers=1GB -c max_wal_size=4GB -c checkpoint_timeout=30min" start >/dev/null
psql() { "$PGB/psql" -qXAt -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
psql -d postgres -c "CREATE DATABASE fresh" -c "CREATE DATABASE aged"
VERSION=$("$PGB/postgres" --version)
sb() { sysbench "$1" --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT" --pgsql-user=postgres \
    --pgsql-db="$2" --tables=1 --table-size="$ROWS" --threads="$THREADS" --time="$SECS" "${@:3}"; }
settle() { psql -d "$1" -c "VACUUM (ANALYZE) sbtest1" -c "CHECKPOINT"; }
prepare() { sb oltp_update_index "$1" cleanup >/dev/null 2>&1 || true; sb oltp_update_index "$1" prepare >/dev/null; }
CLK=$(getconf CLK_TCK)
server_ticks() { # postmaster + children (utime+stime) + reaped children
    local root t=0 k a
    root=$(head -1 "$PG/data/postmaster.pid")
    for k in $root $(cat "/proc/$root/task/$root/children"); do
        a=($(sed 's/.*) //' "/proc/$k/stat" 2>/dev/null)) || continue
        t=$((t + a[11] + a[12]))
        [ "$k" = "$root" ] && t=$((t + a[13] + a[14]))
    done
    echo $t
}
# run DB -> "qps server_us_per_stmt growth_kb"
run() {
    local db=$1 s0 s1 t0 t1 q out
    settle "$db"
    s0=$(psql -d "$db" -c "SELECT pg_relation_size('sbtest1')")
    t0=$(server_ticks)
    out=$(sb oltp_update_index "$db" run)
    t1=$(server_ticks)
    s1=$(psql -d "$db" -c "SELECT pg_relation_size('sbtest1')")
    q=$(echo "$out" | awk '/queries:/ { gsub(/[(]/, "", $3); print $3 }')
    echo "$q $(echo "($t1 - $t0) / $CLK * 1000000 / ($q * $SECS)" | bc -l | xargs printf '%.1f') $(((s1 - s0) / 1024))"
}

prepare aged
echo "# update-index on a fresh vs an aged table, sysbench only ($VERSION, $ROWS rows, $THREADS thread(s), $SECS s, $REPS reps; $(date -u +%FT%TZ))"
echo "# host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'rep\torder\ttable\tqps\tserver_us_per_stmt\ttable_growth_kb\n'
ratios=()
for rep in $(seq "$REPS"); do
    prepare fresh
    if [ $((rep % 2)) -eq 1 ]; then order="fresh,aged"; else order="aged,fresh"; fi
    for which in ${order//,/ }; do
        read -r q us grow < <(run "$which")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$order" "$which" "$q" "$us" "$grow"
        eval "q_$which=$q"
    done
    ratios+=("$(echo "$q_fresh / $q_aged" | bc -l)")
done
printf '%s\n' "${ratios[@]}" | awk '
    { l[NR] = log($1); s += l[NR] }
    END {
        n = NR; m = s / n; for (i = 1; i <= n; i++) v += (l[i] - m) ^ 2
        t[2] = 12.706; t[3] = 4.303; t[4] = 3.182; t[5] = 2.776; t[6] = 2.571; t[7] = 2.447; t[8] = 2.365; t[9] = 2.306; t[10] = 2.262
        h = (n > 1 && n <= 10) ? t[n] * sqrt(v / (n - 1) / n) : 0
        printf "fresh/aged QPS: %.3f [%.3f, %.3f] (geometric mean of %d paired repeats, 95 %% t-interval)\n", exp(m), exp(m - h), exp(m + h), n
    }'
exit 0
}
