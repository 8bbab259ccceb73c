//! Every built-in suite compares two targets in interleaved rounds by default (its `[quick]`
//! preset), so each ratio gets a 95 % interval, an FDR-controlled verdict and the noise-floor
//! line; a step that runs once (db_bench's fillseq) says "no interval: 1 round" next to its
//! ratio. One step per suite keeps each run short; the rounds are the suite's defaults.

mod common;

use common::{read_json, require, run_ok, step_results};
use dbdelta_model::StepKind;
use std::path::Path;

/// Every target ran `label` in at least `min_rounds` numbered rounds, and report.json gives
/// its ratio a paired interval and the run a noise floor.
fn rounds_and_interval(rd: &Path, targets: &[&str], label: &str, min_rounds: usize) {
    for t in targets {
        let rounds: Vec<u32> = step_results(rd, t)
            .iter()
            .filter(|r| r.kind == StepKind::Measured && r.label == label)
            .map(|r| r.repeat)
            .collect();
        assert!(
            rounds.len() >= min_rounds,
            "{t} {label}: {} round(s) by default, want {min_rounds}+",
            rounds.len()
        );
        assert!(
            rounds.iter().all(|&k| k >= 1),
            "{t} {label}: numbered rounds {rounds:?}"
        );
    }
    let report = read_json(&rd.join("report.json"));
    let verdicts = report["verdicts"]
        .as_array()
        .expect("verdicts in report.json");
    let v = verdicts
        .iter()
        .find(|v| v["label"] == label)
        .unwrap_or_else(|| panic!("{label}: no interval in report.json: {verdicts:?}"));
    assert_eq!(v["evidence"], "paired", "{v}");
    let (low, high) = (v["low"].as_f64().unwrap(), v["high"].as_f64().unwrap());
    assert!(
        low <= v["ratio"].as_f64().unwrap() && v["ratio"].as_f64().unwrap() <= high,
        "{v}"
    );
    assert!(
        report["noise_floor"]
            .as_str()
            .is_some_and(|l| l.starts_with("Noise floor:")),
        "{}",
        report["noise_floor"]
    );
}

#[test]
fn tpcb_compares_in_rounds_by_default() {
    let (_d, rd) = run_ok(&[
        "--suite",
        "tpcb",
        "--steps",
        "select-only",
        "-t",
        "a=sqlite",
        "-t",
        "b=sqlite",
    ]);
    rounds_and_interval(&rd, &["a", "b"], "select-only", 10);
}

#[test]
fn tpcc_compares_in_rounds_of_the_run_phase_by_default() {
    let (_d, rd) = run_ok(&["--suite", "tpcc", "-t", "a=sqlite", "-t", "b=sqlite"]);
    // The load ran once per target; the run phase in rounds.
    for t in ["a", "b"] {
        let loads = step_results(&rd, t)
            .iter()
            .filter(|r| r.step == "load")
            .count();
        assert_eq!(loads, 1, "{t}: one load");
    }
    rounds_and_interval(&rd, &["a", "b"], "tpcc", 8);
}

#[test]
fn ycsb_compares_in_rounds_by_default() {
    let (_d, rd) = run_ok(&[
        "--suite",
        "ycsb",
        "--steps",
        "workload-c",
        "-t",
        "a=sqlite",
        "-t",
        "b=sqlite",
    ]);
    rounds_and_interval(&rd, &["a", "b"], "workload-c", 10);
}

#[test]
fn kv_compares_in_rounds_and_fills_once() {
    if !require(
        &["/usr/lib/x86_64-linux-gnu/librocksdb.so"],
        "apt-get install librocksdb-dev",
    ) {
        return;
    }
    let (_d, rd) = run_ok(&[
        "--suite",
        "kv",
        "--steps",
        "fillseq,readrandom",
        "--table-size",
        "20000",
        "-t",
        "a=rocksdb:",
        "-t",
        "b=rocksdb:",
    ]);
    rounds_and_interval(&rd, &["a", "b"], "readrandom", 10);
    for t in ["a", "b"] {
        let fills = step_results(&rd, t)
            .iter()
            .filter(|r| r.step == "fillseq")
            .count();
        assert_eq!(fills, 1, "{t}: fillseq runs once");
    }
    // Its ratio has no interval, and every report says so next to it.
    let report = read_json(&rd.join("report.json"));
    let bare = report["no_interval"].as_array().expect("no_interval list");
    assert!(
        bare.iter()
            .any(|c| c["label"] == "fillseq" && c["why"] == "no interval: 1 round"),
        "{bare:?}"
    );
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("fillseq: col-1 no interval: 1 round"),
        "{text}"
    );
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(md.contains("? (no interval: 1 round)"), "{md}");
}
