#!/usr/bin/env bash
# Brute-force probe of extreme values: every numeric flag of `dbdelta run` and the numeric
# parameters of target specs, each with values at and past the edges, on the mock engine
# (and SQLite / RocksDB where the flag needs one), with tiny windows. A case is a finding
# when dbdelta panics, aborts (signal), hangs past the timeout, or exits 0 for a value that
# must be refused. Usage: bench/extremes.sh [DBDELTA_BINARY]; prints one line per finding
# and a summary.
set -u
BIN=${1:-dbdelta}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=${PROBE_TIMEOUT:-30}
cases=0
findings=0

# Values a hostile or careless user might type for a number.
EXTREMES=(0 -1 1e308 nan inf 4294967295 4294967296 18446744073709551615 99999999999)

probe() { # suite, extra args...
    cases=$((cases + 1))
    local rd="$TMP/r$cases"
    timeout -s KILL "$T" "$BIN" run --no-store --quiet --run-dir "$rd" \
        --read-secs 0.05 --write-secs 0.05 --insert-secs 0.05 --warmup-secs 0 \
        --repeat 1 "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    local why=""
    if grep -q "panicked" "$TMP/err"; then why="panic"; fi
    if [ $rc -ge 128 ] || [ $rc -eq 101 ]; then why="$why rc=$rc"; fi
    if [ $rc -eq 137 ]; then why="$why hang>${T}s"; fi
    if [ -n "$why" ]; then
        findings=$((findings + 1))
        echo "FINDING ($why): $* :: $(grep -m1 -E 'panicked|error' "$TMP/err" | cut -c1-200)"
    fi
    rm -rf "$rd"
}

MOCK=(-t m=mock --steps 'point-query')
for flag in --tables --table-size --threads --connections --active --connect-rate \
    --connect-timeout --statement-timeout --rate --repeat --turn-ms --seed \
    --round-warmup-secs --settle-secs --latency-limit --max-tries --transactions \
    --profile-freq; do
    for v in "${EXTREMES[@]}"; do probe "${MOCK[@]}" "$flag" "$v"; done
done
for flag in --scale-factor --warehouses --terminals --max-tries --transactions; do
    for v in "${EXTREMES[@]}"; do
        probe -t m=mock --suite tpcb --steps select-only "$flag" "$v"
        probe -t m=mock --suite tpcc "$flag" "$v"
    done
done
for flag in --clients --rows-load --rows-write --query-secs; do
    for v in "${EXTREMES[@]}"; do probe -t m=mock --suite ibench --scale quick "$flag" "$v"; done
done
for suite in kv ycsb; do
    for v in "${EXTREMES[@]}"; do probe -t m=mock --suite "$suite" --table-size "$v"; done
done
# Target parameters that reach a conversion or a foreign library.
for p in busy_timeout cache_size mmap_size page_size statement_timeout; do
    for v in "${EXTREMES[@]}" 99999999999s; do probe -t "l=sqlite?$p=$v" --steps point-query; done
done
for p in cache_size write_buffer_size max_write_buffer_number max_background_jobs block_size \
    bytes_per_sync target_file_size_base max_bytes_for_level_base bloom_bits; do
    for v in "${EXTREMES[@]}" 1T 16383T; do
        probe -t "r=rocksdb:$TMP/rocks$cases?$p=$v" --suite kv --table-size 1000 --steps fillseq
    done
done
echo "$cases cases, $findings findings"
