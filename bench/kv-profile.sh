#!/usr/bin/env bash
# kv-profile.sh -- CPU per operation of dbdelta's kv steps and db_bench's, by symbol (issue 32).
#
# Runs db_bench (fillseq with the WAL disabled, readrandom, overwrite, as vs-db_bench.sh does)
# and dbdelta's kv suite on the same library and options, each under `perf record -e
# cpu-clock` (a software clock: this works on VMs without a PMU, where instructions and
# cycles are not counted). For each step it takes the foreground thread's samples only
# (db_bench's benchmark thread; dbdelta's worker of that step), divides them by the sampling
# rate and the step's operations, and prints µs of CPU per operation: the total of each tool,
# the symbols where they differ most, and every symbol of dbdelta's own code (its binary, the
# clock reads). CPU per operation does not depend on the share of the CPUs a busy host gives,
# which the ops/s of vs-db_bench.sh does. Needs perf, db_bench and jq.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
NUM=1000000 SECS=10 HZ=2999 TOP=12 DBDELTA=$ROOT/target/release/dbdelta DB_BENCH=db_bench KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
    --num) NUM=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --hz) HZ=$2; shift ;;
    --top) TOP=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --db-bench) DB_BENCH=$2; shift ;;
    --keep) KEEP=$2; shift ;;
    -h | --help) sed -n 2,12p "$0"; echo "usage: $0 [--num KEYS] [--secs S] [--hz F] [--top N] [--dbdelta PATH] [--db-bench PATH] [--keep DIR]"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
for c in perf "$DB_BENCH" jq; do command -v "$c" >/dev/null || { echo "missing: $c (apt-get install linux-perf rocksdb-tools jq)" >&2; exit 1; }; done
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release -p dbdelta)" >&2; exit 1; }
if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; SCRATCH=$KEEP; else
    SCRATCH=$(mktemp -d /var/tmp/kv-profile.XXXXXX); trap 'rm -rf "$SCRATCH"' EXIT; fi
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
# benchmark_compare.sh's constants = dbdelta's rocksdb: defaults.
. "$HERE/db_bench-options.sh"
STEPS=(fillseq readrandom overwrite)

# "tid<TAB>dso<TAB>symbol" of each sample's leaf frame.
leaves() { # perf.data recorded without call graphs: one line a sample
    perf script -i "$1" -F tid,ip,sym,dso 2>/dev/null | awk '
    NF >= 3 { tid = $1; l = $0; sub(/^ *[0-9]+ +[0-9a-f]+ /, "", l); d = l; sub(/.*\(/, "", d); sub(/\)$/, "", d)
        n = split(d, p, "/"); d = p[n]; sub(/ \([^(]*\)$/, "", l); sub(/\+0x[0-9a-f]+$/, "", l); print tid "\t" d "\t" l }'
}
# µs per operation by "dso  symbol" of one thread: "symbol<TAB>µs".
per_op() { # leaves tid ops
    awk -F'\t' -v t="$2" -v ops="$3" -v hz="$HZ" '$1 == t { c[$2 "  " $3]++ }
        END { for (k in c) printf "%s\t%.4f\n", k, c[k] / hz / ops * 1e6 }' "$1" | sort -t$'\t' -k1,1
}
# The thread of a perf file with the most samples among those named $2 (its comm prefix).
busiest() { # leaves-with-comm comm-prefix
    perf report -i "$1" --sort pid -g none -n --stdio 2>/dev/null |
        awk -v c="$2" '$3 ~ ("^[0-9]+:" c) { split($3, p, ":"); print $2 "\t" p[1] }' | sort -rn
}

log "db_bench under perf"
dbb=$SCRATCH/dbb
rm -rf "$dbb"
declare -A DBB_OPS DBB_TID DBD_TID DBD_OPS
for s in "${STEPS[@]}"; do
    case $s in
    fillseq) extra=(--use_existing_db=0 --disable_wal=1) ;;
    *) extra=(--use_existing_db=1 --duration="$SECS") ;;
    esac
    perf record -q -e cpu-clock -F "$HZ" -o "$SCRATCH/dbb-$s.data" "$DB_BENCH" "${COMMON[@]}" \
        --db="$dbb" --wal_dir="$dbb" --benchmarks="$s" --seed=1001 "${extra[@]}" >"$SCRATCH/dbb-$s.log" 2>&1
    DBB_OPS[$s]=$(awk -v b="$s" '$1 == b && $2 == ":" { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^operations/) print $i }' "$SCRATCH/dbb-$s.log" | tail -1)
    DBB_TID[$s]=$(busiest "$SCRATCH/dbb-$s.data" db_bench | head -1 | cut -f2)
    leaves "$SCRATCH/dbb-$s.data" >"$SCRATCH/dbb-$s.leaf"
    # dbdelta's kv suite settles after fillseq (flush, wait for compaction): so does db_bench,
    # outside the recording, so that both read the same LSM shape.
    [ "$s" = fillseq ] && "$DB_BENCH" "${COMMON[@]}" --db="$dbb" --wal_dir="$dbb" \
        --benchmarks=flush,waitforcompaction --use_existing_db=1 >>"$SCRATCH/dbb-$s.log" 2>&1
