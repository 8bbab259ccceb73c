//! Load once, run many: `dbdelta prepare` then `run --use-existing` skips the load, and a
//! table changed behind dbdelta's back (a row deleted) or a run with other flags is refused
//! with the difference named (exit 2).

mod common;

use common::{dbdelta, step_results, succeed};
use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_model::{StepKind, TargetSpec};
use std::path::Path;

const TARGETS: [&str; 2] = [
    "wal=sqlite?journal_mode=WAL&synchronous=NORMAL",
    "rollback=sqlite?journal_mode=DELETE",
];

/// `prepare` with the targets, tiny tables and the data under `data`.
fn prepare(targets: &[&str], data: &Path, table_size: &str) -> std::process::Output {
    let mut cmd = dbdelta();
    cmd.args([
        "prepare",
        "--quiet",
        "--table-size",
        table_size,
        "--data-dir",
    ])
    .arg(data);
    for t in targets {
        cmd.args(["-t", t]);
    }
    succeed(&mut cmd)
}

/// `run --use-existing` of two short steps; the command, to be run by the caller.
fn run_existing(targets: &[&str], data: &Path, rd: &Path, table_size: &str) -> assert_cmd::Command {
    let mut cmd = dbdelta();
    cmd.args([
        "run",
        "--quiet",
        "--no-store",
        "--use-existing",
        "--steps",
        "point-query,update-index",
        // One window per target of 0.5 s: an event completes even on a loaded 2-core host.
        "--read-secs",
        "0.5",
        "--write-secs",
        "0.5",
        "--warmup-secs",
        "0",
        "--repeat",
        "1",
        "--table-size",
        table_size,
        "--data-dir",
    ])
    .arg(data)
    .arg("--run-dir")
    .arg(rd);
    for t in targets {
        cmd.args(["-t", t]);
    }
    cmd
}

fn loads(rd: &Path, target: &str) -> usize {
    step_results(rd, target)
        .iter()
        .filter(|r| r.kind == StepKind::Load)
        .count()
}

#[test]
fn sqlite_prepare_then_use_existing_skips_the_load_and_refuses_a_deleted_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = prepare(&TARGETS, &data, "500");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wal: 500 rows loaded"), "{stdout}");
    assert!(data.join("wal/wal.db").is_file());

    // Two runs on the same data: each checks it and measures without loading; the first's
    // writes are recorded, so the second accepts what it left.
    for n in 1..=2 {
        let rd = dir.path().join(format!("run{n}"));
        let out = succeed(&mut run_existing(&TARGETS, &data, &rd, "500"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("skipping the load"), "{stderr}");
        for t in ["wal", "rollback"] {
            assert_eq!(loads(&rd, t), 0, "run {n} loaded {t}");
            assert!(
                step_results(&rd, t)
                    .iter()
                    .any(|r| r.kind == StepKind::Measured && r.throughput.value > 0.0),
                "run {n}: {t} measured nothing"
            );
        }
        assert!(
            data.join("wal/wal.db").is_file(),
            "run {n} removed the data"
        );
    }

    // A row deleted behind dbdelta's back: refused, naming the target, table and counts.
    let spec = TargetSpec::parse("wal=sqlite").unwrap();
    let engine = dbdelta_engine_sqlite::SqliteEngine::open(
        &spec,
        &data.join("wal"),
        &OpenOptions::default(),
    )
    .unwrap();
    let mut conn = engine.connect().unwrap();
    conn.batch("DELETE FROM sbtest1 WHERE id = (SELECT min(id) FROM sbtest1)")
        .unwrap();
    drop(conn);
    let rd = dir.path().join("tampered");
    let out = run_existing(&TARGETS, &data, &rd, "500").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("target wal")
            && stderr.contains("table sbtest1 has 499 rows, recorded 500"),
        "{stderr}"
    );
}

#[test]
fn use_existing_refuses_other_flags_and_missing_preparation() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Nothing prepared: the message says what to run.
    let out = run_existing(&TARGETS[..1], &data, &dir.path().join("r0"), "300")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("run `dbdelta prepare`"), "{stderr}");

    prepare(&TARGETS[..1], &data, "300");
    let out = run_existing(&TARGETS[..1], &data, &dir.path().join("r1"), "400")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--table-size 300 (run: 400)"), "{stderr}");

    // Suites without a prepared form say so.
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "--use-existing",
            "--suite",
            "tpcb",
            "-t",
            "a=sqlite",
        ])
        .arg("--data-dir")
        .arg(&data)
        .arg("--run-dir")
        .arg(dir.path().join("r2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("sysbench suite only"), "{stderr}");
}

#[test]
fn managed_postgres_keeps_its_prepared_data_dir_between_runs() {
    const BIN: &str = "/usr/lib/postgresql/15/bin";
    if !common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pg = format!("pg15=postgres:{BIN}?shared_buffers=64MB");
    prepare(&[&pg], &data, "400");
    assert!(data.join("pg15/pgdata/PG_VERSION").is_file());
    let rd = dir.path().join("run");
    let out = succeed(&mut run_existing(&[&pg], &data, &rd, "400"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[pg15] prepared data matches its record"),
        "{stderr}"
    );
    assert_eq!(loads(&rd, "pg15"), 0);
    assert!(step_results(&rd, "pg15")
        .iter()
        .any(|r| r.kind == StepKind::Measured && r.throughput.value > 0.0));
    assert!(
        common::processes_mentioning(data.to_str().unwrap()).is_empty(),
        "a server of the prepared data is still running"
    );
    // Another plan on the same data is refused.
    let out = run_existing(&[&pg], &data, &dir.path().join("run2"), "500")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--table-size 400 (run: 500)"), "{stderr}");
}

#[test]
fn external_postgres_prepared_once_refuses_a_deleted_row() {
    const BIN: &str = "/usr/lib/postgresql/15/bin";
    if !common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    // A server of the test's own, reached as an external target by URL.
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!("pg=postgres:{BIN}?fsync=on")).unwrap();
    let server =
        dbdelta_engine_postgres::open(&spec, &dir.path().join("server"), &OpenOptions::default())
            .unwrap();
    let url = format!("ext=postgres://dbdelta@{}/dbdelta", server.address());
    let data = dir.path().join("data");
    prepare(&[&url], &data, "400");
    let rd = dir.path().join("run");
    let out = succeed(&mut run_existing(&[&url], &data, &rd, "400"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[ext] prepared data matches its record"),
        "{stderr}"
    );
    assert_eq!(loads(&rd, "ext"), 0);

    let mut conn = server.connect().unwrap();
    conn.batch("DELETE FROM sbtest1 WHERE id = (SELECT max(id) FROM sbtest1)")
        .unwrap();
    let rows: u64 = conn
        .query_scalar("SELECT count(*) FROM sbtest1")
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    let out = run_existing(&[&url], &data, &dir.path().join("tampered"), "400")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "target ext: table sbtest1 has {rows} rows, recorded {}",
            rows + 1
        )),
        "{stderr}"
    );
}
