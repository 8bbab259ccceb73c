//! Embedded chDB (`chdb`): the `_chdb.abi3.so` of the `chdb-core` wheel, from
//! `DBDELTA_CHDB_LIB` or the test venv. Without it the tests are skipped, except under CI,
//! where they fail.

mod common;

use dbdelta_engine::{Engine, ErrorKind, OpenOptions};
use dbdelta_engine_clickhouse::chdb::{python_interpreter_running, OWNED_MARKER};
use dbdelta_engine_clickhouse::{ChdbEngine, ChdbOptions};
use dbdelta_model::TargetSpec;

fn have_chdb(spec: &TargetSpec) -> bool {
    let o = ChdbOptions::from_spec(spec).unwrap();
    if o.lib.as_ref().is_some_and(|p| p.is_file()) && o.libpython.is_some() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "chDB is missing and CI is set: pip install chdb-core into /opt/dbdelta-venv or set DBDELTA_CHDB_LIB ({o:?})"
    );
    eprintln!("SKIPPED: chDB not found (pip install chdb-core, set DBDELTA_CHDB_LIB): {o:?}");
    false
}

/// One test function: chDB is one ClickHouse per process, opened and closed in turn.
#[test]
fn chdb_runs_the_types_workload_without_python() {
    let spec = TargetSpec::parse("e=chdb?max_threads=2").unwrap();
    if !have_chdb(&spec) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = ChdbEngine::open(&spec, dir.path(), &OpenOptions::default())
        .unwrap_or_else(|e| panic!("chdb failed to open: {e}"));
    assert!(dir.path().join("e.chdb").join(OWNED_MARKER).is_file());
    let got = common::types_workload(&engine);
    let mut conn = engine.connect().unwrap();
    assert_eq!(got.len(), 3);

    // ClickHouse's threads in this process are named so the sampler counts them as the
    // engine's CPU.
    let prefixes = engine.background_thread_prefixes();
    let named = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
        .count();
    assert!(named > 0, "no thread named like {prefixes:?}");

    // The data lives in the target's directory.
    assert!(dir.path().join("e.chdb/metadata/dbdelta").exists());

    // libpython only lent its symbols: no interpreter runs in this process.
    assert_eq!(python_interpreter_running(), Some(false));

    let info = engine.info().unwrap();
    assert!(info.version.starts_with("chDB (ClickHouse "), "{info:?}");
    assert_eq!(
        info.settings.get("max_threads").map(String::as_str),
        Some("2"),
        "{info:?}"
    );
    assert!(info.settings.contains_key("chdb_library"));

    // Statements that cannot be wrapped in a SELECT are read from Arrow directly.
    assert_eq!(
        conn.query_scalar("SHOW TABLES LIKE 'logs'")
            .unwrap()
            .as_deref(),
        Some("logs")
    );
    // A SELECT that cannot be wrapped (its own FORMAT clause) is read from Arrow too.
    assert_eq!(
        conn.query_scalar("SELECT 40 + 2 FORMAT TabSeparated")
            .unwrap()
            .as_deref(),
        Some("42")
    );
    let e = conn.query("SELEC 1").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ClickHouse 62"), "{e}");
    drop(conn);

    // chDB keeps one storage path per process: a second target at another path is
    // refused while the first is open, and opens once it is closed.
    let other = TargetSpec::parse("f=chdb").unwrap();
    let e = ChdbEngine::open(&other, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("one storage path per process"), "{e}");
    let mut again = engine.connect().unwrap();
    assert_eq!(
        again
            .query_scalar("SELECT count() FROM logs")
            .unwrap()
            .as_deref(),
        Some("10000"),
        "the first target is untouched by the refused one"
    );
    drop(again);
    drop(engine);
    let second = ChdbEngine::open(&other, dir.path(), &OpenOptions::default()).unwrap();
    let mut c = second.connect().unwrap();
    assert_eq!(
        c.query_scalar("SELECT count() FROM system.tables WHERE database = 'dbdelta'")
            .unwrap()
            .as_deref(),
        Some("0"),
        "a new directory is a new database"
    );
    drop(c);
    drop(second);

    // A directory dbdelta did not create is refused.
    let theirs = tempfile::tempdir().unwrap();
    std::fs::write(theirs.path().join("data.txt"), "x").unwrap();
    let spec = TargetSpec::parse(&format!("t=chdb:{}", theirs.path().display())).unwrap();
    let e = ChdbEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("--i-own-this-database"), "{e}");
}

#[test]
fn missing_library_names_the_parameter() {
    let spec = TargetSpec::parse("e=chdb?lib=/nonexistent/_chdb.abi3.so").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = ChdbEngine::open(&spec, dir.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("lib="), "{e}");
    assert!(e.message.contains("/nonexistent/_chdb.abi3.so"), "{e}");
    let spec = TargetSpec::parse("e=chdb://host").unwrap();
    assert!(ChdbEngine::check_spec(&spec).is_err());
}
