//! Two or more targets run interleaved by default: both loaded up front, then every step
//! measured A, B, A, B for --repeat rounds, with verdicts from the paired rounds;
//! `--sequential` keeps the old order (each target's whole suite in turn).

mod common;

use common::{dbdelta, read_json};
use std::path::Path;

fn run(rd: &Path, extra: &[&str]) {
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "a=mock",
            "-t",
            "b=mock",
            "--steps",
            "point-query,update-index",
            "--repeat",
            "2",
            "--read-secs",
            "0.3",
            "--write-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "--run-dir",
        ])
        .arg(rd)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (started, target, label, repeat) of every measured result, in the order they started.
fn timeline(rd: &Path) -> Vec<(f64, String, String, u64)> {
    let mut out = Vec::new();
    for t in ["a", "b"] {
        for f in std::fs::read_dir(rd.join("results").join(t))
            .unwrap()
            .flatten()
        {
            let r = read_json(&f.path());
            if r["kind"] != "measured" {
                continue;
            }
            out.push((
                r["started_unix"].as_f64().unwrap(),
                t.to_string(),
                r["label"].as_str().unwrap().to_string(),
                r["repeat"].as_u64().unwrap_or(0),
            ));
        }
    }
    out.sort_by(|x, y| x.0.total_cmp(&y.0));
    out
}

#[test]
fn steps_alternate_between_targets_in_abba_rounds_and_verdicts_are_paired() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    // One window per target in every round (rounds in turns start together).
    run(&rd, &["--turn-ms", "0"]);
    let order: Vec<String> = timeline(&rd)
        .into_iter()
        .map(|(_, t, label, k)| format!("{t}:{}:{k}", &label[..5]))
        .collect();
    assert_eq!(
        order,
        [
            "a:updat:1",
            "b:updat:1",
            "b:updat:2",
            "a:updat:2",
            "a:point:1",
            "b:point:1",
            "b:point:2",
            "a:point:2"
        ],
        "{order:?}"
    );
    let report = read_json(&rd.join("report.json"));
    let evidence: Vec<&str> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["evidence"].as_str().unwrap())
        .collect();
    assert!(
        !evidence.is_empty() && evidence.iter().all(|e| *e == "paired"),
        "{evidence:?}"
    );
}

#[test]
fn rounds_after_the_first_use_the_round_warm_up() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    run(&rd, &["--round-warmup-secs", "0.05"]);
    let mut by_round: Vec<(u64, f64)> = Vec::new();
    for t in ["a", "b"] {
        for f in std::fs::read_dir(rd.join("results").join(t))
            .unwrap()
            .flatten()
        {
            let r = read_json(&f.path());
            if r["kind"] == "measured" {
                by_round.push((
                    r["repeat"].as_u64().unwrap(),
                    r["warmup_secs"].as_f64().unwrap(),
                ));
            }
        }
    }
    assert_eq!(by_round.len(), 8, "{by_round:?}");
    for (round, warmup) in by_round {
        let want = if round == 1 { 0.0 } else { 0.05 };
        assert!((warmup - want).abs() < 1e-9, "round {round}: {warmup}");
    }
}

#[test]
fn sequential_runs_each_target_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    run(&rd, &["--sequential"]);
    let targets: String = timeline(&rd).into_iter().map(|(_, t, _, _)| t).collect();
    assert_eq!(targets, "aabbaabb", "whole suites in turn, repeated");
}
