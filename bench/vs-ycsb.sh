#!/usr/bin/env bash
# vs-ycsb.sh -- dbdelta's ycsb suite vs YCSB 0.17.0 on the same managed PostgreSQL 15, on
# RocksDB (embedded in each tool) and (--engines mongodb) on one FerretDB v1.24.2 (SQLite).
#
# YCSB: site.ycsb:core 0.17.0 and the drivers from Maven Central; the JDBC and RocksDB
# bindings compiled from their 0.17.0 source (bench/ycsb-bindings: Maven Central does not
# serve them). For mongodb, YCSB's own mongodb binding cannot be used (not on Maven
# Central, and built on the 3.x driver API that mongodb-driver-sync 5.x lacks): the client
# is MongoDocClient, dbdelta's re-implementation of that binding's requests on the 5.14.0
# driver (bench/ycsb-bindings/README.md). Each repeat runs both tools in turn (the order
# alternates): the load of --records records, then workloads A, B, C, F, D and E for --secs each at --threads.
# Prints per workload and engine: throughput of each tool and their ratio, each tool's
# operation mix and the largest difference (goal: within 1 point), and each tool's client
# CPU per operation over the steady part of the run (goal: dbdelta <= 0.5x YCSB's).
# Run as root (PostgreSQL runs as an unprivileged user).
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RECORDS=100000 SECS=10 THREADS=2 REPS=3 DBDELTA=$ROOT/target/release/dbdelta OUT=""
PG_BIN=/usr/lib/postgresql/15/bin RUN_USER=dbdelta ENGINES="pg rocksdb"
FERRETDB=/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb
# YCSB's RocksDB binding opens rocksdbjni 5.11.3 with RocksDB's defaults plus
# optimizeLevelStyleCompaction(): an 8 MB block cache, snappy, no bloom filter, 128 MB
# memtables. dbdelta's target gets the same, so the ratio compares the clients, not configs.
ROCKSDB_PARAMS="cache_size=8M&compression=snappy&bloom_bits=0&write_buffer_size=128M"
while [ $# -gt 0 ]; do
    case "$1" in
    --records) RECORDS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --rocksdb-params) ROCKSDB_PARAMS=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --pg-bin) PG_BIN=$2; shift ;;
    --ferretdb) FERRETDB=$2; shift ;;
    --user) RUN_USER=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) sed -n 2,17p "$0"; echo "usage: $0 [--records N] [--secs S] [--threads T] [--reps R] [--engines \"pg rocksdb mongodb\"] [--rocksdb-params P] [--dbdelta PATH] [--ferretdb PATH] [--out FILE]"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL is started as user '$RUN_USER')"
for c in java javac mvn jq python3 runuser ss; do command -v $c >/dev/null || die "missing: $c"; done
[ -x "$DBDELTA" ] || die "no dbdelta binary at $DBDELTA (cargo build --release)"
id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home "$RUN_USER"
if [[ " $ENGINES " == *" mongodb "* ]]; then
    [ -x "$FERRETDB" ] || die "no FerretDB binary at $FERRETDB (--ferretdb PATH; scripts/test.sh builds one there)"
