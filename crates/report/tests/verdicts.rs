//! Verdict sections: intervals from repeats, within-run intervals from per-second samples,
//! significant cells marked, and the noise table.

mod common;

use common::{manifest, result};
use dbdelta_inference::{Evidence, Verdict};
use dbdelta_model::{Group, Interval, RunStatus, StepResult};
use dbdelta_report::verdict::{noise, verdicts};
use dbdelta_report::{render, Format, ReportData, ReportOptions, RunData};

fn repeat(mut r: StepResult, k: u32) -> StepResult {
    r.repeat = k;
    r
}

fn run(results: Vec<StepResult>) -> ReportData {
    common::two_target_data(results)
}

#[test]
fn repeats_give_intervals_and_verdicts() {
    let mut rs = Vec::new();
    for (k, (a_pq, b_pq, a_up, b_up)) in [
        (1000.0, 800.0, 500.0, 505.0),
        (1010.0, 805.0, 510.0, 498.0),
        (990.0, 795.0, 495.0, 503.0),
    ]
    .into_iter()
    .enumerate()
    {
        let k = k as u32 + 1;
        rs.push(repeat(
            result("a", "point-query_range=100", 1, Group::Point, 1, a_pq),
            k,
        ));
        rs.push(repeat(
            result("b", "point-query_range=100", 1, Group::Point, 1, b_pq),
            k,
        ));
        rs.push(repeat(
            result("a", "update-index_range=100", 2, Group::Write, 1, a_up),
            k,
        ));
        rs.push(repeat(
            result("b", "update-index_range=100", 2, Group::Write, 1, b_up),
            k,
        ));
    }
    let data = run(rs);
    // The main table shows one value per cell (the rounds' geometric mean), without
    // duplicate warnings.
    assert!(data.warnings.is_empty(), "{:?}", data.warnings);
    let pq_row = &data.tables[0].rows[0];
    let gm = |xs: [f64; 3]| (xs.iter().map(|x| x.ln()).sum::<f64>() / 3.0).exp();
    let want = gm([800.0, 805.0, 795.0]) / gm([1000.0, 1010.0, 990.0]);
    let shown = pq_row.relative()[0].value().unwrap();
    assert!((shown - want).abs() < 1e-12, "{shown} vs {want}");
    let cells = verdicts(&data);
    assert_eq!(cells.len(), 2);
    let pq = cells.iter().find(|c| c.label.starts_with("point")).unwrap();
    let c = pq.comparison.unwrap();
    // Both targets ran in the same rounds: the interval comes from the paired ratios.
    assert_eq!(c.evidence, Evidence::Paired { pairs: 3 });
    assert_eq!(c.verdict, Verdict::Regression);
    assert!(c.low < 0.8 && 0.8 < c.high && c.high < 0.85, "{c:?}");
    let up = cells
        .iter()
        .find(|c| c.label.starts_with("update"))
        .unwrap();
    assert_eq!(up.comparison.unwrap().verdict, Verdict::NoChange);
    let cv = noise(&data);
    let a_pq = cv
        .iter()
        .find(|n| n.target == "a" && n.label.starts_with("point"))
        .unwrap();
    assert!(a_pq.across_repeats && (a_pq.cv.unwrap() - 0.01).abs() < 0.001);

    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    assert!(
        text.contains("from: paired windows: 3 rounds (base and target back to back in each"),
        "{text}"
    );
    assert!(text.contains("1 regression(s), 0 improvement(s), 1 without significant change"));
    assert!(text.contains("▼"));
    let md = render(&data, Format::Markdown, &ReportOptions::default()).unwrap();
    assert!(md.contains("| point-query_range=100 | **0.800 ["), "{md}");
    let html = render(&data, Format::Html, &ReportOptions::default()).unwrap();
    let section = |from: &str, to: &str| {
        let at = html.find(from).unwrap_or_default();
        let end = html[at..].find(to).map_or(html.len(), |e| at + e);
        &html[at..end]
    };
    let verdicts = section("<h2 id=\"verdicts\">", "<h2 id=\"noise\">");
    let colored = verdicts.matches("class=\"v lo\"").count();
    assert_eq!(colored, 1, "only the significant cell is colored");
    // Verdicts by the suite's groups, with a heading each, linked from the contents, and
    // the relative table shows each interval in the cell, not only in its tooltip.
    let point = text.find("\tpoint queries:\n").expect("point heading");
    let write = text.find("\twrite queries:\n").expect("write heading");
    assert!(point < write && text[point..write].contains("point-query_range=100"));
    assert!(md.contains("| **point queries** | |"), "{md}");
    assert!(html.contains("<a href=\"#verdicts\">verdicts</a>"));
    assert!(html.contains("<h2 id=\"verdicts\">"));
    assert!(html.contains("<tr class=\"g\"><th colspan=\"2\">write queries</th></tr>"));
    assert!(html.contains(" <span class=\"ci\">[0.7"), "{html}");
    assert!(html.trim_end().ends_with("</html>"));
}

