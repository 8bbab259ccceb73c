#!/usr/bin/env bash
# myrocks-flags.sh -- the compiler-flags write-up on MyRocks (issue 32, item 5): MariaDB 10.11
# with MyRocks built Release -O2, with LTO and with -march=native, and Debian's InnoDB beside
# them for contrast, on the sysbench quick suite and the Insert Benchmark; relative QPS and CPU
# per operation with intervals (--repeat verdicts), one Markdown results file.
#
#   1. builds: `dbdelta build mariadb --source 10.11 --recipe R` for each recipe (a cache hit
#      when built before; a cold whole build took 17 min on 2 idle cores, hours beside other
#      builds: run with --builds-only first);
#   2. sysbench: `dbdelta run --scale quick --repeat N` on o2 (the base), lto, native and
#      inno (Debian's MariaDB with InnoDB);
#   3. ibench: `dbdelta run --suite ibench --scale quick` on the same targets.
#
# --plugin-only builds the MyRocks plugin alone with each recipe (`--plugin-only`, a third of
# the build) and loads each into one server: Debian's own build of the source's exact version
# (MariaDB refuses a storage engine built for another version), downloaded with apt-get
# download and unpacked into the cache, not installed. Targets then: o2, lto, native (the
# plugin's recipe; the server's code is Debian's in all), deb (Debian's own build of the same
# plugin) and inno (the same server with InnoDB).
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
PLUGIN_ONLY=0
CACHE=${DBDELTA_BUILD_CACHE:-/var/cache/dbdelta}
OUT=""
usage() {
    cat <<'USAGE'
usage: bench/myrocks-flags.sh [--dbdelta PATH] [--source 10.11|PATH] [--repeat N] [--jobs N]
                              [--settings 'k=v&k=v'] [--builds-only] [--plugin-only]
                              [--out FILE]
  --dbdelta PATH   binary to use (default <repo>/target/release/dbdelta; never built here)
  --source S       MariaDB source: 10.11 (Debian's, unpacked in the cache) or a tree path
  --repeat N       rounds of the sysbench verdicts (default 3)
  --jobs N         parallel build jobs (default: CPUs)
  --settings S     MyRocks settings of every MyRocks target (default rocksdb_block_cache_size=512M)
  --builds-only    build (or find) the three builds, print their basedirs and stop
  --plugin-only    build the MyRocks plugin alone and load it into Debian's server of the
                   source's exact version (unpacked into the cache); adds Debian's own plugin
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
        --plugin-only) PLUGIN_ONLY=1; shift ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "myrocks-flags.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -x "$DBDELTA" ] || { echo "myrocks-flags.sh: no dbdelta at $DBDELTA: cargo build --release first, or give --dbdelta" >&2; exit 2; }
OUT=${OUT:-$HERE/results-myrocks-flags-$(date -u +%Y%m%d).md}

# The write-up's three builds: Release at -O2, plus link-time optimisation, plus -march=native.
# -O2 is the default recipe; the plugin builds name it (cflags=-O2), whose cache key differs.
declare -A RECIPE=([o2]="default" [lto]="lto=on" [native]="march=native")
ONLY=()
[ "$PLUGIN_ONLY" = 1 ] && { ONLY=(--plugin-only); RECIPE[o2]="cflags=-O2"; }
declare -A BASE
for name in o2 lto native; do
    start=$(date +%s)
    recipe=()
    [ "${RECIPE[$name]}" = default ] || recipe=(--recipe "${RECIPE[$name]}")
    BASE[$name]=$(nice -n 10 "$DBDELTA" build mariadb "${ONLY[@]}" --source "$SOURCE" "${recipe[@]}" --jobs "$JOBS")
    echo "build $name (${RECIPE[$name]}): ${BASE[$name]} in $(( $(date +%s) - start )) s" >&2
done
if [ "$BUILDS_ONLY" = 1 ]; then
    for name in o2 lto native; do echo "$name ${BASE[$name]}"; done
    exit 0
fi

if [ "$PLUGIN_ONLY" = 1 ]; then
    # Debian's server of the plugins' exact version, unpacked (not installed) once.
    VERSION=$(sed -n 's/^version: //p' "${BASE[o2]}/../../dbdelta-build.txt")
    DEBIAN=$(sed -n 's/^source: debian:mariadb=//p' "${BASE[o2]}/../../dbdelta-build.txt")
    [ -n "$DEBIAN" ] || { echo "myrocks-flags.sh: --plugin-only needs Debian's source (--source 10.11): the server of the same Debian version is unpacked beside it" >&2; exit 2; }
    SERVER=$CACHE/debian-mariadb-$VERSION
    if [ ! -x "$SERVER/root/usr/sbin/mariadbd" ]; then
        mkdir -p "$SERVER/debs"
        (cd "$SERVER/debs" && apt-get download -q \
            "mariadb-server-core=$DEBIAN" "mariadb-server=$DEBIAN" "mariadb-client-core=$DEBIAN" \
            "mariadb-client=$DEBIAN" "mariadb-plugin-rocksdb=$DEBIAN" >&2)
        for deb in "$SERVER"/debs/*.deb; do dpkg -x "$deb" "$SERVER/root"; done
        chmod -R a+rX "$SERVER"
    fi
    S=$SERVER/root/usr
    TARGETS=(
        -t "o2=mysql:$S?engine=rocksdb&plugin_dir=${BASE[o2]}&$SETTINGS"
        -t "lto=mysql:$S?engine=rocksdb&plugin_dir=${BASE[lto]}&$SETTINGS"
        -t "native=mysql:$S?engine=rocksdb&plugin_dir=${BASE[native]}&$SETTINGS"
        -t "deb=mysql:$S?engine=rocksdb&plugin_dir=$S/lib/mysql/plugin&$SETTINGS"
        -t "inno=mysql:$S?innodb_buffer_pool_size=512M"
    )
else
    TARGETS=(
        -t "o2=mysql:${BASE[o2]}?engine=rocksdb&$SETTINGS"
        -t "lto=mysql:${BASE[lto]}?engine=rocksdb&$SETTINGS"
        -t "native=mysql:${BASE[native]}?engine=rocksdb&$SETTINGS"
        -t "inno=mysql:/usr?innodb_buffer_pool_size=512M"
    )
fi
WORK=$(mktemp -d)
chmod 755 "$WORK"   # the managed servers run as user dbdelta
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
    if [ "$PLUGIN_ONLY" = 1 ]; then
        echo "The MyRocks plugin of MariaDB $VERSION (Debian's source $DEBIAN) built Release -O2 (base),"
        echo "LTO and -march=native, each loaded into Debian's own $VERSION server (unpacked in $SERVER);"
        echo "deb: Debian's own build of the plugin; inno: the same server with InnoDB, for contrast."
        echo "Only the storage engine (with the RocksDB it embeds) differs between o2, lto and native."
    else
        echo "MariaDB $SOURCE with MyRocks built Release -O2 (base), LTO and -march=native; Debian's"
        echo "MariaDB with InnoDB for contrast."
    fi
    echo "$(nproc) CPUs, $(uname -r), dbdelta $("$DBDELTA" --version)."
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
