//! The version-series section: a three-version run (PostgreSQL 13, 15, 17, five paired rounds
//! per step) rendered as text, Markdown and HTML (golden files), its detection from the
//! versions, and the differential flamegraphs between adjacent versions linked from the HTML.

mod common;

use common::{check_golden, data_dir, keep_update_index_profile, manifest, result, write_run};
use dbdelta_model::{Group, RunManifest, RunStatus, StepResult};
use dbdelta_profile::store::{write_adjacent_diffs, write_diffs};
use dbdelta_report::series::SeriesMode;
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions, RunData};

const VERSIONS: [(&str, &str); 3] = [("pg13", "13.23"), ("pg15", "15.18"), ("pg17", "17.9")];

/// Per step (label, order, group) the QPS of pg13, pg15 and pg17: point-query gains on every
/// version, range-covered-pk loses 10 % in 17, update-index gains in 15 and loses 20 % in 17,
/// insert stays within the noise.
const STEPS: [(&str, u32, Group, [f64; 3]); 4] = [
    (
        "point-query_range=100",
        3,
        Group::Point,
        [1000.0, 1100.0, 1300.0],
    ),
    (
        "range-covered-pk_range=100",
        10,
        Group::Range,
        [500.0, 500.0, 450.0],
    ),
    (
        "update-index_range=100",
        7,
        Group::Write,
        [800.0, 880.0, 700.0],
    ),
    ("insert_range=100", 23, Group::Write, [900.0, 900.0, 905.0]),
];

/// Host drift per round (moves every version alike) and a small per-version jitter.
const DRIFT: [f64; 5] = [1.0, 1.08, 0.94, 1.03, 0.97];
const JITTER: [[f64; 5]; 3] = [
    [1.0, 1.004, 0.997, 1.002, 0.999],
    [0.998, 1.0, 1.003, 0.997, 1.002],
    [1.003, 0.996, 1.0, 1.002, 0.998],
];

fn series_manifest() -> RunManifest {
    let mut m = manifest(&["pg13", "pg15", "pg17"], RunStatus::Complete);
    for (t, (name, version)) in m.targets.iter_mut().zip(VERSIONS) {
        let major = version.split('.').next().unwrap_or(version);
        t.engine = "postgres".into();
        t.spec = format!("{name}=postgres-dist:{major}?shared_buffers=256MB");
        t.version = Some(format!(
            "PostgreSQL {version} on x86_64-pc-linux-gnu, compiled by gcc (GCC) 12.2.0, 64-bit"
        ));
        let mut s = vec![
            ("shared_buffers", "256MB".to_string()),
            ("max_wal_size", "1GB".to_string()),
            ("server_version_num", format!("{major}0000")),
            ("data_directory", format!("/var/tmp/run/{name}/data")),
            ("dist.version", format!("{version}.0")),
            ("dbdelta.address", format!("127.0.0.1:5{major}0")),
        ];
        // A default that changed in 15 (initdb's) and a setting only 17 records.
        s.push((
            "wal_compression",
            if major == "13" { "off" } else { "pglz" }.to_string(),
        ));
        if major == "17" {
            s.push(("vacuum_buffer_usage_limit", "2MB".to_string()));
        }
        t.settings = s.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    }
    m
}

fn series_results() -> Vec<StepResult> {
    let mut out = Vec::new();
    for (label, order, group, qps) in STEPS {
        for (k, drift) in DRIFT.iter().enumerate() {
            for (v, (name, _)) in VERSIONS.iter().enumerate() {
                let mut r = result(name, label, order, group, 1, qps[v] * drift * JITTER[v][k]);
                r.repeat = k as u32 + 1;
                out.push(r);
            }
        }
    }
    out
}

fn series_data() -> ReportData {
    let run = RunData {
        dir: "run".into(),
        manifest: series_manifest(),
        results: series_results(),
        warnings: Vec::new(),
    };
    ReportData::from_runs(vec![run], None).expect("merge")
}

