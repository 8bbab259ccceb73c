//! The sysbench statements (sysbench's oltp_common.lua and the oltp_*.lua scripts) as one
//! native workload per worker: statements are prepared once per connection and table,
//! parameters are generated into reused buffers. Also sysbench as a benchmark the runner
//! asks (its tables and their load).

use crate::benchmark::{
    load_parallel, Benchmark, Carry, LoadError, StepSetup, StepWorkload, TerminalSetup,
};
use crate::rng::{KeyDist, Rng, Zipf, C_TEMPLATE, PAD_TEMPLATE, ZIPF_EXPONENT};
use crate::schema::{check_owned, ensure_ledger, load_table};
use crate::suite::{Dataset, WorkloadKind, WorkloadParams};
use crate::Workload;
use dbdelta_engine::{Connection, Dialect, Engine, EngineError, OpBatch, StmtId};
use dbdelta_model::RunOptions;
use std::fmt::Write;
use std::sync::Arc;

/// What a worker needs to know to build its workload.
#[derive(Debug, Clone)]
pub struct WorkerContext {
    /// Number of sbtest tables.
    pub tables: u32,
    /// Rows per table.
    pub table_size: u64,
    /// Run seed.
    pub seed: u64,
    /// Independent random stream of this worker (derived from step and worker index).
    pub stream: u64,
    /// 0-based worker index (scan picks its table from it).
    pub worker: u32,
    /// Dialect of the connection.
    pub dialect: Dialect,
}

/// Statement handles of one table.
#[derive(Debug, Default, Clone)]
struct TableStmts {
    point: Option<StmtId>,
    list: Option<StmtId>,
    simple: Option<StmtId>,
    sum: Option<StmtId>,
    order: Option<StmtId>,
    distinct: Option<StmtId>,
    index_update: Option<StmtId>,
    nonindex_update: Option<StmtId>,
    delete: Option<StmtId>,
    insert: Option<StmtId>,
}

/// One worker's sysbench workload.
pub struct Sysbench {
    p: WorkloadParams,
    ctx: WorkerContext,
    rng: Rng,
    keys: KeyDist,
    /// Uniform over the real table size: `k` values, insert keys.
    size: i64,
    stmts: Vec<TableStmts>,
    ids: Vec<i64>,
    c: String,
    pad: String,
}

const POINT: &str = "SELECT c FROM sbtest{t} WHERE id=?";
const SIMPLE_RANGE: &str = "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?";
const SUM_RANGE: &str = "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?";
const ORDER_RANGE: &str = "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c";
const DISTINCT_RANGE: &str = "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c";
const INDEX_UPDATE: &str = "UPDATE sbtest{t} SET k=k+1 WHERE id=?";
const NONINDEX_UPDATE: &str = "UPDATE sbtest{t} SET c=? WHERE id=?";
const DELETE: &str = "DELETE FROM sbtest{t} WHERE id=?";
const INSERT_WITH_ID: &str = "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)";

fn marks(n: u32) -> String {
    vec!["?"; n as usize].join(", ")
}

