//! The Insert Benchmark end to end: every step on SQLite, managed PostgreSQL and managed
//! MariaDB at tiny scale; the range and point queries use the covering indexes (EXPLAIN);
//! bad flag combinations exit 2 naming the flag.

mod common;

use common::{dbdelta, step_results};
use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::{StepKind, StepStatus, TargetSpec};
use dbdelta_runner::ibench::{create_tables, run_step, StepContext};
use dbdelta_runner::StopFlag;
use dbdelta_workload::ibench::statements::{point_query, range_queries};
use dbdelta_workload::ibench::steps::builtin;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
const MEASURED: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// Runs every step at tiny scale and checks each target's results and the report.
fn run_all_steps(targets: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("run");
    let mut cmd = dbdelta();
    cmd.args(["run", "--quiet", "--suite", "ibench", "--scale", "quick"]);
    for t in targets {
        cmd.args(["-t", t]);
    }
    let out = cmd
        .args([
            "--rows-load",
            "2000",
            "--rows-write",
            "500",
            "--query-secs",
            "1",
        ])
        .arg("--run-dir")
        .arg(&rd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in targets {
        let name = t.split('=').next().unwrap();
        let rs = step_results(&rd, name);
        let measured: Vec<&str> = rs
            .iter()
            .filter(|r| r.kind == StepKind::Measured)
            .map(|r| r.step.as_str())
            .collect();
        assert_eq!(measured, MEASURED, "{name}");
        assert!(rs.iter().any(|r| r.kind == StepKind::Settle && r.is_ok()));
        for r in &rs {
            assert_eq!(r.status, StepStatus::Ok, "{name} {}", r.step);
            let Some(st) = &r.ibench else { continue };
            assert!(st.inserts_per_s > 0.0, "{name} {}", r.step);
            if r.step.starts_with('q') {
                assert!(st.queries > 0, "{name} {}: no query ran", r.step);
                assert!(st.target_insert_rate.is_some());
                assert_eq!(st.rows_deleted, st.rows_inserted, "{name} {}", r.step);
            }
            assert!(st.db_bytes.unwrap_or(0) > 0, "{name} {}: no size", r.step);
        }
        // FIFO: every step after l.x leaves the table as large as l.x did.
        let at_end = |s: &str| {
            rs.iter()
                .find(|r| r.step == s)
                .and_then(|r| r.ibench.as_ref())
                .and_then(|st| st.rows_at_end)
        };
        assert_eq!(at_end("l.x"), Some(2100), "{name}");
        for s in &MEASURED[2..] {
            assert_eq!(at_end(s), Some(2100), "{name} {s}");
        }
    }
    for table in [
        "Absolute throughput",
        "Relative throughput",
        "Background insert rates",
    ] {
        assert!(stdout.contains(table), "{table} missing:\n{stdout}");
    }
    assert!(
        stdout.contains("\ntarget\t100\t100\t500\t500\t1000\t1000"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(rd.join("report.html")).unwrap();
    assert!(
        html.contains("background:#D7D7D7"),
        "the target row is gray"
    );
    let md = dbdelta()
        .args(["report", "--format", "md"])
        .arg(&rd)
        .output()
        .unwrap();
    assert!(md.status.success());
    assert!(String::from_utf8_lossy(&md.stdout).contains("| dbms | l.i0 | l.x |"));
}

#[test]
fn all_steps_run_on_sqlite() {
    run_all_steps(&[
        "wal=sqlite?journal_mode=WAL&synchronous=NORMAL",
        "wal2=sqlite?journal_mode=WAL&synchronous=OFF",
    ]);
}

fn have(path: &str) -> bool {
    common::require(&[path], "scripts/test.sh installs the servers")
}

#[test]
fn all_steps_run_on_managed_postgres() {
    if have(&format!("{PG_BIN}/initdb")) {
        run_all_steps(&[&format!("pg=postgres:{PG_BIN}")]);
    }
}

#[test]
fn all_steps_run_on_managed_mariadb() {
    if have("/usr/sbin/mariadbd") {
        run_all_steps(&["maria=mysql:/usr?innodb_buffer_pool_size=64M"]);
    }
}

/// Loads pi1 with indexes, settles, and returns EXPLAIN (JSON) of the 3 range queries and
/// the point query.
fn explain_plans(e: &dyn Engine, explain: &str) -> Vec<String> {
    let o = IbenchOptions {
        rows_load: 3000,
        settle_sleep_secs: 0.0,
        ..IbenchOptions::quick(1)
    };
    create_tables(e, &o, false).unwrap();
    let steps = builtin();
    let mut loaded = 0;
    for (i, s) in steps.iter().take(2).enumerate() {
        let ctx = StepContext {
            target: "t",
            opts: &o,
            step: s,
            order: i as u32 + 1,
            loaded_rows: loaded,
            os_metrics: false,
            device: None,
        };
        let r = run_step(e, &ctx, &StopFlag::new());
        assert_eq!(r.status, StepStatus::Ok, "{}", s.name);
        loaded = 3000;
    }
    e.settle(&["pi1".to_string()], &dbdelta_engine::SettleWait::none())
        .unwrap();
    let mut conn = e.connect().unwrap();
    let dialect = conn.dialect();
    let mut sqls: Vec<String> = range_queries(dialect, "pi1")
        .iter()
        .map(|(q, n)| q.replace('?', &(n / 2).to_string()))
        .collect();
    let mut point = point_query("pi1");
    for id in 1..=10 {
        point = point.replacen('?', &(id * 100).to_string(), 1);
    }
    sqls.push(point);
    sqls.iter()
        .map(|q| {
            conn.query_scalar(&format!("{explain} {q}"))
                .unwrap()
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn queries_use_the_covering_indexes_on_postgres() {
    if !have(&format!("{PG_BIN}/initdb")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse(&format!("pg=postgres:{PG_BIN}")).unwrap();
    let e = dbdelta_engine_postgres::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let plans = explain_plans(&e, "EXPLAIN (FORMAT JSON)");
    for (plan, ix) in plans
        .iter()
        .zip(["marketsegment", "registersegment", "pdc"])
    {
        assert!(
            plan.contains("\"Index Only Scan\"") && plan.contains(&format!("pi1_{ix}")),
            "{ix}: {plan}"
        );
        assert!(
            !plan.contains("\"Seq Scan\"") && !plan.contains("\"Sort\""),
            "{plan}"
        );
    }
    assert!(plans[3].contains("pi1_pkey"), "point query: {}", plans[3]);
}

#[test]
fn queries_use_the_covering_indexes_on_mariadb() {
    if !have("/usr/sbin/mariadbd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = TargetSpec::parse("maria=mysql:/usr?innodb_buffer_pool_size=64M").unwrap();
    let e = dbdelta_engine_mysql::open(&spec, dir.path(), &OpenOptions::default()).unwrap();
    let plans = explain_plans(&e, "EXPLAIN FORMAT=JSON");
    for (plan, ix) in plans
        .iter()
        .zip(["marketsegment", "registersegment", "pdc"])
    {
        let compact: String = plan.split_whitespace().collect();
        assert!(
            compact.contains(&format!("\"key\":\"pi1_{ix}\""))
                && compact.contains("\"using_index\":true")
                && !compact.contains("filesort"),
            "{ix}: {plan}"
        );
    }
    let compact: String = plans[3].split_whitespace().collect();
    assert!(compact.contains("\"key\":\"PRIMARY\""), "{}", plans[3]);
}

#[test]
fn bad_combinations_exit_2_naming_the_flag() {
    for (args, flag) in [
        (
            vec!["--suite", "ibench", "--clients", "2", "--one-table"],
            "--one-table",
        ),
        (vec!["--suite", "ibench", "--threads", "2"], "--threads"),
        (vec!["--suite", "ibench", "--clients", "0"], "--clients"),
        (
            vec!["--suite", "ibench", "--query-secs", "0"],
            "--query-secs",
        ),
        (
            vec!["--suite", "ibench", "--rows-load", "10"],
            "--rows-load",
        ),
        (
            vec!["--suite", "sysbench", "--rows-write", "10"],
            "--rows-write",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dbdelta()
            .arg("run")
            .args(&args)
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn suites_lists_and_shows_ibench() {
    let out = dbdelta().arg("suites").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("ibench"));
    let out = dbdelta()
        .args(["suites", "show", "ibench", "--dialect", "mysql"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("FORCE INDEX (pi1_marketsegment)"), "{text}");
    assert!(
        text.contains("qp1000: point queries with 1000 insert/s per client"),
        "{text}"
    );
    assert!(
        text.contains("order by transactionid asc limit 5"),
        "{text}"
    );
}
