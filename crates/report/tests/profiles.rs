//! The HTML report and profiles: a run with profiles links each profiled step's row to its
//! flamegraphs and shows the drill-down table; a run that asked for profiles and has none
//! says why; a run without `--profile` has no profiles section.

mod common;

use common::{keep_update_index_profile, manifest, result, write_run};
use dbdelta_model::{Group, RunStatus};
use dbdelta_profile::store::{write_diffs, write_no_profiles};
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions};
use std::path::Path;

const LABEL: &str = "update-index_range=100";

fn run(dir: &Path) {
    let results = [
        result("base", LABEL, 7, Group::Write, 1, 1000.0),
        result("slow", LABEL, 7, Group::Write, 1, 700.0),
        result("base", "point-query_range=100", 3, Group::Point, 1, 5000.0),
        result("slow", "point-query_range=100", 3, Group::Point, 1, 5000.0),
    ];
    write_run(
        dir,
        &manifest(&["base", "slow"], RunStatus::Complete),
        &results,
    );
}

fn html(dir: &Path, opts: &ReportOptions) -> String {
    let data = ReportData::from_runs(vec![load_run(dir).expect("loads")], None).expect("merge");
    render(&data, Format::Html, opts).expect("html")
}

#[test]
fn profiled_steps_link_flamegraphs_and_show_the_drill_down() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("run");
    run(&dir);
    keep_update_index_profile(&dir, "base", "base.perf-script");
    keep_update_index_profile(&dir, "slow", "target.perf-script");
    let diffs = write_diffs(
        &dir.join("profiles"),
        "base",
        &["base".into(), "slow".into()],
    );
    assert_eq!(diffs.len(), 1);

    let page = html(&dir, &ReportOptions::default());
    let anchor = "prof-1-update-index_range=100";
    // The relative-QPS row of the profiled step links to its profiles; the other does not.
    assert!(
        page.contains(&format!("<td><a href=\"#{anchor}\"")),
        "row link missing"
    );
    assert!(
        !page.contains("#prof-1-point-query"),
        "unprofiled step linked"
    );
    assert!(page.contains(&format!("<h3 id=\"{anchor}\">")), "anchor");
    assert!(page.contains("<h2 id=\"profiles\">"), "section");
    // Links relative to the run directory (report.html lives there).
    for href in [
        "profiles/base/007-update-index_range=100.dop1.svg",
        "profiles/slow/007-update-index_range=100.dop1.svg",
        "profiles/slow/007-update-index_range=100.dop1.diff-vs-base.svg",
        "profiles/slow/007-update-index_range=100.dop1.speedscope.json",
    ] {
        assert!(page.contains(&format!("href=\"{href}\"")), "no link {href}");
        assert!(dir.join(href).is_file(), "{href} does not exist");
    }
    // The drill-down table in the published layout, with the known answer of the fixtures.
    let pre = page
        .split("<pre class=\"drill\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("drill-down table");
    assert!(pre.contains("a - __libc_start_call_main"), "{pre}");
    assert!(pre.contains("d - rec"), "{pre}");
    assert!(pre.contains("f - leaf"), "{pre}");
    let slow_row = pre
        .lines()
        .find(|l| l.starts_with("slow "))
        .expect("slow row");
    assert!(slow_row.ends_with("60.0   60.0   60.0"), "{slow_row}");

    // Written elsewhere (`dbdelta report -o other/report.html`): links reach the run dir.
    let other = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&other).expect("mkdir");
    let page = html(
        &dir,
        &ReportOptions {
            link_dir: Some(other),
            ..ReportOptions::default()
        },
    );
    let canon = std::fs::canonicalize(&dir).expect("canonical");
    let want = format!(
        "href=\"{}/profiles/base/007-update-index_range=100.dop1.svg\"",
        canon.display()
    );
    assert!(page.contains(&want), "{want}");
    let page = html(
        &dir,
        &ReportOptions {
            link_dir: Some(tmp.path().to_path_buf()),
            ..ReportOptions::default()
        },
    );
    assert!(
        page.contains("href=\"run/profiles/base/007-update-index_range=100.dop1.svg\""),
        "relative link from the parent directory"
    );
}

#[test]
fn a_profiled_run_without_profiles_says_why() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("run");
    run(&dir);
    let why = "--profile: `perf` was not found on PATH; install it (Debian/Ubuntu: apt-get install linux-perf)";
    write_no_profiles(&dir.join("profiles"), why).expect("write");
    let page = html(&dir, &ReportOptions::default());
    assert!(page.contains("<h2 id=\"profiles\">"), "section");
    assert!(
        page.contains("No profiles: --profile was given but no profiles were taken: --profile: `perf` was not found on PATH"),
        "reason"
    );
    assert!(!page.contains("<pre class=\"drill\">"));
}

#[test]
fn an_unprofiled_run_has_no_profiles_section() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("run");
    run(&dir);
    let page = html(&dir, &ReportOptions::default());
    assert!(!page.contains("id=\"profiles\""));
    assert!(!page.contains("#prof-"));
}