/// The SQL text of each statement a step uses, with `{t}` standing for the table number.
pub fn statements(p: &WorkloadParams, dialect: Dialect) -> Vec<String> {
    let col = if p.on_id { "id" } else { "k" };
    let proj = match (p.on_id, p.covered) {
        (true, true) => "id",
        (true, false) => "id, c",
        (false, true) => "k",
        (false, false) => "k, c",
    };
    let point = POINT.to_string();
    let ranges = |p: &WorkloadParams| {
        let mut v = Vec::new();
        if p.simple_ranges > 0 {
            v.push(SIMPLE_RANGE.to_string());
        }
        if p.sum_ranges > 0 {
            v.push(SUM_RANGE.to_string());
        }
        if p.order_ranges > 0 {
            v.push(ORDER_RANGE.to_string());
        }
        if p.distinct_ranges > 0 {
            v.push(DISTINCT_RANGE.to_string());
        }
        v
    };
    let dml = || {
        [INDEX_UPDATE, NONINDEX_UPDATE, DELETE, INSERT_WITH_ID]
            .map(String::from)
            .to_vec()
    };
    match p.kind {
        WorkloadKind::PointSelect => vec![point],
        WorkloadKind::InlistSelect => vec![format!(
            "SELECT c FROM sbtest{{t}} WHERE id IN ({})",
            marks(p.points)
        )],
        WorkloadKind::PointsCovered => vec![format!(
            "SELECT {proj} FROM sbtest{{t}} WHERE {col} IN ({})",
            marks(p.points)
        )],
        WorkloadKind::RangeCovered => {
            vec![format!(
                "SELECT {proj} FROM sbtest{{t}} WHERE {col} BETWEEN ? AND ?"
            )]
        }
        WorkloadKind::ReadOnly => {
            let mut v = vec!["BEGIN".to_string()];
            if p.point_selects > 0 {
                v.push(point);
            }
            v.extend(ranges(p));
            v.push("COMMIT".into());
            v
        }
        WorkloadKind::Scan => vec!["SELECT * from sbtest{t} WHERE LENGTH(c) < 0".to_string()],
        WorkloadKind::UpdateInlist => vec![format!(
            "UPDATE sbtest{{t}} set c=? WHERE id IN ({})",
            marks(p.points)
        )],
        WorkloadKind::UpdateIndex => vec![INDEX_UPDATE.to_string()],
        WorkloadKind::UpdateNonindex => vec![NONINDEX_UPDATE.to_string()],
        WorkloadKind::WriteOnly => {
            let mut v = vec!["BEGIN".to_string()];
            v.extend(dml());
            v.push("COMMIT".into());
            v
        }
        WorkloadKind::ReadWrite => {
            let mut v = vec!["BEGIN".to_string(), point];
            v.extend(ranges(p));
            v.extend(dml());
            v.push("COMMIT".into());
            v
        }
        WorkloadKind::Delete => vec![DELETE.to_string()],
        WorkloadKind::Insert => vec![if dialect == Dialect::Mysql {
            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (0, <k>, '<c>', '<pad>')".to_string()
        } else {
            "INSERT INTO sbtest{t} (k, c, pad) VALUES (<k>, '<c>', '<pad>')".to_string()
        }],
        // YCSB's and db_bench's kinds send key-value operations, not sbtest statements.
        _ => Vec::new(),
    }
}

/// The error for a non-sysbench kind handed to the sysbench workload (a runner defect).
fn not_sysbench(kind: WorkloadKind) -> EngineError {
    EngineError::config(format!("{kind:?} is not a sysbench workload"))
}

/// Statements counted per event (sysbench's `queries` per transaction).
pub fn statements_per_event(p: &WorkloadParams) -> u32 {
    let ranges = p.simple_ranges + p.sum_ranges + p.order_ranges + p.distinct_ranges;
    match p.kind {
        WorkloadKind::ReadOnly => 2 + p.point_selects + ranges,
        WorkloadKind::WriteOnly => 6,
        WorkloadKind::ReadWrite => 2 + p.point_selects + ranges + 4,
        _ => 1,
    }
}

/// True for workloads that wrap each event in BEGIN … COMMIT.
pub fn uses_transactions(kind: WorkloadKind) -> bool {
    matches!(
        kind,
        WorkloadKind::ReadOnly | WorkloadKind::WriteOnly | WorkloadKind::ReadWrite
    )
}

/// How statements of the step are sent: prepared, or plain text like sysbench's insert/scan.
pub fn sent_as_text(kind: WorkloadKind) -> bool {
    matches!(kind, WorkloadKind::Scan | WorkloadKind::Insert)
}

impl Sysbench {
    /// A worker's workload for the step parameters `p`.
    pub fn new(p: WorkloadParams, ctx: WorkerContext) -> Self {
        let size = ctx.table_size.max(1) as i64;
        let key_n = p.table_size.map(|n| n as i64).unwrap_or(size);
        let keys = if p.zipfian {
            KeyDist::Zipfian(Zipf::new(key_n as u64, ZIPF_EXPONENT))
        } else {
            KeyDist::Uniform(key_n)
        };
        Sysbench {
            rng: Rng::new(ctx.seed, ctx.stream),
            keys,
            size,
            stmts: Vec::new(),
            ids: Vec::with_capacity(p.points as usize * 2 + 2),
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
            p,
            ctx,
        }
    }

