//! Golden files of the dashboard's pages from a fixed small history: 12 runs of two steps
//! with two repeats each (so every run has an interval), a 30 % drop in one step at the run
//! where the version changed, and profiles on both sides of it. Ids are fixed and no time
//! of the build is printed, so the pages are the same on every machine.
//! `DBDELTA_BLESS=1 cargo test -p dbdelta-dashboard --test golden` rewrites them.

mod common;

use common::check_golden;
use common::synthetic::{Plant, Synthetic};
use dbdelta_dashboard::{build, Options, RunDirs};
use dbdelta_history::Filter;
use dbdelta_inference::DetectOptions;
use std::path::Path;

#[test]
fn pages_match_their_golden_files() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let site = tmp.path().join("site");
    let mut h = Synthetic::new(12, &["point-query_range=100", "scan_range=100"]);
    h.repeats = 2;
    h.plant = Some(Plant {
        label: "point-query_range=100".into(),
        at: 6,
        factor: 0.7,
    });
    h.versions = vec![(0, "15.4".into()), (6, "15.5".into())];
    h.profiled = vec![5, 6];
    let points = h.write_runs(&runs);
    let opts = Options {
        filter: Filter::default(),
        detect: DetectOptions::default(),
        runs: RunDirs::new(vec![runs]),
    };
    let summary = build(&points, &site, &opts).unwrap();
    assert_eq!(summary.series, 2);
    assert!(summary.changes >= 1, "{summary:?}");

    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden");
    let read = |rel: &str| {
        std::fs::read_to_string(site.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    check_golden(&data.join("index.html"), &read("index.html"));
    let series = "pg-point-query_range=100-dop4";
    let page = std::fs::read_dir(site.join("series"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(series))
        .expect("the planted series has a page");
    check_golden(&data.join("series.html"), &read(&format!("series/{page}")));
    let stem = page.trim_end_matches(".html");
    check_golden(
        &data.join("evidence.html"),
        &read(&format!("evidence/{stem}.run-00006.html")),
    );
}
