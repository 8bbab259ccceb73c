//! The HTTP engine against a real ClickHouse server: Debian's clickhouse-server (18.16),
//! started by dbdelta as a managed target (binary directory from
//! `DBDELTA_CLICKHOUSE_BIN`, else /usr/sbin), and reached again as an external target by
//! URL. Without the server the tests are skipped, except under CI, where they fail.

mod common;

use dbdelta_engine::{Engine, ErrorKind, Op, OpenOptions, Rows};
use dbdelta_engine_clickhouse::ClickhouseEngine;
use dbdelta_model::TargetSpec;
use std::path::PathBuf;

fn bin_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DBDELTA_CLICKHOUSE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/sbin"));
    if dir.join("clickhouse-server").is_file() || dir.join("clickhouse").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{}/clickhouse-server is missing and CI is set (apt-get install clickhouse-server, or set DBDELTA_CLICKHOUSE_BIN)",
        dir.display()
    );
    eprintln!(
        "SKIPPED: {}/clickhouse-server is missing (apt-get install clickhouse-server to run this test)",
        dir.display()
    );
    None
}

fn start(dir: &std::path::Path, query: &str) -> Option<ClickhouseEngine> {
    let bin = bin_dir()?;
    let spec = TargetSpec::parse(&format!("ch=clickhouse:{}{query}", bin.display())).unwrap();
    Some(
        ClickhouseEngine::open(&spec, dir, &OpenOptions::default())
            .unwrap_or_else(|e| panic!("managed clickhouse-server failed to start: {e}")),
    )
}

#[test]
fn managed_server_runs_the_types_workload() {
    let dir = tempfile::tempdir().unwrap();
    let Some(engine) = start(dir.path(), "") else {
        return;
    };
    common::types_workload(&engine);
}

#[test]
fn managed_server_listens_on_loopback_only() {
    let dir = tempfile::tempdir().unwrap();
    let Some(engine) = start(dir.path(), "") else {
        return;
    };
    let pid = engine.server_pids()[0];
    let addrs = dbdelta_kit::listen::listening(pid).unwrap();
    assert!(
        addrs.iter().any(|a| Some(a.port()) == engine.port()),
        "{addrs:?}"
    );
    assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
}

#[test]
fn external_url_reaches_the_same_server_and_database() {
    let dir = tempfile::tempdir().unwrap();
    let Some(managed) = start(dir.path(), "") else {
        return;
    };
    let port = managed.port().unwrap();
    managed
        .connect()
        .unwrap()
        .batch("CREATE TABLE t (a UInt8) ENGINE = Memory; INSERT INTO t VALUES (7)")
        .unwrap();
    // The user travels as HTTP basic auth; no database in the URL = dbdelta's own.
    let spec = TargetSpec::parse(&format!("x=clickhouse://default@127.0.0.1:{port}")).unwrap();
    let ext = ClickhouseEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let mut c = ext.connect().unwrap();
    assert_eq!(
        c.query_scalar("SELECT a FROM t").unwrap().as_deref(),
        Some("7")
    );
    assert_eq!(
        c.query_scalar("SELECT currentDatabase()")
            .unwrap()
            .as_deref(),
        Some("dbdelta")
    );
    assert!(
        ext.server_pids().is_empty(),
        "dbdelta does not own an external server"
    );

    // A wrong password is a configuration error that says what to fix.
    let spec =
        TargetSpec::parse(&format!("x=clickhouse://default:wrong@127.0.0.1:{port}")).unwrap();
    let e = ClickhouseEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert!(e.message.contains("password"), "{e}");
    assert!(
        !e.message.contains("wrong"),
        "the password is never printed: {e}"
    );

    // A database the URL names must exist: dbdelta creates only its own.
    let spec = TargetSpec::parse(&format!("x=clickhouse://127.0.0.1:{port}/theirs")).unwrap();
    let e = ClickhouseEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert!(e.message.contains("'theirs' does not exist"), "{e}");
}

#[test]
fn settings_sets_errors_and_info() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut engine) = start(dir.path(), "?max_threads=3") else {
        return;
    };
    let info = engine.info().unwrap();
    assert!(info.version.starts_with("ClickHouse "), "{info:?}");
    assert_eq!(
        info.settings.get("max_threads").map(String::as_str),
        Some("3"),
        "{info:?}"
    );
    if info.version.starts_with("ClickHouse 18.") {
        // 18.x gates LowCardinality; dbdelta opens the gate and the manifest says so.
        assert_eq!(
            info.settings
                .get("allow_experimental_low_cardinality_type")
                .map(String::as_str),
            Some("1"),
            "{info:?}"
        );
    }

    let mut c = engine.connect().unwrap();
    // SET lasts for the rest of the connection (each HTTP request is its own session).
    c.batch("SET max_threads = 2; SET max_block_size = 1000")
        .unwrap();
    let mut rows = Rows::new();
    c.run_rows(
        &Op::Query("SELECT name, value FROM system.settings WHERE name IN ('max_threads', 'max_block_size') ORDER BY name"),
        &mut rows,
    )
    .unwrap();
    assert_eq!((rows.get(0, 1), rows.get(1, 1)), (Some("1000"), Some("2")));
    // A SET the server refuses fails at once and changes nothing.
    let e = c.query("SET no_such_setting = 1").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ClickHouse 115"), "{e}");
    assert_eq!(
        c.query_scalar("SELECT value FROM system.settings WHERE name = 'max_threads'")
            .unwrap()
            .as_deref(),
        Some("2")
    );
    // USE switches the database of later requests.
    c.query("USE system").unwrap();
    assert_eq!(
        c.query_scalar("SELECT currentDatabase()")
            .unwrap()
            .as_deref(),
        Some("system")
    );
    assert!(c.query("USE no_such_db").is_err());
    assert_eq!(
        c.query_scalar("SELECT currentDatabase()")
            .unwrap()
            .as_deref(),
        Some("system")
    );

    // An exception after the first rows were sent (status 200 already) is still an error.
    let e = c
        .query("SELECT throwIf(number = 90000) FROM numbers(100000)")
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ClickHouse 395"), "{e}");
    let e = c.query("SELEC 1").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ClickHouse 62"), "{e}");
    // The connection is still usable after errors.
    assert_eq!(
        c.query_scalar("SELECT 1 + 1").unwrap().as_deref(),
        Some("2")
    );

    // The server stops at shutdown (promptly: the idle keep-alive connection is closed).
    drop(c);
    let pid = engine.server_pids()[0];
    engine.shutdown().unwrap();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || {
            let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            s.contains(") Z")
        }
    );
}

#[test]
fn keep_alive_survives_the_servers_idle_close() {
    let dir = tempfile::tempdir().unwrap();
    let Some(engine) = start(dir.path(), "") else {
        return;
    };
    let mut c = engine.connect().unwrap();
    assert_eq!(c.query_scalar("SELECT 1").unwrap().as_deref(), Some("1"));
    // The managed server closes idle connections after 3 s (ClickHouse's default); the
    // client replaces the connection before reusing it.
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(c.query_scalar("SELECT 2").unwrap().as_deref(), Some("2"));
}
