#!/usr/bin/env bash
# trust.sh -- does the default run's coloring mean something? (issue 16's acceptance)
#
#   1. A/A: the same SQLite configuration twice, default flags: how many of the 42 steps are
#      flagged (goal ≤ 1), and the median 95 % half-width (goal ≤ ±10 %);
#   2. the default main job (`dbdelta run`: rollback relative to wal): every write step must
#      be flagged slower; how many read steps are flagged, and which;
#   2b. the same read path: wal (synchronous=NORMAL) relative to walfull (synchronous=FULL,
#      an fsync per commit): writes must be flagged slower, reads (the same code path) not;
#   3. a planted 3 % change (mock statement latency 1 ms vs 1.03 ms, one step, --repeat N):
#      resolved at 95 % within 10 minutes?
# Every part prints its wall time. With --load, a release build of dbdelta loops beside the
# runs the whole time (the "while another build runs" condition).
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBDELTA=$ROOT/target/release/dbdelta
PARTS="aa main walfull planted"
TRIES=5
SUITES="tpcb tpcc ycsb kv"
BUDGET=10m
PG=/usr/lib/postgresql/15/bin
LOAD=0
KEEP=0
ROUNDS=20
OUT=""
usage() {
    cat <<'EOF'
usage: bench/trust.sh [--dbdelta PATH] [--parts "aa main planted"] [--load] [--planted-rounds N] [--out FILE]
  --dbdelta PATH        binary to test (default <repo>/target/release/dbdelta; never built here)
  --parts LIST          which parts to run (default: aa main walfull planted). Issue 29's parts:
                        contention (default A/A beside two CPU hogs and 20 short dbdelta runs in
                        parallel), pgwrites (A/A of two managed PostgreSQL 15 on the write steps,
                        then a planted commit_delay slowdown, each within --budget), resolve
                        (--resolve 2% --budget on the default SQLite pair), suites (tpcb, tpcc,
                        ycsb, kv: an A/A default run and a known effect, --tries times each)
  --tries N             tries per suite and case of the suites part (default 5)
  --suites LIST         suites of the suites part (default "tpcb tpcc ycsb kv")
  --budget D            --budget of the pgwrites and resolve parts (default 10m)
  --pg DIR              PostgreSQL bin directory of the pgwrites part (default PostgreSQL 15's)
  --load                loop `cargo build --release` of this repo (own target dir) beside the runs
  --planted-rounds N    rounds of the planted-change run (default 20, 1 s windows)
  --keep                keep the run directories (printed at the end)
  --out FILE            Markdown summary (default bench/results-trust-<UTC time>.md)
EOF
}
while [ $# -gt 0 ]; do
    case "$1" in
    --dbdelta) DBDELTA=$2; shift ;;
    --parts) PARTS=$2; shift ;;
    --load) LOAD=1 ;;
    --keep) KEEP=1 ;;
    --planted-rounds) ROUNDS=$2; shift ;;
    --tries) TRIES=$2; shift ;;
    --suites) SUITES=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    --pg) PG=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "--planted-rounds: not a positive integer: '$ROUNDS'" >&2; exit 2; }
[[ $TRIES =~ ^[1-9][0-9]*$ ]] || { echo "--tries: not a positive integer: '$TRIES'" >&2; exit 2; }
[ -x "$DBDELTA" ] || { echo "no dbdelta binary at $DBDELTA (cargo build --release)" >&2; exit 2; }
command -v jq >/dev/null || { echo "missing: jq" >&2; exit 2; }
: "${OUT:=$HERE/results-trust-$(date -u +%Y%m%d-%H%M%S).md}"
WORK=$(mktemp -d /tmp/trust.XXXXXX)
chmod 755 "$WORK" # managed servers run as the service user and must reach their data dirs
LOADER=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [ -n "$LOADER" ] && kill -- -"$LOADER" 2>/dev/null
    if [ $rc = 0 ] && [ $KEEP = 0 ]; then rm -rf "$WORK"; else echo "scratch kept: $WORK" >&2; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

