//! The sysbench suite as a library against a real MariaDB the tests start themselves: every
//! step conforms, and an external target keeps tables dbdelta did not create.

mod common;

use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_engine_mysql::MysqlEngine;
use dbdelta_model::testing::OptionsBuilder;
use dbdelta_model::{RunOptions, StepResult, TargetSpec};
use dbdelta_runner::conformance::check_suite;
use dbdelta_runner::{run_target, Silent, StopFlag, TargetOutcome};
use dbdelta_workload::Suite;
use std::path::Path;

fn have_mariadb() -> bool {
    common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server")
}

fn managed(dir: &Path) -> MysqlEngine {
    let spec = TargetSpec::parse("maria=mysql:/usr?innodb_buffer_pool_size=64M").unwrap();
    dbdelta_engine_mysql::open(&spec, dir, &OpenOptions::default()).unwrap()
}

fn options(steps: &[&str]) -> RunOptions {
    OptionsBuilder::new()
        .steps(steps)
        .secs(0.3)
        .warmup(0.0)
        .with(|o| o.seed = 5)
        .build()
}

#[test]
fn every_step_conforms_on_mariadb() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let e = managed(dir.path());
    let suite = Suite::load("sysbench").unwrap();
    let checks = check_suite(&e, &suite, &options(&[]), 10).unwrap();
    assert_eq!(checks.len(), 43);
    let problems: Vec<String> = checks
        .iter()
        .flat_map(|c| c.problems.iter().map(move |p| format!("{}: {p}", c.label)))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let by = |l: &str| checks.iter().find(|c| c.label == l).unwrap();
    assert_eq!(by("read-only.pre_range=100").statements_per_event, 16);
    assert_eq!(by("read-write_range=10").statements_per_event, 20);
    assert!(by("hot-points_range=100")
        .facts
        .contains(&"always the same 100 hot ids".into()));
    assert!(by("range-covered-pk.pre_range=100")
        .facts
        .iter()
        .any(|f| f.starts_with("101 rows")));
}

#[test]
fn external_target_keeps_tables_it_did_not_create() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = managed(dir.path());
    let mut conn = server.connect().unwrap();
    conn.batch("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, note TEXT); INSERT INTO sbtest1 VALUES (1, 'precious')")
        .unwrap();
    let port = server.port().expect("managed server has a port");
    let spec = TargetSpec::parse(&format!("ext=mysql://root@127.0.0.1:{port}/dbdelta")).unwrap();
    let ext = dbdelta_engine_mysql::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let suite = Suite::load("sysbench").unwrap();
    let mut sink = |_: &StepResult| -> Result<(), String> { Ok(()) };
    let outcome = run_target(
        &ext,
        "ext",
        &suite,
        &options(&["point-query"]),
        &StopFlag::new(),
        &Silent,
        &mut sink,
    )
    .unwrap();
    match outcome {
        TargetOutcome::LoadFailed(reason) => {
            assert!(reason.contains("refusing to drop"), "{reason}")
        }
        other => panic!("the load must refuse: {other:?}"),
    }
    let note = conn
        .query_scalar("SELECT note FROM sbtest1 WHERE id = 1")
        .unwrap();
    assert_eq!(note.as_deref(), Some("precious"));
}
