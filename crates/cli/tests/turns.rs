//! Interleaved rounds after the first share one window in turns (`--turn-ms`, default 10):
//! both targets' results of such a round cover the same wall-clock window, each target is
//! charged only its own turns, and the verdicts pair the rounds in turns.

mod common;

use common::{dbdelta, read_json};
use serde_json::Value;
use std::path::Path;

/// Every measured result of the run directory, by target.
fn results(rd: &Path, target: &str) -> Vec<Value> {
    let mut out: Vec<Value> = std::fs::read_dir(rd.join("results").join(target))
        .unwrap()
        .flatten()
        .map(|f| read_json(&f.path()))
        .filter(|r| r["kind"] == "measured")
        .collect();
    out.sort_by_key(|r| r["repeat"].as_u64().unwrap_or(0));
    out
}

#[test]
fn rounds_after_the_first_share_one_window_and_count_only_their_own_turns() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "a=mock?latency=1ms",
            "-t",
            "b=mock?latency=2ms",
            "--steps",
            "point-query",
            "--repeat",
            "3",
            "--read-secs",
            "0.4",
            "--warmup-secs",
            "0.05",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (a, b) = (results(&rd, "a"), results(&rd, "b"));
    assert_eq!((a.len(), b.len()), (3, 3));
    for (ra, rb) in a.iter().zip(&b) {
        let round = ra["repeat"].as_u64().unwrap();
        for r in [ra, rb] {
            if round == 1 {
                // The first round keeps one window per target: its costs are the target's.
                assert!(r.get("turns").is_none(), "{r}");
                continue;
            }
            let t = &r["turns"];
            assert_eq!(t["slice_ms"].as_f64(), Some(10.0), "{r}");
            assert_eq!(t["targets"].as_u64(), Some(2), "{r}");
            assert!((t["wall_secs"].as_f64().unwrap() - 0.4).abs() < 0.01, "{r}");
            // Charged its own turns only: about half the shared window.
            let secs = r["seconds"].as_f64().unwrap();
            assert!(
                (0.12..=0.28).contains(&secs),
                "round {round}: {secs} s of 0.4 s"
            );
            assert!(
                r.get("client_cpu_us_per_op").is_none_or(Value::is_null),
                "{r}"
            );
        }
        if round > 1 {
            // One window: both started together.
            let gap = ra["started_unix"].as_f64().unwrap() - rb["started_unix"].as_f64().unwrap();
            assert!(gap.abs() < 0.1, "round {round}: started {gap} s apart");
        }
    }
    // A rate over its own turns is the rate of a window of its own: each target's rounds in
    // turns agree with its first round (1 and 2 ms sleeps; 2x apart between targets).
    for rs in [&a, &b] {
        let first = rs[0]["qps"].as_f64().unwrap();
        for r in &rs[1..] {
            let q = r["qps"].as_f64().unwrap();
            assert!(
                (q / first - 1.0).abs() < 0.25,
                "{q} qps in turns vs {first} alone"
            );
        }
    }
    let report = read_json(&rd.join("report.json"));
    let v = &report["verdicts"][0];
    let ratio = v["ratio"].as_f64().unwrap();
    assert!((0.4..=0.62).contains(&ratio), "b/a {ratio}, want ~0.5: {v}");
    assert_eq!(v["evidence"], "paired", "{v}");
    let text = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(
        text.contains("2 paired rounds in which the targets shared one window in turns of 10 ms"),
        "{text}"
    );
}

#[test]
fn a_bad_turn_length_is_refused_naming_the_flag() {
    for bad in ["-1", "nan", "0.01", "1e9"] {
        let out = dbdelta()
            .args([
                "run",
                "--quiet",
                "--no-store",
                "-t",
                "a=mock",
                "-t",
                "b=mock",
            ])
            .arg(format!("--turn-ms={bad}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--turn-ms {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--turn-ms"), "--turn-ms {bad}: {err}");
    }
}
