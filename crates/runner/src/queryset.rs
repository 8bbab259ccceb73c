//! Runs a query-set suite on every target at once: each target's setup (timed per file,
//! the corpus loader included), the catalog size of the suite's tables, then every query
//! `repeat` times in rounds. Round k runs the query on every target before round k + 1
//! runs it on any, in alternating target order (A B, B A, …), so host drift hits both
//! sides of a pair; round 0 is the cold run. A last, untimed run keeps the result's values
//! for the checksum, so the timed runs only count rows, as a client that reads every row.
//!
//! The result goes to the sink after setup and after every query: what was measured is
//! kept even if the run is cut short.

use crate::statement_limit::{connect_options, describe, limit_session};
use crate::{Progress, StopFlag};
use dbdelta_engine::{Connection, Engine, Op, Rows};
use dbdelta_model::queryset::{
    QsTarget, QueryDef, QueryRuns, QuerySetResult, SetupStep, TableBytes, TableSizeRow,
    QUERYSET_SCHEMA,
};
use dbdelta_workload::queryset::checksum::checksum;
use dbdelta_workload::queryset::corpus::Corpus;
use dbdelta_workload::queryset::{QuerySet, SqlFile};
use std::time::{Duration, Instant};

/// One target of a query-set run.
pub struct QsTargetUnderTest<'a> {
    /// Target name.
    pub name: &'a str,
    /// Engine name (selects the files' engine variants).
    pub engine_name: &'a str,
    /// The provisioned engine.
    pub engine: &'a dyn Engine,
}

/// Hands the result so far to its writer; an `Err` (the file cannot be written) ends the
/// run and is returned as it was.
pub type QsSink<'a, E> = dyn FnMut(&QuerySetResult) -> Result<(), E> + 'a;

/// Runs `set` on `targets` with `repeat` runs per query (cold run included); every setup
/// statement, loader and query is bounded by `statement_timeout` (`--statement-timeout`:
/// the server cancels it, the client stops waiting just after), and one that runs past it
/// is recorded as timed out.
pub fn run_query_set<E>(
    set: &QuerySet,
    targets: &[QsTargetUnderTest<'_>],
    repeat: u32,
    statement_timeout: Duration,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut QsSink<'_, E>,
) -> Result<QuerySetResult, E> {
    let mut result = QuerySetResult {
        schema: QUERYSET_SCHEMA,
        suite: set.name.clone(),
        description: set.description.clone(),
        origin: set.origin.display().to_string(),
        repeat_query: repeat,
        params: set.params.clone(),
        queries: set
            .queries
            .iter()
            .map(|q| QueryDef {
                name: q.sql.name.clone(),
                checksum: q.checksum,
                note: q.note.clone(),
            })
            .collect(),
        tables: set.tables.clone(),
        targets: targets
            .iter()
            .map(|t| QsTarget {
                name: t.name.to_string(),
                engine: t.engine_name.to_string(),
                setup: Vec::new(),
                tables: Vec::new(),
                queries: Vec::new(),
                error: None,
            })
            .collect(),
        interrupted: false,
    };
    // A connection per target that is still in the run.
    let mut conns: Vec<Option<Box<dyn Connection>>> = Vec::with_capacity(targets.len());
    for (t, r) in targets.iter().zip(result.targets.iter_mut()) {
        if stop.requested() {
            conns.push(None);
            continue;
        }
        progress.message(&format!("[{}] setup of {}", t.name, set.name));
        conns.push(setup_target(set, t, r, statement_timeout, stop));
    }
    sink(&result)?;
    for (qi, q) in set.queries.iter().enumerate() {
        if stop.requested() {
            break;
        }
        progress.message(&format!(
            "query {} ({}/{})",
            q.sql.name,
            qi + 1,
            set.queries.len()
        ));
        let mut runs: Vec<Option<QueryRuns>> = targets
            .iter()
            .zip(&conns)
            .map(|(t, c)| {
                let v = q.sql.for_engine(t.engine_name);
                c.as_ref().map(|_| QueryRuns {
                    name: q.sql.name.clone(),
                    file: v.map(|v| v.file.clone()).unwrap_or_default(),
                    runs_secs: Vec::new(),
                    rows: None,
                    checksum: None,
                    error: None,
                    skipped: v.is_none().then(|| {
                        format!(
                            "no queries/{}.sql or queries/{}.{}.sql",
                            q.sql.name, q.sql.name, t.engine_name
                        )
                    }),
                })
            })
            .collect();
        'rounds: for round in 0..repeat {
            let order: Vec<usize> = if round % 2 == 0 {
                (0..targets.len()).collect()
            } else {
                (0..targets.len()).rev().collect()
            };
            for ti in order {
                if stop.requested() {
                    break 'rounds;
                }
                let (Some(conn), Some(r)) = (conns[ti].as_mut(), runs[ti].as_mut()) else {
                    continue;
                };
                if r.skipped.is_some() || r.error.is_some() {
                    continue;
                }
                let Some(v) = q.sql.for_engine(targets[ti].engine_name) else {
                    continue;
                };
                let started = Instant::now();
                match conn.query(v.text.trim().trim_end_matches(';')) {
                    Ok(outcome) => {
                        r.runs_secs.push(started.elapsed().as_secs_f64());
                        r.rows = Some(outcome.rows);
                    }
                    Err(e) => {
                        r.error = Some(format!(
                            "{} (run {}): {}",
                            v.file,
                            round + 1,
                            describe(&e, statement_timeout)
                        ));
                        let _ = conn.rollback();
                    }
                }
            }
        }
        // The checksum run: untimed, keeps every value.
        let mut rows = Rows::new();
        for (ti, (conn, r)) in conns.iter_mut().zip(runs.iter_mut()).enumerate() {
            let (Some(conn), Some(r)) = (conn.as_mut(), r.as_mut()) else {
                continue;
            };
            let Some(v) = q.sql.for_engine(targets[ti].engine_name) else {
                continue;
            };
            if r.error.is_some() || r.skipped.is_some() || r.runs_secs.is_empty() {
                continue;
            }
            match conn.run_rows(&Op::Query(v.text.trim().trim_end_matches(';')), &mut rows) {
                Ok(_) => r.checksum = checksum(&rows, q.checksum),
                Err(e) => {
                    r.error = Some(format!(
                        "{} (checksum run): {}",
                        v.file,
                        describe(&e, statement_timeout)
                    ))
                }
            }
        }
        for (t, r) in result.targets.iter_mut().zip(runs) {
            if let Some(r) = r {
                t.queries.push(r);
            }
        }
        if stop.requested() {
            result.interrupted = true;
        }
        sink(&result)?;
    }
    if stop.requested() {
        result.interrupted = true;
        sink(&result)?;
    }
    Ok(result)
}

