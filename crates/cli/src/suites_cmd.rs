//! `dbdelta suites`: what each suite runs, with its SQL and counting rules.

use crate::flags::{DialectArg, SuitesAction, SuitesArgs};
use anyhow::Result;
use dbdelta_model::Dialect;
use dbdelta_workload::queryset::{QuerySet, VARIANT_ENGINES};
use dbdelta_workload::suite::{SuiteItem, BUILTIN};
use dbdelta_workload::sysbench::{
    sent_as_text, statements, statements_per_event, uses_transactions,
};
use dbdelta_workload::{DurationClass, Suite};
use std::fmt::Write;

/// Runs the subcommand and returns its text.
pub fn run(args: &SuitesArgs) -> Result<String> {
    match &args.action {
        None => {
            let mut out = String::new();
            for (name, _) in BUILTIN {
                let s = Suite::load(name)?;
                let n = s.steps().filter(|s| !s.warm).count();
                let _ = writeln!(out, "{name:<12} {n:>3} reported steps  {}", s.description);
            }
            let n = dbdelta_workload::ibench::steps::builtin()
                .iter()
                .filter(|s| !s.settle)
                .count();
            let _ = writeln!(
                out,
                "{:<12} {n:>3} reported steps  Insert Benchmark: l.i0, l.x, l.i1, l.i2, settle, qr/qp at 100/500/1000 inserts/s per client",
                crate::spec::IBENCH
            );
            let _ = writeln!(
                out,
                "\nQuery-set suites are directories (suite.toml, setup/, queries/): --suite DIR; shipped: examples/fulltext, examples/clickhouse-types"
            );
            Ok(out)
        }
        Some(SuitesAction::Show { suite, dialect }) if suite == crate::spec::IBENCH => {
            Ok(show_ibench(match dialect {
                DialectArg::Sqlite => Dialect::Sqlite,
                DialectArg::Postgres => Dialect::Postgres,
                DialectArg::Mysql => Dialect::Mysql,
            }))
        }
        Some(SuitesAction::Show { suite, .. })
            if QuerySet::is_query_set(std::path::Path::new(suite)) =>
        {
            let set = QuerySet::load(std::path::Path::new(suite), dbdelta_model::Scale::Quick)
                .map_err(|e| anyhow::anyhow!("suites show: {e}"))?;
            Ok(show_query_set(&set))
        }
        Some(SuitesAction::Show { suite, dialect }) => {
            let s = Suite::load(suite).map_err(|e| anyhow::anyhow!("suites show: {e}"))?;
            Ok(show(
                &s,
                match dialect {
                    DialectArg::Sqlite => Dialect::Sqlite,
                    DialectArg::Postgres => Dialect::Postgres,
                    DialectArg::Mysql => Dialect::Mysql,
                },
            ))
        }
    }
}

/// A query set's setup files and queries, with the file each engine runs.
fn show_query_set(set: &QuerySet) -> String {
    let mut out = format!("query set {}: {}\n", set.name, set.description);
    for (k, v) in &set.params {
        let _ = writeln!(out, "  param {k} = {v} (quick)");
    }
    let files = |out: &mut String, f: &dbdelta_workload::queryset::SqlFile| {
        let per_engine: Vec<String> = VARIANT_ENGINES
            .iter()
            .map(|e| match f.for_engine(e) {
                Some(v) => format!("{e}: {}", v.file),
                None => format!("{e}: -"),
            })
            .collect();
        let _ = writeln!(out, "  {:<24} {}", f.name, per_engine.join("  "));
    };
    out.push_str("\nsetup (in order):\n");
    for f in &set.setup {
        files(&mut out, f);
        if let Some(l) = set.loader.as_ref().filter(|l| l.after == f.name) {
            let _ = writeln!(
                out,
                "  {:<24} zipf-corpus: {} documents of {} words into {}",
                format!("loader:{}", l.spec.table),
                l.spec.docs,
                l.spec.words_per_doc,
                l.spec.table
            );
        }
    }
    out.push_str("\nqueries:\n");
    for q in &set.queries {
        files(&mut out, &q.sql);
    }
    out
}

