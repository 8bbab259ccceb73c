//! End to end: runs indexed in a results history, change-point detection over it, and the
//! CI exit codes of `--fail-on` and `detect --fail-on-new`.

mod common;

use assert_cmd::Command;
use common::succeed;
use std::path::Path;

fn dbdelta(store: &Path) -> Command {
    let mut c = Command::cargo_bin("dbdelta").unwrap();
    c.env("DBDELTA_STORE", store);
    c
}

/// One short run of one mock target named `m` with the given statement latency.
fn mock_run(store: &Path, dir: &Path, latency: &str) {
    let out = succeed(dbdelta(store).args([
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("indexed 1 result(s) in the history"));
}

#[test]
fn detect_finds_the_planted_slowdown_and_fails_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("history.sqlite");
    for i in 1..=4 {
        mock_run(&store, &tmp.path().join(format!("run{i}")), "2ms");
    }
    // The planted slowdown: statements take ten times as long. Large on purpose: on a
    // loaded 2-core machine (load average 7 seen) the baseline runs differ by up to 2x, and
    // the test must find the plant, not the load.
    mock_run(&store, &tmp.path().join("run5"), "20ms");

    let out = dbdelta(&store)
        .args(["history", "--target-like", "mock", "--step", "point-query"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for run in ["run1", "run2", "run3", "run4", "run5"] {
        assert!(text.contains(run), "{run} missing from history: {text}");
    }

    // Five points cannot reach Otava's default p ≤ 0.001 with 1 s steps on a shared host;
    // -P 0.01 keeps the test fast and still strict. The mock's QPS is nearly quantised: two
    // equal runs give a zero-variance segment, and Otava's t-test then calls a small wobble
    // significant (p = 0); on a loaded machine the baseline runs differ by up to ~20 %. So
    // -M 2 ignores changes under 3× (magnitude max(|a/b − 1|, |b/a − 1|)), as Otava users set a
    // magnitude for their noise: the p95 of a 2 ms mock sleep moved from 3.6 to 2.1 ms between
    // unplanted runs under load (p = 0.004, magnitude 0.7); the plant is 10× (magnitude ~8.7).
    let out = dbdelta(&store)
        .args([
            "detect",
            "--step",
            "point-query",
            "--metric",
            "qps,p95_us",
            "-P",
            "0.01",
            "-M",
            "2",
            "--fail-on-new",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let changes: Vec<&str> = text.lines().filter(|l| l.contains(" at ")).collect();
    assert!(!changes.is_empty(), "no change point found: {text}");
    for c in &changes {
        assert!(
            c.contains(" at run5 ") && c.contains("[regression, newest run]"),
            "unexpected change point: {c}\n{text}"
        );
    }
    let qps = changes.iter().find(|c| c.contains(" qps "));
    if let Some(q) = qps {
        // About −90 % (1/10 − 1, less the fixed overhead per statement and the load).
        let pct: f64 = q
            .split(" qps ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        assert!((-97.0..=-60.0).contains(&pct), "{q}");
    }
    assert_eq!(
        out.status.code(),
        Some(1),
        "--fail-on-new must exit 1: {text}"
    );

    // Without the planted run there is nothing to find.
    let out = dbdelta(tmp.path().join("empty-history.sqlite").as_path())
        .args(["import"])
        .args(["run1", "run2", "run3", "run4"].map(|r| tmp.path().join(r)))
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = dbdelta(tmp.path().join("empty-history.sqlite").as_path())
        .args([
            "detect",
            "--metric",
            "qps,p95_us",
            "-P",
            "0.01",
            "-M",
            "2",
            "--fail-on-new",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 change point(s)"), "{text}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn fail_on_exits_1_on_a_significant_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("history.sqlite");
    let rd = tmp.path().join("run");
    let out = dbdelta(&store)
        .args([
            "run",
            "--quiet",
            "-t",
            "base=mock?latency=2ms",
            "-t",
            "slow=mock?latency=4ms",
            "--steps",
            "point-query",
            "--repeat",
            "5",
            "--read-secs",
            "0.5",
            "--warmup-secs",
            "0",
            "--table-size",
            "100",
            "--fail-on",
            "regression>5%",
            "--run-dir",
            rd.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("FAIL (--fail-on regression>5.0%)"), "{err}");
    assert!(
        err.contains("point-query_range=100") && err.contains("slow"),
        "{err}"
    );
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(report.contains("Verdicts relative to: base"), "{report}");
    assert!(report.contains('▼'), "{report}");

    // A bad rule is bad input: exit 2 naming the flag.
    let out = dbdelta(&store)
        .args(["run", "-t", "m=mock", "--fail-on", "slower>5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fail-on 'slower>5' is invalid"));
}
