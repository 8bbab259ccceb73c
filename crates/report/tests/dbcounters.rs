//! The "database counters per operation" tables from hand-built results: a PostgreSQL and a
//! MariaDB target with the server's `db.*` counters, and a SQLite one without.

mod common;

use common::{check_golden, data_dir, fixture_dir, manifest, result};
use dbdelta_model::{Group, RunStatus, StepResult, StepStatus};
use dbdelta_report::dbcounters::{self, per_op};
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions, RunData};

fn with(mut r: StepResult, counters: &[(&str, f64)]) -> StepResult {
    r.engine_stats = counters.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    r
}

/// pg (20 000 point queries, 10 000 updates, 1 000 thousand rows scanned), maria (16 000
/// point queries, 8 000 updates, a failed scan) and lite (no counters) over 2 s windows.
fn data() -> ReportData {
    let pq = "point-query_range=100";
    let upd = "update-index_range=100";
    let scan = "scan_range=100";
    let mut m = manifest(&["pg", "maria", "lite"], RunStatus::Complete);
    m.targets[0].engine = "postgres".into();
    m.targets[0].spec = "pg=postgres:/usr/lib/postgresql/15/bin".into();
    m.targets[1].engine = "mysql".into();
    m.targets[1].spec = "maria=mysql:/usr".into();
    let mut failed_scan = result("maria", scan, 3, Group::Range, 1, 400.0);
    failed_scan.status = StepStatus::Failed {
        reason: "server gone".into(),
    };
    let results = vec![
        with(
            result("pg", pq, 1, Group::Point, 1, 10_000.0),
            &[
                ("db.blks_read", 20.0),
                ("db.blks_hit", 59_980.0),
                ("db.tup_returned", 20_000.0),
                ("db.tup_fetched", 20_000.0),
                ("db.tup_inserted", 0.0),
                ("db.tup_updated", 0.0),
                ("db.tup_deleted", 0.0),
                ("db.xact_commit", 20_004.0),
                ("db.wal_bytes", 0.0),
                ("db.buffers_alloc", 20.0),
            ],
        ),
        with(
            result("pg", upd, 2, Group::Write, 1, 5_000.0),
            &[
                ("db.blks_read", 5.0),
                ("db.blks_hit", 39_995.0),
                ("db.tup_returned", 10_000.0),
                ("db.tup_fetched", 10_000.0),
                ("db.tup_inserted", 0.0),
                ("db.tup_updated", 10_000.0),
                ("db.tup_deleted", 0.0),
                ("db.xact_commit", 10_000.0),
                ("db.wal_bytes", 3_000_000.0),
            ],
        ),
        with(
            result("pg", scan, 3, Group::Range, 1, 500.0),
            &[
                ("db.blks_read", 0.0),
                ("db.blks_hit", 6_000.0),
                ("db.tup_returned", 1_000_000.0),
                ("db.tup_fetched", 0.0),
                ("db.tup_inserted", 0.0),
                ("db.tup_updated", 0.0),
                ("db.tup_deleted", 0.0),
                ("db.xact_commit", 10.0),
            ],
        ),
        with(
            result("maria", pq, 1, Group::Point, 1, 8_000.0),
            &[
                ("db.innodb_buffer_pool_reads", 0.0),
                ("db.innodb_buffer_pool_read_requests", 48_000.0),
                ("db.handler_read_key", 16_000.0),
                ("db.handler_read_next", 0.0),
                ("db.handler_read_prev", 0.0),
                ("db.handler_read_first", 0.0),
                ("db.handler_read_last", 0.0),
                ("db.handler_read_rnd", 0.0),
                ("db.handler_read_rnd_next", 22.0),
                ("db.handler_write", 0.0),
                ("db.handler_update", 0.0),
                ("db.handler_delete", 0.0),
                ("db.handler_commit", 16_000.0),
                ("db.innodb_os_log_written", 0.0),
            ],
        ),
        with(
            result("maria", upd, 2, Group::Write, 1, 4_000.0),
            &[
                ("db.innodb_buffer_pool_reads", 8.0),
                ("db.innodb_buffer_pool_read_requests", 40_000.0),
                ("db.handler_read_key", 8_000.0),
                ("db.handler_read_next", 0.0),
                ("db.handler_read_prev", 0.0),
                ("db.handler_read_first", 0.0),
                ("db.handler_read_last", 0.0),
                ("db.handler_read_rnd", 0.0),
                ("db.handler_read_rnd_next", 0.0),
                ("db.handler_write", 0.0),
                ("db.handler_update", 8_000.0),
                ("db.handler_delete", 0.0),
                ("db.handler_commit", 8_000.0),
                ("db.innodb_os_log_written", 4_800_000.0),
                ("db.binlog_bytes_written", 3_200_000.0),
            ],
        ),
        with(failed_scan, &[("db.handler_read_rnd_next", 1.0)]),
        result("lite", pq, 1, Group::Point, 1, 20_000.0),
        result("lite", upd, 2, Group::Write, 1, 9_000.0),
        result("lite", scan, 3, Group::Range, 1, 900.0),
    ];
    let run = RunData {
        dir: "run".into(),
        manifest: m,
        results,
        warnings: Vec::new(),
    };
    ReportData::from_runs(vec![run], None).expect("merge")
}

