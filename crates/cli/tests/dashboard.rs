//! End to end: `dbdelta history --html DIR` over runs of the mock engine indexed in a
//! history, and its bad inputs.

mod common;

use assert_cmd::Command;
use common::succeed;
use std::path::Path;

fn dbdelta(store: &Path) -> Command {
    let mut c = Command::cargo_bin("dbdelta").unwrap();
    c.env("DBDELTA_STORE", store);
    c
}

#[test]
fn history_html_writes_the_site_with_links_to_the_run_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("history.sqlite");
    let runs = tmp.path().join("runs");
    for i in 1..=3 {
        succeed(dbdelta(&store).args([
            "run",
            "--quiet",
            "-t",
            "m=mock?latency=1ms",
            "--steps",
            "point-query",
            "--read-secs",
            "1",
            "--warmup-secs",
            "0",
            "--table-size",
            "100",
            "--run-dir",
            runs.join(format!("run{i}")).to_str().unwrap(),
        ]));
    }
    let site = tmp.path().join("site");
    let out = succeed(dbdelta(&store).args([
        "history",
        "--html",
        site.to_str().unwrap(),
        "--runs",
        runs.to_str().unwrap(),
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 series"), "{text}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("point-query"), "{index}");
    let pages: Vec<_> = std::fs::read_dir(site.join("series")).unwrap().collect();
    assert_eq!(pages.len(), 1);
    let page = std::fs::read_to_string(pages[0].as_ref().unwrap().path()).unwrap();
    for run in ["run1", "run2", "run3"] {
        assert!(page.contains(run), "{run} missing from the series page");
    }

    // Bad inputs: one clear error each, exit 2.
    let out = dbdelta(&store)
        .args([
            "history",
            "--html",
            site.to_str().unwrap(),
            "--runs",
            "/nonexistent",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--runs /nonexistent"));
    let out = dbdelta(&store)
        .args(["history", "--html", store.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a file"));
    let out = dbdelta(&store)
        .args(["history", "--runs", runs.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--runs needs --html");
}
