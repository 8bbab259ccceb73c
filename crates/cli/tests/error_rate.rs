//! One failed event no longer discards a step: failed events are counted by code and the
//! step keeps its measurement until they pass --max-error-rate.

mod common;

use common::{dbdelta, read_json};

/// The point-query result of target `m` in run directory `rd`.
fn point_query_result(rd: &std::path::Path) -> serde_json::Value {
    let file = std::fs::read_dir(rd.join("results/m"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("point-query"))
        .unwrap();
    read_json(&file)
}

fn run(target: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            target,
            "--steps",
            "point-query",
            "--read-secs",
            "0.5",
            "--warmup-secs",
            "0",
            "--run-dir",
        ])
        .arg(&rd)
        .args(extra)
        .output()
        .unwrap();
    let report = std::fs::read_to_string(rd.join("report.txt")).unwrap_or_default();
    (out, point_query_result(&rd), report)
}

#[test]
fn rare_failures_are_counted_and_the_step_is_kept() {
    let (out, r, report) = run("m=mock?fail_rate=0.001&seed=3", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(r["status"]["state"], "ok");
    let failed = r["failed_events"].as_u64().unwrap();
    assert!(failed > 0, "{r}");
    assert_eq!(r["error_codes"]["MOCK 1"].as_u64(), Some(failed));
    assert!(
        report.contains("--- errors") && report.contains(&format!("MOCK 1 ×{failed}")),
        "{report}"
    );
}

#[test]
fn failures_past_the_max_error_rate_fail_the_step() {
    let (out, r, _) = run(
        "m=mock?fail_rate=0.001&seed=3",
        &["--max-error-rate", "0.01%"],
    );
    assert_eq!(out.status.code(), Some(3));
    let reason = r["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("--max-error-rate") && reason.contains("MOCK 1"),
        "{reason}"
    );
}

/// Two or more whole seconds in which nothing completed make a step stalled: kept for
/// diagnosis, shown as stalled, and the run exits 3.
#[test]
fn seconds_without_progress_mark_the_step_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "m=mock?latency=2500ms",
            "--steps",
            "point-query",
            "--table-size",
            "10",
            "--read-secs",
            "6",
            "--warmup-secs",
            "0",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("stalled: no operation completed for"), "{err}");
    let r = point_query_result(&rd);
    assert_eq!(r["status"]["state"], "stalled", "{}", r["status"]);
    assert!(r["qps"].as_f64().unwrap() > 0.0, "its numbers are kept");
}

/// In rounds, a window that stalled while its events went on completing (a busy host: a
/// commit's fsync waiting seconds for the kernel's writeback) is measured again, the whole
/// round on every target: the run succeeds and every result of the round says why.
#[test]
fn a_round_whose_window_stalled_once_is_measured_again() {
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "a=mock?stall_once=2500ms",
        "-t",
        "b=mock",
        "--steps",
        "point-query",
        "--table-size",
        "100",
        "--read-secs",
        "2.2",
        "--warmup-secs",
        "0",
        "--repeat",
        "2",
    ]);
    for t in ["a", "b"] {
        let rounds: Vec<serde_json::Value> = std::fs::read_dir(rd.join("results").join(t))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().contains("point-query"))
            .map(|p| read_json(&p))
            .collect();
        assert_eq!(rounds.len(), 2, "{t}: {rounds:?}");
        for r in &rounds {
            assert_eq!(r["status"]["state"], "ok", "{t}: {r}");
            let again = r["actions"].to_string();
            // Round 1 stalled on a (its first query waited 2.5 s) and was measured again.
            assert_eq!(
                again.contains("round measured again 1 time(s): a's window stalled"),
                r["repeat"] == 1,
                "{t}: {r}"
            );
        }
    }
}
