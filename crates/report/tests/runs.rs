//! Loading run directories and merging runs: the error and warning paths.

mod common;

use common::{manifest, result, write_run};
use dbdelta_model::{Group, RunStatus};
use dbdelta_report::{
    load_run, render, Cell, Format, ReportData, ReportError, ReportOptions, RunData,
};
use std::fs;
use std::path::Path;

fn two_step_run(dir: &Path, targets: &[&str], qps: &[f64]) -> RunData {
    let mut results = Vec::new();
    for (t, v) in targets.iter().zip(qps) {
        results.push(result(t, "point-query_range=100", 3, Group::Point, 1, *v));
        results.push(result(t, "insert_range=100", 9, Group::Write, 1, v / 2.0));
    }
    write_run(dir, &manifest(targets, RunStatus::Complete), &results);
    load_run(dir).expect("run loads")
}

#[test]
fn merging_two_runs_concatenates_targets() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = two_step_run(&tmp.path().join("a"), &["pg15", "pg16"], &[1000.0, 1100.0]);
    let b = two_step_run(&tmp.path().join("b"), &["pg17"], &[900.0]);
    let data = ReportData::from_runs(vec![a, b], None).expect("merge");
    let names: Vec<&str> = data.columns.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["pg15", "pg16", "pg17"]);
    assert_eq!(data.columns[2].run, 1);
    let row = &data.tables[0].rows[0];
    assert_eq!(row.label, "point-query_range=100");
    let rel: Vec<String> = row.relative().iter().map(|c| c.plain(2)).collect();
    assert_eq!(rel, ["1.10", "0.90"]);

    let b2 = load_run(&tmp.path().join("b")).expect("run loads");
    let a2 = load_run(&tmp.path().join("a")).expect("run loads");
    let data = ReportData::from_runs(vec![a2, b2], Some("pg17")).expect("merge");
    let names: Vec<&str> = data.columns.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["pg17", "pg15", "pg16"]);
    let csv = render(&data, Format::Csv, &ReportOptions::default()).expect("csv");
    assert_eq!(
        csv,
        "step,pg15/pg17,pg16/pg17\npoint-query_range=100,1.11,1.22\ninsert_range=100,1.11,1.22\n"
    );
}

#[test]
fn duplicate_target_names_are_an_error_until_renamed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = two_step_run(&tmp.path().join("a"), &["sqlite"], &[1000.0]);
    let mut b = two_step_run(&tmp.path().join("b"), &["sqlite"], &[1200.0]);
    let err = ReportData::from_runs(vec![a.clone(), b.clone()], None).unwrap_err();
    assert!(matches!(err, ReportError::DuplicateTarget { ref name, .. } if name == "sqlite"));
    let msg = err.to_string();
    assert!(msg.contains("'sqlite'") && msg.contains("rename"), "{msg}");

    b.rename_target("sqlite", "sqlite-b").expect("rename");
    let data = ReportData::from_runs(vec![a, b], None).expect("merge after rename");
    let rel = data.tables[0].rows[0].relative();
    assert_eq!(rel[0].plain(2), "1.20");
}

#[test]
fn rename_errors_name_the_problem() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = two_step_run(&tmp.path().join("a"), &["x", "y"], &[1.0, 2.0]);
    assert!(a
        .rename_target("nope", "z")
        .unwrap_err()
        .to_string()
        .contains("no target"));
    assert!(a
        .rename_target("x", "y")
        .unwrap_err()
        .to_string()
        .contains("already"));
}

#[test]
fn unknown_base_lists_the_known_targets() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = two_step_run(&tmp.path().join("a"), &["pg15", "pg16"], &[1.0, 2.0]);
    let err = ReportData::from_runs(vec![a], Some("pg14")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--base 'pg14' is not a target of these runs; known targets: pg15, pg16"
    );
}