    #[inline]
    fn table_num(&mut self) -> usize {
        (self.rng.uniform(1, i64::from(self.ctx.tables)) - 1) as usize
    }

    #[inline]
    fn get_id(&mut self) -> i64 {
        self.keys.key(&mut self.rng)
    }

    fn range_width(&self) -> i64 {
        i64::from(self.p.range)
    }
}

fn stmt(s: Option<StmtId>) -> Result<StmtId, EngineError> {
    s.ok_or_else(|| EngineError::statement("statement was not prepared"))
}

impl Workload for Sysbench {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError> {
        let list_sql = statements(&self.p, self.ctx.dialect).swap_remove(0);
        let p = self.p.clone();
        for t in 1..=self.ctx.tables {
            let mut prep = |sql: &str| -> Result<Option<StmtId>, EngineError> {
                conn.prepare(&sql.replace("{t}", &t.to_string())).map(Some)
            };
            let mut ts = TableStmts::default();
            let transactional = matches!(p.kind, WorkloadKind::ReadOnly | WorkloadKind::ReadWrite);
            match p.kind {
                WorkloadKind::PointSelect => ts.point = prep(POINT)?,
                WorkloadKind::InlistSelect
                | WorkloadKind::PointsCovered
                | WorkloadKind::RangeCovered
                | WorkloadKind::UpdateInlist => ts.list = prep(&list_sql)?,
                WorkloadKind::UpdateIndex => ts.index_update = prep(INDEX_UPDATE)?,
                WorkloadKind::UpdateNonindex => ts.nonindex_update = prep(NONINDEX_UPDATE)?,
                WorkloadKind::Delete => ts.delete = prep(DELETE)?,
                WorkloadKind::Scan | WorkloadKind::Insert => {}
                WorkloadKind::ReadOnly | WorkloadKind::ReadWrite | WorkloadKind::WriteOnly => {}
                kind => return Err(not_sysbench(kind)),
            }
            if transactional {
                if p.point_selects > 0 {
                    ts.point = prep(POINT)?;
                }
                if p.simple_ranges > 0 {
                    ts.simple = prep(SIMPLE_RANGE)?;
                }
                if p.sum_ranges > 0 {
                    ts.sum = prep(SUM_RANGE)?;
                }
                if p.order_ranges > 0 {
                    ts.order = prep(ORDER_RANGE)?;
                }
                if p.distinct_ranges > 0 {
                    ts.distinct = prep(DISTINCT_RANGE)?;
                }
            }
            if matches!(p.kind, WorkloadKind::ReadWrite | WorkloadKind::WriteOnly) {
                ts.index_update = prep(INDEX_UPDATE)?;
                ts.nonindex_update = prep(NONINDEX_UPDATE)?;
                ts.delete = prep(DELETE)?;
                ts.insert = prep(INSERT_WITH_ID)?;
            }
            self.stmts.push(ts);
        }
        Ok(())
    }

    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        match self.p.kind {
            WorkloadKind::PointSelect => {
                let t = self.table_num();
                let id = self.get_id();
                ops.execute(stmt(self.stmts[t].point)?).int(id);
            }
            WorkloadKind::InlistSelect | WorkloadKind::PointsCovered => {
                let t = self.table_num();
                let s = stmt(self.stmts[t].list)?;
                if self.p.hot {
                    let hot = self.size / 2;
                    let mut w = ops.execute(s);
                    for i in 1..=i64::from(self.p.points) {
                        w.int(hot + i);
                    }
                } else {
                    self.fill_ids();
                    let mut w = ops.execute(s);
                    for id in &self.ids {
                        w.int(*id);
                    }
                }
            }
            WorkloadKind::RangeCovered => {
                let t = self.table_num();
                let x = self.get_id();
                let hi = x + i64::from(self.p.points);
                ops.execute(stmt(self.stmts[t].list)?).int(x).int(hi);
            }
            WorkloadKind::ReadOnly => {
                ops.query("BEGIN");
                self.point_selects(ops)?;
                self.ranges(ops)?;
                ops.query("COMMIT");
            }
            WorkloadKind::ReadWrite => {
                ops.query("BEGIN");
                self.point_selects(ops)?;
                self.ranges(ops)?;
                self.dml(ops)?;
                ops.query("COMMIT");
            }
            WorkloadKind::WriteOnly => {
                ops.query("BEGIN");
                self.dml(ops)?;
                ops.query("COMMIT");
            }
            WorkloadKind::Scan => {
                let t = self.ctx.worker % self.ctx.tables + 1;
                ops.query_with(|q| {
                    let _ = write!(q, "SELECT * from sbtest{t} WHERE LENGTH(c) < 0");
                });
            }
            WorkloadKind::UpdateInlist => {
                let t = self.table_num();
                self.rng.fill_template(C_TEMPLATE, &mut self.c);
                self.fill_ids();
                let mut w = ops.execute(stmt(self.stmts[t].list)?);
                w.text(&self.c);
                for id in &self.ids {
                    w.int(*id);
                }
            }
            WorkloadKind::UpdateIndex => {
                let t = self.table_num();
                let id = self.get_id();
                ops.execute(stmt(self.stmts[t].index_update)?).int(id);
            }
            WorkloadKind::UpdateNonindex => {
                let t = self.table_num();
                let id = self.get_id();
                self.rng.fill_template(C_TEMPLATE, &mut self.c);
                ops.execute(stmt(self.stmts[t].nonindex_update)?)
                    .text(&self.c)
                    .int(id);
            }
            WorkloadKind::Delete => {
                let t = self.table_num();
                let id = self.get_id();
                ops.execute(stmt(self.stmts[t].delete)?).int(id);
            }
            WorkloadKind::Insert => {
                let t = self.table_num() + 1;
                let k = self.rng.uniform(1, self.size);
                self.rng.fill_template(C_TEMPLATE, &mut self.c);
                self.rng.fill_template(PAD_TEMPLATE, &mut self.pad);
                let (c, pad) = (&self.c, &self.pad);
                if self.ctx.dialect == Dialect::Mysql {
                    ops.query_with(|q| {
                        let _ = write!(
                            q,
                            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (0, {k}, '{c}', '{pad}')"
                        );
                    });
                } else {
                    ops.query_with(|q| {
                        let _ = write!(
                            q,
                            "INSERT INTO sbtest{t} (k, c, pad) VALUES ({k}, '{c}', '{pad}')"
                        );
                    });
                }
            }
            kind => return Err(not_sysbench(kind)),
        }
        Ok(())
    }

    fn uses_transactions(&self) -> bool {
        uses_transactions(self.p.kind)
    }
}

