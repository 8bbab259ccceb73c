//! The Insert Benchmark report: the three published tables (tput, tputr, iput) with their
//! color rules, a golden text file, and SLA failures gray in the throughput table and red in
//! the insert-rate table.

mod common;

use common::{check_golden, data_dir, manifest, result, write_run};
use dbdelta_model::ibench::sla_failed;
use dbdelta_model::{Group, IbenchStats, RunStatus, StepKind, StepResult};
use dbdelta_report::ibench::{iput, tput, tputr, Color};
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions};

const STEPS: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// One step's result whose headline is `value`; `ips` is the read+write insert rate.
fn step(target: &str, i: usize, value: f64, ips: f64) -> StepResult {
    let name = STEPS[i];
    let mut r = result(target, name, i as u32 + 1, Group::Write, 1, value);
    r.step = name.to_string();
    r.label = name.to_string();
    r.kind = StepKind::Measured;
    let rate = [100.0, 100.0, 500.0, 500.0, 1000.0, 1000.0];
    let target_rate = (i >= 4).then(|| rate[i - 4]);
    r.ibench = Some(IbenchStats {
        clients: 1,
        inserts_per_s: if i >= 4 { ips } else { value },
        indexed_rows_per_s: (i == 1).then_some(value),
        queries_per_s: if i >= 4 { value } else { 0.0 },
        target_insert_rate: target_rate,
        sla_failed: target_rate.is_some_and(|t| sla_failed(ips, t)),
        db_bytes: Some(123_456_789),
        ..IbenchStats::default()
    });
    r
}

fn data() -> (tempfile::TempDir, ReportData) {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    // base: steady; fast: 10 % faster everywhere; slow: misses the 1000/s insert rate in
    // qr1000 with a QPS that would otherwise be the best.
    for (t, factor) in [("base", 1.0), ("fast", 1.1), ("slow", 0.5)] {
        for i in 0..10 {
            let value = 1000.0 * (i + 1) as f64 * factor;
            let ips = if i >= 4 {
                [100.0, 100.0, 500.0, 500.0, 1000.0, 1000.0][i - 4]
            } else {
                0.0
            };
            let (value, ips) = if t == "slow" && STEPS[i] == "qr1000" {
                (50_000.0, 600.0)
            } else {
                (value, ips)
            };
            results.push(step(t, i, value, ips));
        }
    }
    let m = manifest(&["base", "fast", "slow"], RunStatus::Complete);
    write_run(dir.path(), &m, &results);
    let run = load_run(dir.path()).unwrap();
    let d = ReportData::from_runs(vec![run], None).unwrap();
    (dir, d)
}

#[test]
fn throughput_colors_follow_the_published_rules() {
    let (_dir, d) = data();
    let t = tput(&d);
    assert_eq!(t.columns, STEPS);
    let cell =
        |row: usize, col: &str| &t.rows[row].1[STEPS.iter().position(|s| *s == col).unwrap()];
    // l.i0: 1000 / 1100 / 500 → slow is in the bottom quarter, fast the top.
    assert_eq!(cell(2, "l.i0").color, Color::Red);
    assert_eq!(cell(1, "l.i0").color, Color::Green);
    assert_eq!(cell(0, "l.i0").color, Color::Green);
    // qr1000: slow failed the SLA: gray, and its 50000 is not the max, so fast is green.
    assert_eq!(cell(2, "qr1000").text, "50000");
    assert_eq!(cell(2, "qr1000").color, Color::Gray);
    assert_eq!(cell(1, "qr1000").color, Color::Green);
    let r = tputr(&d);
    assert_eq!(r.rows[1].1[0].text, "1.10");
    assert_eq!(r.rows[1].1[0].color, Color::Blue);
    assert_eq!(r.rows[2].1[0].color, Color::Yellow);
    assert_eq!(r.rows[0].1[0].color, Color::None);
    let i = iput(&d);
    assert_eq!(i.columns[4], "qr1000.L5");
    assert_eq!(i.rows[2].1[4].color, Color::Red);
    assert_eq!(i.rows[1].1[4].color, Color::None);
    assert_eq!(i.rows[3].0, "target");
    assert_eq!(i.rows[3].1[4].text, "1000");
}

#[test]
fn ibench_text_report_golden() {
    let (_dir, d) = data();
    let text = render(&d, Format::Text, &ReportOptions::default()).unwrap();
    check_golden(&data_dir().join("expected/ibench.txt"), &text);
    let html = render(&d, Format::Html, &ReportOptions::default()).unwrap();
    assert!(html.contains("<td style=\"background:#D7D7D7\">50000</td>"));
    assert!(html.contains("<td style=\"background:#FF9A9A\">600</td>"));
    let json: serde_json::Value =
        serde_json::from_str(&render(&d, Format::Json, &ReportOptions::default()).unwrap())
            .unwrap();
    assert_eq!(json["iput"]["rows"][2][1][4]["color"], "red");
    let md = render(&d, Format::Markdown, &ReportOptions::default()).unwrap();
    assert!(md.contains("~~50000~~"), "{md}");
}
