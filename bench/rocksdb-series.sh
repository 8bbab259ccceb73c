#!/usr/bin/env bash
# rocksdb-series.sh -- RocksDB versions on dbdelta's kv suite, each also by its own db_bench.
#
# Each version is a library with the db_bench of the same tree: `debian` is Debian's
# librocksdb 7.8.3 with rocksdb-tools' db_bench; a release (7.9, 8.10, 9.9, 10.4, 11.8) is
# `dbdelta build rocksdb --source RELEASE` (librocksdb.so and db_bench from crates.io's
# librocksdb-sys crate; built with --build, else taken from the build cache, else skipped
# and said so). Per version, bench/vs-db_bench.sh runs fillseq, readrandom and overwrite
# with both tools on that library (interleaved repeats; it stops if the two report different
# versions). Prints the series table (each version's ops/s relative to the oldest, by each
# tool) and dbdelta/db_bench per version.
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
VERSIONS="debian 7.9 8.10 9.9 10.4 11.8" NUM=1000000 SECS=10 REPS=3 BUILD=0 JOBS=2 NICE=0
DBDELTA=$ROOT/target/release/dbdelta OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
    --versions) VERSIONS=$2; shift ;;
    --num) NUM=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --build) BUILD=1 ;;
    --jobs) JOBS=$2; shift ;;
    --nice) NICE=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) sed -n 2,11p "$0"; echo "usage: $0 [--versions 'debian 8.10 9.9 11.8'] [--build [--jobs N]] [--nice N] [--num KEYS] [--secs S] [--reps R] [--dbdelta PATH] [--out FILE]"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release)" >&2; exit 1; }
: "${OUT:=$HERE/results-rocksdb-series-$(date -u +%Y%m%d).md}"
WORK=$(mktemp -d /var/tmp/rocksdb-series.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

declare -a DONE=() SKIPPED=()
for v in $VERSIONS; do
    if [ "$v" = debian ]; then
        lib=$(ls /usr/lib/x86_64-linux-gnu/librocksdb.so.7.8* 2>/dev/null | head -1)
        dbb=$(command -v db_bench || true)
        if [ -z "$lib" ] || [ -z "$dbb" ]; then
            SKIPPED+=("debian: librocksdb-dev or rocksdb-tools missing"); continue
        fi
    else
        if [ "$BUILD" = 1 ]; then
            log "$v: dbdelta build rocksdb --source $v (cached, or many minutes)"
            "$DBDELTA" build rocksdb --source "$v" --jobs "$JOBS" >"$WORK/$v.lib" 2>"$WORK/$v.build" ||
                { SKIPPED+=("$v: the build failed ($(tail -1 "$WORK/$v.build"))"); continue; }
        elif ! "$DBDELTA" build rocksdb --source "$v" --cached-only >"$WORK/$v.lib" 2>"$WORK/$v.build"; then
            SKIPPED+=("$v: not built ($(tail -1 "$WORK/$v.build"); run with --build)"); continue
        fi
        lib=$(cat "$WORK/$v.lib")
        dbb=$(dirname "$(dirname "$lib")")/bin/db_bench
    fi
    log "$v: $lib with $dbb"
    if bash "$HERE/vs-db_bench.sh" --num "$NUM" --secs "$SECS" --reps "$REPS" --dbdelta "$DBDELTA" --nice "$NICE" \
        ${lib:+--lib "$lib"} --db-bench "$dbb" --out "$WORK/$v.md" >/dev/null 2>"$WORK/$v.log"; then
        DONE+=("$v")
    else
        SKIPPED+=("$v: vs-db_bench.sh failed ($(tail -1 "$WORK/$v.log"))")
    fi
done

# "| **step** | median | db_bench | dbdelta | **ratio** |" → the median ops/s of one tool.
med() { awk -F'|' -v s="**$2**" '{ gsub(/ /, "", $2) } $2 == s { gsub(/[ *]/, "", $'"$3"'); print $'"$3"' }' "$WORK/$1.md"; }
ver() { sed -n 's/^# dbdelta kv vs db_bench, RocksDB \([0-9.]*\).*/\1/p' "$WORK/$1.md"; }

{
    echo "# RocksDB series: dbdelta's kv suite and each version's own db_bench"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $NUM keys, 1 thread, ${SECS} s read/overwrite, $REPS interleaved repeats per version."
    echo "Command: bench/rocksdb-series.sh --versions '$VERSIONS' --num $NUM --secs $SECS --reps $REPS --nice $NICE$([ "$BUILD" = 1 ] && echo ' --build')"
    echo
    if [ ${#DONE[@]} -gt 0 ]; then
        base=${DONE[0]}
        echo "## Series (median ops/s relative to RocksDB $(ver "$base"), by each tool)"
        echo
        echo "| version | fillseq dbdelta | fillseq db_bench | readrandom dbdelta | readrandom db_bench | overwrite dbdelta | overwrite db_bench |"
        echo "|---|---|---|---|---|---|---|"
        for v in "${DONE[@]}"; do
            row="| $(ver "$v") |"
            for s in fillseq readrandom overwrite; do
                for col in 5 4; do
                    row+=" $(awk -v a="$(med "$v" $s $col)" -v b="$(med "$base" $s $col)" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }') |"
                done
            done
            echo "$row"
        done
        echo
        echo "## dbdelta / db_bench per version (median of the per-repeat ratios; goal >= 0.97)"
        echo
        echo "| version | fillseq | readrandom | overwrite | fillseq ops/s (db_bench, dbdelta) | readrandom ops/s | overwrite ops/s |"
        echo "|---|---|---|---|---|---|---|"
        for v in "${DONE[@]}"; do
            echo "| $(ver "$v") | $(med "$v" fillseq 6) | $(med "$v" readrandom 6) | $(med "$v" overwrite 6) | $(med "$v" fillseq 4), $(med "$v" fillseq 5) | $(med "$v" readrandom 4), $(med "$v" readrandom 5) | $(med "$v" overwrite 4), $(med "$v" overwrite 5) |"
        done
        echo
    fi
    if [ ${#SKIPPED[@]} -gt 0 ]; then
        echo "Not measured:"
        for s in "${SKIPPED[@]}"; do echo "- $s"; done
        echo
    fi
    echo "## Per version"
    for v in "${DONE[@]}"; do echo; sed 's/^# /### /' "$WORK/$v.md"; done
} | tee "$OUT"
log "written to $OUT"
}
