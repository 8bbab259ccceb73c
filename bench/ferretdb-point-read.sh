#!/usr/bin/env bash
# ferretdb-point-read.sh [RECORDS] [DBDELTA] [FERRETDB] -- what one point read costs FerretDB
# v1.24.2 (SQLite backend) from each client: YCSB 0.17.0 core + MongoDocClient and dbdelta's
# mongodb engine, workload C at 2 threads for 15 s each against one FerretDB, each client in
# its own database. Prints reads/s and FerretDB's CPU per read (from /proc: over YCSB's run,
# and over dbdelta's measured window). Needs the YCSB jars and classes that
# bench/vs-ycsb.sh --engines mongodb fetches and compiles into ~/.cache/dbdelta-ycsb.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=${1:-10000}
DBD=${2:-$HERE/../target/release/dbdelta}
FD=${3:-/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/dbdelta-ycsb
CP="$CACHE/classes:$CACHE/lib/*" WL=$HERE/ycsb-bindings/workloads
[ -f "$CACHE/classes/site/ycsb/db/mongodoc/MongoDocClient.class" ] || { echo "run bench/vs-ycsb.sh --engines mongodb once first" >&2; exit 1; }
WORK=$(mktemp -d /var/tmp/fd-point-read.XXXXXX)
mkdir -p "$WORK/fd/data" "$WORK/fd/state"
while :; do PORT=$((20000 + RANDOM % 30000)); ss -Htan "( sport = :$PORT )" | grep -q . || break; done
"$FD" --handler=sqlite "--sqlite-url=file:$WORK/fd/data/" "--listen-addr=127.0.0.1:$PORT" --debug-addr=- \
    --telemetry=disable --log-level=warn "--state-dir=$WORK/fd/state" >"$WORK/fd/log" 2>&1 &
FDP=$!
trap 'kill $FDP 2>/dev/null || true; rm -rf "$WORK"' EXIT
sleep 2
kill -0 $FDP 2>/dev/null || { cat "$WORK/fd/log" >&2; exit 1; }
(while kill -0 $FDP 2>/dev/null; do echo "$(date +%s.%N) $(awk '{print $14+$15}' /proc/$FDP/stat)"; sleep 0.25; done >"$WORK/cpu.log") &
cpu() { awk '{print $14+$15}' /proc/$FDP/stat; }
URL="mongodb://127.0.0.1:$PORT/ycsbpt?w=1"
java -cp "$CP" site.ycsb.Client -load -P "$WL/workloadc" -p recordcount="$N" -threads 2 \
    -db site.ycsb.db.mongodoc.MongoDocClient -p mongodb.url="$URL" >"$WORK/load.out" 2>&1
c0=$(cpu)
java -cp "$CP" site.ycsb.Client -t -P "$WL/workloadc" -p recordcount="$N" -p operationcount=100000000 \
    -p maxexecutiontime=15 -threads 2 -db site.ycsb.db.mongodoc.MongoDocClient -p mongodb.url="$URL" >"$WORK/c.out" 2>&1
c1=$(cpu)
ops=$(grep '\[READ\], Operations' "$WORK/c.out" | awk -F', ' '{print $3}')
tput=$(grep 'OVERALL.*Throughput' "$WORK/c.out" | awk -F', ' '{print $3}')
echo "YCSB + MongoDocClient: $tput reads/s, FerretDB CPU ms per read: $(echo "($c1-$c0)*1000/$(getconf CLK_TCK)/$ops" | bc -l)"
"$DBD" run --quiet --no-store --suite ycsb --steps 'workload-c*' -t "t=mongodb://127.0.0.1:$PORT/dbdpt?w=1" \
    --table-size "$N" --threads 2 --read-secs 15 --write-secs 15 --insert-secs 15 --warmup-secs 1 \
    --run-dir "$WORK/dbd" >"$WORK/dbd.out" 2>&1 || tail -5 "$WORK/dbd.out" >&2
python3 - "$(ls "$WORK"/dbd/results/t/*-workload-c.dop*.json | head -1)" "$WORK/cpu.log" "$(getconf CLK_TCK)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t0 = r["started_unix"]; t1 = t0 + r["seconds"]
s = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
a = min(s, key=lambda x: abs(x[0] - t0)); b = min(s, key=lambda x: abs(x[0] - t1))
print(f"dbdelta: {r['qps']:.1f} reads/s, FerretDB CPU ms per read: {(b[1] - a[1]) * 1000 / float(sys.argv[3]) / r['reads']:.1f}, "
      f"client CPU us/op {r['client_cpu_us_per_op']:.0f}")
PY
