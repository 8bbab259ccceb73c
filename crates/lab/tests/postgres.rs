//! The sysbench suite as a library against a real PostgreSQL the tests start themselves:
//! every step conforms, OS metrics tie to what the server did, and an external target keeps
//! tables dbdelta did not create.

mod common;

use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_engine_postgres::PostgresEngine;
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{RunOptions, StepKind, StepResult, StepStatus, TargetSpec};
use dbdelta_runner::conformance::check_suite;
use dbdelta_runner::{run_target, Silent, StopFlag, TargetOutcome};
use dbdelta_workload::Suite;
use std::path::Path;

const BIN: &str = "/usr/lib/postgresql/15/bin";

fn have_pg() -> bool {
    common::require(
        &["/usr/lib/postgresql/15/bin/initdb"],
        "apt-get install postgresql-15",
    )
}

fn managed(dir: &Path) -> PostgresEngine {
    let spec = TargetSpec::parse(&format!("pg=postgres:{BIN}?fsync=on")).unwrap();
    dbdelta_engine_postgres::open(&spec, dir, &OpenOptions::default()).unwrap()
}

fn options(steps: &[&str], secs: f64) -> RunOptions {
    OptionsBuilder::new().steps(steps).secs(secs).build()
}

#[test]
fn every_step_conforms_on_postgres() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let e = managed(dir.path());
    let suite = Suite::load("sysbench").unwrap();
    let checks = check_suite(&e, &suite, &options(&[], 1.0), 10).unwrap();
    assert_eq!(checks.len(), 43);
    let problems: Vec<String> = checks
        .iter()
        .flat_map(|c| c.problems.iter().map(move |p| format!("{}: {p}", c.label)))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let by = |l: &str| checks.iter().find(|c| c.label == l).unwrap();
    assert_eq!(by("read-only_range=10").statements_per_event, 16);
    assert_eq!(by("read-write_range=100").statements_per_event, 20);
    assert_eq!(by("write-only_range=10000").statements_per_event, 6);
    assert!(by("range-covered-pk_range=100")
        .facts
        .iter()
        .any(|f| f.starts_with("101 rows")));
    assert!(by("update-one_range=100")
        .facts
        .contains(&"always id 1".into()));
}

#[test]
fn costs_tie_to_what_the_server_did() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let e = managed(dir.path());
    let suite = Suite::load("sysbench").unwrap();
    let mut results: Vec<StepResult> = Vec::new();
    let mut sink = |r: &StepResult| -> Result<(), String> {
        results.push(r.clone());
        Ok(())
    };
    let opts = options(&["point-query", "update-index"], 2.0);
    let outcome = run_target(
        &e,
        "pg",
        &suite,
        &opts,
        &StopFlag::new(),
        &Silent,
        &mut sink,
    )
    .unwrap();
    assert_eq!(outcome, TargetOutcome::Complete);
    let get = |l: &str| {
        results
            .iter()
            .find(|r| r.label == l && r.kind == StepKind::Measured)
            .unwrap()
    };
    let upd = get("update-index_range=100");
    assert_eq!(upd.status, StepStatus::Ok);
    let c = upd.costs.as_ref().expect("update-index has costs");
    assert!(c.server_cpu_us_op.unwrap() > 0.0, "{c:?}");
    // Every commit writes WAL: the device (or, without one, the server's own IO) shows writes.
    let wkb = c.wkb_o.or(c.server_wkb_op).unwrap();
    assert!(wkb > 0.0, "update-index must write: {c:?}");
    let pq = get("point-query_range=100");
    let c = pq.costs.as_ref().expect("point-query has costs");
    assert!(c.server_cpu_us_op.unwrap() > 0.0);
    if let Some(r_o) = c.r_o {
        assert!(
            r_o < 0.05,
            "a cached table reads (almost) nothing per op: {r_o}"
        );
    }
    assert!(pq.client_cpu_us_per_op.unwrap() > 0.0);
    let load = results.iter().find(|r| r.kind == StepKind::Load).unwrap();
    assert_eq!(load.rows_affected, 4000);
    assert!(load.costs.is_some());
}

#[test]
fn external_target_keeps_tables_it_did_not_create() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = managed(dir.path());
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, note TEXT); INSERT INTO sbtest1 VALUES (1, 'precious')")
        .unwrap();
    let url = format!("ext=postgres://dbdelta@{}/dbdelta", server.address());
    let spec = TargetSpec::parse(&url).unwrap();
    let ext = dbdelta_engine_postgres::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let suite = Suite::load("sysbench").unwrap();
    let mut sink = |_: &StepResult| -> Result<(), String> { Ok(()) };
    let outcome = run_target(
        &ext,
        "ext",
        &suite,
        &options(&["point-query"], 0.2),
        &StopFlag::new(),
        &Silent,
        &mut sink,
    )
    .unwrap();
    match outcome {
        TargetOutcome::LoadFailed(reason) => {
            assert!(reason.contains("refusing to drop"), "{reason}");
            assert!(reason.contains("--i-own-this-database"), "{reason}");
        }
        other => panic!("the load must refuse: {other:?}"),
    }
    let note = conn
        .query_scalar("SELECT note FROM sbtest1 WHERE id = 1")
        .unwrap();
    assert_eq!(note.as_deref(), Some("precious"));
}