/// Connects, runs the setup files (and the loader after its file), reads the table sizes.
/// `None` when the target cannot go on; the reason is in `r.error`.
fn setup_target(
    set: &QuerySet,
    t: &QsTargetUnderTest<'_>,
    r: &mut QsTarget,
    limit: Duration,
    stop: &StopFlag,
) -> Option<Box<dyn Connection>> {
    let mut conn = match t.engine.connect_with(&connect_options(limit)) {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(format!("cannot connect: {e}"));
            return None;
        }
    };
    if let Err(e) = limit_session(conn.as_mut(), limit) {
        r.error = Some(format!(
            "cannot set the --statement-timeout on the session: {e}"
        ));
        return None;
    }
    for file in &set.setup {
        if stop.requested() {
            r.error = Some("interrupted during setup".to_string());
            return None;
        }
        if let Some(step) = run_setup_file(conn.as_mut(), file, t.engine_name, limit) {
            let failed = step.error.clone();
            r.setup.push(step);
            if let Some(e) = failed {
                r.error = Some(format!("setup failed: {e}"));
                return None;
            }
        }
        if let Some(l) = set.loader.as_ref().filter(|l| l.after == file.name) {
            let started = Instant::now();
            let mut corpus = Corpus::new(l.spec.clone());
            let step = match conn.bulk_insert(&l.spec.table, &mut corpus) {
                Ok(_) => SetupStep {
                    name: format!("loader:{}", l.spec.table),
                    secs: Some(started.elapsed().as_secs_f64()),
                    error: None,
                },
                Err(e) => SetupStep {
                    name: format!("loader:{}", l.spec.table),
                    secs: None,
                    error: Some(format!(
                        "loading {} documents into {}: {}",
                        l.spec.docs,
                        l.spec.table,
                        describe(&e, limit)
                    )),
                },
            };
            let failed = step.error.clone();
            r.setup.push(step);
            if let Some(e) = failed {
                r.error = Some(format!("setup failed: {e}"));
                return None;
            }
        }
    }
    r.tables = set
        .tables
        .iter()
        .map(|table| match conn.table_size(table) {
            Ok(size) => TableSizeRow {
                table: table.clone(),
                bytes: size.map(|s| TableBytes {
                    data: s.data_bytes,
                    index: s.index_bytes,
                    uncompressed: s.uncompressed_bytes,
                }),
                error: None,
            },
            Err(e) => TableSizeRow {
                table: table.clone(),
                bytes: None,
                error: Some(e.to_string()),
            },
        })
        .collect();
    Some(conn)
}

/// Runs one setup file's statements for `engine`; `None` when the file has no variant for it.
fn run_setup_file(
    conn: &mut dyn Connection,
    file: &SqlFile,
    engine: &str,
    limit: Duration,
) -> Option<SetupStep> {
    let v = file.for_engine(engine)?;
    let started = Instant::now();
    for st in QuerySet::statements(v) {
        if let Err(e) = conn.query(&st.sql) {
            let _ = conn.rollback();
            return Some(SetupStep {
                name: v.file.clone(),
                secs: None,
                error: Some(format!("{}:{}: {}", v.file, st.line, describe(&e, limit))),
            });
        }
    }
    Some(SetupStep {
        name: v.file.clone(),
        secs: Some(started.elapsed().as_secs_f64()),
        error: None,
    })
}