#[test]
fn corrupt_result_is_a_warning_not_a_panic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("a");
    two_step_run(&dir, &["pg15", "pg16"], &[1.0, 2.0]);
    let bad = dir.join("results/pg16/005-update-one_range=100.dop1.json");
    fs::write(&bad, "{\"schema\": 1, \"target\": \"pg16\", trunc").expect("write");
    fs::write(dir.join("results/pg16/006-x.dop1.json"), [0xff, 0xfe, 0x00]).expect("write");
    fs::write(dir.join("results/pg16/007-x.dop1.json.tmp"), "partial").expect("write");
    fs::create_dir_all(dir.join("results/stray")).expect("mkdir");

    let run = load_run(&dir).expect("still loads");
    assert_eq!(run.results.len(), 4);
    assert_eq!(run.warnings.len(), 3, "{:?}", run.warnings);
    assert!(
        run.warnings[0].contains("005-update-one_range=100.dop1.json"),
        "{:?}",
        run.warnings
    );
    assert!(
        run.warnings[1].contains("006-x.dop1.json"),
        "{:?}",
        run.warnings
    );
    assert!(run.warnings[2].contains("stray"), "{:?}", run.warnings);
    let data = ReportData::from_runs(vec![run], None).expect("merge");
    assert_eq!(data.warnings.len(), 3);
}

#[test]
fn running_run_is_reportable_with_a_warning() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("a");
    let results = [result(
        "pg15",
        "point-query_range=100",
        3,
        Group::Point,
        1,
        10.0,
    )];
    write_run(
        &dir,
        &manifest(&["pg15", "pg16"], RunStatus::Running),
        &results,
    );
    let run = load_run(&dir).expect("loads");
    assert!(run.warnings[0].contains("running"), "{:?}", run.warnings);
    let data = ReportData::from_runs(vec![run], None).expect("merge");
    assert_eq!(data.tables[0].rows[0].cells[1], Cell::Missing);
    let text = render(&data, Format::Text, &ReportOptions::default()).expect("text");
    assert!(text.contains("NA\tpoint-query_range=100"), "{text}");
}

#[test]
fn missing_or_bad_manifest_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = load_run(tmp.path()).unwrap_err();
    assert!(matches!(err, ReportError::NotARun { .. }));
    assert!(err.to_string().contains("no run.json"));
    fs::write(tmp.path().join("run.json"), "{}").expect("write");
    let err = load_run(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("run.json"), "{err}");
    assert!(matches!(
        ReportData::from_runs(vec![], None),
        Err(ReportError::NoRuns)
    ));
}

#[test]
fn unknown_dop_and_format_are_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = two_step_run(&tmp.path().join("a"), &["pg15"], &[1.0]);
    let data = ReportData::from_runs(vec![a], None).expect("merge");
    let opts = ReportOptions {
        threads: Some(8),
        ..ReportOptions::default()
    };
    let err = render(&data, Format::Csv, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--dop 8 was not measured; measured thread counts: 1"
    );
    let err = "pdf".parse::<Format>().unwrap_err();
    assert!(err.to_string().contains("pdf"), "{err}");
    assert_eq!("html".parse::<Format>().ok(), Some(Format::Html));
    assert_eq!("md".parse::<Format>().ok(), Some(Format::Markdown));
}

#[test]
fn merging_runs_of_different_scales_warns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = two_step_run(&tmp.path().join("a"), &["pg15"], &[1000.0]);
    let dir_b = tmp.path().join("b");
    let mut m = manifest(&["pg16"], RunStatus::Complete);
    m.options.table_size *= 10;
    let results = [
        result("pg16", "point-query_range=100", 3, Group::Point, 1, 900.0),
        result("pg16", "insert_range=100", 9, Group::Write, 1, 450.0),
    ];
    write_run(&dir_b, &m, &results);
    let b = load_run(&dir_b).expect("run loads");

    let data = ReportData::from_runs(vec![a.clone(), b], None).expect("merge");
    let scale: Vec<&String> = data
        .warnings
        .iter()
        .filter(|w| w.contains("runs differ in scales"))
        .collect();
    assert_eq!(scale.len(), 1, "{:?}", data.warnings);
    let w = scale[0];
    let rows = m.options.table_size.to_string();
    assert!(w.contains(&rows), "names both sizes: {w}");
    assert!(w.contains("different data sizes"), "{w}");
    // The relative values are still computed; the warning is shown in the report.
    assert_eq!(data.tables[0].rows[0].relative()[0].plain(2), "0.90");
    let html = render(&data, Format::Html, &ReportOptions::default()).expect("html");
    assert!(
        html.contains("runs differ in scales"),
        "warning in the HTML"
    );

    // Same scale: no warning.
    let c = two_step_run(&tmp.path().join("c"), &["pg17"], &[1000.0]);
    let data = ReportData::from_runs(vec![a, c], None).expect("merge");
    assert!(
        data.warnings.iter().all(|w| !w.contains("differ")),
        "{:?}",
        data.warnings
    );
}