/// The Insert Benchmark's steps with their parameters and statements.
fn show_ibench(dialect: Dialect) -> String {
    use dbdelta_workload::ibench::{schema, statements};
    let mut out = String::from("suite ibench: Insert Benchmark (Mark Callaghan's iibench.py)\n\n");
    for sql in schema::create_table_sql(dialect, None, "pi1") {
        let _ = writeln!(out, "     {sql}");
    }
    out.push('\n');
    for (i, st) in dbdelta_workload::ibench::steps::builtin()
        .iter()
        .enumerate()
    {
        if st.settle {
            let _ = writeln!(
                out,
                "{:>3}. {} (vacuum/analyze/checkpoint or flush) not measured\n",
                i + 1,
                st.name
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:>3}. {}: {}\n     rows/insert: {}   deletes: {}   rate: {}   queries: {}",
            i + 1,
            st.name,
            st.title,
            st.rows_per_commit,
            if st.deletes { "yes (FIFO)" } else { "no" },
            st.rate.map_or("unlimited".to_string(), |r| format!(
                "{r} rows/s per client"
            )),
            st.queries
                .map_or("none".to_string(), |q| format!("{q:?}").to_lowercase()),
        );
        if st.create_indexes {
            for sql in schema::create_indexes_sql(dialect, "pi1") {
                let _ = writeln!(out, "     {sql}");
            }
        }
        if st.deletes {
            let _ = writeln!(
                out,
                "     {}",
                statements::delete_sql(dialect, "pi1", 1, st.rows_per_commit)
            );
        }
        match st.queries {
            Some(dbdelta_workload::ibench::QueryKind::Range) => {
                for (q, _) in statements::range_queries(dialect, "pi1") {
                    let _ = writeln!(out, "     {q}");
                }
            }
            Some(dbdelta_workload::ibench::QueryKind::Point) => {
                let _ = writeln!(out, "     {}", statements::point_query("pi1"));
            }
            None => {}
        }
        out.push('\n');
    }
    out
}

fn show(s: &Suite, dialect: Dialect) -> String {
    let mut out = format!("suite {}: {}\n\n", s.name, s.description);
    for item in &s.items {
        match item {
            SuiteItem::Action { order, action } => {
                let _ = writeln!(out, "{order:>3}. ({action:?}) not measured\n");
            }
            SuiteItem::Step(step) => {
                let p = &step.params;
                let dur = match step.duration {
                    DurationClass::Read => "read (--read-secs)",
                    DurationClass::Write => "write (--write-secs)",
                    DurationClass::Insert => "insert (--insert-secs)",
                };
                let _ = writeln!(
                    out,
                    "{:>3}. {}{}\n     group: {}   duration: {}   threads: {}",
                    step.order,
                    step.label,
                    if step.warm {
                        "  (warm-up, not reported)"
                    } else {
                        ""
                    },
                    step.group.name(),
                    dur,
                    if step.threads.is_some() {
                        "one per table"
                    } else {
                        "--threads"
                    },
                );
                let per = statements_per_event(p);
                let _ = writeln!(
                    out,
                    "     counts {per} statement{} per event{}{}",
                    if per == 1 { "" } else { "s" },
                    if uses_transactions(p.kind) {
                        " (BEGIN and COMMIT included)"
                    } else {
                        " (autocommit)"
                    },
                    if sent_as_text(p.kind) {
                        "; sent as plain text"
                    } else {
                        "; server-side prepared"
                    }
                );
                if p.kind == dbdelta_workload::WorkloadKind::Scan {
                    let _ = writeln!(
                        out,
                        "     reports thousands of rows scanned per second (Krows/s)"
                    );
                }
                for sql in statements(p, dialect) {
                    let sql = if sql.len() > 160 {
                        format!(
                            "{} … ({} placeholders)",
                            &sql[..120],
                            sql.matches('?').count()
                        )
                    } else {
                        sql
                    };
                    let _ = writeln!(out, "       {sql}");
                }
                out.push('\n');
            }
        }
    }
    out
}