fn with_seconds(mut r: StepResult, qps: &[f64]) -> StepResult {
    r.intervals = qps
        .iter()
        .enumerate()
        .map(|(i, q)| Interval {
            t: i as f64 + 1.0,
            qps: *q,
            tps: *q,
            p95_us: 100.0,
            p99_us: 100.0,
            p50_us: 80.0,
            max_us: 150.0,
            errors: 0,
        })
        .collect();
    r
}

#[test]
fn one_run_gives_weaker_within_run_intervals() {
    let a = [1000.0, 1004.0, 996.0, 1001.0, 999.0, 1002.0];
    let b = [1100.0, 1096.0, 1104.0, 1099.0, 1101.0, 1098.0];
    let data = run(vec![
        with_seconds(
            result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0),
            &a,
        ),
        with_seconds(
            result("b", "point-query_range=100", 1, Group::Point, 1, 1100.0),
            &b,
        ),
    ]);
    let c = verdicts(&data)[0].comparison.unwrap();
    assert_eq!(c.evidence, Evidence::WithinRun);
    assert_eq!(c.verdict, Verdict::Improvement);
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    assert!(text.contains("weaker evidence"), "{text}");
    assert!(text.contains("~1.099 ["), "{text}");
}

/// Three repeats: point-query a steady 20 % drop (significant); update-index −10 % on
/// average but with run-to-run noise far larger than that (not significant): 0.60, 1.18 and
/// 0.91 in its rounds, 0.86 as their geometric mean.
fn steady_drop_and_noisy_step() -> ReportData {
    let mut rs = Vec::new();
    for (k, (a_pq, b_pq, a_up, b_up)) in [
        (1000.0, 800.0, 500.0, 300.0),
        (1010.0, 805.0, 510.0, 600.0),
        (990.0, 795.0, 495.0, 450.0),
    ]
    .into_iter()
    .enumerate()
    {
        let k = k as u32 + 1;
        for (t, label, order, group, v) in [
            ("a", "point-query_range=100", 1, Group::Point, a_pq),
            ("b", "point-query_range=100", 1, Group::Point, b_pq),
            ("a", "update-index_range=100", 2, Group::Write, a_up),
            ("b", "update-index_range=100", 2, Group::Write, b_up),
        ] {
            rs.push(repeat(result(t, label, order, group, 1, v), k));
        }
    }
    run(rs)
}

#[test]
fn html_main_table_colors_only_significant_cells() {
    let data = steady_drop_and_noisy_step();
    let html = render(&data, Format::Html, &ReportOptions::default()).unwrap();
    let main = &html[html.find("<table class=\"rel\">").unwrap()..];
    let main = &main[..main.find("</table>").unwrap()];
    let row = |label: &str| {
        let at = main.find(label).unwrap();
        main[at..main[at..].find("</tr>").unwrap() + at].to_string()
    };
    let pq = row("point-query_range=100");
    assert!(pq.contains("class=\"n lo\""), "{pq}");
    assert!(pq.contains("95 % CI [0.7"), "{pq}");
    assert!(pq.contains("regression"), "{pq}");
    // The cell shows 0.86, beyond the old 0.95 threshold, yet the interval includes 1.0.
    let up = row("update-index_range=100");
    assert!(up.contains(">0.86 <span class=\"ci\">["), "{up}");
    assert!(up.contains("class=\"n\""), "{up}");
    assert!(up.contains("no significant change"), "{up}");
}

