//! Shared test helpers: building results and run directories, and golden files.
//!
//! The committed fixture under `tests/data/sysbench-3t/` is itself a golden output of
//! [`fixture_files`]. Only `DBDELTA_BLESS=1` writes golden files: a missing one fails the
//! test like a changed one, so no test run commits to output nobody reviewed.
#![allow(dead_code)]

use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{
    Group, HostInfo, LatencySummary, RunManifest, RunStatus, StepKind, StepResult, StepStatus,
    TargetManifest, Throughput, ThroughputUnit, ToolInfo,
};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `crates/report/tests/data`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Compares `actual` with the golden file `path`; `DBDELTA_BLESS=1` writes (or rewrites) it
/// instead.
pub fn check_golden(path: &Path, actual: &str) {
    let bless = std::env::var("DBDELTA_BLESS").is_ok_and(|v| v == "1");
    if bless {
        fs::create_dir_all(path.parent().expect("golden file has a parent")).expect("mkdir");
        fs::write(path, actual).expect("write golden file");
        return;
    }
    let expected = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => panic!(
            "golden file {}: {e}.\n  DBDELTA_BLESS=1 cargo test -p dbdelta-report  # to create it, then review it",
            path.display()
        ),
    };
    if expected == actual {
        return;
    }
    let name = path.file_name().expect("file name").to_string_lossy();
    let actual_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("actual.{name}"));
    fs::write(&actual_path, actual).expect("write actual output");
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .map_or_else(
            || "the line count".to_string(),
            |i| format!("line {}", i + 1),
        );
    panic!(
        "{} differs from the output at {line}.\n  diff -u {} {}\n  DBDELTA_BLESS=1 cargo test -p dbdelta-report  # to accept",
        path.display(),
        path.display(),
        actual_path.display()
    );
}

/// The fixture run directory, checked against (or, blessing, written from)
/// [`fixture_files`] once per test binary.
pub fn fixture_dir() -> PathBuf {
    static CHECKED: OnceLock<PathBuf> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let dir = data_dir().join("sysbench-3t");
            for (rel, text) in fixture_files() {
                check_golden(&dir.join(rel), &text);
            }
            dir
        })
        .clone()
}

pub fn manifest(targets: &[&str], status: RunStatus) -> RunManifest {
    RunManifest {
        schema: 1,
        tool: ToolInfo {
            version: "0.1.0".into(),
            git_commit: "fixture".into(),
        },
        host: HostInfo {
            hostname: "bench1".into(),
            cpu_model: "Fixture CPU @ 2.0GHz".into(),
            cores: 2,
            memory_bytes: 8 << 30,
            kernel: "6.1.0".into(),
            governor: Some("performance".into()),
            thp: Some("madvise".into()),
            ..HostInfo::default()
        },
        started: "2025-01-02T03:04:05Z".into(),
        finished: Some("2025-01-02T03:34:05Z".into()),
        status,
        options: OptionsBuilder::new()
            .tables(1, 10_000)
            .threads(&[1, 4])
            .secs(2.0)
            .warmup(1.0)
            .seed(1)
            .build(),
        targets: targets.iter().map(|t| target(t)).collect(),
        command: vec!["dbdelta".into(), "run".into()],
        segments: None,
    }
}

fn target(name: &str) -> TargetManifest {
    let mut settings = BTreeMap::new();
    if name.starts_with("wal") {
        settings.insert("journal_mode".to_string(), "wal".to_string());
    }
    if name.ends_with("mmap") {
        settings.insert("mmap_size".to_string(), "268435456".to_string());
    }
    TargetManifest {
        name: name.into(),
        engine: "sqlite".into(),
        spec: format!("{name}=sqlite"),
        version: Some("3.46.0".into()),
        settings,
        error: None,
    }
}