impl Sysbench {
    /// Draws `points` keys into `ids`.
    fn fill_ids(&mut self) {
        self.ids.clear();
        for _ in 0..self.p.points {
            let id = self.get_id();
            self.ids.push(id);
        }
    }

    fn point_selects(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        if self.p.point_selects == 0 {
            return Ok(());
        }
        let t = self.table_num();
        let s = stmt(self.stmts[t].point)?;
        for _ in 0..self.p.point_selects {
            let id = self.get_id();
            ops.execute(s).int(id);
        }
        Ok(())
    }

    fn ranges(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        let plan = [
            (self.p.simple_ranges, 0usize),
            (self.p.sum_ranges, 1),
            (self.p.order_ranges, 2),
            (self.p.distinct_ranges, 3),
        ];
        for (count, which) in plan {
            if count == 0 {
                continue;
            }
            // Each range type picks its own table once (sysbench's execute_range).
            let t = self.table_num();
            let ts = &self.stmts[t];
            let s = stmt(match which {
                0 => ts.simple,
                1 => ts.sum,
                2 => ts.order,
                _ => ts.distinct,
            })?;
            for _ in 0..count {
                let x = self.get_id();
                let hi = x + self.range_width() - 1;
                ops.execute(s).int(x).int(hi);
            }
        }
        Ok(())
    }

