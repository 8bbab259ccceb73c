//! The `dbdelta` binary end to end: bad input, suites, mock runs, reports, kill and Ctrl-C.

mod common;

use common::{dbdelta, interrupt, read_json, spawn_dbdelta, wait_for_files};
use predicates::prelude::*;
use std::path::Path;
use std::time::Duration;

/// Runs `dbdelta run` with args and expects exit code 2 and one error line containing `needle`.
fn bad_input(args: &[&str], needle: &str) {
    let out = dbdelta().arg("run").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: expected '{needle}' in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let error_lines = stderr.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(error_lines, 1, "{stderr}");
}

#[test]
fn bad_inputs_get_one_clear_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("r");
    let rd = rd.to_str().unwrap();
    bad_input(
        &["-t", "x=nosuchdb", "--run-dir", rd],
        "unknown engine 'nosuchdb'",
    );
    bad_input(&["-t", "x=", "--run-dir", rd], "is empty");
    bad_input(
        &["-t", "a b=sqlite", "--run-dir", rd],
        "target name 'a b' is invalid",
    );
    bad_input(
        &["-t", "a=sqlite", "-t", "a=mock", "--run-dir", rd],
        "two targets are named 'a'",
    );
    bad_input(
        &["-t", "m=mock?latency=fast", "--run-dir", rd],
        "latency=fast is invalid",
    );
    bad_input(
        &["--steps", "nosuchstep*", "--run-dir", rd],
        "--steps 'nosuchstep*' matches no step",
    );
    bad_input(&["--threads", "0", "--run-dir", rd], "--threads");
    bad_input(
        &["--base", "zzz", "--run-dir", rd],
        "--base zzz: no such target",
    );
    bad_input(
        &["--suite", "nosuite", "--run-dir", rd],
        "unknown suite 'nosuite'",
    );
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "treads = [1]\n").unwrap();
    bad_input(
        &["--config", cfg.to_str().unwrap(), "--run-dir", rd],
        "invalid configuration",
    );
    bad_input(
        &["--config", "/nonexistent/x.toml", "--run-dir", rd],
        "--config /nonexistent/x.toml",
    );
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("runs");
    bad_input(
        &["-t", "m=mock", "--out", under_file.to_str().unwrap()],
        "cannot create the run directory",
    );
    bad_input(
        &["-t", "x=sqlite?journal_mode", "--run-dir", rd],
        "has no value",
    );
    assert!(!Path::new(rd).exists() || std::fs::read_dir(rd).unwrap().count() == 0);
}