fi
: "${OUT:=$HERE/results-vs-ycsb-$(date -u +%Y%m%d).md}"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/dbdelta-ycsb
WORK=$(mktemp -d /var/tmp/vs-ycsb.XXXXXX)
chmod 755 "$WORK"
STOPS=()
cleanup() { for s in "${STOPS[@]}"; do eval "$s" >/dev/null 2>&1 || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- YCSB from Maven Central + source
mkdir -p "$CACHE"
if [ ! -f "$CACHE/lib/.done-mongodb" ]; then
    log "fetching site.ycsb:core 0.17.0 and drivers from Maven Central"
    cat >"$CACHE/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dbdelta</groupId><artifactId>ycsb-ref</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>site.ycsb</groupId><artifactId>core</artifactId><version>0.17.0</version></dependency>
    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId><version>42.7.4</version></dependency>
    <dependency><groupId>org.mongodb</groupId><artifactId>mongodb-driver-sync</artifactId><version>5.14.0</version></dependency>
    <dependency><groupId>org.rocksdb</groupId><artifactId>rocksdbjni</artifactId><version>5.11.3</version></dependency>
    <dependency><groupId>net.jcip</groupId><artifactId>jcip-annotations</artifactId><version>1.0</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>1.7.25</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>1.7.25</version></dependency>
  </dependencies>
</project>
POM
    (cd "$CACHE" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib) || die "maven could not fetch the jars"
    touch "$CACHE/lib/.done-mongodb"
fi
if [ ! -f "$CACHE/classes/.done" ] || [ "$HERE/ycsb-bindings/src" -nt "$CACHE/classes/.done" ]; then
    log "compiling YCSB 0.17.0's JDBC and RocksDB bindings and MongoDocClient"
    rm -rf "$CACHE/classes" && mkdir -p "$CACHE/classes"
    javac -nowarn -d "$CACHE/classes" -cp "$CACHE/lib/*" $(find "$HERE/ycsb-bindings/src" -name '*.java') 2>"$WORK/javac.log" ||
        { cat "$WORK/javac.log" >&2; die "javac failed"; }
    touch "$CACHE/classes/.done"
fi
CP="$CACHE/classes:$CACHE/lib/*"
WL=$HERE/ycsb-bindings/workloads
# YCSB 0.17.0 runs no operation at all with operationcount=0 (Client caps the threads at the
# operation count): give a count the time limit ends first. Its E then draws keys over
# recordcount + expectednewkeys (2 x 5 % of the count) and rejects those not inserted yet,
# where dbdelta's timed steps use expectednewkeys = 0.
OPCOUNT=$((RECORDS * 10))
ycsb() { # ycsb load|run WORKLOAD DB-ARGS… -> JSON
    local phase=$1 w=$2; shift 2
    if [ "$phase" = load ]; then # every record, however long it takes
        python3 "$HERE/ycsb_run.py" java -cp "$CP" site.ycsb.Client -load -P "$WL/workload$w" \
            -p recordcount="$RECORDS" -threads "$THREADS" -s -p status.interval=1 "$@"
    else
        python3 "$HERE/ycsb_run.py" java -cp "$CP" site.ycsb.Client -t -P "$WL/workload$w" \
            -p recordcount="$RECORDS" -p operationcount="$OPCOUNT" -p maxexecutiontime="$SECS" \
            -threads "$THREADS" -s -p status.interval=1 "$@"
    fi
}

# ---------------------------------------------------------------- PostgreSQL
free_port() { local p; while :; do p=$((20000 + RANDOM % 30000)); ss -Htan "( sport = :$p )" | grep -q . || { echo $p; return; }; done; }
PGPORT=""
if [[ " $ENGINES " == *" pg "* ]]; then
    mkdir -p "$WORK/pg" && chown "$RUN_USER" "$WORK/pg"
    runuser -u "$RUN_USER" -- "$PG_BIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
    PGPORT=$(free_port)
    runuser -u "$RUN_USER" -- "$PG_BIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/server.log" -w -t 120 \
        -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c shared_buffers=512MB -c max_connections=100" start >/dev/null
    STOPS+=("runuser -u $RUN_USER -- $PG_BIN/pg_ctl -D $WORK/pg/data -m fast -t 60 stop")
    "$PG_BIN/psql" -qX -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -c "CREATE DATABASE ycsb" -c "CREATE DATABASE dbdelta" >/dev/null
    log "PostgreSQL on 127.0.0.1:$PGPORT"
fi
# ---------------------------------------------------------------- FerretDB (SQLite backend)
# Started as dbdelta's managed ferretdb: target starts it (crates/ferretdb): loopback port,
# debug listener and telemetry off, SQLite files in the scratch area. Both clients use it;
# each load goes to a fresh database (YCSB's binding never drops its collection).
FDPORT=""
if [[ " $ENGINES " == *" mongodb "* ]]; then
    mkdir -p "$WORK/fd/data" "$WORK/fd/state"
    FDPORT=$(free_port)
    "$FERRETDB" --handler=sqlite "--sqlite-url=file:$WORK/fd/data/" "--listen-addr=127.0.0.1:$FDPORT" \
        --debug-addr=- --telemetry=disable --log-level=warn "--state-dir=$WORK/fd/state" >"$WORK/fd/server.log" 2>&1 &
    FDPID=$!
    STOPS+=("kill $FDPID")
    for _ in $(seq 100); do ss -Htln "( sport = :$FDPORT )" | grep -q . && break; sleep 0.1; done
    ss -Htln "( sport = :$FDPORT )" | grep -q . || { cat "$WORK/fd/server.log" >&2; die "FerretDB did not start"; }
    log "FerretDB $("$FERRETDB" --version 2>/dev/null | head -1) on 127.0.0.1:$FDPORT"
fi
# YCSB's JDBC binding never creates its table: the same layout dbdelta creates.
pg_reset_ycsb() {
    local cols="" i
    for i in $(seq 0 9); do cols+=", FIELD$i TEXT"; done
    "$PG_BIN/psql" -qX -h 127.0.0.1 -p "$PGPORT" -U postgres -d ycsb \
        -c "DROP TABLE IF EXISTS usertable" -c "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY$cols)" >/dev/null
}

# ---------------------------------------------------------------- one repeat of each tool
ORDER="a b c f d e"
run_ycsb() { # ENGINE REP -> writes $WORK/ycsb.ENGINE.REP.W.json
    local engine=$1 rep=$2 w args
    case $engine in
    pg) pg_reset_ycsb
        args=(-db site.ycsb.db.JdbcDBClient -p db.driver=org.postgresql.Driver
            -p "db.url=jdbc:postgresql://127.0.0.1:$PGPORT/ycsb" -p db.user=postgres -p db.passwd=) ;;
    rocksdb) rm -rf "$WORK/yrx"
        args=(-db site.ycsb.db.rocksdb.RocksDBClient -p "rocksdb.dir=$WORK/yrx") ;;
    mongodb) args=(-db site.ycsb.db.mongodoc.MongoDocClient -p "mongodb.url=mongodb://127.0.0.1:$FDPORT/ycsb${rep}a?w=1") ;;
    esac
    ycsb load a "${args[@]}" >"$WORK/ycsb.$engine.$rep.load.json" 2>/dev/null
    jq -e --argjson n "$RECORDS" '.counts.INSERT == $n' "$WORK/ycsb.$engine.$rep.load.json" >/dev/null ||
        die "YCSB loaded fewer than $RECORDS records: $(cat "$WORK/ycsb.$engine.$rep.load.json")"
    for w in $ORDER; do
        if [ "$w" = e ]; then # E's inserts would collide with D's: YCSB restarts its key sequence
            [ "$engine" = pg ] && pg_reset_ycsb
            [ "$engine" = rocksdb ] && rm -rf "$WORK/yrx"
            [ "$engine" = mongodb ] && args[-1]="mongodb.url=mongodb://127.0.0.1:$FDPORT/ycsb${rep}e?w=1"
            ycsb load a "${args[@]}" >/dev/null 2>&1
        fi
        ycsb run "$w" "${args[@]}" >"$WORK/ycsb.$engine.$rep.$w.json" 2>"$WORK/ycsb.$engine.$rep.$w.log" ||
            { cat "$WORK/ycsb.$engine.$rep.$w.log" >&2; die "YCSB workload $w failed"; }
    done
}
run_dbdelta() { # ENGINE REP
    local engine=$1 rep=$2 target
    case $engine in
    pg) target="t=postgres://postgres@127.0.0.1:$PGPORT/dbdelta" ;;
    rocksdb) rm -rf "$WORK/drx"; target="t=rocksdb:$WORK/drx?$ROCKSDB_PARAMS" ;;
    mongodb) target="t=mongodb://127.0.0.1:$FDPORT/dbdelta$rep?w=1" ;; # its loads drop the collection
    esac
    "$DBDELTA" run --quiet --no-store --suite ycsb -t "$target" --table-size "$RECORDS" --threads "$THREADS" \
        --read-secs "$SECS" --write-secs "$SECS" --insert-secs "$SECS" --warmup-secs 1 \
        --run-dir "$WORK/dbd.$engine.$rep" >/dev/null 2>&1
    for w in $ORDER; do
        jq -c '{throughput: .throughput.value, cpu_us_per_op: .client_cpu_us_per_op,
                counts: ([.op_types[] | {(.name): .count}] | add)}' \
            "$WORK/dbd.$engine.$rep"/results/t/*-workload-"$w".dop*.json >"$WORK/dbd.$engine.$rep.$w.json"
    done
}