#[test]
fn json_carries_verdicts_and_noise() {
    let mut rs = Vec::new();
    for (k, (a, b)) in [(1000.0, 800.0), (1010.0, 805.0), (990.0, 795.0)]
        .into_iter()
        .enumerate()
    {
        let k = k as u32 + 1;
        rs.push(repeat(
            result("a", "point-query_range=100", 1, Group::Point, 1, a),
            k,
        ));
        rs.push(repeat(
            result("b", "point-query_range=100", 1, Group::Point, 1, b),
            k,
        ));
    }
    let data = run(rs);
    let json = render(&data, Format::Json, &ReportOptions::default()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let v = &doc["verdicts"][0];
    assert_eq!(v["target"], "b");
    assert_eq!(v["verdict"], "regression");
    assert_eq!(v["evidence"], "paired");
    assert_eq!(v["base_runs"], 3);
    assert!(v["low"].as_f64().unwrap() < 0.8 && v["high"].as_f64().unwrap() > 0.8);
    assert_eq!(doc["noise"].as_array().unwrap().len(), 2);
}

#[test]
fn reused_load_repeats_are_not_called_independent() {
    let mut rs = Vec::new();
    for (k, (a, b)) in [(1000.0, 800.0), (1010.0, 805.0)].into_iter().enumerate() {
        let k = k as u32 + 1;
        rs.push(repeat(
            result("a", "point-query_range=100", 1, Group::Point, 1, a),
            k,
        ));
        rs.push(repeat(
            result("b", "point-query_range=100", 1, Group::Point, 1, b),
            k,
        ));
    }
    let mut m = manifest(&["a", "b"], RunStatus::Complete);
    m.command = vec!["dbdelta".into(), "run".into(), "--reuse-load".into()];
    let run = RunData {
        dir: "run".into(),
        manifest: m,
        results: rs,
        warnings: Vec::new(),
    };
    let data = ReportData::from_runs(vec![run], None).unwrap();
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    assert!(
        text.contains("shared one server and load per target"),
        "{text}"
    );
    assert!(!text.contains("independent repeated runs"), "{text}");
}

#[test]
fn at_a_glance_counts_only_significant_changes() {
    let html = render(
        &steady_drop_and_noisy_step(),
        Format::Html,
        &ReportOptions::default(),
    )
    .unwrap();
    assert!(
        html.contains("significantly faster on 0, slower on 1, no significant difference on 1 of 2 steps; largest drop <b>point-query_range=100</b>"),
        "{html}"
    );
}

/// Host drift that moves both sides of every round cancels in paired rounds: a steady 3 %
/// difference under ±10 % drift is resolved, where unpaired repeats see only noise.
#[test]
fn paired_rounds_cancel_drift_that_unpaired_repeats_cannot() {
    let drift = [1.0, 1.10, 0.92, 1.05, 0.95];
    let mut paired = Vec::new();
    let mut unpaired = Vec::new();
    for (k, d) in drift.iter().enumerate() {
        let k = k as u32 + 1;
        let jitter = 1.0 + 0.002 * (k as f64 - 3.0);
        for (set, tk) in [(&mut paired, k), (&mut unpaired, k + 10)] {
            set.push(repeat(
                result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0 * d),
                k,
            ));
            set.push(repeat(
                result(
                    "b",
                    "point-query_range=100",
                    1,
                    Group::Point,
                    1,
                    970.0 * d * jitter,
                ),
                tk,
            ));
        }
    }
    let p = verdicts(&run(paired))[0].comparison.unwrap();
    assert_eq!(p.evidence, Evidence::Paired { pairs: 5 });
    assert_eq!(p.verdict, Verdict::Regression, "{p:?}");
    assert!(p.low > 0.96 && p.high < 0.98, "{p:?}");
    let u = verdicts(&run(unpaired))[0].comparison.unwrap();
    assert_eq!(u.evidence, Evidence::Repeats { base: 5, target: 5 });
    assert_eq!(u.verdict, Verdict::NoChange, "{u:?}");
}