fn find<'a>(data: &'a ReportData, target: &str, step: &str) -> &'a StepResult {
    data.runs[0]
        .results
        .iter()
        .find(|r| r.target == target && r.step == step)
        .expect("result")
}

#[test]
fn per_operation_as_the_cost_table_counts_operations() {
    let data = data();
    let pg = per_op(find(&data, "pg", "point-query")).expect("pg counters");
    assert_eq!(pg.buffer_reads, Some(0.001));
    assert_eq!(pg.buffer_requests, Some(3.0));
    assert_eq!(pg.rows_examined, Some(2.0));
    assert_eq!(pg.rows_written, Some(0.0));
    assert_eq!(pg.commits, Some(1.0002));
    assert_eq!(pg.binlog_kb, None);
    let scan = per_op(find(&data, "pg", "scan")).expect("scan counters");
    // Per thousand rows, like the cost table; no WAL position was read.
    assert_eq!(scan.rows_examined, Some(1000.0));
    assert_eq!(scan.wal_kb, None);
    let maria = per_op(find(&data, "maria", "update-index")).expect("maria counters");
    assert_eq!(maria.rows_written, Some(1.0));
    assert_eq!(maria.commits, Some(1.0));
    assert_eq!(maria.binlog_kb, Some(400.0 / 1024.0));
    assert_eq!(per_op(find(&data, "maria", "scan")), None, "failed step");
    assert_eq!(per_op(find(&data, "lite", "scan")), None, "no counters");
}

#[test]
fn text_table() {
    let mut out = String::new();
    dbcounters::text(&mut out, &data(), &ReportOptions::default());
    check_golden(&data_dir().join("expected/dbcounters.txt"), &out);
}

#[test]
fn markdown_table() {
    let mut out = String::new();
    dbcounters::markdown(&mut out, &data(), &ReportOptions::default());
    check_golden(&data_dir().join("expected/dbcounters.md"), &out);
}

#[test]
fn html_table() {
    let mut out = String::new();
    dbcounters::html(&mut out, &data(), &ReportOptions::default());
    check_golden(&data_dir().join("expected/dbcounters.html"), &out);
}

#[test]
fn the_table_follows_the_cost_table() {
    let data = data();
    let opts = ReportOptions::default();
    let text = render(&data, Format::Text, &opts).expect("text");
    let cost = text
        .find("--- cost per operation dop=1")
        .expect("cost table");
    let db = text
        .find("--- database counters per operation dop=1")
        .expect("db table");
    let next = text[cost + 1..]
        .find("\n--- ")
        .map(|i| i + cost + 2)
        .expect("a section after the cost table");
    assert_eq!(next, db, "{text}");
    // db.* counters are a server's, not RocksDB's: no key-value engine section.
    assert!(!text.contains("key-value engine"), "{text}");
    let md = render(&data, Format::Markdown, &opts).expect("markdown");
    let cost = md
        .find("### Hardware cost per operation, dop=1")
        .expect("cost table");
    let db = md
        .find("### Database counters per operation, dop=1")
        .expect("db table");
    assert_eq!(
        md[cost + 1..].find("\n### ").map(|i| i + cost + 2),
        Some(db)
    );
    let quiet = ReportOptions {
        details: false,
        ..ReportOptions::default()
    };
    let md = render(&data, Format::Markdown, &quiet).expect("markdown");
    assert!(!md.contains("Database counters"), "details only");
    // HTML: after the hardware cost section, before the next one, linked from the contents.
    let html = render(&data, Format::Html, &opts).expect("html");
    let cost = html.find("<h2 id=\"cost\">").expect("cost section");
    let db = html.find("<h2 id=\"dbcounters\">").expect("db section");
    assert_eq!(
        html[cost + 1..].find("<h2 ").map(|i| i + cost + 1),
        Some(db),
        "{html}"
    );
    assert!(html.contains("<a href=\"#dbcounters\">database counters</a>"));
}

#[test]
fn no_table_without_db_counters() {
    let run = load_run(&fixture_dir()).expect("fixture run loads");
    let data = ReportData::from_runs(vec![run], None).expect("fixture merges");
    for format in [Format::Text, Format::Markdown, Format::Html] {
        let out = render(&data, format, &ReportOptions::default()).expect("render");
        assert!(!out.to_lowercase().contains("database counters"), "{out}");
    }
}
