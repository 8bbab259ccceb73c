//! The same queries on Debian's clickhouse-server (18.16, managed) and on chDB (26.9)
//! return the same text, value by value (enum names, FixedString padding, DateTime and
//! Float64 rendering, NULL): what lets a query-set run compare result checksums across
//! ClickHouse targets. Needs both; skipped without them (CI fails).

mod common;

use dbdelta_engine::{Connection, Engine, OpenOptions};
use dbdelta_engine_clickhouse::{ChdbEngine, ChdbOptions, ClickhouseEngine};
use dbdelta_model::TargetSpec;
use std::path::PathBuf;

const SETUP: &str = "
DROP TABLE IF EXISTS events;
CREATE TABLE events (
    ts DateTime,
    id UInt64,
    level LowCardinality(String),
    level_e Enum8('debug' = 1, 'info' = 2, 'warn' = 3, 'error' = 4),
    host FixedString(8),
    path String,
    ms Float64,
    note Nullable(String)
) ENGINE = MergeTree ORDER BY (ts, id);
INSERT INTO events
    SELECT toDateTime(1700000000 + number * 7), number, l, l,
           concat('host-', toString(number % 3)), concat('/api/v', toString(number % 5)),
           (number % 1000) / 7, if(number % 13 = 0, NULL, 'n')
    FROM (SELECT number, arrayElement(['debug', 'info', 'warn', 'error'], number % 4 + 1) AS l
          FROM numbers(20000));
";

/// (query, columns)
const QUERIES: &[(&str, usize)] = &[
    ("SELECT level, count() FROM events GROUP BY level ORDER BY level", 2),
    ("SELECT level_e, count(), sum(ms) FROM events GROUP BY level_e ORDER BY level_e", 3),
    ("SELECT count() FROM events WHERE level = 'error' AND path = '/api/v3'", 1),
    ("SELECT host, avg(ms), max(ms) FROM events GROUP BY host ORDER BY host", 3),
    ("SELECT toStartOfHour(ts) AS h, count() FROM events GROUP BY h ORDER BY h LIMIT 5", 2),
    ("SELECT path, uniqExact(level), countIf(note IS NULL) FROM events GROUP BY path ORDER BY path", 3),
    ("SELECT id, ts, level_e, host, ms, note FROM events ORDER BY id LIMIT 3", 6),
    ("SELECT toDate(ts) AS d, round(avg(ms), 3) FROM events GROUP BY d ORDER BY d", 2),
];

fn server_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DBDELTA_CLICKHOUSE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/sbin"));
    (dir.join("clickhouse-server").is_file() || dir.join("clickhouse").is_file()).then_some(dir)
}

fn run(conn: &mut dyn Connection) -> Vec<Vec<Vec<Option<String>>>> {
    conn.batch(SETUP).unwrap();
    QUERIES
        .iter()
        .map(|(q, cols)| common::values(conn, q, *cols))
        .collect()
}

#[test]
fn server_and_chdb_return_the_same_text() {
    let chdb = TargetSpec::parse("e=chdb").unwrap();
    let have_chdb = ChdbOptions::from_spec(&chdb)
        .map(|o| o.lib.is_some_and(|p| p.is_file()) && o.libpython.is_some())
        .unwrap_or(false);
    let Some(bin) = server_dir().filter(|_| have_chdb) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but clickhouse-server or chDB is missing (scripts/test.sh installs both)"
        );
        eprintln!("SKIPPED: needs clickhouse-server and chDB");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server_spec = TargetSpec::parse(&format!("s=clickhouse:{}", bin.display())).unwrap();
    let server = ClickhouseEngine::open(&server_spec, dir.path(), &OpenOptions::default()).unwrap();
    let embedded = ChdbEngine::open(&chdb, dir.path(), &OpenOptions::default()).unwrap();
    let a = run(&mut *server.connect().unwrap());
    let b = run(&mut *embedded.connect().unwrap());
    for ((q, _), (x, y)) in QUERIES.iter().zip(a.iter().zip(&b)) {
        assert!(!x.is_empty(), "{q}");
        assert_eq!(x, y, "{q}: ClickHouse {} and chDB differ", server.version());
    }
}
