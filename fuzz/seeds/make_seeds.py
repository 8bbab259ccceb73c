#!/usr/bin/env python3
"""Writes the hand-built seed inputs of fuzz/corpus/ (run from the repository root).

Server replies are built from the protocol documentation:
PostgreSQL https://www.postgresql.org/docs/current/protocol-message-formats.html and
MySQL https://dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html. Each input is
one control byte (see the entry functions' docs) followed by the server's bytes. The suite
and config seeds are the shipped suites/*.toml and the examples of the README and tests.
"""
import hashlib
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def write(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- PostgreSQL

def pg(tag, body=b""):
    return tag + struct.pack(">I", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\0"


def pg_error(severity, code, msg, detail=None):
    b = b"S" + cstr(severity) + b"V" + cstr(severity) + b"C" + cstr(code) + b"M" + cstr(msg)
    if detail:
        b += b"D" + cstr(detail)
    return b + b"\0"


def data_row(*vals):
    b = struct.pack(">h", len(vals))
    for v in vals:
        if v is None:
            b += struct.pack(">i", -1)
        else:
            v = v.encode() if isinstance(v, str) else v
            b += struct.pack(">i", len(v)) + v
    return pg(b"D", b)


def row_desc(*names):
    b = struct.pack(">h", len(names))
    for n in names:
        b += cstr(n) + struct.pack(">ihihih", 16384, 1, 25, -1, -1, 0)
    return pg(b"T", b)


def ready(status=b"I"):
    return pg(b"Z", status)


STARTUP_TAIL = (
    pg(b"S", cstr("server_version") + cstr("15.4 (Debian 15.4-1)"))
    + pg(b"S", cstr("client_encoding") + cstr("UTF8"))
    + pg(b"S", cstr("DateStyle") + cstr("ISO, MDY"))
    + pg(b"K", struct.pack(">ii", 4242, 0x1234567))
    + ready()
)
AUTH_OK = pg(b"R", struct.pack(">i", 0))

STARTUPS = {
    "trust": AUTH_OK + STARTUP_TAIL,
    "cleartext": pg(b"R", struct.pack(">i", 3)) + AUTH_OK + STARTUP_TAIL,
    "md5": pg(b"R", struct.pack(">i", 5) + b"\x01\x02\x03\x04") + AUTH_OK + STARTUP_TAIL,
    "scram": pg(b"R", struct.pack(">i", 10) + cstr("SCRAM-SHA-256-PLUS") + cstr("SCRAM-SHA-256") + b"\0")
    + pg(b"R", struct.pack(">i", 11) + b"r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,s=QSXCR+Q6sek8bf92,i=4096")
    + pg(b"R", struct.pack(">i", 12) + b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    + AUTH_OK + STARTUP_TAIL,
    "notice_negotiate": pg(b"v", struct.pack(">ii", 0, 1) + cstr("_pq_.x")) + pg(b"N", pg_error("NOTICE", "00000", "hello")) + AUTH_OK + STARTUP_TAIL,
    "fatal_password": pg(b"R", struct.pack(">i", 5) + b"salt") + pg(b"E", pg_error("FATAL", "28P01", 'password authentication failed for user "bench"')),
    "fatal_database": AUTH_OK + pg(b"E", pg_error("FATAL", "3D000", 'database "bench" does not exist')),
    "gssapi": pg(b"R", struct.pack(">i", 7)),
}

# Responses to the blocking client's operations (see fuzzing.rs), by operation number.
def pg_op(op, prepared):
    if op == 0:  # query_rows
        return row_desc("version") + data_row("PostgreSQL 15.4") + pg(b"C", cstr("SELECT 1")) + ready()
    if op == 1:  # simple UPDATE
        return pg(b"C", cstr("UPDATE 1")) + ready(b"I")
    if op == 2:  # prepare then execute
        if prepared:
            prep = pg(b"1") + pg(b"t", struct.pack(">hI", 1, 23)) + row_desc("c") + ready()
            exe = pg(b"2") + data_row("abc") + pg(b"C", cstr("SELECT 1")) + ready()
            return prep + exe
        return row_desc("c") + data_row("abc") + pg(b"C", cstr("SELECT 1")) + ready()
    if op == 3:  # run_rows, rows kept
        return row_desc("c") + data_row("x" * 20) + data_row(None) + data_row("") + pg(b"C", cstr("SELECT 3")) + ready()
    return pg(b"C", cstr("ROLLBACK")) + ready()


for name, startup in STARTUPS.items():
    for first in range(4):
        for prepared in (False, True):
            ops = b"".join(pg_op((first + i) % 5, prepared) for i in range(8))
            ctrl = (first << 6) | (0x10 if prepared else 0) | 0x20 | (first * 3 + prepared)
            if name in ("trust", "md5") or (first == 0 and not prepared):
                write("pg_messages", bytes([ctrl]) + startup + ops)

# Session responses (no startup): execute / simple query alternate (see fuzzing.rs).
SESSION = [
    pg(b"2") + data_row("a") + data_row("bb") + pg(b"C", cstr("SELECT 2")) + ready(),
    pg(b"C", cstr("UPDATE 1")) + ready(b"T"),
    pg(b"2") + pg(b"N", pg_error("NOTICE", "00000", "n")) + data_row("12", None) + pg(b"E", pg_error("ERROR", "40001", "could not serialize access")) + ready(b"E"),
    pg(b"C", cstr("INSERT 0 1")) + ready(),
    pg(b"2") + pg(b"C", cstr("DELETE 3")) + ready(),
    pg(b"E", pg_error("ERROR", "23505", "duplicate key", "Key (id)=(7) already exists.")) + ready(b"E"),
    pg(b"2") + pg(b"n") + pg(b"C", cstr("MERGE 2")) + ready(),
    pg(b"A", struct.pack(">i", 1) + cstr("chan") + cstr("payload")) + pg(b"S", cstr("TimeZone") + cstr("UTC")) + pg(b"C", cstr("COPY 5")) + ready(),
    pg(b"G", b"\0\0\0"),
    pg(b"E", pg_error("FATAL", "57P01", "terminating connection due to administrator command")),
]
for i in range(len(SESSION)):
    stream = b"".join(SESSION[i:] + SESSION[:i])
    write("pg_messages", bytes([0x20 | (i % 16)]) + stream)
    write("pg_messages", bytes([0x10 | ((i * 5) % 16)]) + SESSION[i] + SESSION[(i + 1) % len(SESSION)])

# ---------------------------------------------------------------- MySQL

def my(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


def lenenc(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3]
    return b"\xfe" + struct.pack("<Q", n)


def lstr(s):
    s = s.encode() if isinstance(s, str) else s
    return lenenc(len(s)) + s


CAPS = 0x1 | 0x4 | 0x8 | 0x20 | 0x80 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x40000 | 0x80000 | 0x200000


def greeting(version, plugin, caps=CAPS):
    nonce = b"abcdefgh" + b"ijklmnopqrst"
    return (
        b"\x0a" + cstr(version) + struct.pack("<I", 77) + nonce[:8] + b"\0"
        + struct.pack("<H", caps & 0xFFFF) + b"\x2d" + struct.pack("<H", 2)
        + struct.pack("<H", caps >> 16) + bytes([21]) + b"\0" * 10 + nonce[8:] + b"\0"
        + cstr(plugin)
    )


def ok(affected=0, status=2, header=0):
    return bytes([header]) + lenenc(affected) + lenenc(0) + struct.pack("<HH", status, 0)


def eof(status=2):
    return b"\xfe" + struct.pack("<HH", 0, status)


def err(code, state, msg):
    return b"\xff" + struct.pack("<H", code) + b"#" + state.encode() + msg.encode()


def coldef(name, ty, flags=0):
    return (lstr("def") + lstr("sbtest") + lstr("sbtest1") + lstr("sbtest1") + lstr(name) + lstr(name)
            + b"\x0c" + struct.pack("<HIBHB", 45, 120, ty, flags, 0) + b"\0\0")


def text_row(*vals):
    return b"".join(b"\xfb" if v is None else lstr(v) for v in vals)


def binary_row(cols, vals):
    n = len(cols)
    bitmap = bytearray((n + 9) // 8)
    body = b""
    for i, ((ty, flags), v) in enumerate(zip(cols, vals)):
        if v is None:
            bitmap[(i + 2) // 8] |= 1 << ((i + 2) % 8)
            continue
        body += v
    return b"\x00" + bytes(bitmap) + body


def result(seq, cols, rows, deprecate_eof=False, status=2):
    """A result set starting at sequence `seq`; returns (bytes, next seq)."""
    out = [my(seq, lenenc(len(cols)))]
    seq += 1
    for c in cols:
        out.append(my(seq, c))
        seq += 1
    if not deprecate_eof:
        out.append(my(seq, eof(status)))
        seq += 1
    for r in rows:
        out.append(my(seq, r))
        seq += 1
    out.append(my(seq, ok(0, status, 0xFE) if deprecate_eof else eof(status)))
    return b"".join(out), seq + 1


def my_op(op):
    """The response to the blocking client's operation `op` (see fuzzing.rs)."""
    if op == 0:  # query_rows SELECT @@version
        return result(1, [coldef("@@version", 0xFD)], [text_row("10.11.6-MariaDB")])[0]
    if op == 1:  # query UPDATE
        return my(1, ok(1))
    if op == 2:  # prepare then execute (binary)
        prep = my(1, b"\x00" + struct.pack("<IHHBH", 1, 1, 1, 0, 0))
        prep += my(2, coldef("?", 0x08)) + my(3, eof()) + my(4, coldef("c", 0xFE)) + my(5, eof())
        cols = [(0xFE, 0)]
        exe = result(1, [coldef("c", 0xFE)], [binary_row(cols, [lstr("abc")])])[0]
        return prep + exe
    if op == 3:  # query_keeping, 4 columns
        cols = [coldef("id", 0x03), coldef("k", 0x03), coldef("c", 0xFE), coldef("pad", 0xFE)]
        return result(1, cols, [text_row("1", "7", "c" * 10, None), text_row("2", "8", "", "p")])[0]
    # LOAD DATA LOCAL: the file request, then OK after the client's data
    return my(1, b"\xfb" + b"x") + my(4, ok(1, 2) + b"Records: 1")


MY_AUTH = {
    "native": (greeting("8.0.36", "mysql_native_password"), my(2, ok())),
    "maria": (greeting("5.5.5-10.11.6-MariaDB-0+deb12u1", "mysql_native_password"), my(2, ok())),
    "sha2_fast": (greeting("8.4.0", "caching_sha2_password"), my(2, b"\x01\x03") + my(3, ok())),
    "sha2_full": (greeting("8.4.0", "caching_sha2_password"), my(2, b"\x01\x04") + my(4, ok())),
    "switch": (greeting("8.0.36", "caching_sha2_password"), my(2, b"\xfe" + cstr("mysql_native_password") + b"0123456789abcdefghij\0") + my(4, ok())),
    "switch_unknown": (greeting("10.11.6-MariaDB", "mysql_native_password"), my(2, b"\xfe" + cstr("client_ed25519") + b"0123456789abcdefghijklmnopqrstuv")),
    "denied": (greeting("8.0.36", "mysql_native_password"), my(2, err(1045, "28000", "Access denied for user 'bench'@'localhost' (using password: YES)"))),
    "too_many": (my(0, err(1040, "08004", "Too many connections")), b""),
    "old_proto": (greeting("4.0.1", "", caps=0x1), b""),
}


def compressed(stream, seq=0, pieces=3):
    """The packet stream cut into compressed-protocol frames, stored and zlib'd."""
    out = b""
    step = max(1, len(stream) // pieces + 1)
    for i in range(0, len(stream), step):
        part = stream[i:i + step]
        if i // step % 2 == 0 and len(part) >= 50:
            z = zlib.compress(part)
            out += struct.pack("<I", len(z))[:3] + bytes([seq]) + struct.pack("<I", len(part))[:3] + z
        else:
            out += struct.pack("<I", len(part))[:3] + bytes([seq]) + b"\0\0\0" + part
        seq += 1
    return out


for name, (hello, auth) in MY_AUTH.items():
    head = my(0, hello) + auth if not hello.startswith(b"\x00\x00") else hello
    if name == "too_many":
        head = hello
    for first in range(4):
        ops = b"".join(my_op((first + i) % 5) for i in range(8))
        write("mysql_packets", bytes([(first << 6) | (first * 5 % 16)]) + head + ops)
        if name in ("native", "sha2_fast"):
            # The client asks for compression; then the same answers as compressed frames.
            write("mysql_packets", bytes([(first << 6) | 0x20 | 3]) + compressed(ops, pieces=first + 2))

# Session responses (text protocol, numbered from 1), and binary result sets.
for deprecate_eof in (False, True):
    flag = 0x10 if deprecate_eof else 0
    r1 = result(1, [coldef("c", 0xFE)], [text_row("abc"), text_row(None)], deprecate_eof)[0]
    cols4 = [coldef("id", 0x03), coldef("k", 0x03), coldef("c", 0xFE), coldef("pad", 0xFE)]
    r2 = result(1, cols4, [text_row("1", "7", "c", "p")], deprecate_eof)[0]
    multi = result(1, [coldef("a", 0x08)], [text_row("1")], deprecate_eof, status=0x0A)[0]
    multi += my(5 if deprecate_eof else 6, ok(0, 2))
    for i, stream in enumerate([
        r1 + r2 + my(1, ok(3)) + my(1, err(1213, "40001", "Deadlock found when trying to get lock")),
        my(1, ok(1)) + r2 + r1,
        multi + my(1, ok(0)),
        my(1, err(1146, "42S02", "Table 'bench.sbtest1' doesn't exist")) + r1,
        my(1, b"\xfb" + b"/etc/passwd"),
        my(1, err(1927, "70100", "Connection was killed")),
    ]):
        write("mysql_packets", bytes([flag | (i * 3 % 16)]) + stream)
    types = [(0x01, 0), (0x02, 0x20), (0x03, 0), (0x08, 0x20), (0x04, 0), (0x05, 0), (0x07, 0),
             (0x0A, 0), (0x0C, 0), (0x0B, 0), (0xF6, 0), (0xFC, 0), (0x09, 0), (0x0D, 0)]
    vals = [b"\x85", b"\xff\xff", struct.pack("<i", -7), struct.pack("<Q", 2**63 + 5),
            struct.pack("<f", 1.5), struct.pack("<d", -2.25),
            b"\x0b" + struct.pack("<HBBBBBI", 2024, 2, 29, 23, 59, 58, 123456),
            b"\x04" + struct.pack("<HBB", 1999, 12, 31), b"\x07" + struct.pack("<HBBBBB", 2000, 1, 1, 0, 0, 1),
            b"\x0c" + struct.pack("<BIBBBI", 1, 2, 3, 4, 5, 6), lstr("123.45"), lstr(b"\x00\x01blob"),
            b"\x01\x02\x03", b"\xe8\x07"]
    rows = [binary_row(types, vals), binary_row(types, [None] * len(types)),
            binary_row(types, [v if i % 2 else None for i, v in enumerate(vals)])]
    stream = result(1, [coldef("c%d" % i, t, f) for i, (t, f) in enumerate(types)], rows, deprecate_eof)[0]
    write("mysql_packets", bytes([flag | 7]) + stream + my(1, ok(1)))

# ---------------------------------------------------------------- targets

TARGETS = [
    "wal=sqlite?journal_mode=WAL&synchronous=NORMAL",
    "rollback=sqlite?journal_mode=DELETE",
    "db=sqlite:/tmp/x.db",
    "sqlite:/tmp/dir%20with%20space/x.db?cache_size=-200000",
    "pg15=postgres:/usr/lib/postgresql/15/bin?shared_buffers=1GB&max_connections=200",
    "prod=postgres://bench@db1:5432/benchdb",
    "prod=postgres://bench:s%40cret@db1.example.com:5432/benchdb?sslmode=verify-full&connect_timeout=5",
    "v6=postgres://bench@[::1]:5432/bench",
    "pgb=postgres:/usr/lib/postgresql/16/bin?pgbouncer=/usr/sbin/pgbouncer&pool_mode=transaction",
    "maria=mysql:/usr?innodb_buffer_pool_size=1G",
    "my=mysql:/usr?log_bin=binlog&binlog_reset=true",
    "ext=mysql://bench:pw@127.0.0.1:3306/benchdb?ssl_ca=/etc/ca.pem",
    "m=mock?latency=1ms&error_rate=0.01",
    "rocks=rocksdb?write_buffer_size=64MB&compression=lz4",
    "mock",
    "a.b-c_1=SQLITE:",
    "x=postgres://host",
    "bad=postgres://user@:5432/db",
    "=sqlite",
    "n=sqlite?novalue",
]
for t in TARGETS:
    write("target_spec", t.encode())

# ---------------------------------------------------------------- suites and configs

for f in sorted(os.listdir(os.path.join(ROOT, "suites"))):
    if f.endswith(".toml"):
        with open(os.path.join(ROOT, "suites", f), "rb") as fh:
            write("suite_config", fh.read())

CONFIGS = [
    '''suite = "sysbench"
scale = "quick"
threads = [1, 4]
[[target]]
name = "wal"
spec = "sqlite?journal_mode=WAL&synchronous=NORMAL"
[[target]]
name = "pg15"
engine = "postgres"
path = "/usr/lib/postgresql/15/bin"
params = { shared_buffers = "1GB", max_connections = 200 }
''',
    '''suite = "ycsb"
scale = "full"
tables = 1
table_size = 1000000
read_secs = 300.0
write_secs = 600.0
insert_secs = 60.0
warmup_secs = 10.0
round_warmup_secs = 1.5
settle_secs = 120.0
steps = ["point-*", "*.pre"]
seed = 42
prepared = false
base = "ext"
database = "bench"
rate = 1000.5
device = "nvme0n1"
os_metrics = true
[[target]]
name = "ext"
engine = "mysql"
url = "mysql://bench:pw@db1:3306/benchdb"
params = { innodb_flush_log_at_trx_commit = 2, ssl = true }
''',
    '''[[target]]
name = "both"
spec = "sqlite"
engine = "sqlite"
''',
    '''treads = [1]
''',
    '''name = "mine"
description = "a custom suite"
dataset = "usertable"
families = ["kv", "sql"]
table_size = 1000
[quick]
rounds = 2
read_secs = 1.0
[[step]]
action = "load"
[[step]]
name = "ycsb-a"
workload = "ycsb-a"
duration = "read"
rand = "zipfian"
rate = 500.0
threads = "one"
group = "point"
[[step]]
action = "settle"
''',
]
for c in CONFIGS:
    write("suite_config", c.encode())
