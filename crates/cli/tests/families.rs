//! A suite needs SQL operations; a target whose engine serves only key-value operations gets
//! every step reported as "not supported", never as a failure or a zero, and the run goes on.

mod common;

use common::{dbdelta, read_json};

#[test]
fn a_target_without_the_suites_operations_is_reported_as_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "sql=mock",
            "-t",
            "kvonly=mock?families=kv",
            "--steps",
            "point-query,update-index",
            "--read-secs",
            "0.2",
            "--write-secs",
            "0.2",
            "--warmup-secs",
            "0",
            "--table-size",
            "100",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "not supported is not a failure: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<_> = std::fs::read_dir(rd.join("results/kvonly"))
        .unwrap()
        .flatten()
        .map(|e| read_json(&e.path()))
        .collect();
    assert_eq!(
        results.len(),
        2,
        "one result per chosen step, nothing loaded"
    );
    for r in &results {
        assert_eq!(r["status"]["state"], "not-supported");
        assert_eq!(
            r["status"]["reason"],
            "sql operations are not supported by mock"
        );
    }
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains("n/s\tpoint-query_range=100"), "{text}");
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(
        md.contains("n/s (sql operations are not supported by mock)"),
        "{md}"
    );
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(html.contains("not supported</td>"));
}

#[test]
fn a_mock_with_unknown_families_is_refused() {
    let out = dbdelta()
        .args(["run", "--no-store", "-t", "m=mock?families=graph"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("families=graph"));
}