/// A measured result with plausible counters around `value` (QPS, or Krows/s for scan).
pub fn result(
    target: &str,
    label: &str,
    order: u32,
    group: Group,
    threads: u32,
    value: f64,
) -> StepResult {
    let step = label.split("_range=").next().unwrap_or(label).to_string();
    let unit = if step == "scan" {
        ThroughputUnit::KrowsPerSec
    } else {
        ThroughputUnit::Qps
    };
    let seconds = 2.0;
    let queries = (value * seconds).round() as u64;
    StepResult {
        schema: 1,
        target: target.into(),
        step,
        label: label.into(),
        order,
        group,
        kind: StepKind::Measured,
        threads,
        status: StepStatus::Ok,
        started_unix: 1_735_787_045.0 + f64::from(order) * 10.0,
        seconds,
        warmup_secs: 1.0,
        events: queries,
        queries,
        reads: queries,
        writes: 0,
        others: 0,
        rows_returned: queries,
        rows_affected: 0,
        errors: 0,
        failed_events: 0,
        error_codes: Default::default(),
        busy_retries: 0,
        qps: value,
        tps: value,
        throughput: Throughput { value, unit },
        latency: LatencySummary {
            mean_us: 80.0,
            p50_us: 75.0,
            p95_us: 120.0,
            p99_us: 200.0,
            p999_us: 900.0,
            max_us: 2500.0,
            count: queries,
            histogram: String::new(),
        },
        intervals: vec![],
        client_cpu_us_per_op: Some(12.5),
        os: None,
        // Plausible costs: 2 cores, host (us+sy) 80 %, 3 context switches per op.
        costs: (value > 0.0).then(|| dbdelta_model::os::OpCosts {
            cpu_o: 80.0 / value,
            cs_o: 3.0,
            r_o: Some(0.0),
            rkb_o: Some(0.0),
            wkb_o: Some(if label.starts_with("update") {
                4.5
            } else {
                0.0
            }),
            o_s: value,
            host_cpu_us_op: 80.0 / value * 2.0 / 100.0 * 1e6,
            server_cpu_us_op: Some(60.0 / value * 2.0 / 100.0 * 1e6),
            client_cpu_us_op: 12.5,
            proxy_cpu_us_op: None,
            server_cs_op: Some(2.0),
            server_rkb_op: Some(0.0),
            server_wkb_op: Some(if label.starts_with("update") {
                4.0
            } else {
                0.0
            }),
        }),
        pacing: None,
        ibench: None,
        repeat: 0,
        connect: None,
        op_types: Vec::new(),
        engine_stats: Default::default(),
        txn: None,
        workload_stats: Default::default(),
        actions: Vec::new(),
        turns: None,
        resolved: None,
        extended_secs: None,
        could_run: None,
        server_waits_read: None,
        segments: None,
    }
}

pub fn load(target: &str, rows: u64, seconds: f64) -> StepResult {
    let mut r = result(target, "load", 0, Group::Write, 1, rows as f64 / seconds);
    r.kind = StepKind::Load;
    r.seconds = seconds;
    r.rows_affected = rows;
    r.events = rows;
    r.queries = rows;
    r.reads = 0;
    r.writes = rows;
    r.rows_returned = 0;
    r.latency = LatencySummary::default();
    r.client_cpu_us_per_op = None;
    r.costs = None;
    r.throughput.unit = ThroughputUnit::RowsPerSec;
    r
}

/// The file name the runner gives a result.
pub fn file_name(r: &StepResult) -> String {
    match r.kind {
        StepKind::Load | StepKind::Settle => format!("{:03}-{}.json", r.order, r.label),
        _ => format!("{:03}-{}.dop{}.json", r.order, r.label, r.threads),
    }
}

/// Writes a run directory the way the runner does.
pub fn write_run(dir: &Path, manifest: &RunManifest, results: &[StepResult]) {
    fs::create_dir_all(dir).expect("mkdir run");
    let text = serde_json::to_string_pretty(manifest).expect("manifest json");
    fs::write(dir.join("run.json"), text).expect("write run.json");
    for r in results {
        let d = dir.join("results").join(&r.target);
        fs::create_dir_all(&d).expect("mkdir results");
        let text = serde_json::to_string_pretty(r).expect("result json");
        fs::write(d.join(file_name(r)), text).expect("write result");
    }
}

/// (order, step label, group) of the fixture's measured steps, in run order.
const STEPS: &[(u32, &str, Group)] = &[
    (3, "point-query.pre_range=100", Group::Point),
    (4, "random-points.pre_range=10", Group::Point),
    (5, "random-points.pre_range=100", Group::Point),
    (6, "random-points.pre_range=1000", Group::Point),
    (7, "update-index_range=100", Group::Write),
    (8, "write-only_range=10000", Group::Write),
    (9, "read-write_range=10", Group::Write),
    (10, "read-write_range=100", Group::Write),
    (11, "scan_range=100", Group::Range),
    (12, "read-only_range=10", Group::Range),
    (13, "read-only_range=100", Group::Range),
    (14, "read-only_range=10000", Group::Range),
    (15, "read-only-median_range=100", Group::Range),
    (16, "point-query_range=100", Group::Point),
    (17, "random-points_range=10", Group::Point),
    (18, "random-points_range=100", Group::Point),
    (19, "random-points_range=1000", Group::Point),
    (20, "hot-points_range=100", Group::Point),
    (21, "range-covered-pk_range=100", Group::Range),
    (22, "delete_range=100", Group::Write),
    (23, "insert_range=100", Group::Write),
];

