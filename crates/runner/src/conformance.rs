//! Conformance: runs every step of a suite for a few events through a tracing connection
//! and checks what sysbench would do — statements per event, bound keys, rows touched.
//! `dbdelta check` runs it against any target before a long run; the engine tests use it to
//! prove each engine executes every step as specified.

use dbdelta_engine::{Connection, Dialect, Engine, EngineError, Outcome, StmtId, Value};
use dbdelta_model::RunOptions;
use dbdelta_workload::schema::{ensure_ledger, load_table};
use dbdelta_workload::sysbench::{statements_per_event, Sysbench, WorkerContext};
use dbdelta_workload::{run_event, Counters, EventBuffers, Step, Suite, Workload, WorkloadKind};
use std::collections::BTreeSet;

/// A parameter as seen on the wire (text reduced to its length).
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// An integer parameter.
    Int(i64),
    /// A text parameter of this many characters.
    Text(usize),
    /// A NULL parameter.
    Null,
}

/// One statement executed through the tracing connection.
#[derive(Debug, Clone)]
pub struct Call {
    /// The SQL text (with `?` for prepared statements).
    pub sql: String,
    /// Bound parameters.
    pub params: Vec<Seen>,
    /// What it did.
    pub outcome: Outcome,
    /// Prepared (true) or plain text (false).
    pub prepared: bool,
}

/// Wraps a connection and records every statement.
pub struct Tracing {
    inner: Box<dyn Connection>,
    sqls: Vec<String>,
    /// Calls since the last `take`.
    pub calls: Vec<Call>,
}

impl Tracing {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Connection>) -> Self {
        Tracing {
            inner,
            sqls: Vec::new(),
            calls: Vec::new(),
        }
    }
}

impl Connection for Tracing {
    fn into_session(
        self: Box<Self>,
    ) -> Result<dbdelta_engine::SessionParts, Box<dyn dbdelta_engine::Connection>> {
        Err(self)
    }

    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn prepare(&mut self, sql: &str) -> Result<StmtId, EngineError> {
        let id = self.inner.prepare(sql)?;
        if self.sqls.len() <= id.0 as usize {
            self.sqls.resize(id.0 as usize + 1, String::new());
        }
        self.sqls[id.0 as usize] = sql.to_string();
        Ok(id)
    }
    fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<Outcome, EngineError> {
        let outcome = self.inner.execute(stmt, params)?;
        self.calls.push(Call {
            sql: self.sqls.get(stmt.0 as usize).cloned().unwrap_or_default(),
            params: params
                .iter()
                .map(|p| match p {
                    Value::Int(i) => Seen::Int(*i),
                    Value::Text(t) => Seen::Text(t.chars().count()),
                    Value::Null => Seen::Null,
                })
                .collect(),
            outcome,
            prepared: true,
        });
        Ok(outcome)
    }
    fn query(&mut self, sql: &str) -> Result<Outcome, EngineError> {
        let outcome = self.inner.query(sql)?;
        self.calls.push(Call {
            sql: sql.to_string(),
            params: Vec::new(),
            outcome,
            prepared: false,
        });
        Ok(outcome)
    }
    fn batch(&mut self, sql: &str) -> Result<(), EngineError> {
        self.inner.batch(sql)
    }
    fn query_scalar(&mut self, sql: &str) -> Result<Option<String>, EngineError> {
        self.inner.query_scalar(sql)
    }
    fn bulk_insert(
        &mut self,
        table: &str,
        rows: &mut dyn dbdelta_engine::RowSource,
    ) -> Result<u64, EngineError> {
        self.inner.bulk_insert(table, rows)
    }
    fn rollback(&mut self) -> Result<(), EngineError> {
        self.inner.rollback()
    }
}

/// The verdict for one step.
#[derive(Debug, Clone)]
pub struct StepCheck {
    /// Step label.
    pub label: String,
    /// Events run.
    pub events: u32,
    /// Statements per event observed (all events agree, else the first mismatch).
    pub statements_per_event: u32,
    /// What was checked and held, e.g. "101 rows per full range".
    pub facts: Vec<String>,
    /// Violations; empty = conforming.
    pub problems: Vec<String>,
}

