#!/usr/bin/env bash
# point-read cost at N records on FerretDB v1.24.2 (SQLite): YCSB (MongoDocClient) vs dbdelta, workload C
set -euo pipefail
N=${1:-10000}; DBD=${2:-/tmp/ycsbmongo-dbdelta-debug}
FD=/var/cache/dbdelta-ferretdb-v1.24.2/bin/ferretdb
CACHE=$HOME/.cache/dbdelta-ycsb; CP="$CACHE/classes:$CACHE/lib/*"; WL=/work/wt/ycsbmongo/bench/ycsb-bindings/workloads
PORT=27391
$FD --handler=sqlite --sqlite-url=file:$PWD/fd/data/ --listen-addr=127.0.0.1:$PORT --debug-addr=- --telemetry=disable --log-level=warn --state-dir=$PWD/fd/state > fd/log 2>&1 &
FDP=$!; trap "kill $FDP" EXIT; sleep 2
(while kill -0 $FDP 2>/dev/null; do echo "$(date +%s.%N) $(awk '{print $14+$15}' /proc/$FDP/stat)"; sleep 0.25; done > cpu.log) &
cpu() { awk '{print $14+$15}' /proc/$FDP/stat; }
echo "YCSB load $N"; time java -cp "$CP" site.ycsb.Client -load -P $WL/workloadc -p recordcount=$N -threads 2 -db site.ycsb.db.mongodoc.MongoDocClient -p mongodb.url=mongodb://127.0.0.1:$PORT/ycsbpt?w=1 >load.out 2>&1
c0=$(cpu)
java -cp "$CP" site.ycsb.Client -t -P $WL/workloadc -p recordcount=$N -p operationcount=100000000 -p maxexecutiontime=15 -threads 2 -db site.ycsb.db.mongodoc.MongoDocClient -p mongodb.url=mongodb://127.0.0.1:$PORT/ycsbpt?w=1 >c.out 2>&1
c1=$(cpu)
grep -E 'OVERALL|\[READ\], Operations' c.out
ops=$(grep '\[READ\], Operations' c.out | awk -F', ' '{print $3}')
echo "YCSB: $(grep Throughput c.out), server CPU ms per read: $(echo "($c1-$c0)*10/$ops" | bc -l)"
c0=$(cpu)
$DBD run --quiet --no-store --suite ycsb --steps 'workload-c*' -t "t=mongodb://127.0.0.1:$PORT/dbdpt?w=1" --table-size $N --threads 2 --read-secs 15 --write-secs 15 --insert-secs 15 --warmup-secs 1 --run-dir $PWD/dbd >dbd.out 2>&1 || tail dbd.out
c1=$(cpu)
f=$(ls dbd/results/t/*-workload-c.dop*.json | head -1)
jq -c '{throughput: .throughput.value, counts: ([.op_types[] | {(.name): .count}] | add)}' $f
python3 - $f <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); t0=r["started_unix"]; t1=t0+r["seconds"]
s=[tuple(map(float,l.split())) for l in open("cpu.log") if len(l.split())==2]
a=min(s,key=lambda x:abs(x[0]-t0)); b=min(s,key=lambda x:abs(x[0]-t1))
print(f"dbdelta: {r['qps']:.1f} reads/s, server CPU ms per read: {(b[1]-a[1])*10/r['reads']:.1f}, client CPU us/op {r['client_cpu_us_per_op']:.0f}")
PY