for engine in $ENGINES; do
    for rep in $(seq 1 "$REPS"); do
        if [ $((rep % 2)) = 1 ]; then
            log "$engine rep $rep: YCSB"; run_ycsb "$engine" "$rep"
            log "$engine rep $rep: dbdelta"; run_dbdelta "$engine" "$rep"
        else
            log "$engine rep $rep: dbdelta"; run_dbdelta "$engine" "$rep"
            log "$engine rep $rep: YCSB"; run_ycsb "$engine" "$rep"
        fi
    done
done

# ---------------------------------------------------------------- table
{
echo "# dbdelta ycsb vs YCSB 0.17.0"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; $RECORDS records, $THREADS threads, ${SECS} s per workload, $REPS interleaved repeats; dbdelta's RocksDB options: $ROCKSDB_PARAMS."
echo "Command: bench/vs-ycsb.sh --engines \"$ENGINES\" --records $RECORDS --secs $SECS --threads $THREADS --reps $REPS"
echo "Client CPU: the JVM's (/proc, from the status line at 3 s to the last) and dbdelta's (getrusage over the window), per operation; on RocksDB both include the embedded engine."
if [[ " $ENGINES " == *" mongodb "* ]]; then
    echo "mongodb: both clients against one FerretDB ($("$FERRETDB" --version 2>/dev/null | head -1 | sed 's/^version: //'), SQLite backend, w=1, which FerretDB v1 ignores). YCSB's side is YCSB 0.17.0 core with MongoDocClient, dbdelta's re-implementation of YCSB's mongodb binding on mongodb-driver-sync 5.14.0 (bench/ycsb-bindings/README.md), not YCSB's own binding."
fi
echo
python3 - "$WORK" "$REPS" "$ENGINES" "$ORDER" <<'PY'
import json, statistics, sys
work, reps, engines, order = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
def load(tool, engine, rep, w):
    return json.load(open(f"{work}/{tool}.{engine}.{rep}.{w}.json"))
def mix(counts):
    total = sum(counts.values()) or 1
    return {k: v / total for k, v in counts.items()}
print("| engine | workload | ops/s YCSB | ops/s dbdelta | ratio (median of reps) | mix YCSB | mix dbdelta | max mix diff (points) | client CPU us/op YCSB | dbdelta | CPU ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for engine in engines:
    for w in order:
        y = [load("ycsb", engine, r, w) for r in range(1, reps + 1)]
        d = [load("dbd", engine, r, w) for r in range(1, reps + 1)]
        ratio = statistics.median(b["throughput"] / a["throughput"] for a, b in zip(y, d) if a["throughput"])
        ym, dm = mix(y[-1]["counts"]), mix(d[-1]["counts"] or {})
        diff = max(abs(ym.get(k, 0) - dm.get(k, 0)) for k in set(ym) | set(dm)) * 100
        fmt = lambda m: " ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(m.items()))
        yc = statistics.median(x["cpu_us_per_op"] for x in y if x["cpu_us_per_op"])
        dc = statistics.median(x["cpu_us_per_op"] for x in d if x["cpu_us_per_op"])
        print(f"| {engine} | {w.upper()} | {statistics.median(x['throughput'] for x in y):.0f} | "
              f"{statistics.median(x['throughput'] for x in d):.0f} | {ratio:.2f} | {fmt(ym)} | {fmt(dm)} | "
              f"{diff:.2f} | {yc:.1f} | {dc:.1f} | {dc / yc:.2f} |")
print()
print("Per repeat, ops/s YCSB / dbdelta (operations YCSB / dbdelta):")
print()
print("| engine | workload | " + " | ".join(f"rep {r}" for r in range(1, reps + 1)) + " |")
print("|---|---|" + "---|" * reps)
for engine in engines:
    for w in order:
        cells = []
        for r in range(1, reps + 1):
            a, b = load("ycsb", engine, r, w), load("dbd", engine, r, w)
            cells.append(f"{a['throughput']:.1f} / {b['throughput']:.1f} "
                         f"({sum(a['counts'].values())} / {sum((b['counts'] or {}).values())})")
        print(f"| {engine} | {w.upper()} | " + " | ".join(cells) + " |")
PY
} | tee "$OUT"
log "written to $OUT"
}
