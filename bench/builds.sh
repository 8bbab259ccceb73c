#!/usr/bin/env bash
# builds.sh -- PostgreSQL builds from source (issue 17, part 1), measured:
#
#   1. build time: `dbdelta build postgres --source 15 --recipe R` for each recipe, twice:
#      the first call builds (cold, unless the cache already held the entry: the script says
#      which), the second must be a cache hit;
#   2. symbolization: one `dbdelta run --profile` over a few sysbench steps against Debian's
#      PostgreSQL 15 and our builds; the share of user-space frames without a symbol per
#      target (profiles/<target>/*.json "unresolved_pct", sample-weighted);
#   3. (--speed) the quick sysbench suite on a few steps, our builds relative to the first
#      recipe, with --repeat verdicts.
#
# Needs: root (or a user who can run perf and apt-get source), a deb-src line for Debian's
# postgresql-15 (see docs/builds-and-versions.md), gcc, make, jq, perf, Debian's
# postgresql-15 (the comparison base of part 2).
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBDELTA=$ROOT/target/release/dbdelta
RECIPES="frame_pointers=on cflags=-O3"
PARTS="build profile"
STEPS="point-query,read-only_range=100,update-index"
REPEAT=3
DEBIAN_BIN=/usr/lib/postgresql/15/bin
OUT=""
usage() {
    cat <<'EOF'
usage: bench/builds.sh [--dbdelta PATH] [--recipes "R1 R2"] [--parts "build profile speed"]
                       [--steps GLOBS] [--repeat N] [--out FILE]
  --dbdelta PATH   binary to test (default <repo>/target/release/dbdelta; never built here)
  --recipes LIST   recipes to build, space-separated (default "frame_pointers=on cflags=-O3")
  --parts LIST     build (times), profile (symbolization), speed (sysbench verdicts)
  --steps GLOBS    sysbench steps of the profile and speed parts
  --repeat N       rounds of the speed part (default 3)
  --out FILE       Markdown results, appended to (default bench/results-builds-<UTC date>.md)
The build cache is dbdelta's default ($DBDELTA_BUILD_CACHE, as root /var/cache/dbdelta).
EOF
}
while [ $# -gt 0 ]; do
    case "$1" in
    --dbdelta) DBDELTA=$2; shift ;;
    --recipes) RECIPES=$2; shift ;;
    --parts) PARTS=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[ -x "$DBDELTA" ] || { echo "no dbdelta at $DBDELTA: cargo build --release, or --dbdelta PATH" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is needed: apt-get install jq" >&2; exit 2; }
OUT=${OUT:-$HERE/results-builds-$(date -u +%Y%m%d).md}
WORK=$(mktemp -d /var/tmp/dbdelta-builds.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
say() { echo "$*" | tee -a "$OUT"; }
now() { date +%s.%N; }

# A results file that exists is appended to (parts run at different times).
[ -s "$OUT" ] || { echo "# Builds from source"; echo; } > "$OUT"
{
    echo "_$(date -u +%Y-%m-%dT%H:%MZ), parts: $PARTS; host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $(cut -d' ' -f1-3 /proc/loadavg); $("$DBDELTA" --version) ($DBDELTA)_"
    echo
} >> "$OUT"

targets=()
i=0
for r in $RECIPES; do
    i=$((i + 1))
    name=$(echo "$r" | tr -c 'a-zA-Z0-9\n' '_' | sed 's/_*$//' | cut -c1-24)
    targets+=("b$i-$name=postgres-build:15?$(echo "$r" | tr ',' '&')")
done

if [[ " $PARTS " == *" build "* ]]; then
    say "## 1. Build time (dbdelta build postgres --source 15 --recipe R)"
    say ""
    say "| recipe | first call | result | second call | result | build dir | phases (s) |"
    say "|---|---:|---|---:|---|---|---|"
    for r in $RECIPES; do
        t0=$(now)
        bin=$("$DBDELTA" build postgres --source 15 --recipe "$r" 2> "$WORK/first.err") || {
            cat "$WORK/first.err" >&2; exit 1; }
        t1=$(now)
        "$DBDELTA" build postgres --source 15 --recipe "$r" 2> "$WORK/second.err" > /dev/null
        t2=$(now)
        first=$(grep -q ': cached (built in' "$WORK/first.err" && echo "cache hit" || echo "built (cold)")
        second=$(grep -q ': cached (built in' "$WORK/second.err" && echo "cache hit" || echo "BUILT AGAIN")
        dir=$(dirname "$bin")
        phases=$(jq -r '[.phases[] | "\(.name) \(.secs | floor)"] | join(", ")' "$dir/dbdelta-build.json")
        canon=$(jq -r .recipe "$dir/dbdelta-build.json")
        say "| $r ($canon) | $(echo "$t1 - $t0" | bc | xargs printf '%.1f') s | $first | $(echo "$t2 - $t1" | bc | xargs printf '%.2f') s | $second | $(basename "$dir") | $phases |"
        cat "$WORK/first.err" >&2
    done
    say ""
fi

if [[ " $PARTS " == *" profile "* ]]; then
    say "## 2. Symbolization under --profile (frame-pointer call graphs, 99 Hz)"
    say ""
    rd=$WORK/profile-run
    cmd=("$DBDELTA" run --suite sysbench --scale quick --steps "$STEPS" --profile --no-store
         --read-secs 5 --write-secs 5 --warmup-secs 1 --run-dir "$rd"
         -t "debian=postgres:$DEBIAN_BIN" "${targets[@]/#/-t}")
    # "${targets[@]/#/-t}" glues -t to each spec; split it again for the record.
    say "command: \`$(printf '%q ' "$DBDELTA" run --suite sysbench --scale quick --steps "$STEPS" --profile --read-secs 5 --write-secs 5 --warmup-secs 1 -t "debian=postgres:$DEBIAN_BIN" "${targets[@]/#/-t }")\`"
    say ""
    "${cmd[@]}" > "$WORK/profile.out" 2> "$WORK/profile.err" || {
        rc=$?; [ $rc -eq 3 ] || { tail -20 "$WORK/profile.err" >&2; exit 1; }; }
    say "| target | build | profiled steps | samples | user frames without a symbol (sample-weighted) | per step |"
    say "|---|---|---:|---:|---:|---|"
    for tdir in "$rd"/profiles/*/; do
        t=$(basename "$tdir")
        files=$(ls "$tdir"/*.json 2>/dev/null | grep -v -e '\.speedscope\.json$' -e 'settings.json' || true)
        [ -n "$files" ] || continue
        # shellcheck disable=SC2086
        row=$(jq -s -r '[.[] | select(.samples != null)] as $p
            | ($p | map(.samples) | add) as $n
            | "\($p | length) | \($n) | \(if $n > 0 then ($p | map(.unresolved_pct * .samples) | add) / $n * 100 | round / 100 else "n/a" end) % | \($p | map("\(.label) \(.unresolved_pct * 10 | round / 10)") | join(", "))"' $files)
        build=$(jq -r --arg t "$t" '.targets[] | select(.name == $t) | .settings["build.recipe"] // "Debian package"' "$rd/run.json")
        say "| $t | $build | $row |"
    done
    say ""
    say "Compiler and flags per target (run.json settings build.*):"
    say ""
    say '```'
    jq -r '.targets[] | "\(.name): \(.settings | with_entries(select(.key | startswith("build."))) | to_entries | map("\(.key)=\(.value)") | join("; "))"' "$rd/run.json" | tee -a "$OUT"
    say '```'
    say ""
fi

if [[ " $PARTS " == *" speed "* ]]; then
    say "## 3. Quick sysbench, steps $STEPS, --repeat $REPEAT (relative to ${targets[0]%%=*})"
    say ""
    rd=$WORK/speed-run
    "$DBDELTA" run --suite sysbench --scale quick --steps "$STEPS" --repeat "$REPEAT" --no-store \
        --run-dir "$rd" "${targets[@]/#/-t}" > "$WORK/speed.out" 2> "$WORK/speed.err" || {
        rc=$?; [ $rc -eq 3 ] || [ $rc -eq 1 ] || { tail -20 "$WORK/speed.err" >&2; exit 1; }; }
    # The summary dbdelta prints (noise floor, relative and absolute tables, verdicts) and
    # the cost table; the full report.txt (latency, sb.met per step) stays in the run dir.
    say '```'
    tee -a "$OUT" < "$WORK/speed.out"
    awk '/^--- cost per operation/ { p = 1 } p && /^--- / && !/^--- cost per operation/ { p = 0 } p' \
        "$rd/report.txt" | tee -a "$OUT"
    say '```'
fi
echo "results: $OUT" >&2
exit 0
}