done

log "dbdelta under perf"
run=$SCRATCH/dbd
rm -rf "$run" "$SCRATCH/dbd.db"
perf record -q -e cpu-clock -F "$HZ" -o "$SCRATCH/dbd.data" "$DBDELTA" run --quiet --no-store --suite kv \
    --steps "$(IFS=,; echo "${STEPS[*]}")" -t "rx=rocksdb:$SCRATCH/dbd.db?statistics=false" --table-size "$NUM" \
    --threads 1 --read-secs "$SECS" --write-secs "$SECS" --warmup-secs 0 --run-dir "$run" >"$SCRATCH/dbd.log" 2>&1
# Each step's worker is a new thread: the steps' workers are the busiest threads named after
# the binary, in the order they were created (thread ids ascend).
comm=$(basename "$DBDELTA" | cut -c1-15)
mapfile -t tids < <(busiest "$SCRATCH/dbd.data" "$comm" | head -"${#STEPS[@]}" | cut -f2 | sort -n)
leaves "$SCRATCH/dbd.data" >"$SCRATCH/dbd.leaf"
i=0
for s in "${STEPS[@]}"; do
    DBD_TID[$s]=${tids[$i]}
    DBD_OPS[$s]=$(jq -r '.events' "$run"/results/rx/*-"$s".dop1.json | head -1)
    i=$((i + 1))
done

echo "# CPU per operation, foreground thread (perf record -e cpu-clock -F $HZ; $NUM keys, ${SECS} s steps)"
echo
echo "| step | db_bench µs/op | dbdelta µs/op | dbdelta / db_bench | dbdelta's own code µs/op |"
echo "|---|---|---|---|---|"
for s in "${STEPS[@]}"; do
    per_op "$SCRATCH/dbb-$s.leaf" "${DBB_TID[$s]}" "${DBB_OPS[$s]}" >"$SCRATCH/a.tsv"
    per_op "$SCRATCH/dbd.leaf" "${DBD_TID[$s]}" "${DBD_OPS[$s]}" >"$SCRATCH/b.tsv"
    join -t$'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 "$SCRATCH/a.tsv" "$SCRATCH/b.tsv" >"$SCRATCH/$s.join"
    awk -F'\t' -v s="$s" -v bin="$comm" '{ a += $2; b += $3 }
        $1 ~ ("^" bin "  ") || $1 ~ /clock_gettime|Timespec|Instant/ { own += $3 }
        END { printf "| %s | %.3f | %.3f | %.3f | %.3f |\n", s, a, b, b / a, own }' "$SCRATCH/$s.join"
done
for s in "${STEPS[@]}"; do
    echo
    echo "## $s: largest differences (µs/op; db_bench ${DBB_OPS[$s]} ops, dbdelta ${DBD_OPS[$s]} ops)"
    echo
    echo '```'
    printf '%9s %9s %9s  %s\n' "dbd-dbb" db_bench dbdelta symbol
    awk -F'\t' '{ printf "%+9.4f %9.4f %9.4f  %s\n", $3 - $2, $2, $3, $1 }' "$SCRATCH/$s.join" |
        sort -k1,1 -g -r | awk -v n="$TOP" 'NR <= n'
    echo "  ... the other way:"
    awk -F'\t' '{ printf "%+9.4f %9.4f %9.4f  %s\n", $3 - $2, $2, $3, $1 }' "$SCRATCH/$s.join" |
        sort -k1,1 -g | awk -v n="$((TOP / 2))" 'NR <= n'
    echo '```'
done
