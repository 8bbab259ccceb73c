//! Segments of one run (`run --segment K/N`) and their exact merge (`dbdelta merge`): the
//! merged histogram is the segments' histograms added (every percentile), throughput adds
//! up, segments started seconds apart measure one window, and bad input is refused.

mod common;

use common::{dbdelta, read_json, step_results};
use dbdelta_model::StepResult;
use std::path::{Path, PathBuf};
use std::process::Child;

/// Starts segment `k` of `n` on a mock target (service time `latency`) in the background.
fn segment(dir: &Path, k: u32, n: u32, latency: &str, extra: &[&str]) -> Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("dbdelta"))
        .args(["run", "--quiet", "--no-store", "--steps", "point-query"])
        .arg("-t")
        .arg(format!("m=mock?latency={latency}&dist=exp"))
        .args(["--threads", "8", "--read-secs", "2", "--warmup-secs", "0.2"])
        .args(["--table-size", "1000"])
        .arg("--segment")
        .arg(format!("{k}/{n}"))
        .arg("--segment-barrier")
        .arg(dir.join("barrier.db"))
        .arg("--run-dir")
        .arg(dir.join(format!("s{k}")))
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn measured(run: &Path) -> StepResult {
    step_results(run, "m")
        .into_iter()
        .find(|r| r.label.starts_with("point-query"))
        .expect("the point-query result")
}

fn finish(c: Child) -> (Option<i32>, String) {
    let out = c.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn segments_started_apart_measure_one_window_and_merge_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // Known, different service times per segment: the merged distribution is their mixture.
    let lat = ["200us", "400us", "800us", "1600us"];
    let mut children = Vec::new();
    for k in 1..=4u32 {
        children.push(segment(dir.path(), k, 4, lat[k as usize - 1], &[]));
        // Started a second apart: the barrier makes them wait for each other.
        std::thread::sleep(std::time::Duration::from_millis(1000));
    }
    for c in children {
        let (code, err) = finish(c);
        assert_eq!(code, Some(0), "{err}");
    }
    let parts: Vec<StepResult> = (1..=4)
        .map(|k| measured(&dir.path().join(format!("s{k}"))))
        .collect();
    let starts: Vec<f64> = parts
        .iter()
        .map(|r| r.segments.as_ref().unwrap().start_unix)
        .collect();
    assert!(
        starts.iter().all(|s| *s == starts[0]),
        "one agreed start: {starts:?}"
    );
    for (k, r) in parts.iter().enumerate() {
        assert_eq!(
            r.threads, 8,
            "the result counts every segment's connections"
        );
        assert_eq!(r.segments.as_ref().unwrap().threads, 2, "segment {}", k + 1);
    }
    let merged = dir.path().join("merged");
    let out = dbdelta()
        .arg("merge")
        .args((1..=4).map(|k| dir.path().join(format!("s{k}"))))
        .arg("--run-dir")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = measured(&merged);
    // Every event of every segment, in one histogram.
    let mut all = dbdelta_stats::new_histogram();
    for r in &parts {
        all.add(dbdelta_stats::decode(&r.latency.histogram).unwrap())
            .unwrap();
    }
    let got = dbdelta_stats::decode(&m.latency.histogram).unwrap();
    assert_eq!(
        got.len(),
        parts.iter().map(|r| r.latency.count).sum::<u64>()
    );
    for q in (0..=1000).map(|i| f64::from(i) / 1000.0) {
        assert_eq!(
            got.value_at_quantile(q),
            all.value_at_quantile(q),
            "quantile {q}"
        );
    }
    assert_eq!(m.latency, dbdelta_stats::summarize(&all));
    let qps: f64 = parts.iter().map(|r| r.qps).sum();
    assert!((m.qps - qps).abs() < 1e-6 * qps, "{} vs {qps}", m.qps);
    assert_eq!(m.events, parts.iter().map(|r| r.events).sum::<u64>());
    // The mixture of the known service times: its median lies between the fastest and
    // the slowest segment's.
    let p50s: Vec<f64> = parts.iter().map(|r| r.latency.p50_us).collect();
    assert!(
        p50s[0] < m.latency.p50_us && m.latency.p50_us < p50s[3],
        "{p50s:?} {}",
        m.latency.p50_us
    );
    let w = m.segments.as_ref().unwrap();
    assert_eq!((w.count, w.index, w.parts.len()), (4, None, 4));
    let run = read_json(&merged.join("run.json"));
    assert_eq!(run["segments"]["count"], 4);
    let report = std::fs::read_to_string(merged.join("report.txt")).unwrap();
    assert!(
        report.contains("measured by 4 segment(s) on 1 host(s)"),
        "{report}"
    );
}

#[test]
fn bad_segments_are_refused() {
    for bad in ["0/4", "5/4", "1/0", "2"] {
        let out = dbdelta()
            .args(["run", "--no-store", "-t", "m=mock", "--segment", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--segment"), "{bad}: {err}");
    }
    // A target each segment would start for itself cannot be shared.
    let out = dbdelta()
        .args(["run", "--no-store", "-t", "s=sqlite", "--segment", "1/2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shared SQLite file"));
}

#[test]
fn mismatched_plans_are_refused_at_the_barrier_and_at_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = segment(dir.path(), 1, 2, "100us", &[]);
    let b = segment(dir.path(), 2, 2, "100us", &["--seed", "7"]);
    let (ca, ea) = finish(a);
    let (cb, eb) = finish(b);
    assert_eq!((ca, cb), (Some(2), Some(2)), "{ea}\n{eb}");
    for e in [&ea, &eb] {
        assert!(
            e.contains("runs another plan") && e.contains("options.seed"),
            "{e}"
        );
    }
    // Two complete segment runs of different plans are not merged.
    let one = |name: &str, seed: &str| -> PathBuf {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        let c = segment(&d, 1, 1, "100us", &["--seed", seed]);
        let (code, err) = finish(c);
        assert_eq!(code, Some(0), "{err}");
        d.join("s1")
    };
    let (x, y) = (one("x", "1"), one("y", "2"));
    let out = dbdelta()
        .arg("merge")
        .arg(&x)
        .arg(&y)
        .arg("--run-dir")
        .arg(dir.path().join("m"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("given twice") || err.contains("another plan"),
        "{err}"
    );
}

#[test]
fn a_segment_killed_mid_step_makes_the_merged_step_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--read-secs", "4"];
    let a = segment(dir.path(), 1, 2, "100us", &extra);
    let mut b = segment(dir.path(), 2, 2, "100us", &extra);
    // Wait until segment 2's window has begun (its barrier row at the step's start).
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(60) {
        let started = std::process::Command::new("sqlite3")
            .arg(dir.path().join("barrier.db"))
            .arg("SELECT count(*) FROM dbdelta_segments WHERE what LIKE 'start of point-query%'")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "2")
            .unwrap_or(false);
        if started {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    b.kill().unwrap();
    let _ = b.wait();
    let (code, err) = finish(a);
    assert_eq!(code, Some(0), "{err}");
    let out = dbdelta()
        .arg("merge")
        .arg(dir.path().join("s1"))
        .arg(dir.path().join("s2"))
        .arg("--run-dir")
        .arg(dir.path().join("m"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = measured(&dir.path().join("m"));
    assert!(!m.is_complete(), "{:?}", m.status);
}
