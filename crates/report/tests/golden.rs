//! Golden files: the committed fixture run rendered in every format. The expected files in
//! `tests/data/expected/` are the spec of the layouts; review them by eye when they change.

mod common;

use common::{check_golden, data_dir, fixture_dir};
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions, Values};

fn fixture_data(base: Option<&str>) -> ReportData {
    let run = load_run(&fixture_dir()).expect("fixture run loads");
    ReportData::from_runs(vec![run], base).expect("fixture merges")
}

fn golden(name: &str, data: &ReportData, format: Format, opts: &ReportOptions) {
    let text = render(data, format, opts).expect("render");
    check_golden(&data_dir().join("expected").join(name), &text);
}

#[test]
fn fixture_loads_without_warnings() {
    let data = fixture_data(None);
    assert_eq!(data.warnings, Vec::<String>::new());
    assert_eq!(data.thread_counts(), [1, 4]);
    assert_eq!(data.base(), "default");
}

#[test]
fn text() {
    golden(
        "sysbench-3t.txt",
        &fixture_data(None),
        Format::Text,
        &ReportOptions::default(),
    );
}

#[test]
fn markdown() {
    let data = fixture_data(None);
    golden(
        "sysbench-3t.md",
        &data,
        Format::Markdown,
        &ReportOptions::default(),
    );
}

#[test]
fn markdown_with_costs() {
    let data = fixture_data(None);
    let opts = ReportOptions {
        costs: vec![("default".into(), 0.5), ("wal".into(), 0.25)],
        ..ReportOptions::default()
    };
    let text = render(&data, Format::Markdown, &opts).expect("render");
    // Every table the HTML report has, in markdown.
    for heading in [
        "### Relative QPS, dop=1",
        "### Relative QPS per group, dop=4",
        "### Absolute QPS, dop=4",
        "## Throughput vs thread count",
        "### Latency, dop=1",
        "### Hardware cost per operation, dop=4",
        "### Operations per hour per dollar, dop=1",
        "### Failed steps",
    ] {
        assert!(text.contains(heading), "missing {heading}");
    }
    check_golden(
        &data_dir().join("expected").join("sysbench-3t.cost.md"),
        &text,
    );
}

#[test]
fn html() {
    let data = fixture_data(None);
    let opts = ReportOptions {
        costs: vec![("default".into(), 0.5), ("wal".into(), 0.25)],
        ..ReportOptions::default()
    };
    let text = render(&data, Format::Html, &opts).expect("render");
    // Self-contained: no scripts, no external resources.
    assert!(!text.contains("<script"), "no scripts");
    for external in ["src=\"http", "href=\"http", "<link", "@import", "url("] {
        assert!(!text.contains(external), "external resource: {external}");
    }
    check_golden(&data_dir().join("expected").join("sysbench-3t.html"), &text);
}

#[test]
fn csv_relative_first_dop() {
    let data = fixture_data(None);
    golden(
        "sysbench-3t.rel.csv",
        &data,
        Format::Csv,
        &ReportOptions::default(),
    );
}

#[test]
fn csv_absolute_dop4() {
    let opts = ReportOptions {
        threads: Some(4),
        values: Values::Absolute,
        ..ReportOptions::default()
    };
    golden(
        "sysbench-3t.abs.dop4.csv",
        &fixture_data(None),
        Format::Csv,
        &opts,
    );
}

#[test]
fn other_base_comes_first() {
    let data = fixture_data(Some("wal"));
    golden(
        "base-wal.txt",
        &data,
        Format::Text,
        &ReportOptions::default(),
    );
}

#[test]
fn one_target_prints_absolute_only() {
    let mut run = load_run(&fixture_dir()).expect("fixture run loads");
    run.manifest.targets.truncate(1);
    let data = ReportData::from_runs(vec![run], None).expect("merge");
    golden(
        "one-target.txt",
        &data,
        Format::Text,
        &ReportOptions::default(),
    );
    golden(
        "one-target.md",
        &data,
        Format::Markdown,
        &ReportOptions::default(),
    );
    golden(
        "one-target.csv",
        &data,
        Format::Csv,
        &ReportOptions::default(),
    );
}

#[test]
fn json_parses_back_with_every_result() {
    let data = fixture_data(None);
    let text = render(&data, Format::Json, &ReportOptions::default()).expect("render");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["base"], "default");
    assert_eq!(v["targets"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["runs"][0]["manifest"]["options"]["suite"], "sysbench");
    // Every stored result (load, settle and warm-up included) round-trips.
    let results: Vec<dbdelta_model::StepResult> =
        serde_json::from_value(v["results"].clone()).expect("results parse back");
    assert_eq!(results, data.runs[0].results);
    let tables = v["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[0]["dop"], 1);
    let rows = tables[1]["rows"].as_array().expect("rows");
    let update = rows
        .iter()
        .find(|r| r["label"] == "update-index_range=100")
        .expect("update-index row");
    assert_eq!(update["group"], "write");
    assert_eq!(update["values"][1], serde_json::Value::Null);
    assert_eq!(update["status"][1], "failed");
    assert_eq!(update["relative"][0], 1.0);
    let insert = rows
        .iter()
        .find(|r| r["label"] == "insert_range=100")
        .expect("insert row");
    assert_eq!(insert["status"][2], "missing");
    let labels: Vec<&str> = tables
        .iter()
        .flat_map(|t| t["rows"].as_array().expect("rows"))
        .filter_map(|r| r["label"].as_str())
        .collect();
    assert_eq!(labels.len(), 2 * 21);
    assert!(labels.iter().all(|l| !l.contains(".warm")), "{labels:?}");
}

/// A 670x slowdown (delete_range=100 of a default run: 822 vs 556,880 QPS) and relative
/// costs over a base below the floor: significant digits, never `0.00`, `inf` or `6711`.
fn tiny_ratios() -> ReportData {
    use dbdelta_model::{Group, RunStatus};
    let mut results = vec![
        common::result("a", "delete_range=100", 1, Group::Write, 1, 556_880.0),
        common::result("b", "delete_range=100", 1, Group::Write, 1, 822.0),
        common::result("a", "point-query_range=100", 2, Group::Point, 1, 10_000.0),
        common::result("b", "point-query_range=100", 2, Group::Point, 1, 9_000.0),
    ];
    // The base's point queries wrote 0.0001 KB/op of background journal, the target 0.67.
    for (r, wkb) in results.iter_mut().skip(2).zip([0.0001, 0.67]) {
        if let Some(c) = r.costs.as_mut() {
            c.wkb_o = Some(wkb);
        }
    }
    let run = dbdelta_report::RunData {
        dir: "tiny".into(),
        manifest: common::manifest(&["a", "b"], RunStatus::Complete),
        results,
        warnings: Vec::new(),
    };
    ReportData::from_runs(vec![run], None).expect("merge")
}

#[test]
fn tiny_ratios_keep_their_digits() {
    let data = tiny_ratios();
    let opts = ReportOptions::default();
    for (name, format) in [
        ("tiny-ratios.txt", Format::Text),
        ("tiny-ratios.md", Format::Markdown),
        ("tiny-ratios.csv", Format::Csv),
    ] {
        let text = render(&data, format, &opts).expect("render");
        assert!(text.contains("0.00148"), "{name}: {text}");
        assert!(!text.contains("inf") && !text.contains("NaN"), "{name}");
        golden(name, &data, format, &opts);
    }
    let html = render(&data, Format::Html, &opts).expect("render");
    assert!(html.contains(">0.00148<"), "{html}");
    assert!(html.contains("<td class=\"n\">n/a</td>"), "{html}");
}
