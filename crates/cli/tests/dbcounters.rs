//! The servers' own counters per operation, read over SQL around each step's window, against
//! a managed PostgreSQL 15 and a managed MariaDB: plausible per-operation figures in the
//! result files, and the table in the text and markdown reports.

mod common;

use common::{require, run_ok, step_results};
use dbdelta_model::{StepKind, StepResult};
use dbdelta_report::dbcounters::{per_op, DbPerOp};
use std::ops::RangeInclusive;
use std::path::Path;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Runs point-query and update-index with 6 s windows and returns the two results.
/// PostgreSQL's backends publish their counters at most once a second, and under load a
/// closing backend of the step before publishes late: each edge of a window can shift by a
/// second or two of work, a third of a 6 s window at most.
fn run(target: &str) -> (tempfile::TempDir, std::path::PathBuf, [StepResult; 2]) {
    let (dir, rd) = run_ok(&[
        "-t",
        target,
        "--steps",
        "point-query,update-index",
        "--table-size",
        "2000",
        "--read-secs",
        "6",
        "--write-secs",
        "6",
        "--warmup-secs",
        "0.5",
    ]);
    let name = target.split('=').next().unwrap_or(target);
    let measured: Vec<StepResult> = step_results(&rd, name)
        .into_iter()
        .filter(|r| r.kind == StepKind::Measured)
        .collect();
    let get = |step: &str| {
        measured
            .iter()
            .find(|r| r.step == step)
            .unwrap_or_else(|| panic!("no {step} result: {measured:?}"))
            .clone()
    };
    let results = [get("point-query"), get("update-index")];
    (dir, rd, results)
}

fn within(all: &DbPerOp, what: &str, v: Option<f64>, range: RangeInclusive<f64>) {
    let v = v.unwrap_or_else(|| panic!("{what} missing: {all:?}"));
    assert!(
        range.contains(&v),
        "{what} = {v}, not in {range:?}: {all:?}"
    );
}

/// Both reports hold the table with a line for each step of `target`.
fn reported(rd: &Path, target: &str) {
    let text = std::fs::read_to_string(rd.join("report.txt")).unwrap();
    assert!(
        text.contains("--- database counters per operation dop=1 ---"),
        "{text}"
    );
    for step in ["point-query_range=100", "update-index_range=100"] {
        let line = text
            .lines()
            .find(|l| l.ends_with(&format!("\t{target}\t{step}")) && l.split('\t').count() == 9)
            .unwrap_or_else(|| panic!("no db counter line for {step}:\n{text}"));
        // Every engine-independent column has a number (binlog may be "-").
        assert!(
            line.split('\t').take(6).all(|c| c.parse::<f64>().is_ok()),
            "{line}"
        );
    }
    let md = std::fs::read_to_string(rd.join("report.md")).unwrap();
    assert!(
        md.contains("### Database counters per operation, dop=1"),
        "{md}"
    );
}

#[test]
fn postgres_counters_per_operation() {
    if !require(
        &[&format!("{PG_BIN}/initdb")],
        "apt-get install postgresql-15",
    ) {
        return;
    }
    let (_dir, rd, [pq, upd]) = run(&format!("pg15=postgres:{PG_BIN}"));
    for r in [&pq, &upd] {
        for key in [
            "db.xact_commit",
            "db.tup_fetched",
            "db.wal_bytes",
            "db.buffers_alloc",
        ] {
            assert!(
                r.engine_stats.contains_key(key),
                "{key}: {:?}",
                r.engine_stats
            );
        }
        // A server's counters only: this process's CPU is not the database's.
        assert!(
            r.engine_stats.keys().all(|k| k.starts_with("db.")),
            "{:?}",
            r.engine_stats
        );
    }
    let p = per_op(&pq).expect("point-query has db counters");
    // One autocommit SELECT per operation: one transaction, an index entry and a heap row.
    within(&p, "point-query commits/op", p.commits, 0.5..=2.0);
    within(
        &p,
        "point-query rows examined/op",
        p.rows_examined,
        1.0..=4.0,
    );
    within(
        &p,
        "point-query rows written/op",
        p.rows_written,
        0.0..=0.05,
    );
    // No upper bound: background work (autovacuum after the updates) adds its own.
    within(
        &p,
        "point-query buffer requests/op",
        p.buffer_requests,
        1.0..=f64::MAX,
    );
    assert_eq!(p.binlog_kb, None);
    let u = per_op(&upd).expect("update-index has db counters");
    within(&u, "update-index commits/op", u.commits, 0.5..=2.0);
    within(
        &u,
        "update-index rows written/op",
        u.rows_written,
        0.5..=2.0,
    );
    within(&u, "update-index WAL KB/op", u.wal_kb, 0.01..=64.0);
    reported(&rd, "pg15");
}

#[test]
fn mariadb_counters_per_operation() {
    if !require(&["/usr/sbin/mariadbd"], "apt-get install mariadb-server") {
        return;
    }
    // With a binary log, so its bytes are counted too.
    let (_dir, rd, [pq, upd]) = run("maria=mysql:/usr?log_bin=binlog");
    for key in [
        "db.handler_commit",
        "db.handler_read_key",
        "db.innodb_os_log_written",
    ] {
        assert!(
            pq.engine_stats.contains_key(key),
            "{key}: {:?}",
            pq.engine_stats
        );
    }
    let p = per_op(&pq).expect("point-query has db counters");
    within(&p, "point-query commits/op", p.commits, 0.5..=2.0);
    // One key lookup per operation; the counters are read a few ms off the window's edges
    // (more on a busy machine), so "one" can read a little less.
    within(
        &p,
        "point-query rows examined/op",
        p.rows_examined,
        0.9..=3.0,
    );
    within(
        &p,
        "point-query rows written/op",
        p.rows_written,
        0.0..=0.05,
    );
    // No upper bound: background work (InnoDB's purge of the updates) adds its own.
    within(
        &p,
        "point-query buffer requests/op",
        p.buffer_requests,
        1.0..=f64::MAX,
    );
    let u = per_op(&upd).expect("update-index has db counters");
    // With a binary log a commit may count once per engine (binlog and InnoDB).
    within(&u, "update-index commits/op", u.commits, 0.5..=3.0);
    within(
        &u,
        "update-index rows written/op",
        u.rows_written,
        0.5..=2.0,
    );
    within(&u, "update-index redo KB/op", u.wal_kb, 0.01..=64.0);
    within(&u, "update-index binlog KB/op", u.binlog_kb, 0.01..=64.0);
    reported(&rd, "maria");
}