/// Loads the tables and checks `events` events of every step of `suite`, in suite order.
pub fn check_suite(
    engine: &dyn Engine,
    suite: &Suite,
    opts: &RunOptions,
    events: u32,
) -> Result<Vec<StepCheck>, EngineError> {
    {
        let mut conn = engine.connect()?;
        ensure_ledger(&mut *conn)?;
        for t in 1..=opts.tables {
            load_table(&mut *conn, t, opts.table_size, opts.seed, true)?;
        }
    }
    let mut out = Vec::new();
    for step in suite.steps() {
        if !opts.steps.is_empty() && !opts.steps.iter().any(|g| step.matches(g)) {
            continue;
        }
        out.push(check_step(engine, step, opts, events)?);
    }
    Ok(out)
}

fn ints(c: &Call) -> Vec<i64> {
    c.params
        .iter()
        .filter_map(|p| match p {
            Seen::Int(i) => Some(*i),
            Seen::Text(_) | Seen::Null => None,
        })
        .collect()
}

/// Runs `events` events of one step on a fresh connection and checks them.
pub fn check_step(
    engine: &dyn Engine,
    step: &Step,
    opts: &RunOptions,
    events: u32,
) -> Result<StepCheck, EngineError> {
    if step.params.kind.dataset() != dbdelta_workload::suite::Dataset::Sbtest {
        return Err(EngineError::config(format!(
            "{}: conformance checks cover the sysbench steps; YCSB's and db_bench's generators are checked by their unit tests",
            step.label
        )));
    }
    let mut conn = Tracing::new(engine.connect()?);
    let ctx = WorkerContext {
        tables: opts.tables,
        table_size: opts.table_size,
        seed: opts.seed,
        stream: 0xC0FFEE + u64::from(step.order),
        worker: 0,
        dialect: conn.dialect(),
    };
    let p = &step.params;
    let mut w = Sysbench::new(p.clone(), ctx);
    w.prepare(&mut conn)?;
    let n = opts.table_size as i64;
    let mut check = StepCheck {
        label: step.label.clone(),
        events,
        statements_per_event: 0,
        facts: Vec::new(),
        problems: Vec::new(),
    };
    let expected = statements_per_event(p);
    let mut hot_sets = BTreeSet::new();
    let mut full_ranges = 0;
    let mut buffers = EventBuffers::default();
    for e in 0..events {
        conn.calls.clear();
        let mut counters = Counters::default();
        run_event(&mut w, &mut conn, &mut buffers, &mut counters, 1).result?;
        let calls = std::mem::take(&mut conn.calls);
        let got = calls.len() as u32;
        if e == 0 {
            check.statements_per_event = got;
        }
        if got != expected || counters.queries != u64::from(expected) {
            check.problems.push(format!(
                "event {e}: {got} statements ({} counted), expected {expected}",
                counters.queries
            ));
            continue;
        }
        let in_range = |ids: &[i64]| ids.iter().all(|i| (1..=n).contains(i));
        let main = &calls[0];
        match p.kind {
            WorkloadKind::PointSelect => {
                if !in_range(&ints(main)) || main.outcome.rows > 1 {
                    check
                        .problems
                        .push(format!("event {e}: point select {:?}", main.params));
                }
            }
            WorkloadKind::InlistSelect | WorkloadKind::PointsCovered => {
                let ids = ints(main);
                if ids.len() != p.points as usize || !in_range(&ids) {
                    check.problems.push(format!(
                        "event {e}: bound {} ids (expected {} in [1,{n}])",
                        ids.len(),
                        p.points
                    ));
                }
                if p.hot {
                    hot_sets.insert(ids.clone());
                    let first = n / 2 + 1;
                    let want: Vec<i64> = (first..first + i64::from(p.points)).collect();
                    if ids != want || main.outcome.rows != u64::from(p.points) {
                        check.problems.push(format!(
                            "event {e}: hot ids {:?}… returned {} rows",
                            ids.first(),
                            main.outcome.rows
                        ));
                    }
                } else if p.on_id {
                    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
                    if main.outcome.rows > distinct.len() as u64 {
                        check.problems.push(format!(
                            "event {e}: {} rows for {} distinct ids",
                            main.outcome.rows,
                            distinct.len()
                        ));
                    }
                }
            }
            WorkloadKind::RangeCovered => {
                let b = ints(main);
                if b.len() != 2 || b[1] - b[0] != i64::from(p.points) {
                    check.problems.push(format!("event {e}: bounds {b:?}"));
                } else if p.on_id && b[1] <= n {
                    full_ranges += 1;
                    if main.outcome.rows != u64::from(p.points) + 1 {
                        check.problems.push(format!(
                            "event {e}: BETWEEN {} AND {} returned {} rows, expected {}",
                            b[0],
                            b[1],
                            main.outcome.rows,
                            p.points + 1
                        ));
                    }
                }
            }
            WorkloadKind::ReadOnly | WorkloadKind::ReadWrite => {
                let widths: Vec<i64> = calls
                    .iter()
                    .filter(|c| c.sql.contains("BETWEEN"))
                    .map(|c| {
                        let b = ints(c);
                        b[1] - b[0] + 1
                    })
                    .collect();
                if widths.iter().any(|w| *w != i64::from(p.range)) {
                    check
                        .problems
                        .push(format!("event {e}: range widths {widths:?} != {}", p.range));
                }
                if calls[0].sql != "BEGIN" || calls[calls.len() - 1].sql != "COMMIT" {
                    check
                        .problems
                        .push(format!("event {e}: not BEGIN … COMMIT"));
                }
            }
            WorkloadKind::UpdateInlist => {
                let ids = ints(main);
                let text = main.params.first();
                let distinct: BTreeSet<i64> = ids.iter().copied().collect();
                if ids.len() != p.points as usize
                    || text != Some(&Seen::Text(119))
                    || main.outcome.affected != distinct.len() as u64
                {
                    check.problems.push(format!(
                        "event {e}: {} ids, c={text:?}, {} rows changed",
                        ids.len(),
                        main.outcome.affected
                    ));
                }
            }
            WorkloadKind::UpdateIndex | WorkloadKind::UpdateNonindex => {
                let ids = ints(main);
                if let Some(one) = p.table_size {
                    if ids != vec![one as i64] {
                        check
                            .problems
                            .push(format!("event {e}: update-one bound {ids:?}"));
                    }
                }
                if !in_range(&ids) || main.outcome.affected > 1 {
                    check.problems.push(format!(
                        "event {e}: id {ids:?} changed {} rows",
                        main.outcome.affected
                    ));
                }
            }
            WorkloadKind::WriteOnly => {
                let del = calls.iter().find(|c| c.sql.starts_with("DELETE"));
                let ins = calls.iter().find(|c| c.sql.starts_with("INSERT"));
                match (del, ins) {
                    (Some(d), Some(i)) if ints(d)[0] == ints(i)[0] => {}
                    _ => check
                        .problems
                        .push(format!("event {e}: delete/insert ids differ")),
                }
            }
            WorkloadKind::Delete => {
                if main.outcome.affected > 1 {
                    check
                        .problems
                        .push(format!("event {e}: delete changed >1 row"));
                }
            }
            WorkloadKind::Insert => {
                if main.prepared || main.outcome.affected != 1 {
                    check.problems.push(format!(
                        "event {e}: insert prepared={} changed {} rows",
                        main.prepared, main.outcome.affected
                    ));
                }
            }
            WorkloadKind::Scan => {
                if main.prepared || main.outcome.rows != 0 {
                    check
                        .problems
                        .push(format!("event {e}: scan returned rows"));
                }
            }
            // Refused above: conformance covers sysbench's kinds.
            WorkloadKind::YcsbA
            | WorkloadKind::YcsbB
            | WorkloadKind::YcsbC
            | WorkloadKind::YcsbD
            | WorkloadKind::YcsbE
            | WorkloadKind::YcsbF
            | WorkloadKind::Fillseq
            | WorkloadKind::Readrandom
            | WorkloadKind::Fwdrange
            | WorkloadKind::Revrange
            | WorkloadKind::Multireadrandom
            | WorkloadKind::Overwrite
            | WorkloadKind::Overwritesome
            | WorkloadKind::Readwhilewriting
            | WorkloadKind::Fwdrangewhilewriting
            | WorkloadKind::Revrangewhilewriting
            | WorkloadKind::TpcbLike
            | WorkloadKind::SimpleUpdate
            | WorkloadKind::SelectOnly
            | WorkloadKind::Tpcc => {}
        }
    }
    check.facts.push(format!("{expected} statements per event"));
    if p.hot && hot_sets.len() == 1 {
        check
            .facts
            .push(format!("always the same {} hot ids", p.points));
    }
    if full_ranges > 0 {
        check.facts.push(format!(
            "{} rows per full range ({full_ranges} events)",
            p.points + 1
        ));
    }
    if let Some(one) = p.table_size {
        check.facts.push(format!("always id {one}"));
    }
    Ok(check)
}