if [ $LOAD = 1 ]; then
    # Its own process group, so cleanup stops cargo and rustc with it.
    setsid bash -c "while :; do CARGO_TARGET_DIR='$WORK/load-target' cargo build --release \
        --manifest-path '$ROOT/Cargo.toml' >/dev/null 2>&1; rm -rf '$WORK/load-target'; done" &
    LOADER=$!
    log "load: a release build of dbdelta loops beside the runs (pid $LOADER)"
fi

# run NAME ARGS... : one dbdelta run into $WORK/NAME, its wall time in $WORK/NAME.secs
run() {
    local name=$1 t0 t1; shift
    t0=$(date +%s.%N)
    "$DBDELTA" run --quiet --no-store --run-dir "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1 ||
        { tail -5 "$WORK/$name.log" >&2; echo "dbdelta run $name failed" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }' >"$WORK/$name.secs"
}

# try_run NAME ARGS... : like run, but a nonzero exit is recorded ($WORK/NAME.rc), not fatal
try_run() {
    local name=$1 t0 t1 rc=0; shift
    t0=$(date +%s.%N)
    "$DBDELTA" run --quiet --no-store --run-dir "$WORK/$name" "$@" >"$WORK/$name.log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    echo "$rc" >"$WORK/$name.rc"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }' >"$WORK/$name.secs"
}
# failed NAME: step results that did not end ok (failed, stalled, interrupted)
failed() {
    python3 - "$WORK/$1" <<'PY'
import glob, json, sys
n = 0
for f in glob.glob(sys.argv[1] + "/results/*/*.json"):
    try:
        r = json.load(open(f))
    except ValueError:
        continue
    if isinstance(r, dict) and r.get("status", {}).get("state", "ok") != "ok":
        n += 1
print(n)
PY
}
# verdict NAME LABEL_REGEX: "ratio [low, high] verdict" of the matching cells, joined by "; "
verdict() {
    jq -r --arg re "$2" '[.verdicts[] | select(.label | test($re))
        | "\(.label) \(.ratio * 1000 | round / 1000) [\(.low * 1000 | round / 1000), \(.high * 1000 | round / 1000)] \(.verdict)"] | join("; ")' \
        "$WORK/$1/report.json"
}
# sign NAME LABEL_REGEX WANT: how many matching cells have verdict WANT ("regression"/"improvement")
sign() {
    jq -r --arg re "$2" --arg want "$3" '[.verdicts[] | select(.label | test($re)) | select(.verdict == $want)] | length' \
        "$WORK/$1/report.json"
}
# loadavg_watch FILE: the 1-minute load average every 10 s into FILE until killed
loadavg_watch() {
    while :; do cut -d' ' -f1 /proc/loadavg >>"$1"; sleep 10; done
}
# spread FILE: "min–max (median m)" of the numbers in FILE
spread() {
    sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) { print "no samples"; exit }
        printf "%s–%s (median %s, %d samples)", v[1], v[NR], v[int((NR + 1) / 2)], NR }'
}

# flagged NAME [GROUP]: cells flagged significant (after FDR control), optionally of one group
flagged() {
    jq -r --arg g "${2:-}" '
        (.tables[0].rows | map({(.label): .group}) | add) as $group
        | [.verdicts[] | select(.verdict != "no significant change")
           | select($g == "" or $group[.label] == $g)] | length' "$WORK/$1/report.json"
}
# steps NAME [GROUP]: compared cells
compared() {
    jq -r --arg g "${2:-}" '
        (.tables[0].rows | map({(.label): .group}) | add) as $group
        | [.verdicts[] | select($g == "" or $group[.label] == $g)] | length' "$WORK/$1/report.json"
}
# half NAME: median 95 % half-width in percent over every compared cell
half() {
    jq -r '[.verdicts[] | (.high - .low) / 2 / .ratio * 100] | sort
           | if length == 0 then "NA" else (.[(length - 1) / 2 | floor] + .[length / 2 | floor]) / 2 | . * 10 | round / 10 end' \
        "$WORK/$1/report.json"
}
# list NAME JQFILTER: "label ratio [low, high] verdict" lines of the selected cells
list() {
    jq -r "(.tables[0].rows | map({(.label): .group}) | add) as \$group | .verdicts[] | select($2)
           | \"| \(.label) | \(\$group[.label]) | \(.ratio * 1000 | round / 1000) | [\(.low * 1000 | round / 1000), \(.high * 1000 | round / 1000)] | \(.verdict)\(if .withheld then \" °\" else \"\" end) |\"" \
        "$WORK/$1/report.json"
}

