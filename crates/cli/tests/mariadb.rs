//! The sysbench suite against a real MariaDB the tests start themselves: every step
//! conforms, a managed comparison of two settings runs from the CLI without leaving a server
//! behind, and an external target keeps tables dbdelta did not create.

mod common;

use common::{dbdelta, processes_mentioning};
use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_engine_mysql::MysqlEngine;
use dbdelta_model::{RunOptions, Scale, StepResult, TargetSpec};
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
    RunOptions {
        suite: "sysbench".into(),
        scale: Scale::Quick,
        tables: 2,
        table_size: 2000,
        threads: vec![1],
        read_secs: 0.3,
        write_secs: 0.3,
        insert_secs: 0.3,
        warmup_secs: 0.0,
        round_warmup_secs: None,
        turn_ms: None,
        settle: Scale::Quick.defaults().settle,
        steps: steps.iter().map(|s| s.to_string()).collect(),
        seed: 5,
        prepared: true,
        os_metrics: true,
        device: None,
        rate: None,
        i_own_this_database: false,
        client: Default::default(),
        tpc: Default::default(),
    }
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
fn settings_comparison_from_the_cli_leaves_no_server_behind() {
    if !have_mariadb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args([
            "run",
            "--quiet",
            "-t",
            "ps_off=mysql:/usr?performance_schema=OFF",
            "-t",
            "ps_on=mysql:/usr?performance_schema=ON",
            "--steps",
            "point-query,update-index",
            "--read-secs",
            "0.5",
            "--write-secs",
            "0.5",
            "--warmup-secs",
            "0",
            "--table-size",
            "1000",
            "--run-dir",
        ])
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Relative to: ps_off") && stdout.contains("update-index_range=100"));
    let settings = std::fs::read_to_string(rd.join("targets/ps_on/settings.json")).unwrap();
    assert!(settings.contains("performance_schema"), "{settings}");
    let version = std::fs::read_to_string(rd.join("targets/ps_on/version.txt")).unwrap();
    assert!(version.contains("MariaDB"), "{version}");
    let orphans = processes_mentioning(rd.to_str().unwrap());
    assert!(orphans.is_empty(), "orphan server processes {orphans:?}");
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

/// `binlog_reset=true` from the command line (spec §A2.2): every measured write step's
/// result says the binary log was reset before it, read steps do not reset, each settle
/// begins with the reset and says how long it waited and why, and the manifest records the
/// option (a bad value is refused in bad_input.rs).
#[test]
fn binlog_reset_is_run_before_write_steps_and_recorded() {
    if !common::require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server") {
        return;
    }
    let (_dir, rd) = common::run_ok(&[
        "-t",
        "my=mysql:/usr?log_bin=binlog&binlog_reset=true",
        "--steps",
        "point-query,update-index",
        "--read-secs",
        "0.3",
        "--write-secs",
        "0.3",
        "--warmup-secs",
        "0",
        "--table-size",
        "1000",
        "--settle-secs",
        "1",
    ]);
    let all = common::step_results(&rd, "my");
    let reset = "RESET MASTER (binary logging is on, binlog_reset=true)";
    let update = all.iter().find(|r| r.step == "update-index").unwrap();
    assert_eq!(
        update.actions,
        vec![reset.to_string()],
        "{:?}",
        update.actions
    );
    let point = all.iter().find(|r| r.step == "point-query").unwrap();
    assert!(point.actions.is_empty(), "{:?}", point.actions);
    let settles: Vec<&StepResult> = all
        .iter()
        .filter(|r| r.kind == dbdelta_model::StepKind::Settle)
        .collect();
    assert_eq!(settles.len(), 2);
    for s in settles {
        assert_eq!(s.actions[0], reset, "{:?}", s.actions);
        let waited = s.actions.last().unwrap();
        assert!(
            waited.contains("lasted 1.0 s (--settle-secs 1;") && waited.contains("dirty pages"),
            "{:?}",
            s.actions
        );
        assert!(s.seconds >= 1.0, "{}", s.seconds);
    }
    let settings = std::fs::read_to_string(rd.join("targets/my/settings.json")).unwrap();
    assert!(
        settings.contains("RESET MASTER before every write step and settle"),
        "{settings}"
    );
    let manifest = common::read_json(&rd.join("run.json"));
    assert_eq!(manifest["options"]["settle"]["secs"], 1.0, "{manifest}");
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(text.contains(reset), "{text}");
}
