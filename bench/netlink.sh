#!/usr/bin/env bash
# netlink.sh -- the write-up's network comparison on MariaDB: a 1 Gbit vs a 10 Gbit link
# (dbdelta's emulated links, net=1gbit / net=10gbit: a network namespace, a veth pair and tbf
# on both ends), each with and without protocol compression (--compress) and TLS (--tls), on
# read-only_range=10000 (wide ranges: bandwidth-bound) and point-query_range=100 (round trips).
#
# One dbdelta run per protocol mode (plain, compress, tls, tls+compress), both links in each
# run, the steps interleaved over --repeat rounds (A B, B A, ...), so every 10gbit/1gbit ratio
# carries a 95 % interval and a verdict. The links are measured before the steps (throughput
# both ways, RTT) and shown with the targets. Run as root. See bench/README.md.
set -euo pipefail
{ # one compound command: editing the file during a run cannot break that run

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() {
    cat <<'EOF'
usage: bench/netlink.sh [options]
  --rows N          rows in the one sbtest table (default 100000)
  --secs S          measured seconds per step and round (default 5)
  --repeat R        interleaved rounds (default 3)
  --threads T       client threads (default 1)
  --modes "plain compress tls tls+compress"   protocol modes (default: all four)
  --dbdelta PATH    binary (default <repo>/target/release/dbdelta; not rebuilt)
  --out FILE        Markdown output (default bench/results-netlink-<UTC date>.md)
  --keep            keep the run directories
EOF
}

ROWS=100000 SECS=5 REPEAT=3 THREADS=1 MODES="plain compress tls tls+compress" KEEP=0 OUT=""
DBDELTA=$ROOT/target/release/dbdelta
while [ $# -gt 0 ]; do
    case "$1" in
    --rows) ROWS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --modes) MODES=$2; shift ;;
    --dbdelta) DBDELTA=$2; shift ;;
    --out) OUT=$2; shift ;;
    --keep) KEEP=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for v in "$ROWS" "$REPEAT" "$THREADS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "not a positive integer: '$v'" >&2; exit 2; }
done
[[ $SECS =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--secs: not a number: '$SECS'" >&2; exit 2; }
for m in $MODES; do
    case $m in plain | compress | tls | tls+compress) ;; *) echo "--modes: unknown mode '$m'" >&2; exit 2 ;; esac
done
: "${OUT:=$HERE/results-netlink-$(date -u +%Y%m%d).md}"
die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, veth and tc need it)"
[ -x "$DBDELTA" ] || die "no dbdelta binary at $DBDELTA (cargo build --release, or --dbdelta PATH)"
[ -x /usr/sbin/mariadbd ] || die "no MariaDB server (apt-get install mariadb-server)"
command -v jq >/dev/null || die "missing: jq"

WORK=$(mktemp -d /var/tmp/dbdelta-netlink.XXXXXX)
chmod 755 "$WORK"
cleanup() { [ "$KEEP" = 1 ] && log "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

STEPS='read-only_range=10000,point-query_range=100'
SETTINGS='innodb_buffer_pool_size=256M'
CMDLINE="bench/netlink.sh --rows $ROWS --secs $SECS --repeat $REPEAT --threads $THREADS --modes \"$MODES\""

flags_of() {
    case $1 in
    plain) echo "" ;;
    compress) echo "--compress" ;;
    tls) echo "--tls" ;;
    tls+compress) echo "--tls --compress" ;;
    esac
}

# Mean QPS of a step's good rounds on a target.
mean_qps() {
    local rd=$1 target=$2 label=$3
    jq -s --arg l "$label" '[.[] | select(.label == $l and .status.state == "ok") | .qps]
        | if length == 0 then "n/a" else (add / length * 10 | round / 10) end' \
        "$rd"/results/"$target"/*.json
}

{
    echo "# Emulated network links on MariaDB: 1 Gbit vs 10 Gbit, with and without compression and TLS"
    echo
    echo "Command: \`$CMDLINE\` ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs, $("$DBDELTA" --version 2>/dev/null || echo dbdelta))"
    echo
    echo "Targets: \`g1=mysql:/usr?net=1gbit&$SETTINGS\` and \`g10=mysql:/usr?net=10gbit&$SETTINGS\`"
    echo "(MariaDB $(/usr/sbin/mariadbd --version | awk '{print $3}')), one sbtest table of $ROWS rows,"
    echo "$THREADS client thread(s), $SECS s per step and round, --repeat $REPEAT interleaved rounds."
    echo "Each link is a network namespace holding the server, a veth pair and tbf at the rate on"
    echo "both ends; dbdelta measured it (throughput each way, 1-byte TCP echo RTT) before the steps."
    echo
} >"$OUT"

SUMMARY=""
for mode in $MODES; do
    rd=$WORK/$mode
    # shellcheck disable=SC2046
    log "mode $mode: dbdelta run $(flags_of "$mode")"
    set +e
    "$DBDELTA" run --no-store --quiet --scale quick --tables 1 --table-size "$ROWS" \
        --threads "$THREADS" --read-secs "$SECS" --repeat "$REPEAT" --steps "$STEPS" \
        $(flags_of "$mode") \
        --target "g1=mysql:/usr?net=1gbit&$SETTINGS" \
        --target "g10=mysql:/usr?net=10gbit&$SETTINGS" \
        --run-dir "$rd" >"$WORK/$mode.out" 2>"$WORK/$mode.err"
    rc=$?
    set -e
    {
        echo "## $mode ($(flags_of "$mode" | sed 's/^$/no protocol flags/'))"
        echo
        echo "exit status $rc. Links as measured:"
        echo
        echo '| target | link | measured Mbit/s (server→client) | measured Mbit/s (client→server) | RTT ms |'
        echo '|---|---|---|---|---|'
        jq -r '.targets[] | "| \(.name) | \(.settings["net.link"] // "-") | \(.settings["net.measured_mbit"] // "-") | \(.settings["net.measured_mbit_up"] // "-") | \(.settings["net.rtt_ms"] // "-") |"' "$rd/run.json"
        echo
        echo '```'
        cat "$WORK/$mode.out"
        grep -v '^\[' "$WORK/$mode.err" || true
        echo '```'
        echo
    } >>"$OUT"
    for label in read-only_range=10000 point-query_range=100; do
        a=$(mean_qps "$rd" g1 "$label")
        b=$(mean_qps "$rd" g10 "$label")
        SUMMARY+="| $mode | $label | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "n/a" }') |"$'\n'
    done
done

{
    echo "## Summary: mean QPS over the rounds"
    echo
    echo '| mode | step | 1 Gbit | 10 Gbit | 10G/1G |'
    echo '|---|---|---|---|---|'
    printf '%s' "$SUMMARY"
} >>"$OUT"
log "wrote $OUT"
exit 0
}
