//! `--fail-on` never passes a broken build: a compared target whose steps failed is a gate
//! failure (exit 1), not "0 comparisons" and exit 0.

mod common;

use common::dbdelta;

#[test]
fn fail_on_with_a_target_that_fails_every_step_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "--no-store",
            "-t",
            "a=mock",
            "-t",
            "b=mock?fail_on=SELECT",
            "--steps",
            "point-query",
            "--read-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "--fail-on",
            "regression>5%",
            "--run-dir",
        ])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("FAIL (--fail-on)") && err.contains("b point-query") && err.contains("failed"),
        "{err}"
    );
}
