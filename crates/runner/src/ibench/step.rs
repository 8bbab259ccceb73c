//! Runs one measured Insert Benchmark step: every client's threads, the step's wall clock
//! from the start barrier until the last insert and delete, OS metrics over that window, and
//! the [`IbenchStats`] the Insert Benchmark's reports hold.

use super::client::{self, ClientPlan, ClientShared, ThreadOut, QUEUE_DEPTH};
use crate::control::StopFlag;
use crate::cpu::gettid;
use dbdelta_engine::{Connection, Engine, EngineError};
use dbdelta_model::ibench::{sla_failed, IbenchOptions, IbenchStats, KindLatency};
use dbdelta_model::os::OsSamples;
use dbdelta_model::{Group, StepKind, StepResult, StepStatus, Throughput, ThroughputUnit};
use dbdelta_stats::{new_histogram, summarize};
use dbdelta_workload::ibench::schema::{create_indexes_sql, db_size_sql};
use dbdelta_workload::ibench::{IbenchStep, QueryKind, RowsFrom};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Row counts above which the end-of-step `count(*)` is skipped (it would take long).
const COUNT_ROWS_LIMIT: u64 = 5_000_000;

/// Everything needed to run one step on one target.
#[derive(Debug, Clone)]
pub struct StepContext<'a> {
    /// Target name.
    pub target: &'a str,
    /// The run's ibench options.
    pub opts: &'a IbenchOptions,
    /// The step.
    pub step: &'a IbenchStep,
    /// Position in the suite (1-based).
    pub order: u32,
    /// Rows inserted by l.i0 over all clients (`nr1`, for l.x's indexed rows/s).
    pub loaded_rows: u64,
    /// Sample OS metrics.
    pub os_metrics: bool,
    /// Block device override.
    pub device: Option<String>,
    /// Which share of the step's rows this run inserts ([`Share::WHOLE`] outside rounds).
    pub share: Share,
}

/// One round's share of a step split into interleaved rounds: round `round` of `of`. The
/// step's insert batches are split into `of` consecutive parts that add up to the whole
/// step's, so the rounds insert the same rows in total as the step run once. A paced step
/// (read+write) is split in whole 1-second windows of its insert rate, so its rounds also
/// last its `--query-secs` in total, each round a whole number of windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// 1-based round.
    pub round: u32,
    /// Rounds the step is split into.
    pub of: u32,
}

impl Share {
    /// The whole step in one run.
    pub const WHOLE: Share = Share { round: 1, of: 1 };

    /// Units (of `unit` batches each) before this round: `⌊units·(k−1)/R⌋`; the round runs
    /// batches `[unit·before(k), unit·before(k+1))`, cut at `total`.
    pub fn batches(self, total: u64, unit: u64) -> u64 {
        let unit = unit.max(1);
        let units = total.div_ceil(unit);
        let of = u128::from(self.of.max(1));
        let k = u128::from(self.round.clamp(1, self.of.max(1)));
        let upto = |k: u128| ((u128::from(units) * k / of) as u64 * unit).min(total);
        upto(k) - upto(k - 1)
    }
}

/// Rows per insert: `min(rows_per_commit, rate)` as the Insert Benchmark does.
fn rows_per_commit_of(step: &IbenchStep) -> u64 {
    match step.rate {
        Some(r) => step.rows_per_commit.min(u64::from(r)).max(1),
        None => step.rows_per_commit.max(1),
    }
}

/// Rows one client inserts in the whole step (`maxr`).
fn rows_per_client_of(opts: &IbenchOptions, step: &IbenchStep) -> u64 {
    match step.rows {
        Some(RowsFrom::Load) => opts.rows_load,
        Some(RowsFrom::Index) | None => rows_per_commit_of(step),
        Some(RowsFrom::Write1) => opts.rows_li1(),
        Some(RowsFrom::Write2) => opts.rows_li2(),
        Some(RowsFrom::Rate) => (opts.query_secs * f64::from(step.rate.unwrap_or(0))).ceil() as u64,
    }
}

