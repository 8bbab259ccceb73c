//! The CI summary (`--format github`): golden files of a run with significant changes (one
//! steady drop, one noisy step, links), of forty-one steps with one real change, and of the
//! committed fixture run, which has no intervals.

mod common;

use common::{check_golden, data_dir, fixture_dir, result};
use dbdelta_model::{Group, StepResult};
use dbdelta_report::github::{render, Links};
use dbdelta_report::{load_run, ReportData};

fn run(results: Vec<StepResult>) -> ReportData {
    common::two_target_data(results)
}

/// Three rounds: point-query a steady 20 % drop, update-index noisy (not significant), and
/// point-select a steady 10 % gain.
fn drop_noise_and_gain() -> ReportData {
    let mut rs = Vec::new();
    for (k, (a_pq, b_pq, a_up, b_up, a_ps, b_ps)) in [
        (1000.0, 800.0, 500.0, 300.0, 2000.0, 2200.0),
        (1010.0, 805.0, 510.0, 600.0, 2010.0, 2215.0),
        (990.0, 795.0, 495.0, 450.0, 1990.0, 2185.0),
    ]
    .into_iter()
    .enumerate()
    {
        for (t, label, order, group, v) in [
            ("a", "point-query_range=100", 1, Group::Point, a_pq),
            ("b", "point-query_range=100", 1, Group::Point, b_pq),
            ("a", "point-select", 2, Group::Point, a_ps),
            ("b", "point-select", 2, Group::Point, b_ps),
            ("a", "update-index_range=100", 3, Group::Write, a_up),
            ("b", "update-index_range=100", 3, Group::Write, b_up),
        ] {
            let mut r = result(t, label, order, group, 1, v);
            r.repeat = k as u32 + 1;
            rs.push(r);
        }
    }
    run(rs)
}

fn golden(name: &str, text: &str) {
    check_golden(&data_dir().join("expected").join(name), text);
}

#[test]
fn changes_with_intervals_noise_floor_and_links() {
    let links = Links {
        report: Some("https://ci.example/artifacts/run 7/report.html".into()),
        dashboard: Some("dashboard/index.html".into()),
    };
    let text = render(&drop_noise_and_gain(), &links);
    // The largest change first; the noisy step is not listed.
    let drop = text
        .find("| ▼ | point-query_range=100 |")
        .expect("the drop");
    let gain = text.find("| ▲ | point-select |").expect("the gain");
    assert!(drop < gain, "{text}");
    assert!(!text.contains("| update-index"), "{text}");
    assert!(
        text.contains("❌ **1 regression(s), 1 improvement(s)"),
        "{text}"
    );
    assert!(text.contains("Noise floor:"), "{text}");
    assert!(text.contains("[Full report](https://ci.example/artifacts/run%207/report.html)"));
    golden("github-changes.md", &text);
}

#[test]
fn many_steps_list_at_most_the_cap() {
    // Forty-one steps, each 5 % slower in five steady rounds: all significant.
    let mut rs = Vec::new();
    for step in 0..41u32 {
        for k in 1..=5u32 {
            let wobble = 1.0 + 0.001 * (f64::from((step + k) % 3) - 1.0);
            for (t, v) in [("a", 1000.0), ("b", 950.0 * wobble)] {
                let mut r = result(t, &format!("step-{step:02}"), step + 1, Group::Point, 1, v);
                r.repeat = k;
                rs.push(r);
            }
        }
    }
    let text = render(&run(rs), &Links::default());
    let rows = text.lines().filter(|l| l.starts_with("| ▼ |")).count();
    assert_eq!(rows, dbdelta_report::github::MAX_CHANGES, "{text}");
    assert!(
        text.contains("…and 21 more significant change(s)"),
        "{text}"
    );
    assert!(!text.contains("[Full report]"));
}

#[test]
fn a_run_without_intervals_says_so() {
    let run = load_run(&fixture_dir()).expect("fixture run loads");
    let data = ReportData::from_runs(vec![run], None).expect("fixture merges");
    let text = render(
        &data,
        &Links {
            report: Some("report.html".into()),
            dashboard: None,
        },
    );
    assert!(text.contains("No verdicts"), "{text}");
    golden("github-no-intervals.md", &text);
}
