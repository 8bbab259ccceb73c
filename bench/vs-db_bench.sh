#!/usr/bin/env bash
# vs-db_bench.sh -- dbdelta's kv suite vs RocksDB's db_bench on the same library and options.
#
# Debian's rocksdb-tools ships db_bench 7.8.3, built from the same source as the librocksdb
# dbdelta loads. For each repeat (the two tools alternate, and which goes first alternates),
# both run fillseq (WAL disabled, 1 thread), readrandom and overwrite on a fresh database
# with benchmark_compare.sh's options, which are dbdelta's rocksdb: defaults. Both settle
# the database after fillseq as dbdelta's kv suite does (flush, then wait for compaction:
# db_bench's `flush,waitforcompaction`), so that both read the same LSM shape. Prints ops/s
# of each tool per step, the ratio dbdelta/db_bench per repeat and the median ratio.
# Goal (issue 32): dbdelta/db_bench >= 0.97 on every step.
# --lib and --db-bench compare another library and its own db_bench (a build of
# `dbdelta build rocksdb`); both tools must report the same RocksDB version (db_bench's
# header line and the library's "RocksDB version:" line in dbdelta's database LOG), or
# the script stops. --nice N runs both tools at that niceness (e.g. -10 on a machine that
# other work loads, so that neither tool's ops/s is mostly its share of the CPU).
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
NUM=1000000 SECS=10 REPS=3 DBDELTA=$ROOT/target/release/dbdelta OUT="" LIB="" DB_BENCH=db_bench NICE=0
while [ $# -gt 0 ]; do
    case "$1" in
    --num) NUM=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --out) OUT=$2; shift ;;
    --lib) LIB=$2; shift ;;
    --db-bench) DB_BENCH=$2; shift ;;
    --nice) NICE=$2; shift ;;
    -h | --help) sed -n 2,16p "$0"; echo "usage: $0 [--num KEYS] [--secs S] [--reps R] [--dbdelta PATH] [--lib LIBROCKSDB --db-bench DB_BENCH] [--nice N] [--out FILE]"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