# extra_per_event RUNDIR: rollback's extra µs per event over wal, per read step
extra_per_event() {
    python3 - "$1" <<'PY'
import glob, json, math, statistics, sys
rates = {}
for f in glob.glob(sys.argv[1] + "/results/*/*.json"):
    r = json.load(open(f))
    if r.get("kind") != "measured" or not r.get("turns") or r["group"] == "write":
        continue
    rates.setdefault(r["label"], {}).setdefault(r["target"], []).append(r["events"] / r["seconds"])
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
rows = []
for label, by in rates.items():
    if {"wal", "rollback"} <= by.keys():
        wal, rb = gm(by["wal"]), gm(by["rollback"])
        rows.append((1e6 / wal, 1e6 / rb - 1e6 / wal, rb / wal, label))
short = sorted(r for r in rows if r[0] < 300)
print("| step | wal µs/event | rollback/wal | extra µs/event |")
print("|---|---:|---:|---:|")
for us, extra, ratio, label in short:
    print(f"| {label} | {us:.1f} | {ratio:.3f} | {extra:+.2f} |")
if short:
    e = [r[1] for r in short]
    print(f"\nExtra time per event over {len(e)} read steps whose events take {short[0][0]:.1f}-{short[-1][0]:.1f} µs: "
          f"median {statistics.median(e):+.2f} µs, quartiles {statistics.quantiles(e, n=4)[0]:+.2f} / {statistics.quantiles(e, n=4)[2]:+.2f} µs.")
PY
}

{
    echo "# Trust: does the default run's coloring mean something? -- $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "Machine: $(nproc) CPUs, load average at start $(cut -d' ' -f1-3 /proc/loadavg); $([ $LOAD = 1 ] && echo 'a release build of dbdelta looped beside every run' || echo 'no extra load started by the script')."
    echo "Binary: $DBDELTA ($("$DBDELTA" --version 2>/dev/null || echo unknown)). Produced by \`bench/trust.sh --parts \"$PARTS\"$([ $LOAD = 1 ] && echo ' --load') --planted-rounds $ROUNDS --tries $TRIES --budget $BUDGET\`."
    echo
} >"$OUT"