/// An interrupted step's numbers cover a cut window: it is never compared.
#[test]
fn interrupted_steps_are_not_compared() {
    let mut rs = Vec::new();
    for k in 1..=3 {
        rs.push(repeat(
            result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0),
            k,
        ));
        let mut cut = result("b", "point-query_range=100", 1, Group::Point, 1, 400.0);
        if k == 3 {
            cut.status = dbdelta_model::StepStatus::Interrupted;
        }
        rs.push(repeat(cut, k));
    }
    let cells = verdicts(&run(rs));
    let c = cells[0].comparison;
    // Two complete rounds of b against three of a: the two rounds measured on both sides
    // stay paired, the interrupted one drops out.
    assert!(
        matches!(c.map(|c| c.evidence), Some(Evidence::Paired { pairs: 2 })),
        "{c:?}"
    );
}

/// A target on another host: its server cost reads "remote" and the legend says whose host
/// the host metrics are, in every format with a cost table.
#[test]
fn remote_targets_are_labelled_in_the_cost_table() {
    let mut m = manifest(&["a", "b"], RunStatus::Complete);
    m.targets[1].spec = "b=postgres://bench@db1.example:5432/dbdelta".into();
    let run = RunData {
        dir: "run".into(),
        manifest: m,
        results: vec![
            result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0),
            result("b", "point-query_range=100", 1, Group::Point, 1, 900.0),
        ],
        warnings: Vec::new(),
    };
    let data = ReportData::from_runs(vec![run], None).unwrap();
    assert!(data.is_remote("b") && !data.is_remote("a"));
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    assert!(
        text.contains("b on another host: \"host\" is this client machine"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.ends_with("\tb\tpoint-query_range=100") && l.contains("remote"));
    assert!(row.is_some(), "{text}");
    // Markdown and HTML say the same.
    for format in [Format::Markdown, Format::Html] {
        let out = render(&data, format, &ReportOptions::default()).unwrap();
        assert!(
            out.contains("cost is not measured (remote server)"),
            "{out}"
        );
        assert!(
            out.contains("remote |") || out.contains(">remote<"),
            "{out}"
        );
    }
}

/// Forty steps of pure noise and one real 3 % drop, five paired rounds: the drop survives
/// false discovery rate control, and a noise step whose interval happens to exclude 1.0 on
/// its own is withheld (° in Markdown), not flagged.
fn many_steps_one_real_change() -> ReportData {
    let mut rs = Vec::new();
    // Per-round jitter of the ratio: a fixed pattern, different for every step.
    let jitter = |step: usize, k: usize| 1.0 + 0.01 * (((step * 7 + k * 3) % 5) as f64 - 2.0);
    for step in 0..41 {
        let label = format!("step-{step:02}");
        for k in 1..=5usize {
            let base = 1000.0;
            let ratio = match step {
                0 => 0.97 * (1.0 + 0.001 * (k as f64 - 3.0)),
                // Excludes 1.0 at 95 % on its own (p ≈ 0.02), far from surviving 41 tests.
                1 => [1.012, 1.0, 1.02, 1.015, 1.008][k - 1],
                _ => jitter(step, k),
            };
            for (t, v) in [("a", base), ("b", base * ratio)] {
                rs.push(repeat(
                    result(t, &label, step as u32 + 1, Group::Point, 1, v),
                    k as u32,
                ));
            }
        }
    }
    run(rs)
}