/// Batches a round's share is counted in: one batch, or for a paced step the batches of one
/// 1-second window (the statement maker's rounds per second).
fn unit_of(step: &IbenchStep) -> u64 {
    step.rate.map_or(1, |r| {
        u64::from(r).div_ceil(rows_per_commit_of(step)).max(1)
    })
}

/// Rounds `step` splits into when `asked` for: 1 for l.x (it builds the indexes once) and a
/// settle, else `asked` but no more than the step has units (so no round is empty).
pub fn rounds_for(opts: &IbenchOptions, step: &IbenchStep, asked: u32) -> u32 {
    if step.create_indexes || step.settle {
        return 1;
    }
    let total = rows_per_client_of(opts, step).div_ceil(rows_per_commit_of(step));
    let units = total.div_ceil(unit_of(step)).max(1);
    u32::try_from(units).unwrap_or(u32::MAX).min(asked.max(1))
}

impl StepContext<'_> {
    /// Clients taking part: one for l.x on a shared table, else all.
    fn active_clients(&self) -> u32 {
        if self.opts.one_table && self.step.create_indexes {
            1
        } else {
            self.opts.clients.max(1)
        }
    }

    /// Rows per insert: `min(rows_per_commit, rate)` as the Insert Benchmark does.
    fn rows_per_commit(&self) -> u64 {
        rows_per_commit_of(self.step)
    }

    /// Rows one client inserts in the whole step (`maxr`; a round inserts its share).
    pub fn rows_per_client(&self) -> u64 {
        rows_per_client_of(self.opts, self.step)
    }

    /// Insert batches one client runs in this share of the step. l.x inserts its one batch
    /// whole: it is never split.
    pub fn batches_per_client(&self) -> u64 {
        let total = self.rows_per_client().div_ceil(self.rows_per_commit());
        if self.step.create_indexes {
            total
        } else {
            self.share.batches(total, unit_of(self.step))
        }
    }

    fn plan(&self, c: u32) -> ClientPlan {
        let tables = self.opts.tables();
        let rpc = self.rows_per_commit();
        ClientPlan {
            table: tables[(c as usize).min(tables.len() - 1)].clone(),
            rounds: self.batches_per_client(),
            rows_per_commit: rpc,
            rate: self.step.rate,
            deletes: self.step.deletes,
            queries: self.step.queries,
            seed: self.opts.seed,
            // Each round draws its own rows; round 1 (and a whole step) keeps the stream
            // of the step run once.
            stream: ((u64::from(self.share.round.saturating_sub(1))) << 40)
                | (u64::from(self.order) << 20)
                | u64::from(c),
        }
    }
}

/// A client thread's start: registers its thread id for the CPU accounting, connects, and
/// waits at the start barrier (a failed connect still meets the barrier, so no one hangs).
fn start_thread(
    tids: &Mutex<Vec<u32>>,
    engine: &dyn Engine,
    barrier: &Barrier,
) -> Result<Box<dyn Connection>, EngineError> {
    if let Ok(mut t) = tids.lock() {
        t.push(gettid());
    }
    let conn = engine.connect();
    barrier.wait();
    conn
}

/// What the three thread kinds of all clients measured.
#[derive(Default)]
struct Merged {
    inserts: Option<ThreadOut>,
    deletes: Option<ThreadOut>,
    queries: Option<ThreadOut>,
}

fn merge_into(slot: &mut Option<ThreadOut>, o: ThreadOut) {
    match slot {
        None => *slot = Some(o),
        Some(m) => {
            let _ = m.hist.add(&o.hist);
            m.statements += o.statements;
            m.rows += o.rows;
            m.retries += o.retries;
            m.finished = m.finished.max(o.finished);
        }
    }
}

enum Kind {
    Insert,
    Delete,
    Query,
}

