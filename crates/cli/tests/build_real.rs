//! A real PostgreSQL build as a target: `postgres-build:15?frame_pointers=on` from the
//! build cache (a build takes minutes, so this test never builds: scripts/test.sh makes the
//! build once, later runs find it in the cache). Without the cached build the test is
//! skipped with a message, and fails when `CI` is set.

mod common;

use common::dbdelta;

const RECIPE: &str = "frame_pointers=on";

#[test]
fn a_cached_build_is_a_managed_target_with_its_build_in_the_manifest() {
    let looked = dbdelta()
        .args(["build", "postgres", "--source", "15", "--recipe", RECIPE])
        .arg("--cached-only")
        .output()
        .unwrap();
    if !looked.status.success() {
        let why = String::from_utf8_lossy(&looked.stderr);
        assert!(
            std::env::var_os("CI").is_none(),
            "the cached PostgreSQL build is missing under CI (scripts/test.sh builds it: dbdelta build postgres --source 15 --recipe {RECIPE}): {why}"
        );
        eprintln!("SKIPPED: no cached build (dbdelta build postgres --source 15 --recipe {RECIPE}; scripts/test.sh makes it): {why}");
        return;
    }
    let bin = String::from_utf8_lossy(&looked.stdout).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "--no-store", "-t"])
        .arg(format!("fp=postgres-build:15?{RECIPE}&shared_buffers=64MB"))
        .args([
            "--steps",
            "point-query",
            "--table-size",
            "1000",
            "--read-secs",
            "1",
            "--warmup-secs",
            "0",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("cached"), "a cache hit, not a build: {err}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rd.join("run.json")).unwrap()).unwrap();
    let t = &manifest["targets"][0];
    assert_eq!(t["engine"], "postgres");
    assert!(
        t["spec"].as_str().unwrap().contains(&bin),
        "the target runs the cached build: {t}"
    );
    let s = &t["settings"];
    assert_eq!(s["build.recipe"], RECIPE);
    assert_eq!(s["shared_buffers"], "64MB");
    assert!(s["build.cflags"]
        .as_str()
        .unwrap()
        .contains("-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"));
    assert!(s["build.cc"].as_str().unwrap().starts_with("gcc"), "{s}");
    assert!(s["build.source"]
        .as_str()
        .unwrap()
        .contains("postgresql-15 15."));
    assert!(t["version"].as_str().unwrap().starts_with("PostgreSQL 15."));
}
