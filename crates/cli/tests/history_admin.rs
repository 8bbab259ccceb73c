//! End to end: `history prune` (a listing by default, removal with --yes) and `history
//! export` (CSV and JSON) on a generated SQLite history. The PostgreSQL store's listing and
//! removal are tested in crates/history.

mod common;

use assert_cmd::Command;
use common::succeed;
use dbdelta_history::{open_store, Point, Store};
use std::path::Path;

fn dbdelta(store: &Path) -> Command {
    let mut c = Command::cargo_bin("dbdelta").unwrap();
    c.env("DBDELTA_STORE", store);
    c
}

fn no_pg(
    _: &dbdelta_model::TargetSpec,
) -> Result<Box<dyn dbdelta_engine::Connection>, dbdelta_engine::EngineError> {
    unreachable!("the test's store is a SQLite file")
}

fn point(run: &str, started: &str, host: &str, target: &str, qps: f64) -> Point {
    Point {
        run_id: run.into(),
        run_started: started.into(),
        host: host.into(),
        suite: "sysbench".into(),
        target: target.into(),
        engine: "mock".into(),
        version: "mock 1".into(),
        build: "mock:".into(),
        settings_hash: "00ff".into(),
        step: "point-query".into(),
        label: "point-query".into(),
        threads: 1,
        repeat: 1,
        qps,
        p95_us: 1e6 / qps,
        p99_us: None,
        cpu_us_per_op: None,
    }
}

/// Three runs: two from 2020 (one on host b, with two targets) and one from the year 2999,
/// which no age reaches.
fn history(store: &Path) -> Box<dyn Store> {
    let mut s = open_store(store.to_str().unwrap(), &no_pg).unwrap();
    s.add(&[
        point("old-a", "2020-01-01T00:00:00Z", "a", "m", 1000.0),
        point("old-b", "2020-02-01T00:00:00Z", "b", "m", 1100.0),
        point("old-b", "2020-02-01T00:00:00Z", "b", "n", 900.0),
        point("new-a", "2999-01-01T00:00:00Z", "a", "m", 1200.0),
    ])
    .unwrap();
    s
}

/// The store's (run, target) pairs, opened without adding anything.
fn runs(store: &Path) -> Vec<(String, String)> {
    open_store(store.to_str().unwrap(), &no_pg)
        .unwrap()
        .runs()
        .unwrap()
        .into_iter()
        .map(|r| (r.run_id, r.target))
        .collect()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn prune_lists_by_default_and_removes_with_yes() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite");
    drop(history(&store));

    let out = succeed(dbdelta(&store).args(["history", "prune", "--older-than", "30d"]));
    let text = stdout(&out);
    assert!(text.contains("old-a") && text.contains("old-b"), "{text}");
    assert!(!text.contains("new-a"), "{text}");
    assert!(
        text.contains("would remove 3 result(s) of 3 run target(s)"),
        "{text}"
    );
    // The listing changed nothing.
    assert_eq!(runs(&store).len(), 4);

    let out = succeed(dbdelta(&store).args([
        "history",
        "prune",
        "--older-than",
        "30d",
        "--host",
        "b",
        "--target",
        "n",
        "--yes",
    ]));
    assert!(stdout(&out).contains("removed 1 result(s) of 1 run target(s)"));
    assert_eq!(
        runs(&store),
        [("old-a", "m"), ("old-b", "m"), ("new-a", "m")].map(|(r, t)| (r.into(), t.into()))
    );
}

#[test]
fn prune_refuses_no_condition_and_a_bad_age() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite");
    drop(history(&store));
    for (args, says) in [
        (
            vec!["history", "prune", "--yes"],
            "never removes the whole history",
        ),
        (
            vec!["history", "prune", "--older-than", "30"],
            "--older-than '30' is invalid",
        ),
    ] {
        let out = dbdelta(&store).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(runs(&store).len(), 4);
}

#[test]
fn export_writes_csv_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite");
    drop(history(&store));

    let out = succeed(dbdelta(&store).args(["history", "export", "--host", "a"]));
    let csv = stdout(&out);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], dbdelta_history::export::CSV_HEADER);
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[1].starts_with("a,sysbench,m,point-query,1,old-a,2020-01-01T00:00:00Z,"));
    assert!(lines[2].contains(",new-a,") && lines[2].contains(",1200,"));

    let file = tmp.path().join("series.json");
    succeed(dbdelta(&store).args([
        "history",
        "export",
        "--format",
        "json",
        "-o",
        file.to_str().unwrap(),
    ]));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let series = v.as_array().unwrap();
    // (a, m), (b, m), (b, n).
    assert_eq!(series.len(), 3);
    assert_eq!(series[0]["points"].as_array().unwrap().len(), 2);
    assert_eq!(series[2]["key"]["target"], "n");
}
