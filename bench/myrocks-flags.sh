#!/usr/bin/env bash
# myrocks-flags.sh -- the compiler-flags write-up on MyRocks (issue 32, item 5): MariaDB 10.11
# with MyRocks built Release -O2, with LTO and with -march=native, and Debian's InnoDB beside
# them for contrast, on the sysbench quick suite and the Insert Benchmark; relative QPS and CPU
# per operation with intervals (--repeat verdicts), one Markdown results file.
#
#   1. builds: `dbdelta build mariadb --source 10.11 --recipe R` for each recipe (a cache hit
#      when built before; a cold build takes hours on 2 cores: run with --builds-only first);
#   2. sysbench: `dbdelta run --scale quick --repeat N` on o2 (the base), lto, native and
#      inno (Debian's MariaDB with InnoDB);
#   3. ibench: `dbdelta run --suite ibench --scale quick` on the same targets.
#
# Needs: root (managed servers run as user dbdelta), Debian's mariadb source unpacked in the
# build cache (docs/builds-and-versions.md, "MariaDB with MyRocks"), cmake, ninja, gcc, the
# build dependencies listed there, and Debian's mariadb-server for the InnoDB target.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break the run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DBDELTA=$ROOT/target/release/dbdelta
SOURCE=10.11
REPEAT=3
JOBS=$(nproc)
SETTINGS="rocksdb_block_cache_size=512M"
BUILDS_ONLY=0
OUT=""
usage() {
    cat <<'USAGE'
usage: bench/myrocks-flags.sh [--dbdelta PATH] [--source 10.11|PATH] [--repeat N] [--jobs N]
                              [--settings 'k=v&k=v'] [--builds-only] [--out FILE]
  --dbdelta PATH   binary to use (default <repo>/target/release/dbdelta; never built here)
  --source S       MariaDB source: 10.11 (Debian's, unpacked in the cache) or a tree path
  --repeat N       rounds of the sysbench verdicts (default 3)
  --jobs N         parallel build jobs (default: CPUs)
  --settings S     MyRocks settings of every MyRocks target (default rocksdb_block_cache_size=512M)
  --builds-only    build (or find) the three builds, print their basedirs and stop
  --out FILE       Markdown results, appended to (default bench/results-myrocks-flags-<UTC date>.md)
USAGE
}
while [ $# -gt 0 ]; do
    case "$1" in
        --dbdelta) DBDELTA=$2; shift 2 ;;
        --source) SOURCE=$2; shift 2 ;;
        --repeat) REPEAT=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --settings) SETTINGS=$2; shift 2 ;;
        --builds-only) BUILDS_ONLY=1; shift ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "myrocks-flags.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -x "$DBDELTA" ] || { echo "myrocks-flags.sh: no dbdelta at $DBDELTA: cargo build --release first, or give --dbdelta" >&2; exit 2; }
OUT=${OUT:-$HERE/results-myrocks-flags-$(date -u +%Y%m%d).md}

# The write-up's three builds: Release at -O2, plus link-time optimisation, plus -march=native.
declare -A RECIPE=([o2]="cflags=-O2" [lto]="lto=on" [native]="march=native")
declare -A BASE
for name in o2 lto native; do
    start=$(date +%s)
    BASE[$name]=$(nice -n 10 "$DBDELTA" build mariadb --source "$SOURCE" --recipe "${RECIPE[$name]}" --jobs "$JOBS")
    echo "build $name (${RECIPE[$name]}): ${BASE[$name]} in $(( $(date +%s) - start )) s" >&2
done
if [ "$BUILDS_ONLY" = 1 ]; then
    for name in o2 lto native; do echo "$name ${BASE[$name]}"; done
    exit 0
fi

TARGETS=(
    -t "o2=mysql:${BASE[o2]}?engine=rocksdb&$SETTINGS"
    -t "lto=mysql:${BASE[lto]}?engine=rocksdb&$SETTINGS"
    -t "native=mysql:${BASE[native]}?engine=rocksdb&$SETTINGS"
    -t "inno=mysql:/usr?innodb_buffer_pool_size=512M"
)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Exit 1 and 3 are verdicts (a regression, an inconclusive comparison), not failures.
run() {
    local rd=$1; shift
    "$DBDELTA" run --quiet --no-store "$@" "${TARGETS[@]}" --run-dir "$rd" > "$rd.out" 2> "$rd.err" || {
        rc=$?; [ $rc -eq 3 ] || [ $rc -eq 1 ] || { tail -20 "$rd.err" >&2; exit 1; }; }
}
run "$WORK/sysbench" --suite sysbench --scale quick --repeat "$REPEAT"
run "$WORK/ibench" --suite ibench --scale quick

{
    echo "# MyRocks compiler flags, $(date -u +%FT%TZ)"
    echo
    echo "MariaDB $SOURCE with MyRocks built Release -O2 (base), LTO and -march=native; Debian's"
    echo "MariaDB with InnoDB for contrast. $(nproc) CPUs, $(uname -r), dbdelta $("$DBDELTA" --version)."
    echo "Builds:"
    for name in o2 lto native; do echo "- $name (${RECIPE[$name]}): ${BASE[$name]}"; done
    echo
    echo "## sysbench quick suite, --repeat $REPEAT (relative QPS and CPU/op vs o2)"
    echo
    cat "$WORK/sysbench/report.md"
    echo
    echo "## Insert Benchmark, quick"
    echo
    cat "$WORK/ibench/report.md"
} >> "$OUT"
echo "results: $OUT" >&2
}