fn golden(name: &str, format: Format) {
    let text = render(&series_data(), format, &ReportOptions::default()).expect("render");
    check_golden(&data_dir().join("expected").join(name), &text);
}

#[test]
fn text() {
    golden("series-3v.txt", Format::Text);
}

#[test]
fn markdown() {
    golden("series-3v.md", Format::Markdown);
}

#[test]
fn html() {
    golden("series-3v.html", Format::Html);
}

#[test]
fn the_series_section_says_what_the_write_ups_say() {
    let text = render(&series_data(), Format::Markdown, &ReportOptions::default()).expect("md");
    assert!(
        text.starts_with(
            "## Version series: pg13 (13.23), pg15 (15.18), pg17 (17.9), relative to pg13"
        ),
        "{text}"
    );
    // Group means: one column per version after the oldest.
    assert!(
        text.contains("| group | pg15 (15.18) | pg17 (17.9) |"),
        "{text}"
    );
    // The adjacent changes: update-index up in 15, down in 17 (against 15, not 13).
    assert!(
        text.contains("| update-index_range=100 | write | pg13 → pg15 | 1.10 ["),
        "{text}"
    );
    assert!(
        text.contains("| update-index_range=100 | write | pg15 → pg17 | 0.80 ["),
        "{text}"
    );
    assert!(
        !text.contains("| insert_range=100 | write | pg"),
        "insert is noise: {text}"
    );
    // The default that changed is listed, the spec's setting, paths and dbdelta's own are not.
    assert!(
        text.contains("| wal_compression | off | pglz | pglz |"),
        "{text}"
    );
    assert!(
        text.contains("| vacuum_buffer_usage_limit | - | - | 2MB |"),
        "{text}"
    );
    for hidden in [
        "shared_buffers",
        "max_wal_size |",
        "data_directory",
        "dist.version",
        "server_version_num",
        "dbdelta.address",
    ] {
        assert!(
            !text.contains(&format!("| {hidden}")),
            "{hidden} listed: {text}"
        );
    }
    let json = render(&series_data(), Format::Json, &ReportOptions::default()).expect("json");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("json parses");
    let adjacent = doc["series"]["adjacent"].as_array().expect("adjacent");
    assert_eq!(adjacent.len(), 8, "4 steps x 2 pairs");
    let down = adjacent
        .iter()
        .find(|a| a["label"] == "update-index_range=100" && a["after"] == "pg17")
        .expect("pg17 update-index");
    assert_eq!(down["before"], "pg15");
    assert_eq!(down["significant"], true);
    assert!((down["ratio"].as_f64().expect("ratio") - 700.0 / 880.0).abs() < 0.01);
}

#[test]
fn detected_only_from_increasing_versions_of_one_engine() {
    let opts = |series| ReportOptions {
        series,
        ..ReportOptions::default()
    };
    let md = |data: &ReportData, mode| render(data, Format::Markdown, &opts(mode)).expect("md");
    // The sysbench fixture: three SQLite targets of one version.
    let fixture = ReportData::from_runs(
        vec![load_run(&common::fixture_dir()).expect("fixture")],
        None,
    )
    .expect("merge");
    assert!(!md(&fixture, SeriesMode::Detect).contains("Version series"));
    let named = md(&fixture, SeriesMode::On);
    assert!(
        named.starts_with("## Version series: default (3.46.0), wal (3.46.0), wal-mmap (3.46.0), relative to default (named by --series)"),
        "{named}"
    );
    assert!(!md(&series_data(), SeriesMode::Off).contains("Version series"));
    // Newest first is no series (the base would not be the oldest).
    let mut run = RunData {
        dir: "run".into(),
        manifest: series_manifest(),
        results: series_results(),
        warnings: Vec::new(),
    };
    run.manifest.targets.reverse();
    let reversed = ReportData::from_runs(vec![run], None).expect("merge");
    assert!(!md(&reversed, SeriesMode::Detect).contains("Version series"));
}