/// Every result of the fixture run: targets `default` (base), `wal` and `wal-mmap` at dop 1
/// and 4, with a failed cell on each side of the ratio, steps a target did not run, a step
/// interrupted by Ctrl-C, a scan row, loads, a warm-up and a settle step.
pub fn fixture_results() -> Vec<StepResult> {
    let mut out = Vec::new();
    for (t, target) in ["default", "wal", "wal-mmap"].into_iter().enumerate() {
        out.push(load(target, 1_000_000, [12.31, 11.84, 11.02][t]));
        let mut settle = result(target, "settle-analyze", 1, Group::Write, 1, 0.0);
        settle.kind = StepKind::Settle;
        out.push(settle);
        let mut warm = result(
            target,
            "point-query.warm_range=100",
            2,
            Group::Point,
            1,
            9999.0,
        );
        warm.kind = StepKind::Warm;
        out.push(warm);
        for &(order, label, group) in STEPS {
            for threads in [1, 4] {
                if let Some(r) = fixture_step(t, target, order, label, group, threads) {
                    out.push(r);
                }
            }
        }
    }
    out
}

fn fixture_step(
    t: usize,
    target: &str,
    order: u32,
    label: &str,
    group: Group,
    threads: u32,
) -> Option<StepResult> {
    // The base did not run the custom step; wal-mmap was stopped during insert at dop 1.
    if (target == "default" && label.starts_with("read-only-median"))
        || (target == "wal-mmap" && label.starts_with("insert") && threads == 4)
    {
        return None;
    }
    let base = if label.starts_with("scan") {
        2345.6
    } else {
        1000.0 + 517.3 * f64::from(order)
    };
    let jitter = 1.0 + 0.013 * (f64::from(order % 7) - 3.0);
    let factor = match (t, group) {
        (0, _) => 1.0,
        (1, Group::Point) => 1.02 * jitter,
        (1, Group::Range) => 0.93 * jitter,
        (1, Group::Write) => 1.31 * jitter,
        (_, Group::Point) => 1.08 * jitter,
        (_, Group::Range) => 1.0 * jitter,
        (_, Group::Write) => 0.97 * jitter,
    };
    let scale = if threads == 4 { 3.4 } else { 1.0 };
    let mut r = result(target, label, order, group, threads, base * factor * scale);
    if target == "wal" && label.starts_with("update-index") && threads == 4 {
        r.status = StepStatus::Failed {
            reason: "SQL error budget exceeded: 101 errors, last: database is locked (SQLITE_BUSY)"
                .into(),
        };
    }
    if target == "default" && label.starts_with("delete") && threads == 4 {
        r.status = StepStatus::Failed {
            reason: "server crashed | signal 11".into(),
        };
    }
    if target == "wal-mmap" && label.starts_with("insert") {
        r.status = StepStatus::Interrupted;
    }
    Some(r)
}

/// The fixture directory's files (relative path, content), including an unfinished `*.tmp`
/// and a non-JSON file that must be ignored without warnings.
pub fn fixture_files() -> Vec<(PathBuf, String)> {
    let mut files = vec![(
        PathBuf::from("run.json"),
        pretty(&manifest(
            &["default", "wal", "wal-mmap"],
            RunStatus::Interrupted,
        )),
    )];
    for r in fixture_results() {
        let rel = Path::new("results").join(&r.target).join(file_name(&r));
        files.push((rel, pretty(&r)));
    }
    let mmap = Path::new("results/wal-mmap");
    files.push((
        mmap.join("023-insert_range=100.dop4.json.tmp"),
        "{\"schema\": 1, \"tar".into(),
    ));
    files.push((mmap.join("notes.txt"), "not a result\n".into()));
    files
}

fn pretty<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("json");
    text.push('\n');
    text
}

/// One complete run of targets `a` (the base) and `b` holding `results`, as report data.
pub fn two_target_data(results: Vec<StepResult>) -> dbdelta_report::ReportData {
    let run = dbdelta_report::RunData {
        dir: "run".into(),
        manifest: manifest(&["a", "b"], RunStatus::Complete),
        results,
        warnings: Vec::new(),
    };
    dbdelta_report::ReportData::from_runs(vec![run], None).expect("two targets merge")
}

/// The text of a `perf script` fixture of the profile crate.
pub fn perf_script(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../profile/tests/fixtures")
        .join(name);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Keeps the profile of `target`'s update-index_range=100 step (order 7, dop 1) from a
/// `perf script` fixture under `dir/profiles/<target>/`, as a `--profile` run does.
pub fn keep_update_index_profile(dir: &Path, target: &str, script: &str) {
    use dbdelta_profile::store::{keep_profile, ProfileSpec};
    use dbdelta_profile::{Callgraph, ProfileSettings};
    let spec = ProfileSpec {
        perf: PathBuf::from("/usr/bin/perf"),
        dir: dir.join("profiles").join(target),
        target: target.into(),
        step: "update-index".into(),
        label: "update-index_range=100".into(),
        order: 7,
        threads: 1,
        settings: ProfileSettings::new(99, Callgraph::Fp, vec![]).expect("settings"),
    };
    fs::create_dir_all(&spec.dir).expect("mkdir");
    let info = keep_profile(&spec, &perf_script(script), 1000);
    assert!(info.samples > 0 && info.svg.is_some(), "{info:?}");
}
