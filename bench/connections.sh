#!/usr/bin/env bash
# connections.sh -- how many connections one dbdelta process holds, and what they cost.
#
# For each engine (MariaDB with thread_handling=pool-of-threads; PostgreSQL 15 behind a managed
# pgbouncer in transaction mode) one dbdelta run sweeps --connections over the levels with a
# fixed number of active connections running point-query; the rest stay connected and idle.
# Per level it prints: connect time, connect latency p50/p99, client RSS per connection, server
# RSS per connection, QPS and p99 latency of the active connections.
# Then sysbench's ceiling on the same MariaDB settings: the largest --threads that completes.
# Run as root. See bench/README.md.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break that run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() {
    cat <<'EOF'
usage: bench/connections.sh [options]
  --levels "1000 10000 50000 100000"   connection counts (default)
  --active K        connections that run the workload at every level (default 64)
  --secs S          measured seconds per level (default 10)
  --rate R          new connections per second (default 5000)
  --pg-only | --mysql-only
  --no-sysbench     skip sysbench's ceiling
  --dbdelta PATH    binary (default <repo>/target/release/dbdelta; not rebuilt)
  --out FILE        Markdown output (default bench/connections-<UTC date-time>.md)
  --keep            keep the scratch directory
  --segments S      also sweep PostgreSQL behind a pgbouncer fleet with S dbdelta segment
                    processes per level (run --segment K/S, then dbdelta merge); 0 = skip
  --pgb-processes P pgbouncer processes sharing one port (so_reuseport) for --segments
                    (default: one per 16,000 connections of the largest level)
  --segments-only   only the --segments sweep
EOF
}

LEVELS="1000 10000 50000 100000" ACTIVE=64 SECS=10 RATE=5000 DO_PG=1 DO_MY=1 DO_SB=1 KEEP=0 OUT=""
DBDELTA=$ROOT/target/release/dbdelta
SEGMENTS=0 PGB_PROCS=0
while [ $# -gt 0 ]; do
    case "$1" in
    --levels) LEVELS=$2; shift ;;
    --active) ACTIVE=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --pg-only) DO_MY=0 ;;
    --mysql-only) DO_PG=0 ;;
    --no-sysbench) DO_SB=0 ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --out) OUT=$2; shift ;;
    --keep) KEEP=1 ;;
    --segments) SEGMENTS=$2; shift ;;
    --pgb-processes) PGB_PROCS=$2; shift ;;
    --segments-only) DO_MY=0 DO_PG=0 DO_SB=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