#[test]
fn adjacent_versions_get_their_differential_flamegraphs_linked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("run");
    write_run(&dir, &series_manifest(), &[]);
    // Round k > 1 of a step is `<order>-<label>.dop<N>.r<k>.json`, as the run directory has it.
    for r in series_results() {
        let name = common::file_name(&r);
        let name = match r.repeat {
            0 | 1 => name,
            k => name.replace(".json", &format!(".r{k}.json")),
        };
        let d = dir.join("results").join(&r.target);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join(name), serde_json::to_vec(&r).expect("json")).expect("write");
    }
    keep_update_index_profile(&dir, "pg13", "base.perf-script");
    keep_update_index_profile(&dir, "pg15", "target.perf-script");
    keep_update_index_profile(&dir, "pg17", "base.perf-script");
    let names: Vec<String> = VERSIONS.iter().map(|(n, _)| n.to_string()).collect();
    let profiles = dir.join("profiles");
    assert_eq!(write_diffs(&profiles, "pg13", &names).len(), 2);
    let adjacent = write_adjacent_diffs(&profiles, "pg13", &names);
    assert_eq!(
        adjacent,
        [profiles.join("pg17/007-update-index_range=100.dop1.diff-vs-pg15.svg")]
    );

    let data = ReportData::from_runs(vec![load_run(&dir).expect("loads")], None).expect("merge");
    let page = render(&data, Format::Html, &ReportOptions::default()).expect("html");
    let link = "href=\"profiles/pg17/007-update-index_range=100.dop1.diff-vs-pg15.svg\"";
    // Once in the profiles section, once under the significant change pg15 → pg17.
    assert_eq!(page.matches(link).count(), 2, "{page}");
    let series = page
        .split("<h2 id=\"series\">")
        .nth(1)
        .and_then(|s| s.split("<h2").next())
        .expect("series section");
    assert!(
        series.contains(&format!(
            "<a class=\"adjacent-diff\" {link}>pg17 vs pg15 differential flamegraph</a>"
        )),
        "{series}"
    );
    // Its drill-down table (after the link) compares pg17 with pg15, the version before it.
    let pre = series
        .split("pg17 vs pg15 differential flamegraph</a>")
        .nth(1)
        .expect("after the link")
        .split("<pre class=\"drill\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("drill-down table");
    assert!(pre.lines().any(|l| l.starts_with("pg15 ")), "{pre}");
    assert!(pre.lines().any(|l| l.starts_with("pg17 ")), "{pre}");
    assert!(!pre.lines().any(|l| l.starts_with("pg13 ")), "{pre}");
    // pg13 → pg15 is against the base: the ordinary diff, linked from both places too.
    let base_link = "href=\"profiles/pg15/007-update-index_range=100.dop1.diff-vs-pg13.svg\"";
    assert_eq!(page.matches(base_link).count(), 2, "{page}");
    for href in [link, base_link] {
        let file = href.trim_start_matches("href=\"").trim_end_matches('"');
        assert!(dir.join(file).is_file(), "{file}");
    }
}

/// One window per target and step (as the Insert Benchmark runs): no interval anywhere, so
/// the group means and the adjacent changes are the bare ratios, said so.
#[test]
fn one_window_per_target_gives_bare_ratios() {
    let run = RunData {
        dir: "run".into(),
        manifest: series_manifest(),
        results: series_results()
            .into_iter()
            .filter(|r| r.repeat == 1)
            .map(|mut r| {
                r.repeat = 0;
                r
            })
            .collect(),
        warnings: Vec::new(),
    };
    let data = ReportData::from_runs(vec![run], None).expect("merge");
    let text = render(&data, Format::Markdown, &ReportOptions::default()).expect("md");
    assert!(
        text.contains("| point (1 step) | 1.10 (no interval) | 1.30 (no interval) |"),
        "{text}"
    );
    assert!(text.contains("| step | pg15/pg13 | pg17/pg15 |"), "{text}");
    assert!(
        text.contains("| update-index_range=100 | 1.10 | 0.80 |"),
        "{text}"
    );
}