/// Runs the step and returns its result (a failure is a result with a `Failed` status).
pub fn run_step(engine: &dyn Engine, ctx: &StepContext<'_>, stop: &StopFlag) -> StepResult {
    let clients = ctx.active_clients();
    let plans: Vec<ClientPlan> = (0..clients).map(|c| ctx.plan(c)).collect();
    // Makers, inserters and deleters: the step lasts until every client's writers have
    // ended (a paced maker sleeps out its last 1-second window, as iibench.py's
    // statement_maker does), i.e. until every client's done flag is up.
    let shared: Vec<ClientShared> = plans
        .iter()
        .map(|p| ClientShared::new(p.writers()))
        .collect();
    let abort = AtomicBool::new(false);
    let maker_end: Mutex<Option<Instant>> = Mutex::new(None);
    let connected: usize = plans
        .iter()
        .map(|p| p.writers() + usize::from(p.queries.is_some()))
        .sum();
    let barrier = Barrier::new(connected + 1);
    let tids = Arc::new(Mutex::new(Vec::<u32>::new()));
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let mut t0 = Instant::now();
    let mut os: Option<OsSamples> = None;
    let mut errors: Vec<String> = Vec::new();
    let mut merged = Merged::default();
    let mut index_end: Option<Instant> = None;
    // The server's own counters (InnoDB's or MyRocks', the handler calls) around the step:
    // read while every client waits at the barrier, and after the last has ended. A failed
    // read leaves the step without them, never fails it.
    let mut counters_before = None;

    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (c, plan) in plans.iter().enumerate() {
            let sh = &shared[c];
            let (ins_tx, ins_rx) = std::sync::mpsc::sync_channel::<String>(QUEUE_DEPTH);
            let (del_tx, del_rx) = if plan.deletes {
                let (t, r) = std::sync::mpsc::sync_channel::<()>(QUEUE_DEPTH);
                (Some(t), Some(r))
            } else {
                (None, None)
            };
            let (abort, barrier, tids) = (&abort, &barrier, &tids);
            let maker_end = &maker_end;
            // Every thread meets at the barrier once ready; the clock starts there.
            s.spawn(move || {
                // The generator's buffer is built before the clock starts.
                let gen = dbdelta_workload::ibench::rows::RowGen::new(plan.seed, plan.stream);
                barrier.wait();
                client::maker(plan, gen, ins_tx, del_tx, abort);
                if let Ok(mut m) = maker_end.lock() {
                    *m = (*m).max(Some(Instant::now()));
                }
                sh.writer_done();
            });
            let create_indexes = ctx.step.create_indexes;
            handles.push((
                Kind::Insert,
                s.spawn(
                    move || -> Result<(ThreadOut, Option<Instant>), EngineError> {
                        let conn = start_thread(tids, engine, barrier);
                        let run = || -> Result<(ThreadOut, Option<Instant>), EngineError> {
                            let mut conn = conn?;
                            let out = client::inserter(&mut *conn, plan, ins_rx, abort)?;
                            let mut ix = None;
                            if create_indexes && !abort.load(Ordering::Relaxed) {
                                for sql in create_indexes_sql(conn.dialect(), &plan.table) {
                                    conn.query(&sql)?;
                                }
                                ix = Some(Instant::now());
                            }
                            Ok((out, ix))
                        };
                        let r = run();
                        if r.is_err() {
                            abort.store(true, Ordering::SeqCst);
                        }
                        sh.writer_done();
                        r
                    },
                ),
            ));
            if let Some(del_rx) = del_rx {
                let h = s.spawn(
                    move || -> Result<(ThreadOut, Option<Instant>), EngineError> {
                        let conn = start_thread(tids, engine, barrier);
                        let r = conn
                            .and_then(|mut c| client::deleter(&mut *c, plan, del_rx, sh, abort));
                        if r.is_err() {
                            abort.store(true, Ordering::SeqCst);
                        }
                        sh.writer_done();
                        r.map(|o| (o, None))
                    },
                );
                handles.push((Kind::Delete, h));
            }
            if let Some(kind) = plan.queries {
                let h = s.spawn(
                    move || -> Result<(ThreadOut, Option<Instant>), EngineError> {
                        let conn = start_thread(tids, engine, barrier);
                        let r =
                            conn.and_then(|mut c| client::querier(&mut *c, plan, kind, sh, abort));
                        if r.is_err() {
                            abort.store(true, Ordering::SeqCst);
                        }
                        r.map(|o| (o, None))
                    },
                );
                handles.push((Kind::Query, h));
            }
        }
        counters_before = engine.counters().ok().flatten();
        barrier.wait();
        t0 = Instant::now();
        let sampler =
            crate::observe::start_sampler(engine, ctx.os_metrics, &ctx.device, Some(&tids));
        while !shared.iter().all(|c| c.done.load(Ordering::SeqCst)) {
            if stop.requested() {
                abort.store(true, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        os = sampler.map(|s| s.stop());
        for (kind, h) in handles {
            match h.join() {
                Ok(Ok((out, ix))) => {
                    if ix.is_some() {
                        index_end = index_end.max(ix);
                    }
                    let slot = match kind {
                        Kind::Insert => &mut merged.inserts,
                        Kind::Delete => &mut merged.deletes,
                        Kind::Query => &mut merged.queries,
                    };
                    merge_into(slot, out);
                }
                Ok(Err(e)) => errors.push(e.to_string()),
                Err(_) => errors.push("ibench thread panicked".to_string()),
            }
        }
    });
    let end = [
        merged.inserts.as_ref().and_then(|o| o.finished),
        merged.deletes.as_ref().and_then(|o| o.finished),
        index_end,
        maker_end.lock().ok().and_then(|m| *m),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or_else(Instant::now);
    let secs = end.saturating_duration_since(t0).as_secs_f64().max(1e-6);
    let counters_after = engine.counters().ok().flatten();
    let mut r = assemble(ctx, clients, &merged, secs, started_unix, os);
    if let (Some(a), Some(b)) = (&counters_before, &counters_after) {
        r.engine_stats = dbdelta_engine::EngineCounters::step(a, b);
    }
    if stop.requested() {
        r.status = StepStatus::Interrupted;
    }
    if let Some(first) = errors.first() {
        r.status = StepStatus::Failed {
            reason: first.clone(),
        };
        return r;
    }
    if let (Ok(mut conn), Some(stats)) = (engine.connect(), r.ibench.as_mut()) {
        if let Some(sql) = db_size_sql(conn.dialect()) {
            stats.db_bytes = conn
                .query_scalar(sql)
                .ok()
                .flatten()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|v| v as u64);
        }
        let total = ctx.loaded_rows + stats.rows_inserted;
        if total <= COUNT_ROWS_LIMIT {
            let mut sum = 0u64;
            let mut ok = true;
            for t in ctx.opts.tables() {
                match conn.query_scalar(&format!("select count(*) from {t}")) {
                    Ok(Some(v)) => sum += v.trim().parse::<u64>().unwrap_or(0),
                    _ => ok = false,
                }
            }
            stats.rows_at_end = ok.then_some(sum);
        }
    }
    r
}

fn kind_latency(o: Option<&ThreadOut>) -> (KindLatency, Histogram<u64>) {
    let h = o.map(|o| o.hist.clone()).unwrap_or_else(new_histogram);
    let s = summarize(&h);
    (
        KindLatency {
            count: s.count,
            p50_us: s.p50_us,
            p95_us: s.p95_us,
            p99_us: s.p99_us,
            max_us: s.max_us,
        },
        h,
    )
}

fn group_of(step: &IbenchStep) -> Group {
    match step.queries {
        Some(QueryKind::Range) => Group::Range,
        Some(QueryKind::Point) => Group::Point,
        None => Group::Write,
    }
}

fn assemble(
    ctx: &StepContext<'_>,
    clients: u32,
    m: &Merged,
    secs: f64,
    started_unix: f64,
    os: Option<OsSamples>,
) -> StepResult {
    let step = ctx.step;
    let mut r = StepResult::empty(
        ctx.target,
        &step.name,
        &step.name,
        ctx.order,
        group_of(step),
        StepKind::Measured,
        clients,
    );
    let count = |o: &Option<ThreadOut>| o.as_ref().map_or((0, 0), |o| (o.statements, o.rows));
    let (ins_stmts, ins_rows) = count(&m.inserts);
    let (del_stmts, del_rows) = count(&m.deletes);
    let (queries, q_rows) = count(&m.queries);
    let retries: u64 = [&m.inserts, &m.deletes, &m.queries]
        .iter()
        .filter_map(|o| o.as_ref().map(|o| o.retries))
        .sum();
    let (insert_latency, ins_hist) = kind_latency(m.inserts.as_ref());
    let (delete_latency, _) = kind_latency(m.deletes.as_ref());
    let (query_latency, q_hist) = kind_latency(m.queries.as_ref());
    let ips = ins_rows as f64 / secs;
    let qps = queries as f64 / secs;
    let target = step.rate.map(|rate| f64::from(clients) * f64::from(rate));
    let indexed = step
        .create_indexes
        .then(|| (ins_rows + ctx.loaded_rows) as f64 / secs);
    let mut stats = IbenchStats {
        clients,
        rows_inserted: ins_rows,
        rows_deleted: del_rows,
        queries,
        rows_per_commit: ctx.rows_per_commit(),
        inserts_per_s: ips,
        indexed_rows_per_s: indexed,
        queries_per_s: qps,
        deletes_per_s: del_rows as f64 / secs,
        target_insert_rate: target,
        sla_failed: target.is_some_and(|t| sla_failed(ips, t)),
        insert_latency,
        delete_latency,
        query_latency,
        ..IbenchStats::default()
    };
    if let Some(os) = &os {
        let sum = &os.summary;
        let cpu_us = sum.host.busy() / 100.0 * f64::from(sum.ncpu) * sum.seconds * 1e6;
        let cs = sum.host.cs_per_s * sum.seconds;
        // Per insert means per row of the step's insert rate: for l.x that is the indexed
        // rows (the Insert Benchmark's report normalizes by insert_rate, which includes nr1 for l.x).
        let rows = if step.create_indexes {
            ins_rows + ctx.loaded_rows
        } else {
            ins_rows
        };
        if rows > 0 {
            stats.wkb_per_insert = sum.disk.as_ref().map(|d| d.wkb_s * d.seconds / rows as f64);
            // In read+write steps the CPU is reported per query (its cpupq).
            if target.is_none() {
                stats.cpu_us_per_insert = Some(cpu_us / rows as f64);
            }
        }
        if queries > 0 {
            stats.cpu_us_per_query = Some(cpu_us / queries as f64);
        }
        let ops = if target.is_some() { queries } else { rows };
        if ops > 0 {
            stats.cs_per_op = Some(cs / ops as f64);
        }
    }
    let headline = stats.headline();
    let statements = ins_stmts + del_stmts + queries;
    r.started_unix = started_unix;
    r.seconds = secs;
    r.events = statements;
    r.queries = statements;
    r.reads = queries;
    r.writes = ins_stmts + del_stmts;
    r.rows_returned = q_rows;
    r.rows_affected = ins_rows + del_rows;
    r.errors = retries;
    r.qps = statements as f64 / secs;
    r.tps = statements as f64 / secs;
    r.throughput = Throughput {
        value: headline,
        unit: if target.is_some() {
            ThroughputUnit::Qps
        } else {
            ThroughputUnit::RowsPerSec
        },
    };
    r.latency = summarize(if target.is_some() { &q_hist } else { &ins_hist });
    if let Some(os) = os {
        r.costs = dbdelta_osmetrics::op_costs(&os.summary, headline);
        r.os = Some(os);
    }
    if statements == 0 {
        r.status = StepStatus::Failed {
            reason: "no statement completed".to_string(),
        };
    }
    r.ibench = Some(stats);
    r
}