#[test]
fn suites_list_and_show() {
    dbdelta()
        .arg("suites")
        .assert()
        .success()
        .stdout(predicate::str::contains("sysbench").and(predicate::str::contains("42 reported")));
    let out = dbdelta()
        .args(["suites", "show", "sysbench", "--dialect", "postgres"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for needle in [
        "point-query.pre_range=100",
        "counts 16 statements per event (BEGIN and COMMIT included)",
        "counts 20 statements per event",
        "SELECT c FROM sbtest{t} WHERE id=?",
        "INSERT INTO sbtest{t} (k, c, pad) VALUES",
        "Krows/s",
        "(warm-up, not reported)",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
}

fn mock_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    mock_run_sized(dir, "100", extra)
}

fn mock_run_sized(dir: &Path, table_size: &str, extra: &[&str]) -> std::process::Output {
    dbdelta()
        .args([
            "run",
            "--quiet",
            "-t",
            "fast=mock",
            "-t",
            "slow=mock?latency=200us",
            "--read-secs",
            "0.2",
            "--write-secs",
            "0.2",
            "--insert-secs",
            "0.2",
            "--warmup-secs",
            "0",
            "--table-size",
            table_size,
            "--run-dir",
            dir.to_str().unwrap(),
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn mock_run_writes_results_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = mock_run(
        &rd,
        &[
            "--steps",
            "point-query*,update-index,scan",
            "--threads",
            "1,2",
            // One round: this test counts result files, not intervals.
            "--repeat",
            "1",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The console's table per thread count: step, unit, fast, slow, slow/fast, ….
    let header = stdout
        .lines()
        .find(|l| l.starts_with("dop=1 "))
        .unwrap_or_default();
    let header: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        header[..5],
        ["dop=1", "unit", "fast", "slow", "slow/fast"],
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l.starts_with("dop=2 ")), "{stdout}");
    let rel: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("update-index_range=100 "))
        .collect();
    assert_eq!(rel.len(), 2, "one row at each of 2 dops: {stdout}");
    let ratio: f64 = rel[0]
        .split_whitespace()
        .nth(4)
        .unwrap()
        .trim_start_matches('~')
        .parse()
        .unwrap();
    assert!(
        ratio < 0.5,
        "a 200us mock must be slower than a 0us one: {ratio}"
    );
    for f in [
        "run.json",
        "report.txt",
        "report.md",
        "report.json",
        "report.html",
    ] {
        assert!(rd.join(f).is_file(), "{f}");
    }
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(
        html.contains("<h2 id=\"glance\">At a glance</h2>"),
        "{html}"
    );
    assert!(html.contains("update-index_range=100"), "{html}");
    assert!(html.contains("<svg class=\"chart\""), "charts");
    let manifest = read_json(&rd.join("run.json"));
    assert_eq!(manifest["status"], "complete");
    // The quick scale's settle time is explicit: none (the spec's bound is for full scale).
    assert_eq!(manifest["options"]["settle"]["quick"], 0.0);
    assert!(manifest["tool"]["git_commit"].is_string());
    assert!(manifest["host"]["cores"].as_u64().unwrap() >= 1);
    let results = std::fs::read_dir(rd.join("results/slow")).unwrap().count();
    // load + 2 settles + point-query.warm (1 thread) + 3 steps x 2 dops (point-query.pre,
    // point-query, update-index) + scan at threads = tables (1)
    assert_eq!(results, 1 + 2 + 1 + 3 * 2 + 1);
    // csv and md from the stored results
    let csv = dbdelta()
        .args([
            "report",
            rd.to_str().unwrap(),
            "--format",
            "csv",
            "--dop",
            "2",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.lines()
            .any(|l| l.starts_with("update-index_range=100,")),
        "{csv}"
    );
    let md_file = dir.path().join("r.md");
    dbdelta()
        .args(["report", rd.to_str().unwrap(), "--format", "md", "-o"])
        .arg(&md_file)
        .assert()
        .success();
    assert!(std::fs::read_to_string(md_file)
        .unwrap()
        .contains("| group |"));
    dbdelta()
        .args(["report", rd.to_str().unwrap(), "--base", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope"));
    dbdelta()
        .args(["report", dir.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a dbdelta run directory"));
}

#[test]
fn failing_step_is_recorded_and_the_run_continues() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "-t",
            "ok=mock",
            "-t",
            "bad=mock?fail_on=SET k=k+1",
            "--steps",
            "update-index,point-query",
            "--read-secs",
            "0.2",
            "--write-secs",
            "0.2",
            "--warmup-secs",
            "0",
            "--table-size",
            "100",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a failed step exits 3: {stderr}"
    );
    assert!(
        stderr.contains("bad/update-index_range=100: error rate")
            && stderr.contains("mock failure"),
        "the failure is named: {stderr}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("update-index_range=100 ") && l.contains(" fail")),
        "{stdout}"
    );
    assert!(stdout.contains("point-query_range=100"));
}

#[test]
fn sigkill_mid_suite_leaves_reportable_results() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut child = spawn_dbdelta([
        "run",
        "--quiet",
        "-t",
        "a=mock?latency=50us",
        "-t",
        "b=mock",
        "--read-secs",
        "0.3",
        "--write-secs",
        "0.3",
        "--insert-secs",
        "0.3",
        "--warmup-secs",
        "0",
        "--run-dir",
        rd.to_str().unwrap(),
    ]);
    let results = rd.join("results/a");
    wait_for_files(&results, 6, Duration::from_secs(60));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for entry in std::fs::read_dir(&results).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) == Some("json") {
            assert_eq!(read_json(&p)["target"], "a");
        }
    }
    let out = dbdelta().arg("report").arg(&rd).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("point-query.pre_range=100"), "{stdout}");
}

#[test]
fn ctrl_c_stops_cleanly_keeps_results_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let child = spawn_dbdelta([
        "run",
        "--quiet",
        "-t",
        "a=mock",
        "--read-secs",
        "0.5",
        "--write-secs",
        "0.5",
        "--warmup-secs",
        "0",
        "--run-dir",
        rd.to_str().unwrap(),
    ]);
    wait_for_files(&rd.join("results/a"), 5, Duration::from_secs(60));
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let manifest = read_json(&rd.join("run.json"));
    assert_eq!(manifest["status"], "interrupted");
    assert!(rd.join("report.txt").is_file());
    assert!(String::from_utf8_lossy(&out.stdout).contains("point-query.pre_range=100"));
}

#[test]
fn config_file_sets_options_and_targets() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("dbdelta.toml");
    std::fs::write(
        &cfg,
        r#"
threads = [1, 2]
read_secs = 0.2
write_secs = 0.2
warmup_secs = 0
table_size = 100
steps = ["point-query"]
[[target]]
name = "quick"
spec = "mock"
[[target]]
name = "slow"
engine = "mock"
params = { latency = "300us" }
"#,
    )
    .unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--run-dir")
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("slow/quick"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("dop=2 ")), "{stdout}");
    let manifest = read_json(&rd.join("run.json"));
    assert_eq!(manifest["options"]["threads"], serde_json::json!([1, 2]));
    assert_eq!(manifest["targets"][1]["spec"], "slow=mock?latency=300us");
}

