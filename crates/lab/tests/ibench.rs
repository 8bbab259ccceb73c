//! The Insert Benchmark's steps as a library on managed PostgreSQL and MariaDB: the range
//! and point queries use the covering indexes (EXPLAIN).

mod common;

use dbdelta_engine::{Engine, OpenOptions};
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::{StepStatus, TargetSpec};
use dbdelta_runner::ibench::{create_tables, run_step, Share, StepContext};
use dbdelta_runner::StopFlag;
use dbdelta_workload::ibench::statements::{point_query, range_queries};
use dbdelta_workload::ibench::steps::builtin;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

fn have(path: &str) -> bool {
    common::require(&[path], "scripts/test.sh installs the servers")
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
            share: Share::WHOLE,
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