for c in "$DB_BENCH" jq; do command -v $c >/dev/null || { echo "missing: $c (apt-get install rocksdb-tools jq)" >&2; exit 1; }; done
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release)" >&2; exit 1; }
: "${OUT:=$HERE/results-vs-db_bench-$(date -u +%Y%m%d).md}"
SCRATCH=$(mktemp -d /var/tmp/vs-db_bench.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# benchmark_compare.sh's constants = dbdelta's rocksdb: defaults.
. "$HERE/db_bench-options.sh"

ops_of() { awk -v b="$1" '$1 == b && $2 == ":" { for (i = 1; i <= NF; i++) if ($(i+1) == "ops/sec") print $i }' "$2" | tail -1; }

run_db_bench() { # $1 = rep; prints "fillseq readrandom overwrite" ops/s
    local dir=$SCRATCH/dbb$1 log=$SCRATCH/dbb$1.log
    rm -rf "$dir"
    nice -n "$NICE" "$DB_BENCH" "${COMMON[@]}" --db="$dir" --wal_dir="$dir" --benchmarks=fillseq --use_existing_db=0 --disable_wal=1 --seed=$((1000 + $1)) >"$log" 2>&1
    # dbdelta's kv suite settles after fillseq (flush, then wait for compaction): so does db_bench.
    nice -n "$NICE" "$DB_BENCH" "${COMMON[@]}" --db="$dir" --wal_dir="$dir" --benchmarks=flush,waitforcompaction --use_existing_db=1 >>"$log" 2>&1
    nice -n "$NICE" "$DB_BENCH" "${COMMON[@]}" --db="$dir" --wal_dir="$dir" --benchmarks=readrandom --use_existing_db=1 --duration="$SECS" --seed=$((2000 + $1)) >>"$log" 2>&1
    nice -n "$NICE" "$DB_BENCH" "${COMMON[@]}" --db="$dir" --wal_dir="$dir" --benchmarks=overwrite --use_existing_db=1 --duration="$SECS" --seed=$((3000 + $1)) >>"$log" 2>&1
    sed -n 's/^RocksDB: *version \([0-9.]*\).*/\1/p' "$log" | head -1 >"$SCRATCH/db_bench.version"
    echo "$(ops_of fillseq "$log") $(ops_of readrandom "$log") $(ops_of overwrite "$log")"
}

run_dbdelta() { # $1 = rep
    local run=$SCRATCH/dbd$1
    rm -rf "$run"
    nice -n "$NICE" "$DBDELTA" run --quiet --no-store --suite kv --steps fillseq,readrandom,overwrite \
        -t "rx=rocksdb:$SCRATCH/dbd$1.db?statistics=false${LIB:+&lib=$LIB}" --table-size "$NUM" --threads 1 \
        --read-secs "$SECS" --write-secs "$SECS" --warmup-secs 0 --run-dir "$run" >/dev/null 2>&1
    local v=()
    for s in fillseq readrandom overwrite; do
        v+=("$(jq -r '.throughput.value | floor' "$run"/results/rx/*-"$s".dop1.json | head -1)")
    done
    # The version the library itself wrote when it opened the database.
    sed -n 's/.*RocksDB version: \([0-9.]*\).*/\1/p' "$SCRATCH/dbd$1.db/LOG" | head -1 >"$SCRATCH/lib.version"
    rm -rf "$SCRATCH/dbd$1.db"
    echo "${v[*]}"
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
declare -a DBB DBD
for rep in $(seq 1 "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then
        log "rep $rep: db_bench"; DBB[$rep]=$(run_db_bench "$rep")
        log "rep $rep: dbdelta"; DBD[$rep]=$(run_dbdelta "$rep")
    else
        log "rep $rep: dbdelta"; DBD[$rep]=$(run_dbdelta "$rep")
        log "rep $rep: db_bench"; DBB[$rep]=$(run_db_bench "$rep")
    fi
    log "  db_bench ${DBB[$rep]} | dbdelta ${DBD[$rep]}"
done

DBB_V=$(cat "$SCRATCH/db_bench.version") LIB_V=$(cat "$SCRATCH/lib.version")
if [ -z "$DBB_V" ] || [ "$DBB_V" != "$LIB_V" ]; then
    echo "version mismatch: db_bench reports '${DBB_V}', the library dbdelta loaded '${LIB_V}'" >&2
    exit 1
fi
log "both tools ran RocksDB $DBB_V"
{
    echo "# dbdelta kv vs db_bench, RocksDB $DBB_V ($("$DB_BENCH" --version 2>/dev/null | head -1 || true); library ${LIB:-the system one})"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; $NUM keys (20 B keys, 400 B values), 1 thread, ${SECS} s read/overwrite, $REPS interleaved repeats."
    echo "Command: bench/vs-db_bench.sh --num $NUM --secs $SECS --reps $REPS --nice $NICE${LIB:+ --lib $LIB --db-bench $DB_BENCH}; load average before: $LOAD"
    echo
    echo "| step | rep | db_bench ops/s | dbdelta ops/s | ratio |"
    echo "|---|---|---|---|---|"
    i=0
    for s in fillseq readrandom overwrite; do
        i=$((i + 1))
        ratios=() as=() bs=()
        for rep in $(seq 1 "$REPS"); do
            a=$(echo "${DBB[$rep]}" | cut -d' ' -f$i) b=$(echo "${DBD[$rep]}" | cut -d' ' -f$i)
            r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "n/a" }')
            ratios+=("$r") as+=("$a") bs+=("$b")
            echo "| $s | $rep | $a | $b | $r |"
        done
        median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
        echo "| **$s** | median | $(median "${as[@]}") | $(median "${bs[@]}") | **$(median "${ratios[@]}")** |"
    done
} | tee "$OUT"
log "written to $OUT"
}
