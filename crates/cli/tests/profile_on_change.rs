//! End to end: `detect --fail-on-new --profile-on-change` on a generated history whose two
//! newest runs are real mock runs (2 ms, then 20 ms statements): the printed command
//! re-runs both sides as `before` and `after` with profiles of the changed step only, and
//! `--rerun` runs it.

mod common;

use assert_cmd::Command;
use common::succeed;
use dbdelta_history::{open_store, Point};
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

/// One short run of mock target `m`, indexed in the store.
fn mock_run(store: &Path, dir: &Path, latency: &str) {
    succeed(dbdelta(store).args([
        "run",
        "--quiet",
        "-t",
        &format!("m=mock?latency={latency}"),
        "--steps",
        "point-query",
        "--read-secs",
        "1",
        "--warmup-secs",
        "0",
        "--table-size",
        "100",
        "--run-dir",
        dir.to_str().unwrap(),
    ]));
}

/// Eight older runs of the same series at the level of the run `before` (±1 %), dated 2020:
/// a history long enough for a clear change point at the newest run.
fn generate_older_runs(store: &Path) {
    let mut s = open_store(store.to_str().unwrap(), &no_pg).unwrap();
    let all = s.points().unwrap();
    let before: Vec<Point> = all.into_iter().filter(|p| p.run_id == "before").collect();
    assert!(!before.is_empty(), "the run before is indexed");
    let mut older = Vec::new();
    for i in 1..=8u32 {
        for p in &before {
            let wobble = 1.0 + 0.01 * (f64::from(i % 3) - 1.0);
            older.push(Point {
                run_id: format!("old{i}"),
                run_started: format!("2020-01-{i:02}T00:00:00Z"),
                qps: p.qps * wobble,
                p95_us: p.p95_us / wobble,
                ..p.clone()
            });
        }
    }
    s.add(&older).unwrap();
}

fn detect(store: &Path, cwd: &Path, extra: &[&str]) -> (i32, String) {
    let runs = cwd.to_str().unwrap().to_string();
    let out = dbdelta(store)
        .current_dir(cwd)
        .args([
            "detect",
            "--step",
            "point-query",
            "--metric",
            "qps",
            "-P",
            "0.01",
            "-M",
            "2",
            "--fail-on-new",
            "--profile-on-change",
            "--runs-dir",
            &runs,
        ])
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_new_regression_prints_and_reruns_the_profiling_command() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("history.sqlite");
    mock_run(&store, &tmp.path().join("before"), "2ms");
    // Ten times slower statements: far beyond the load noise of a shared 2-core host.
    mock_run(&store, &tmp.path().join("after"), "20ms");
    generate_older_runs(&store);

    let (code, text) = detect(&store, tmp.path(), &[]);
    assert_eq!(code, 1, "--fail-on-new exits 1: {text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("dbdelta run "))
        .unwrap_or_else(|| panic!("no command printed: {text}"));
    for part in [
        "-t 'before=mock?latency=2ms'",
        "-t 'after=mock?latency=20ms'",
        "--read-secs 1",
        "--table-size 100",
        "--base before",
        "--steps point-query",
        "--threads 1",
        "--profile-steps point-query",
        "--no-store",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    assert!(!line.contains("--run-dir"), "{line}");

    let (code, text) = detect(&store, tmp.path(), &["--rerun"]);
    assert_eq!(code, 1, "{text}");
    let runs: Vec<_> = std::fs::read_dir(tmp.path().join("dbdelta-runs"))
        .unwrap_or_else(|e| panic!("no rerun directory ({e}): {text}"))
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let manifest = common::read_json(&runs[0].join("run.json"));
    let names: Vec<&str> = manifest["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["before", "after"], "{manifest}");
    // The rerun stayed out of the history: the series still ends with the run `after`.
    let all = open_store(store.to_str().unwrap(), &no_pg)
        .unwrap()
        .points()
        .unwrap();
    assert!(all.iter().all(|p| p.target == "m"), "{all:?}");
}

#[test]
fn profile_on_change_needs_fail_on_new() {
    let tmp = tempfile::tempdir().unwrap();
    let out = dbdelta(&tmp.path().join("h.sqlite"))
        .args(["detect", "--profile-on-change"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fail-on-new"));
}
