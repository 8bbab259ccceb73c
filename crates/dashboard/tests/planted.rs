//! A planted 10 % drop in a generated history of 60 runs appears as a change point on the
//! right series page (and no other), with a link to the differential flamegraph of that step
//! made from the profiles in the two runs' directories.

mod common;

use common::synthetic::{Plant, Synthetic};
use dbdelta_dashboard::{build, Options, RunDirs};
use dbdelta_history::Filter;
use dbdelta_inference::DetectOptions;

#[test]
fn a_planted_drop_is_a_change_point_with_a_differential_flamegraph() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let site = tmp.path().join("site");
    let mut h = Synthetic::new(
        60,
        &[
            "point-query_range=100",
            "update-index_range=100",
            "read-only_range=100",
        ],
    );
    h.plant = Some(Plant {
        label: "update-index_range=100".into(),
        at: 40,
        factor: 0.9,
    });
    h.profiled = vec![39, 40];
    let points = h.write_runs(&runs);
    let opts = Options {
        filter: Filter::default(),
        detect: DetectOptions::default(),
        runs: RunDirs::new(vec![runs.clone()]),
    };
    let summary = build(&points, &site, &opts).unwrap();
    assert_eq!(summary.series, 3);
    assert!(summary.flamegraphs >= 1, "{summary:?}");

    let pages: Vec<(String, String)> = std::fs::read_dir(site.join("series"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    assert_eq!(pages.len(), 3);
    for (name, html) in &pages {
        let planted = name.starts_with("pg-update-index");
        // The QPS change is at run 40, −10 % (noise is 1 %).
        let qps_change = "<tr><td>qps</td><td class=\"n worse\">−";
        assert_eq!(html.contains(qps_change), planted, "{name}");
        if !planted {
            assert!(html.contains("No change points."), "{name}");
            continue;
        }
        assert!(html.contains("run-00039 → run-00040"), "{name}");
        let stem = format!("{}.run-00040", name.trim_end_matches(".html"));
        let diff = format!("../evidence/{stem}.diff.svg");
        assert!(
            html.contains(&format!("<a class=\"flamegraph\" href=\"{diff}\">")),
            "no flamegraph link on {name}"
        );
        let svg = std::fs::read_to_string(site.join("evidence").join(format!("{stem}.diff.svg")))
            .unwrap();
        assert!(svg.contains("LWLockAcquire"), "the grown frame is drawn");
        let evidence =
            std::fs::read_to_string(site.join("evidence").join(format!("{stem}.html"))).unwrap();
        // The two runs compared: one round each, and rounds of two runs never pair, so the
        // ratio comes without an interval (the report's honest answer), near the plant.
        let at = evidence.find("after/before QPS ").expect("the runs' ratio") + 17;
        let ratio: f64 = evidence[at..at + 5].parse().expect("a ratio");
        assert!((0.85..0.95).contains(&ratio), "{ratio}");
        assert!(evidence.contains("(no interval: 1 round)"), "{evidence}");
        assert!(evidence.contains("LWLockAcquire"), "drill-down table");
    }
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert_eq!(index.matches("data-change=\"1\"").count(), 1);
}