SAME='journal_mode=WAL&synchronous=NORMAL'
for part in $PARTS; do
    case $part in
    aa)
        log "A/A: sqlite?$SAME twice, default flags"
        run aa -t "a=sqlite?$SAME" -t "b=sqlite?$SAME"
        {
            echo "## A/A: the same SQLite configuration twice, default flags"
            echo
            echo "\`dbdelta run -t 'a=sqlite?$SAME' -t 'b=sqlite?$SAME'\`: $(cat "$WORK/aa.secs") s."
            echo
            echo "- flagged: **$(flagged aa) of $(compared aa)** steps (goal ≤ 1)"
            echo "- median 95 % half-width: **±$(half aa) %** (goal ≤ ±10 %)"
            echo "- $(jq -r '.noise_floor // "no noise floor"' "$WORK/aa/report.json")"
            echo
            if [ "$(flagged aa)" != 0 ]; then
                echo "| step | group | ratio | 95 % interval | verdict |"
                echo "|---|---|---:|---|---|"
                list aa '.verdict != "no significant change"'
                echo
            fi
        } >>"$OUT"
        ;;
    main)
        log "main job: dbdelta run (rollback relative to wal)"
        run main
        {
            echo "## The default main job: rollback relative to wal"
            echo
            echo "\`dbdelta run\`: $(cat "$WORK/main.secs") s (goal ≤ 300 s)."
            echo
            echo "- write steps flagged: **$(flagged main write) of $(compared main write)** (goal: all, as slower)"
            echo "- write steps flagged faster: $(jq -r '(.tables[0].rows | map({(.label): .group}) | add) as $g | [.verdicts[] | select($g[.label] == "write" and .verdict == "improvement")] | length' "$WORK/main/report.json")"
            echo "- read steps (point + range) flagged: **$(( $(flagged main point) + $(flagged main range) )) of $(( $(compared main point) + $(compared main range) ))**"
            echo "- median 95 % half-width: **±$(half main) %** (goal ≤ ±10 %)"
            echo "- $(jq -r '.noise_floor // "no noise floor"' "$WORK/main/report.json")"
            echo
            echo "Flagged read steps and unflagged write steps:"
            echo
            echo "| step | group | ratio | 95 % interval | verdict |"
            echo "|---|---|---:|---|---|"
            list main '(.verdict != "no significant change" and $group[.label] != "write") or (.verdict == "no significant change" and $group[.label] == "write")'
            echo
            echo "Is a flagged read real? Rollback mode takes and drops a file lock and re-reads the"
            echo "database header for every read transaction; a fixed cost per event shows as the same"
            echo "extra time per event on every read step, whatever the event itself costs (rounds in"
            echo "turns, geometric mean rates; steps whose wal event takes under 300 µs):"
            echo
            extra_per_event "$WORK/main"
            echo
        } >>"$OUT"
        ;;
    walfull)
        log "same read path: sqlite WAL synchronous=FULL relative to NORMAL"
        run walfull -t "wal=sqlite?$SAME" -t 'walfull=sqlite?journal_mode=WAL&synchronous=FULL'
        {
            echo "## The same read path: WAL with synchronous=FULL relative to NORMAL"
            echo
            echo "\`dbdelta run -t 'wal=sqlite?$SAME' -t 'walfull=sqlite?journal_mode=WAL&synchronous=FULL'\`: $(cat "$WORK/walfull.secs") s."
            echo "Reads run the same code in both (WAL); FULL adds an fsync of the WAL at every commit."
            echo
            echo "- write steps flagged: **$(flagged walfull write) of $(compared walfull write)**"
            echo "- read steps (point + range) flagged: **$(( $(flagged walfull point) + $(flagged walfull range) )) of $(( $(compared walfull point) + $(compared walfull range) ))** (goal ≤ 2)"
            echo "- median 95 % half-width: **±$(half walfull) %**"
            echo "- $(jq -r '.noise_floor // "no noise floor"' "$WORK/walfull/report.json")"
            echo
            echo "| step | group | ratio | 95 % interval | verdict |"
            echo "|---|---|---:|---|---|"
            list walfull '(.verdict != "no significant change" and $group[.label] != "write") or (.verdict == "no significant change" and $group[.label] == "write")'
            echo
        } >>"$OUT"
        ;;
    planted)
        log "planted: mock latency 1ms vs 1030us, point-query, $ROUNDS rounds of 1 s"
        run planted -t "base=mock?latency=1ms" -t "slower=mock?latency=1030us" --steps point-query \
            --repeat "$ROUNDS" --read-secs 1 --warmup-secs 0.2
        {
            echo "## A planted 3 % change: mock statement latency 1 ms vs 1.03 ms"
            echo
            echo "\`dbdelta run -t base=mock?latency=1ms -t slower=mock?latency=1030us --steps point-query --repeat $ROUNDS --read-secs 1 --warmup-secs 0.2\`: $(cat "$WORK/planted.secs") s (goal ≤ 600 s)."
            echo "Expected QPS ratio a little above 1/1.03 = 0.971 (the mock's fixed cost per statement is the same on both)."
            echo
            echo "| step | group | ratio | 95 % interval | verdict |"
            echo "|---|---|---:|---|---|"
            list planted 'true'
            echo
        } >>"$OUT"
        ;;
    contention)
        # Issue 29's oversubscribed host: two CPU hogs and 20 short dbdelta runs in parallel
        # (mock pairs, over and over) for the whole A/A run; --load adds the release build.
        log "contention: A/A beside two CPU hogs and 20 parallel short runs"
        setsid bash -c "yes >/dev/null & yes >/dev/null & \
            for i in \$(seq 20); do (while :; do '$DBDELTA' run --quiet --no-store \
                --run-dir '$WORK/short-'\$i -t m=mock -t n=mock --steps point-query,read-only \
                --read-secs 0.2 --warmup-secs 0.1 >/dev/null 2>&1; rm -rf '$WORK/short-'\$i; done) & done; wait" &
        HOGS=$!
        loadavg_watch "$WORK/contention.load" &
        WATCH=$!
        sleep 30 # let the load average climb before the run
        try_run contention -t "a=sqlite?$SAME" -t "b=sqlite?$SAME"
        kill -- -"$HOGS" 2>/dev/null || true
        kill "$WATCH" 2>/dev/null || true
        {
            echo "## Default A/A on an oversubscribed host"
            echo
            echo "\`dbdelta run -t 'a=sqlite?$SAME' -t 'b=sqlite?$SAME'\` beside two \`yes > /dev/null\` and 20"
            echo "parallel loops of short runs (\`dbdelta run -t m=mock -t n=mock --steps point-query,read-only --read-secs 0.2\`)$([ $LOAD = 1 ] && echo ' and a release build of dbdelta looping')."
            echo "1-minute load average every 10 s (from 30 s before the run): $(spread "$WORK/contention.load")."
            echo
            echo "- exit code: **$(cat "$WORK/contention.rc")** (goal 0), $(cat "$WORK/contention.secs") s"
            echo "- failed/stalled step results: **$(failed contention)** (goal 0)"
            echo "- flagged: **$(flagged contention) of $(compared contention)** (goal ≤ 1)"
            echo "- $(jq -r '.noise_floor // "no noise floor"' "$WORK/contention/report.json")"
            echo "- $(jq -r '.contention // "no contention line"' "$WORK/contention/report.json")"
            echo
        } >>"$OUT"
        ;;
    pgwrites)
        # Server writes: A/A of two managed PostgreSQL targets on the six write steps, rounds
        # added until ±3 % or the budget; then the same with a planted slowdown on b.
        WSTEPS='update-index,update-nonindex,insert,delete,write-only,read-write'
        PLANT=${PLANT:-commit_delay=100&commit_siblings=0}
        for case in aa planted; do
            b="b=postgres:$PG"
            [ $case = planted ] && b="b=postgres:$PG?$PLANT"
            log "pgwrites $case: $b, --resolve 3% --budget $BUDGET"
            try_run "pg$case" -t "a=postgres:$PG" -t "$b" --steps "$WSTEPS" --resolve 3% --budget "$BUDGET"
        done
        {
            echo "## Server writes: two managed PostgreSQL targets on the write steps"
            echo
            echo "\`dbdelta run -t a=postgres:$PG -t b=postgres:$PG[?$PLANT] --steps $WSTEPS --resolve 3% --budget $BUDGET\`"
            echo
            for case in aa planted; do
                echo "### ${case/aa/A\/A}: exit $(cat "$WORK/pg$case.rc"), $(cat "$WORK/pg$case.secs") s, median half-width ±$(half "pg$case") %, flagged $(flagged "pg$case") of $(compared "pg$case")"
                echo
                echo "| step | group | ratio | 95 % interval | verdict |"
                echo "|---|---|---:|---|---|"
                list "pg$case" 'true'
                echo
                grep '^\[resolve\]' "$WORK/pg$case.log" | sed 's/^/    /' || true
                echo
            done
        } >>"$OUT"
        ;;
    resolve)
        log "resolve: --resolve 2% --budget $BUDGET on the default SQLite pair"
        try_run resolve -t "a=sqlite?$SAME" -t "b=sqlite?$SAME" --resolve 2% --budget "$BUDGET"
        {
            echo "## --resolve 2% --budget $BUDGET on the default SQLite pair (A/A)"
            echo
            echo "exit $(cat "$WORK/resolve.rc"), $(cat "$WORK/resolve.secs") s. Read steps at ±2 % or better:"
            echo "**$(jq -r '(.tables[0].rows | map({(.label): .group}) | add) as $g | [.verdicts[] | select($g[.label] != "write") | select((.high - .low) / 2 / .ratio <= 0.02)] | length' "$WORK/resolve/report.json") of $(( $(compared resolve point) + $(compared resolve range) ))**;"
            echo "all steps: median half-width ±$(half resolve) %, flagged $(flagged resolve) of $(compared resolve)."
            echo
            echo "Read steps above ±2 %:"
            echo
            echo "| step | group | ratio | 95 % interval | verdict |"
            echo "|---|---|---:|---|---|"
            list resolve '$group[.label] != "write" and (.high - .low) / 2 / .ratio > 0.02'
            echo
        } >>"$OUT"
        ;;
    suites)
        # Each suite's default run: A/A flags nothing; a known effect flagged with its sign.
        SQL_FULL='journal_mode=WAL&synchronous=FULL'
        SQL_OFF='journal_mode=WAL&synchronous=OFF'
        {
            echo "## Every suite by default: A/A and a known effect, $TRIES tries each"
            echo
            echo "| suite | case | try | exit | s | flagged | noise floor | cells of the effect |"
            echo "|---|---|---:|---:|---:|---:|---|---|"
        } >>"$OUT"
        for try in $(seq "$TRIES"); do
            for suite in $SUITES; do
                case $suite in
                tpcb) aa=(-t "a=postgres:$PG" -t "b=postgres:$PG")
                      fx=(-t "sync=postgres:$PG" -t "async=postgres:$PG?synchronous_commit=off")
                      fx_re='^tpcb-like'; fx_want=improvement ;;
                tpcc) aa=(-t "a=sqlite?$SQL_FULL" -t "b=sqlite?$SQL_FULL")
                      fx=(-t "full=sqlite?$SQL_FULL" -t "off=sqlite?$SQL_OFF")
                      fx_re='.'; fx_want=improvement ;;
                ycsb) aa=(-t "a=sqlite?$SQL_FULL" -t "b=sqlite?$SQL_FULL")
                      fx=(-t "full=sqlite?$SQL_FULL" -t "off=sqlite?$SQL_OFF")
                      fx_re='^(a|workload-?a|ycsb-?a)([^a-z]|$)'; fx_want=improvement ;;
                kv)   aa=(-t a=rocksdb: -t b=rocksdb:)
                      # 1,000,000 keys of 420 B: the default 1 GiB cache holds them, 4 MB is ~1/100; direct
                      # reads so a miss reaches the disk, not the OS page cache (with it, the small
                      # cache measured 1.27-1.39x faster: a smaller LRU over page-cache hits)
                      fx=(-t "cached=rocksdb:?use_direct_reads=true" -t "small=rocksdb:?use_direct_reads=true&cache_size=4M" --steps fillseq,readrandom)
                      fx_re='^readrandom'; fx_want=regression ;;
                *) echo "--suites: unknown suite '$suite' (tpcb, tpcc, ycsb, kv)" >&2; exit 2 ;;
                esac
                for case in aa fx; do
                    name="$suite-$case-$try"
                    if [ $case = aa ]; then args=("${aa[@]}"); else args=("${fx[@]}"); fi
                    log "suites: $name"
                    try_run "$name" --suite "$suite" "${args[@]}"
                    if [ -f "$WORK/$name/report.json" ]; then
                        cells='-'
                        [ $case = fx ] && cells="$(sign "$name" "$fx_re" "$fx_want") $fx_want: $(verdict "$name" "$fx_re")"
                        echo "| $suite | ${case/fx/effect} | $try | $(cat "$WORK/$name.rc") | $(cat "$WORK/$name.secs") | $(flagged "$name") of $(compared "$name") | $(jq -r '.noise_floor // "-"' "$WORK/$name/report.json" | sed 's/^Noise floor: this run resolves differences larger than //; s/ (median.*//') | $cells |" >>"$OUT"
                    else
                        echo "| $suite | ${case/fx/effect} | $try | $(cat "$WORK/$name.rc") | $(cat "$WORK/$name.secs") | no report | $(tail -1 "$WORK/$name.log") | |" >>"$OUT"
                    fi
                done
            done
        done
        echo >>"$OUT"
        ;;
    *) echo "--parts: unknown part '$part' (aa, main, walfull, planted, contention, pgwrites, resolve, suites)" >&2; exit 2 ;;
    esac
done
cat "$OUT"
log "written to $OUT"
exit 0
}