#[test]
fn false_discovery_rate_control_keeps_the_real_change_and_withholds_chance() {
    let data = many_steps_one_real_change();
    let cells = verdicts(&data);
    let cell = |l: &str| cells.iter().find(|c| c.label == l).unwrap();
    let real = cell("step-00");
    assert_eq!(real.comparison.unwrap().verdict, Verdict::Regression);
    assert!(!real.withheld);
    let chance = cell("step-01");
    let c = chance.comparison.unwrap();
    assert!(c.low > 1.0, "on its own the interval excludes 1.0: {c:?}");
    assert_eq!(c.verdict, Verdict::NoChange);
    assert!(chance.withheld);
    let flagged = cells
        .iter()
        .filter(|c| c.comparison.is_some_and(|x| x.verdict != Verdict::NoChange))
        .count();
    assert_eq!(flagged, 1);

    let md = render(&data, Format::Markdown, &ReportOptions::default()).unwrap();
    assert!(md.contains("| point | step-00 | 0.97 ▼ |"), "{md}");
    assert!(md.contains("| point | step-01 | 1.01 ° |"), "{md}");
    assert!(md.contains("| point | step-02 | 1.00 |"), "{md}");
    assert!(
        md.contains("Benjamini–Hochberg); ° = 1 interval(s) excluding 1.0 on their own"),
        "{md}"
    );
}

#[test]
fn the_first_line_is_the_noise_floor_of_the_run() {
    let data = many_steps_one_real_change();
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("Noise floor: this run resolves differences larger than ±")
            && first.contains(" % on point steps"),
        "{first}"
    );
    let md = render(&data, Format::Markdown, &ReportOptions::default()).unwrap();
    assert!(md.starts_with("**Noise floor: "), "{md}");
    let html = render(&data, Format::Html, &ReportOptions::default()).unwrap();
    assert!(html.contains("<p><b>Noise floor: "), "{html}");
    // Without any interval there is no floor to state, and the cells say so.
    let single = steady_drop_and_noisy_step_single_round();
    let text = render(&single, Format::Text, &ReportOptions::default()).unwrap();
    assert!(!text.contains("Noise floor"), "{text}");
    let md = render(&single, Format::Markdown, &ReportOptions::default()).unwrap();
    assert!(
        md.contains("| point | point-query_range=100 | 0.80 ? (no interval: 1 round) |"),
        "{md}"
    );
}

fn steady_drop_and_noisy_step_single_round() -> ReportData {
    run(vec![
        result("a", "point-query_range=100", 1, Group::Point, 1, 1000.0),
        result("b", "point-query_range=100", 1, Group::Point, 1, 800.0),
    ])
}

/// Rounds in turns (the targets shared one window) are the evidence once there are two:
/// the first round, a window per target that a host's slow phase hit on one side, neither
/// widens the interval nor moves the ratio or the table's cells.
#[test]
fn rounds_in_turns_are_the_evidence_and_the_first_round_is_left_out() {
    let turns = dbdelta_model::TurnsInfo {
        slice_ms: 10.0,
        targets: 2,
        wall_secs: 0.4,
        ..Default::default()
    };
    let mut rs = Vec::new();
    for (k, (a, b)) in [
        (1000.0, 1500.0),
        (1000.0, 500.0),
        (1010.0, 507.0),
        (990.0, 493.0),
    ]
    .into_iter()
    .enumerate()
    {
        let k = k as u32 + 1;
        for (t, v) in [("a", a), ("b", b)] {
            let mut r = repeat(result(t, "point-query_range=100", 1, Group::Point, 1, v), k);
            r.turns = (k > 1).then_some(turns);
            rs.push(r);
        }
    }
    let data = run(rs);
    let cells = verdicts(&data);
    let c = cells[0].comparison.unwrap();
    assert_eq!(c.evidence, Evidence::Paired { pairs: 3 });
    assert!((c.ratio - 0.5).abs() < 0.005, "{c:?}");
    assert!(c.high < 0.52 && c.verdict == Verdict::Regression, "{c:?}");
    let text = render(&data, Format::Text, &ReportOptions::default()).unwrap();
    // The relative table shows the same ratio as the verdict.
    assert!(text.contains("0.50\tpoint-query_range=100"), "{text}");
    assert!(
        text.contains("from: paired in turns: 3 rounds in which the targets shared one window in turns of 10 ms"),
        "{text}"
    );
}
