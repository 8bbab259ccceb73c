//! Every step of the sysbench suite on embedded SQLite: the statements conform to the spec
//! (tracing connection) and a real measured run gives QPS > 0 for all 42 reported steps.

use dbdelta_engine::OpenOptions;
use dbdelta_engine_sqlite::SqliteEngine;
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{RunOptions, StepKind, StepResult, StepStatus, TargetSpec};
use dbdelta_runner::conformance::check_suite;
use dbdelta_runner::{run_target, Silent, StopFlag, TargetOutcome};
use dbdelta_workload::Suite;

fn options(table_size: u64, secs: f64) -> RunOptions {
    OptionsBuilder::new()
        .tables(2, table_size)
        .secs(secs)
        .warmup(0.05)
        .seed(7)
        .build()
}

fn engine(dir: &std::path::Path, spec: &str) -> SqliteEngine {
    let spec = TargetSpec::parse(spec).unwrap();
    SqliteEngine::open(&spec, dir, &OpenOptions::default()).unwrap()
}

#[test]
fn every_step_conforms_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), "wal=sqlite?journal_mode=WAL&synchronous=NORMAL");
    let suite = Suite::load("sysbench").unwrap();
    let checks = check_suite(&e, &suite, &options(2000, 1.0), 25).unwrap();
    assert_eq!(checks.len(), 43, "42 reported steps + the warm step");
    let mut problems = Vec::new();
    for c in &checks {
        for p in &c.problems {
            problems.push(format!("{}: {p}", c.label));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let by = |label: &str| checks.iter().find(|c| c.label == label).unwrap();
    let spe = |label: &str| by(label).statements_per_event;
    assert_eq!(spe("read-only_range=100"), 16);
    assert_eq!(spe("read-write_range=10"), 20);
    assert_eq!(spe("write-only_range=10000"), 6);
    assert_eq!(spe("point-query_range=100"), 1);
    assert!(by("range-covered-pk_range=100")
        .facts
        .iter()
        .any(|f| f.starts_with("101 rows per full range")));
    assert!(by("hot-points_range=100")
        .facts
        .contains(&"always the same 100 hot ids".to_string()));
    assert!(by("update-one_range=100")
        .facts
        .contains(&"always id 1".to_string()));
}

#[test]
fn measured_run_gives_qps_for_all_42_steps() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(
        dir.path(),
        "rollback=sqlite?journal_mode=DELETE&synchronous=OFF",
    );
    let suite = Suite::load("sysbench").unwrap();
    let mut results: Vec<StepResult> = Vec::new();
    let mut sink = |r: &StepResult| -> Result<(), String> {
        results.push(r.clone());
        Ok(())
    };
    let outcome = run_target(
        &e,
        "rollback",
        &suite,
        &options(1000, 0.25),
        &StopFlag::new(),
        &Silent,
        &mut sink,
    )
    .unwrap();
    assert_eq!(outcome, TargetOutcome::Complete);
    let measured: Vec<&StepResult> = results
        .iter()
        .filter(|r| r.kind == StepKind::Measured)
        .collect();
    assert_eq!(measured.len(), 42);
    for r in &measured {
        assert_eq!(r.status, StepStatus::Ok, "{}", r.label);
        assert!(r.throughput.value > 0.0, "{} has no throughput", r.label);
        assert!(r.qps > 0.0 && r.latency.count > 0, "{}", r.label);
        assert!(!r.latency.histogram.is_empty());
        assert!(!r.intervals.is_empty(), "{}", r.label);
    }
    let ro = measured
        .iter()
        .find(|r| r.label == "read-only_range=10")
        .unwrap();
    assert_eq!(
        ro.queries,
        ro.events * 16,
        "read-only counts 16 statements per event"
    );
    let rw = measured
        .iter()
        .find(|r| r.label == "read-write_range=100")
        .unwrap();
    assert_eq!(rw.queries, rw.events * 20);
    let scan = measured
        .iter()
        .find(|r| r.label == "scan_range=100")
        .unwrap();
    assert_eq!(
        scan.throughput.unit,
        dbdelta_model::ThroughputUnit::KrowsPerSec
    );
    let load = results.iter().find(|r| r.kind == StepKind::Load).unwrap();
    assert_eq!(load.rows_affected, 2000);
    assert_eq!(
        results
            .iter()
            .filter(|r| r.kind == StepKind::Settle)
            .count(),
        2
    );
}

#[test]
fn no_prepared_mode_runs_the_same_statements() {
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse("t=sqlite").unwrap();
    let opts = OpenOptions {
        prepared: false,
        ..OpenOptions::default()
    };
    let e = SqliteEngine::open(&spec, dir.path(), &opts).unwrap();
    let suite = Suite::load("sysbench").unwrap();
    let mut o = options(500, 1.0);
    o.steps = vec!["read-write*".into(), "points-covered-pk".into()];
    let checks = check_suite(&e, &suite, &o, 10).unwrap();
    assert_eq!(checks.len(), 3);
    assert!(checks.iter().all(|c| c.problems.is_empty()), "{checks:?}");
}