LEVELS=${LEVELS//,/ }
MAXLEVEL=$(echo "$LEVELS" | tr ' ' '\n' | sort -n | tail -1)
[ "$PGB_PROCS" -gt 0 ] 2>/dev/null || PGB_PROCS=$(( (MAXLEVEL + 15999) / 16000 ))
for v in $LEVELS "$ACTIVE" "$SECS" "$RATE" "$PGB_PROCS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "not a positive integer: '$v'" >&2; exit 2; }
done
STAMP=$(date -u +%Y%m%d-%H%M%S)
: "${OUT:=$HERE/connections-$STAMP.md}"
die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
[ "$(id -u)" = 0 ] || die "run as root (servers run as unprivileged users)"
for c in jq timeout; do command -v $c >/dev/null || die "missing: $c"; done
[ -x "$DBDELTA" ] || die "no dbdelta binary at $DBDELTA (cargo build --release)"

# Every level's sockets: the client, the server (and pgbouncer) need an fd each.
# (the hard limit can only rise with CAP_SYS_RESOURCE; dbdelta refuses levels beyond it)
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
WORK=$(mktemp -d /tmp/connections.XXXXXX)
chmod 755 "$WORK"
MY_PID=""
PG_DATA=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    local pf
    for pf in "$WORK"/fleet/pgbouncer-*.pid; do
        [ -f "$pf" ] && kill -INT "$(cat "$pf")" 2>/dev/null
    done
    if [ -n "$PG_DATA" ]; then
        runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$PG_DATA" -m fast stop >/dev/null 2>&1
    fi
    if [ -n "$MY_PID" ] && kill -0 "$MY_PID" 2>/dev/null; then
        kill "$MY_PID"
        for _ in $(seq 60); do kill -0 "$MY_PID" 2>/dev/null || break; sleep 1; done
        kill -9 "$MY_PID" 2>/dev/null
    fi
    if [ $KEEP = 1 ] || [ $rc != 0 ]; then echo "scratch directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

MAXCONN=$(( $(echo "$LEVELS" | tr ' ' '\n' | sort -n | tail -1) + 1000 ))
LEVEL_LIST=$(echo "$LEVELS" | tr ' ' ',')

# dd_sweep NAME SPEC: one dbdelta run over every level; prints one Markdown row per level.
dd_sweep() {
    local name=$1 spec=$2 rd=$WORK/dd-$1 budget
    budget=$(( 600 + 4 * MAXCONN / RATE * $(echo "$LEVELS" | wc -w) + 3 * SECS * $(echo "$LEVELS" | wc -w) ))
    log "dbdelta $name: levels $LEVEL_LIST, $ACTIVE active, $SECS s each"
    if ! timeout "$budget" "$DBDELTA" run --quiet --no-store -t "$name=$spec" --steps point-query \
        --connections "$LEVEL_LIST" --active "$ACTIVE" --connect-rate "$RATE" \
        --read-secs "$SECS" --warmup-secs 1 --table-size 10000 --run-dir "$rd" \
        >"$WORK/dd-$name.out" 2>&1; then
        log "dbdelta $name failed:"; tail -20 "$WORK/dd-$name.out" >&2
    fi
    local n f
    for n in $LEVELS; do
        f=$(ls "$rd"/results/"$name"/*-point-query_range=100.dop"$n".json 2>/dev/null | head -1)
        if [ -z "$f" ]; then
            printf '| %s | %s | no result | | | | | |\n' "$name" "$n"
            continue
        fi
        jq -r --arg name "$name" '
          def kb(x): if x == null then "-" else ((x / 1024 * 10 | round) / 10 | tostring) end;
          if .status.state != "ok" then
            "| \($name) | \(.threads) | \(.status.state): \(.status.reason // "" | .[0:80]) | | | | | |"
          else
            "| \($name) | \(.connect.connections) (\(.connect.active)) | \(.connect.seconds * 10 | round / 10) s | \(.connect.latency.p50_us | round) / \(.connect.latency.p99_us | round) µs | \(kb(.connect.client_bytes_per_connection)) | \(kb(.connect.server_bytes_per_connection)) | \(.qps | round) | \(.latency.p99_us | round) µs |"
          end' "$f"
    done
}

# sysbench's ceiling: the largest thread count (doubling) that runs 5 s without an error.
sb_ceiling() {
    command -v sysbench >/dev/null || { echo "sysbench missing"; return; }
    local dir=$WORK/maria port sock best=0 t
    mkdir -p "$dir/data" "$dir/tmp"; chown -R mysql:mysql "$dir"
    mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --skip-test-db \
        --auth-root-authentication-method=normal >"$dir/install.log" 2>&1 || { echo "install-db failed"; return; }
    port=$((20000 + RANDOM % 30000)); sock=$dir/mysqld.sock
    mariadbd --no-defaults --user=mysql --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$sock" \
        --port="$port" --bind-address=127.0.0.1 --skip-name-resolve --log-error="$dir/error.log" \
        --thread-handling=pool-of-threads --max-connections="$MAXCONN" >/dev/null 2>&1 &
    MY_PID=$!
    for _ in $(seq 120); do mariadb-admin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1 && break; sleep 0.5; done
    mariadb --no-defaults --socket="$sock" -uroot -e "CREATE DATABASE sbtest; CREATE USER 'bench'@'127.0.0.1'; GRANT ALL ON *.* TO 'bench'@'127.0.0.1';"
    local args="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=bench --mysql-db=sbtest"
    # shellcheck disable=SC2086
    sysbench oltp_point_select $args --tables=1 --table-size=10000 prepare >/dev/null 2>&1
    for t in 1000 2000 4000 8000 16000 32000 64000 100000; do
        log "sysbench --threads $t"
        # shellcheck disable=SC2086
        if timeout 120 sysbench oltp_point_select $args --tables=1 --table-size=10000 --threads=$t \
            --time=5 run >"$WORK/sb-$t.out" 2>&1 && grep -q "queries:" "$WORK/sb-$t.out"; then
            best=$t
        else
            echo "sysbench ceiling: $best threads (at $t: $(grep -m1 -iE 'fatal|error|cannot|failed' "$WORK/sb-$t.out" | cut -c1-120))"
            return
        fi
    done
    echo "sysbench ran every level up to $best threads"
}

# fleet_start: PostgreSQL 15 and PGB_PROCS pgbouncer processes on one port (so_reuseport),
# started here (segments need a server every segment reaches); sets BPORT.
fleet_start() {
    local pgbin=/usr/lib/postgresql/15/bin dir=$WORK/fleet k pgport
    mkdir -p "$dir"; chown postgres:postgres "$dir"
    PG_DATA=$dir/data
    runuser -u postgres -- "$pgbin/initdb" -D "$PG_DATA" -A trust -U postgres >"$dir/initdb.log" 2>&1
    # below the ephemeral range (32768–60999 by default), where a client's port could be
    pgport=$((20000 + RANDOM % 12000)); BPORT=$((pgport + 1))
    # The server holds only the pools' connections, but dbdelta checks a URL target's level
    # against the server's max_connections (it cannot see the pooler): that limit is raised
    # to the largest level (it reserves shared memory, not processes).
    runuser -u postgres -- "$pgbin/pg_ctl" -D "$PG_DATA" -l "$dir/pg.log" -w -o \
        "-p $pgport -k $dir -c listen_addresses=127.0.0.1 -c max_connections=$((MAXLEVEL + 100)) -c shared_buffers=256MB" \
        start >/dev/null
    printf '"postgres" ""\n' >"$dir/userlist.txt"
    for k in $(seq "$PGB_PROCS"); do
        cat >"$dir/pgbouncer-$k.ini" <<INI
[databases]
* = host=127.0.0.1 port=$pgport
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BPORT
unix_socket_dir =
so_reuseport = 1
logfile = $dir/pgbouncer-$k.log
pidfile = $dir/pgbouncer-$k.pid
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 20
max_client_conn = $(( $(ulimit -n) - 200 ))
ignore_startup_parameters = extra_float_digits
INI
        chown postgres:postgres "$dir/pgbouncer-$k.ini" "$dir/userlist.txt"
        # runuser resets the soft open-file limit (PAM): raise it again for pgbouncer
        runuser -u postgres -- sh -c 'ulimit -n "$1" && exec pgbouncer -d "$2"' sh "$(ulimit -n)" "$dir/pgbouncer-$k.ini"
    done
    sleep 1
    log "PostgreSQL on $pgport, $PGB_PROCS pgbouncer processes on $BPORT ($(( $(ulimit -n) - 200 )) clients each)"
}

# rss_kb PID...: summed resident memory (kB).
rss_kb() { local t=0 p r; for p in "$@"; do r=$(awk '/VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null); t=$((t + ${r:-0})); done; echo $t; }

# seg_sweep: per level, SEGMENTS dbdelta segments against the fleet, merged; one row each.
seg_sweep() {
    local n k rd seg pids pgb pg peak_c peak_b peak_s b0 s0 c b s f
    for n in $LEVELS; do
        rd=$WORK/seg-$n; mkdir -p "$rd"
        log "segments: $n connections over $SEGMENTS processes"
        pgb=$(cat "$WORK"/fleet/pgbouncer-*.pid)
        pg=$(head -1 "$PG_DATA/postmaster.pid")
        # shellcheck disable=SC2086
        b0=$(rss_kb $pgb); s0=$(rss_kb "$pg" $(pgrep -P "$pg"))
        pids=()
        for k in $(seq "$SEGMENTS"); do
            timeout $((600 + 4 * n / RATE + 3 * SECS)) "$DBDELTA" run --quiet --no-store --no-prepared \
                --segment "$k/$SEGMENTS" --segment-run "conns-$STAMP-$n" \
                -t "fleet=postgres://postgres@127.0.0.1:$BPORT/postgres" --steps point-query \
                --connections "$n" --active "$ACTIVE" --connect-rate "$(( RATE / SEGMENTS + 1 ))" \
                --read-secs "$SECS" --warmup-secs 1 --table-size 10000 --run-dir "$rd/seg$k" \
                >"$rd/seg$k.out" 2>&1 &
            pids+=($!)
        done
        peak_c=0 peak_b=0 peak_s=0
        while for k in "${pids[@]}"; do kill -0 "$k" 2>/dev/null && break; done; do
            # the dbdelta processes are the children of the timeout processes
            # shellcheck disable=SC2086
            c=$(rss_kb $(for k in "${pids[@]}"; do pgrep -P "$k"; done)); b=$(rss_kb $pgb); s=$(rss_kb "$pg" $(pgrep -P "$pg"))
            [ "$c" -gt "$peak_c" ] && peak_c=$c; [ "$b" -gt "$peak_b" ] && peak_b=$b; [ "$s" -gt "$peak_s" ] && peak_s=$s
            sleep 0.5
        done
        for k in "${pids[@]}"; do wait "$k" || true; done
        if ! "$DBDELTA" merge --quiet "$rd"/seg[0-9]*/ --run-dir "$rd/merged" >"$rd/merge.out" 2>&1; then
            printf '| fleet | %s | merge failed: %s | | | | | |\n' "$n" "$(tail -1 "$rd/merge.out" | cut -c1-80)"
            continue
        fi
        f=$(ls "$rd"/merged/results/fleet/*-point-query_range=100.dop"$n".json 2>/dev/null | head -1)
        [ -z "$f" ] && { printf '| fleet | %s | no merged result | | | | | |\n' "$n"; continue; }
        jq -r --arg segs "$SEGMENTS" --argjson pc "$peak_c" --argjson pb "$((peak_b - b0))" --argjson ps "$((peak_s - s0))" '
          def kb(x): if x == null then "-" else ((x / 1024 * 10 | round) / 10 | tostring) end;
          def per(x): ((x / .connect.connections * 10 | round) / 10 | tostring);
          if .status.state != "ok" then
            "| fleet ×\($segs) | \(.threads) | \(.status.state): \(.status.reason // "" | .[0:80]) | | | | | |"
          else
            "| fleet ×\($segs) | \(.connect.connections) (\(.connect.active)) | \(.connect.seconds * 10 | round / 10) s | \(.connect.latency.p50_us | round) / \(.connect.latency.p99_us | round) µs | \(kb(.connect.client_bytes_per_connection)) (all \($pc / 1024 | round) MB) | pgbouncer \(per($pb)), server \(per($ps)) | \(.qps | round) | \(.latency.p99_us | round) µs |"
          end' "$f"
    done
}

# Started here, not in the pipeline below: cleanup (in this shell) must see PG_DATA.
if [ "$SEGMENTS" -gt 0 ]; then fleet_start; fi
{
    echo "# Connections: one dbdelta process, $ACTIVE active connections per level ($STAMP)"
    echo
    echo "Host: $(nproc) cores, $(free -g | awk '/^Mem:/ { print $2 }') GiB; $(uname -r). point-query, 10k rows, $SECS s per level, connect rate $RATE/s."
    echo
    echo "| target | connections (active) | connect time | connect p50 / p99 | client KB/conn | server KB/conn | QPS | p99 |"
    echo "|---|---|---|---|---|---|---|---|"
    if [ $DO_MY = 1 ]; then
        dd_sweep maria "mysql:/usr?thread_handling=pool-of-threads&max_connections=$MAXCONN"
    fi
    if [ "$SEGMENTS" -gt 0 ]; then
        seg_sweep
    fi
    if [ $DO_PG = 1 ]; then
        dd_sweep pgb "postgres:/usr/lib/postgresql/15/bin?pgbouncer=transaction&pgbouncer.max_client_conn=$MAXCONN"
    fi
    echo
    if [ $DO_SB = 1 ] && [ $DO_MY = 1 ]; then sb_ceiling; fi
} | tee "$OUT"
log "written: $OUT"
exit 0
}