#[test]
fn cross_run_report_warns_on_scale_and_needs_rename_for_clashes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let steps = ["--steps", "point-query", "--threads", "1"];
    assert!(mock_run(&a, &steps).status.success());
    let out = mock_run_sized(&b, "200", &steps);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    // Both runs have targets `fast` and `slow`: a clear error that names the fix.
    let out = dbdelta().args(["report", a, b]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'fast'") && stderr.contains("--rename"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).count(), 1);

    let out = dbdelta()
        .args([
            "report",
            a,
            b,
            "--rename",
            "2:fast=fast-b",
            "--rename",
            "2:slow=slow-b",
        ])
        .args(["--format", "md"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: runs differ in scales"),
        "{stderr}"
    );
    assert!(
        stderr.contains("x 100 rows") && stderr.contains("x 200 rows"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| fast-b |") || stdout.contains("fast-b"),
        "{stdout}"
    );
}

/// An overloaded paced step on the mock (5 ms an event, so at most 200/s from one thread):
/// every event intended in the window is measured, the backlog left at its end is drained
/// after it up to --statement-timeout and what the drain could not run is counted; the
/// result file and the report say so.
#[test]
fn an_overloaded_paced_step_reports_its_backlog_and_drain() {
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "m=mock?latency=5ms",
        "--steps",
        "point-query",
        "--rate",
        "1000",
        "--read-secs",
        "0.5",
        "--warmup-secs",
        "0",
        "--table-size",
        "100",
        "--statement-timeout",
        "1",
    ]);
    let file = std::fs::read_dir(rd.join("results/m"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("point-query_range=100.dop1"))
        .unwrap();
    let r = read_json(&file);
    let p = &r["pacing"];
    let n = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    // 500 intended; at most 0.5 s / 5 ms + 1 = 101 start in the window and 1 s / 5 ms + 1
    // = 201 in the drain: the rest never run.
    assert_eq!(n("intended"), 500, "{p}");
    assert!(n("backlog") >= 399, "{p}");
    assert_eq!(n("drained") + n("not_executed"), n("backlog"), "{p}");
    assert!(n("not_executed") >= 399 - 201, "{p}");
    assert_eq!(n("warmup_backlog"), 0, "{p}");
    let drain = p["drain_secs"].as_f64().unwrap();
    assert!((1.0..3.0).contains(&drain), "{p}");
    assert_eq!(
        r["latency"]["count"].as_u64().unwrap(),
        500 - n("not_executed"),
        "every event that ran is measured: {p}"
    );
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("intended\tbacklog\tdrain-s\tnot-run\twarmup-backlog"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("1000\t") && l.ends_with("point-query_range=100"))
        .unwrap_or_else(|| panic!("no paced line: {text}"));
    let cols: Vec<&str> = line.split('\t').collect();
    assert_eq!(cols[2], "NO", "{line}");
    assert_eq!(cols[3], "500", "{line}");
    assert_eq!(cols[6], n("not_executed").to_string(), "{line}");
}

/// scan runs at threads = tables (as all_small.sh runs it) whatever --threads says, and its cost
/// per thousand rows divides by the rows every thread scanned, not by one thread's rate.
#[test]
fn scan_runs_one_thread_per_table_and_costs_every_row_scanned() {
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "s=sqlite",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--threads",
        "1",
        "--steps",
        "scan",
        "--insert-secs",
        "0.5",
        "--warmup-secs",
        "0",
    ]);
    let scans: Vec<_> = common::step_results(&rd, "s")
        .into_iter()
        .filter(|r| r.label == "scan_range=100")
        .collect();
    assert_eq!(scans.len(), 1, "one scan step, at one thread count");
    let scan = &scans[0];
    assert_eq!(scan.threads, 2, "{scan:?}");
    let all_rows_krows_s = scan.events as f64 * 2000.0 / 1000.0 / scan.seconds;
    let o_s = scan.costs.as_ref().expect("costs").o_s;
    assert!(
        (o_s - all_rows_krows_s).abs() <= 1e-6 * all_rows_krows_s,
        "costs per thousand rows of every thread: {o_s} vs {all_rows_krows_s}"
    );
}

/// A stall that covers a whole short window (here one 300 ms statement over a 100 ms
/// window) stretches the window to the next event instead of leaving it empty: the step is
/// a slow measurement, not a failure.
#[test]
fn a_window_a_stall_covered_ends_at_the_next_event() {
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "m=mock?latency=300ms",
        "--steps",
        "point-query",
        "--table-size",
        "100",
        "--read-secs",
        "0.1",
        "--warmup-secs",
        "0.05",
    ]);
    let r = common::step_results(&rd, "m")
        .into_iter()
        .find(|r| r.label == "point-query_range=100")
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.status);
    assert_eq!(r.events, 1);
    // The first event after the stall starts ~0.3 s in: the window is ~0.25 s, not 0.1 s.
    assert!((0.2..5.0).contains(&r.seconds), "{}", r.seconds);
}