    fn dml(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        let t = self.table_num();
        let id = self.get_id();
        ops.execute(stmt(self.stmts[t].index_update)?).int(id);
        let t = self.table_num();
        let id = self.get_id();
        self.rng.fill_template(C_TEMPLATE, &mut self.c);
        ops.execute(stmt(self.stmts[t].nonindex_update)?)
            .text(&self.c)
            .int(id);
        // Delete and re-insert the same id in one table (execute_delete_inserts).
        let t = self.table_num();
        let id = self.get_id();
        let k = self.get_id();
        self.rng.fill_template(C_TEMPLATE, &mut self.c);
        self.rng.fill_template(PAD_TEMPLATE, &mut self.pad);
        ops.execute(stmt(self.stmts[t].delete)?).int(id);
        ops.execute(stmt(self.stmts[t].insert)?)
            .int(id)
            .int(k)
            .text(&self.c)
            .text(&self.pad);
        Ok(())
    }
}

/// sysbench's benchmark: the `sbtest1…N` tables, loaded in parallel (sysbench's
/// `prepare`), and one [`Sysbench`] terminal per worker.
#[derive(Debug, Clone, Copy)]
pub struct SysbenchBenchmark;

impl Benchmark for SysbenchBenchmark {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    fn dataset(&self) -> Dataset {
        Dataset::Sbtest
    }

    fn load_summary(&self, opts: &RunOptions) -> Option<String> {
        Some(format!(
            "{} table(s) x {} rows",
            opts.tables, opts.table_size
        ))
    }

    fn tables(&self, opts: &RunOptions) -> Vec<String> {
        (1..=opts.tables).map(|t| format!("sbtest{t}")).collect()
    }

    fn loaded_rows(&self, opts: &RunOptions) -> u64 {
        u64::from(opts.tables) * opts.table_size
    }

    /// Creates and loads every table: one connection per table, at most
    /// [`crate::benchmark::LOAD_PARALLEL`], for servers; one after another for embedded
    /// engines, whose writers serialize anyway.
    fn load(&self, engine: &dyn Engine, opts: &RunOptions) -> Result<u64, LoadError> {
        {
            let mut conn = engine.connect()?;
            // Every table is checked before the ledger is written: a refused database
            // keeps no trace of dbdelta.
            for t in 1..=opts.tables {
                check_owned(&mut *conn, &format!("sbtest{t}"), opts.i_own_this_database)?;
            }
            ensure_ledger(&mut *conn)?;
        }
        load_parallel(engine, u64::from(opts.tables), &|c, part| {
            let t = part as u32 + 1;
            load_table(c, t, opts.table_size, opts.seed, opts.i_own_this_database).map(|l| l.rows)
        })
    }

    fn step(&self, setup: &StepSetup<'_>, _: &Carry) -> Arc<dyn StepWorkload> {
        Arc::new(SysbenchStep::new(
            setup.step.params.clone(),
            setup.opts.tables,
            setup.opts.table_size,
        ))
    }
}

/// What a sysbench step's terminals share: the step's parameters and the tables' sizes.
#[derive(Debug, Clone)]
pub struct SysbenchStep {
    params: WorkloadParams,
    tables: u32,
    table_size: u64,
}

impl SysbenchStep {
    /// A step with `params` on `tables` tables of `table_size` rows.
    pub fn new(params: WorkloadParams, tables: u32, table_size: u64) -> Self {
        SysbenchStep {
            params,
            tables,
            table_size,
        }
    }
}

impl StepWorkload for SysbenchStep {
    fn terminal(&self, t: &TerminalSetup) -> Box<dyn Workload> {
        Box::new(Sysbench::new(
            self.params.clone(),
            WorkerContext {
                tables: self.tables,
                table_size: self.table_size,
                seed: t.seed,
                stream: t.stream,
                worker: t.worker,
                dialect: t.dialect,
            },
        ))
    }
}
