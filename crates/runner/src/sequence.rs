//! Runs a suite's sequence against one target: load, settle, measured steps at every thread
//! count. Each result goes to the sink the moment it exists, so nothing measured is lost.

use crate::connect::ConnectPlan;
use crate::control::StopFlag;
use crate::measure::{measure_step, StepPlan};
use crate::progress::Progress;
use crate::turns::{Turn, Turns};
use dbdelta_engine::{Engine, EngineError, SettleWait};
use dbdelta_model::{
    Group, RunOptions, StepKind, StepResult, StepStatus, Throughput, ThroughputUnit,
};
use dbdelta_workload::dbbench::{DbBenchConfig, DbBenchShared};
use dbdelta_workload::schema::{ensure_ledger, load_table};
use dbdelta_workload::suite::{Dataset, ThreadsRule};
use dbdelta_workload::tpcb::TpcbConfig;
use dbdelta_workload::tpcc::TpccConfig;
use dbdelta_workload::ycsb::{Mix, YcsbConfig, YcsbShared};
use dbdelta_workload::{Action, DurationClass, Step, Suite, SuiteItem};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// CPU profiling of one target's measured steps (`dbdelta run --profile`).
#[derive(Debug, Clone)]
pub struct TargetProfiling {
    /// perf's path (checked before the run).
    pub perf: PathBuf,
    /// `profiles/<target>` in the run directory.
    pub dir: PathBuf,
    /// Frequency, call graphs and the steps to profile.
    pub settings: dbdelta_profile::ProfileSettings,
}

/// How a target's sequence ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetOutcome {
    /// Every selected step ran (some may have failed; their results say so).
    Complete,
    /// Stopped by a stop request.
    Interrupted,
    /// The load failed, so no step could run.
    LoadFailed(String),
}

/// Why the sink could not keep a result (e.g. disk full): the run must stop.
pub type SinkError = String;

/// The steps of `suite` that `opts.steps` selects (all when it is empty).
pub fn selected<'a>(suite: &'a Suite, opts: &RunOptions) -> Vec<&'a Step> {
    suite
        .steps()
        .filter(|s| opts.steps.is_empty() || opts.steps.iter().any(|g| s.matches(g)))
        .collect()
}

fn action_result(
    target: &str,
    order: u32,
    kind: StepKind,
    label: &str,
    status: StepStatus,
    seconds: f64,
    rows: u64,
) -> StepResult {
    let mut r = StepResult::empty(target, label, label, order, Group::Write, kind, 1);
    r.status = status;
    r.seconds = seconds;
    r.started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() - seconds)
        .unwrap_or(0.0);
    if kind == StepKind::Load {
        r.rows_affected = rows;
        r.events = rows;
        r.throughput = Throughput {
            value: if seconds > 0.0 {
                rows as f64 / seconds
            } else {
                0.0
            },
            unit: ThroughputUnit::RowsPerSec,
        };
    }
    r
}

/// Creates and loads every table: in parallel (one connection per table, at most 8) for
/// servers, one after another for embedded engines whose writers serialize anyway.
fn load(engine: &dyn Engine, opts: &RunOptions, i_own: bool) -> Result<(u64, f64), EngineError> {
    let start = Instant::now();
    {
        let mut conn = engine.connect()?;
        ensure_ledger(&mut *conn)?;
    }
    let rows = load_parallel(engine, u64::from(opts.tables), &|c, part| {
        let t = part as u32 + 1;
        load_table(c, t, opts.table_size, opts.seed, i_own).map(|l| l.rows)
    })?;
    Ok((rows, start.elapsed().as_secs_f64()))
}

/// YCSB's load phase on one connection: records in hashed key order.
fn load_usertable(engine: &dyn Engine, opts: &RunOptions) -> Result<(u64, f64), EngineError> {
    let start = Instant::now();
    let mut conn = engine.connect()?;
    // The load's mix is irrelevant: only the record layout matters.
    let config = YcsbConfig::new(Mix::A, opts.table_size);
    let rows =
        dbdelta_workload::ycsb::load(&mut *conn, &config, opts.seed, opts.i_own_this_database)?;
    Ok((rows, start.elapsed().as_secs_f64()))
}

/// Tries of a TPC-C transaction unless `--max-tries` says otherwise.
const DEFAULT_TPCC_TRIES: u32 = 10;

/// Connections a load uses at most (sysbench's tables, pgbench's account ranges, TPC-C's
/// warehouses).
const LOAD_PARALLEL: u64 = 8;

/// Runs `work` over the parts `0..parts` on up to [`LOAD_PARALLEL`] connections (one for
/// embedded engines, whose writers serialize anyway); returns the rows loaded.
fn load_parallel(
    engine: &dyn Engine,
    parts: u64,
    work: &(dyn Fn(&mut dyn dbdelta_engine::Connection, u64) -> Result<u64, EngineError> + Sync),
) -> Result<u64, EngineError> {
    let n = if engine.embedded() {
        1
    } else {
        parts.clamp(1, LOAD_PARALLEL)
    };
    let results: Vec<Result<u64, EngineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                s.spawn(move || -> Result<u64, EngineError> {
                    let mut conn = engine.connect()?;
                    let mut rows = 0;
                    for part in (i..parts).step_by(n as usize) {
                        rows += work(&mut *conn, part)?;
                    }
                    Ok(rows)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(EngineError::statement("load thread panicked")))
            })
            .collect()
    });
    results.into_iter().sum()
}

/// `pgbench -i`: the small tables on one connection, the accounts in parallel by ranges of
/// branches, then vacuum, analyze and the primary keys.
fn load_pgbench(engine: &dyn Engine, opts: &RunOptions) -> Result<(u64, f64), EngineError> {
    use dbdelta_workload::tpcb;
    let start = Instant::now();
    let scale = opts.tpc.scale_factor;
    let mut conn = engine.connect()?;
    let mut rows = tpcb::create_and_load_small(&mut *conn, scale, opts.i_own_this_database)?;
    // Ranges of about ten branches (a million accounts) per COPY.
    let per = 10i64;
    let parts = (i64::from(scale) + per - 1) / per;
    rows += load_parallel(engine, parts as u64, &|c, part| {
        let from = part as i64 * per;
        tpcb::load_accounts(c, from, (from + per).min(i64::from(scale)))
    })?;
    tpcb::finish_load(&mut *conn)?;
    Ok((rows, start.elapsed().as_secs_f64()))
}

/// TPC-C's initial population: the items, then each warehouse's rows in parallel by
/// warehouse, then the secondary indexes.
fn load_tpcc(engine: &dyn Engine, opts: &RunOptions) -> Result<(u64, f64), EngineError> {
    use dbdelta_workload::tpcc::{load, schema};
    let start = Instant::now();
    if opts.tpc.warehouses == 0 {
        return Err(EngineError::config("--warehouses must be at least 1"));
    }
    let mut conn = engine.connect()?;
    schema::create_tables(&mut *conn, opts.i_own_this_database)?;
    let mut rows = load::load_items(&mut *conn, opts.seed)?;
    rows += load_parallel(engine, u64::from(opts.tpc.warehouses), &|c, part| {
        load::load_warehouse(c, part as i64 + 1, opts.seed)
    })?;
    schema::create_indexes(&mut *conn)?;
    schema::analyze(&mut *conn)?;
    Ok((rows, start.elapsed().as_secs_f64()))
}

fn window_of(step: &Step, opts: &RunOptions) -> Duration {
    let secs = match step.duration {
        DurationClass::Read => opts.read_secs,
        DurationClass::Write => opts.write_secs,
        DurationClass::Insert => opts.insert_secs,
    };
    Duration::from_secs_f64(secs.max(0.0))
}

/// Runs the suite against one target. `sink` persists each result; an error from it stops
/// the target (the results so far are already kept).
pub fn run_target(
    engine: &dyn Engine,
    target: &str,
    suite: &Suite,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), SinkError>,
) -> Result<TargetOutcome, SinkError> {
    run_target_profiled(engine, target, suite, opts, None, stop, progress, sink)
}

/// [`run_target`], CPU-profiling the measured steps that `profiling` selects.
#[allow(clippy::too_many_arguments)]
pub fn run_target_profiled(
    engine: &dyn Engine,
    target: &str,
    suite: &Suite,
    opts: &RunOptions,
    profiling: Option<&TargetProfiling>,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), SinkError>,
) -> Result<TargetOutcome, SinkError> {
    let one = [TargetUnderTest {
        name: target,
        engine,
        profiling,
    }];
    let mut outcomes = run_interleaved(&one, suite, opts, 1, stop, progress, sink)?;
    Ok(outcomes.pop().unwrap_or(TargetOutcome::Complete))
}

/// One provisioned target of an interleaved run.
pub struct TargetUnderTest<'a> {
    /// The target's name (results and messages).
    pub name: &'a str,
    /// Its engine, provisioned and ready.
    pub engine: &'a dyn Engine,
    /// CPU profiling of its measured steps, if asked for.
    pub profiling: Option<&'a TargetProfiling>,
}

/// Runs the suite on every target at once, item by item: each load and settle on every
/// target in turn, and each measured step (at each thread count) `rounds` times as A B, B A,
/// … so every pair of a ratio is measured minutes apart at most and host drift hits both
/// sides. Every target sees the suite's items in the suite's order, so the state each step
/// finds (rows written by earlier steps, settle points) is the same on all of them. With
/// more than one round, results carry the round as their repeat number. A target whose load
/// fails drops out; the others go on. Returns each target's outcome, in order.
pub fn run_interleaved(
    targets: &[TargetUnderTest<'_>],
    suite: &Suite,
    opts: &RunOptions,
    rounds: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), SinkError>,
) -> Result<Vec<TargetOutcome>, SinkError> {
    let chosen = selected(suite, opts);
    let mut outcomes: Vec<TargetOutcome> = vec![TargetOutcome::Complete; targets.len()];
    // Targets still running the suite.
    let mut alive: Vec<bool> = vec![true; targets.len()];
    for (i, t) in targets.iter().enumerate() {
        let missing = crate::families::missing_families(&suite.families, t.engine);
        if missing.is_empty() {
            continue;
        }
        let reason = crate::families::unsupported_reason(&missing, t.engine);
        progress.message(&format!(
            "[{}] {reason}: every step is reported as not supported",
            t.name
        ));
        for step in &chosen {
            for threads in thread_counts(step, opts) {
                sink(&crate::families::not_supported(
                    t.name, step, threads, &reason,
                ))?;
            }
        }
        alive[i] = false;
    }
    let tables: Vec<String> = match suite.dataset {
        Dataset::Sbtest => (1..=opts.tables).map(|t| format!("sbtest{t}")).collect(),
        Dataset::Usertable => vec![dbdelta_engine::usertable::TABLE.to_string()],
        Dataset::Keys => Vec::new(),
        Dataset::Pgbench => dbdelta_workload::tpcb::TABLES
            .iter()
            .map(|t| t.to_string())
            .collect(),
        Dataset::Tpcc => dbdelta_workload::tpcc::schema::TABLES
            .iter()
            .map(|t| t.to_string())
            .collect(),
    };
    // Each target's next YCSB insert key number: steps that insert continue the sequence.
    let mut next_insert: Vec<u64> = vec![opts.table_size; targets.len()];
    // Rows each target loaded, which set the settle time (db_bench's keys have no load:
    // fillseq writes the table size).
    let planned_rows = match suite.dataset {
        Dataset::Sbtest => u64::from(opts.tables) * opts.table_size,
        _ => opts.table_size,
    };
    let mut loaded_rows: Vec<u64> = vec![planned_rows; targets.len()];
    let rounds = rounds.max(1);
    let mut settles = 0;
    'items: for item in &suite.items {
        if stop.requested() {
            break;
        }
        match item {
            SuiteItem::Action {
                order,
                action: Action::Load,
            } => {
                for (i, t) in targets.iter().enumerate() {
                    if !alive[i] {
                        continue;
                    }
                    if stop.requested() {
                        break 'items;
                    }
                    next_insert[i] = opts.table_size;
                    match run_load(t, *order, suite.dataset, opts, progress, sink)? {
                        Ok(rows) => loaded_rows[i] = rows,
                        Err(reason) => {
                            alive[i] = false;
                            outcomes[i] = TargetOutcome::LoadFailed(reason);
                        }
                    }
                }
            }
            SuiteItem::Action {
                order,
                action: Action::Settle,
            } => {
                settles += 1;
                for (i, t) in targets.iter().enumerate() {
                    if !alive[i] {
                        continue;
                    }
                    if stop.requested() {
                        break 'items;
                    }
                    let point = SettlePoint {
                        order: *order,
                        n: settles,
                        tables: &tables,
                        rows: loaded_rows[i],
                    };
                    run_settle(t, &point, opts, stop, progress, sink)?;
                }
            }
            SuiteItem::Step(step) => {
                if !chosen.iter().any(|c| c.order == step.order) {
                    continue;
                }
                // A warm step only fills caches: it is never compared, so once is enough.
                let step_rounds = if step.warm { 1 } else { rounds };
                for threads in thread_counts(step, opts) {
                    for round in 1..=step_rounds {
                        if stop.requested() {
                            break 'items;
                        }
                        let plans: Vec<(usize, StepPlan)> = round_order(targets.len(), round)
                            .into_iter()
                            .filter(|&i| alive[i])
                            .map(|i| {
                                let t = &targets[i];
                                (i, plan_round(t, step, threads, opts, round, next_insert[i]))
                            })
                            .collect();
                        let in_turns = round > 1
                            && plans.len() > 1
                            && plans
                                .iter()
                                .all(|(i, p)| takes_turns(targets[*i].engine, p, opts));
                        // Each result is sunk the moment its window is over.
                        let mut keep = |i: usize, plan: &StepPlan, r| {
                            let t = &targets[i];
                            let n = &mut next_insert[i];
                            sink(&finish_round(t, plan, r, round, step_rounds, n, stop))
                        };
                        if let Some(ms) = opts.turn_ms.filter(|_| in_turns) {
                            for (i, plan, r) in measure_in_turns(targets, plans, ms, stop, progress)
                            {
                                keep(i, &plan, r)?;
                            }
                        } else {
                            for (i, plan) in plans {
                                if stop.requested() {
                                    break 'items;
                                }
                                let r = measure_planned(targets[i].engine, &plan, stop, progress);
                                keep(i, &plan, r)?;
                            }
                        }
                    }
                }
            }
        }
    }
    if stop.requested() {
        for (i, o) in outcomes.iter_mut().enumerate() {
            if alive[i] {
                *o = TargetOutcome::Interrupted;
            }
        }
    }
    Ok(outcomes)
}

/// A target's plan for one round of a step.
fn plan_round(
    t: &TargetUnderTest<'_>,
    step: &Step,
    threads: u32,
    opts: &RunOptions,
    round: u32,
    next_insert: u64,
) -> StepPlan {
    // One profile per step and target: the first round's.
    let profiling = t.profiling.filter(|_| round == 1);
    let mut plan = step_plan(t.name, step, threads, opts, profiling);
    if round > 1 {
        if let Some(w) = opts.round_warmup_secs {
            plan.warmup = Duration::from_secs_f64(w.max(0.0));
        }
    }
    plan.ycsb = step
        .params
        .kind
        .ycsb_mix()
        .map(|mix| YcsbShared::new(YcsbConfig::new(mix, opts.table_size), next_insert));
    plan.db_bench = step
        .params
        .kind
        .db_bench()
        .map(|bench| DbBenchShared::new(DbBenchConfig::new(bench, opts.table_size, threads)));
    if counted(step, opts) {
        // Counted steps end when their operations are done: every operation is measured.
        plan.warmup = Duration::ZERO;
    }
    plan
}

/// A step that ends when its operations are done rather than after a time.
fn counted(step: &Step, opts: &RunOptions) -> bool {
    (step.params.kind.counts_transactions() && opts.tpc.transactions.is_some())
        || step.params.kind.db_bench().is_some_and(|b| b.counted())
}

/// Whether a target's round of a step can share its window in turns: a closed loop that
/// runs for a time, not a count, is not profiled, and leaves no work behind for the other
/// target's turns to pay (reads, or writes on an engine without background work).
fn takes_turns(engine: &dyn Engine, plan: &StepPlan, opts: &RunOptions) -> bool {
    (!plan.step.params.kind.writes() || !engine.background_work())
        && plan.rate.is_none()
        && plan.profile.is_none()
        && !plan.step.warm
        && !counted(&plan.step, opts)
}

/// Runs the step's before-actions and measures it.
fn measure_planned(
    engine: &dyn Engine,
    plan: &StepPlan,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> StepResult {
    match before_step(engine, plan) {
        Ok(actions) => {
            let mut r = measure_step(engine, plan, stop, progress);
            r.actions = actions;
            r
        }
        Err(e) => {
            crate::measure::failed_result(plan, StepKind::Measured, format!("before the step: {e}"))
        }
    }
}

/// What follows a target's measured round: the YCSB insert sequence goes on, TPC-C's
/// consistency is checked, the round is numbered.
fn finish_round(
    t: &TargetUnderTest<'_>,
    plan: &StepPlan,
    mut result: StepResult,
    round: u32,
    step_rounds: u32,
    next_insert: &mut u64,
    stop: &StopFlag,
) -> StepResult {
    if let Some(y) = &plan.ycsb {
        *next_insert = y.next_insert();
    }
    if plan.tpcc.is_some() && !stop.requested() {
        check_tpcc(t.engine, &mut result);
    }
    if step_rounds > 1 {
        result.repeat = round;
    }
    result
}

/// Measures every target's plan of one round in one window, in turns of `turn_ms`
/// (crate::turns); the targets' order in `plans` is the order of their first turns.
fn measure_in_turns(
    targets: &[TargetUnderTest<'_>],
    plans: Vec<(usize, StepPlan)>,
    turn_ms: f64,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> Vec<(usize, StepPlan, StepResult)> {
    let turns = std::sync::Arc::new(Turns::new(
        plans.len(),
        Duration::from_secs_f64(turn_ms.max(0.1) / 1000.0),
        0,
    ));
    let plans: Vec<(usize, StepPlan)> = plans
        .into_iter()
        .enumerate()
        .map(|(k, (i, mut plan))| {
            plan.turn = Some(Turn {
                turns: turns.clone(),
                index: k,
            });
            (i, plan)
        })
        .collect();
    let Some((_, first)) = plans.first() else {
        return Vec::new();
    };
    let names: Vec<&str> = plans.iter().map(|(i, _)| targets[*i].name).collect();
    progress.step_started(
        &names.join("+"),
        &first.step.label,
        first.threads,
        first.warmup,
        first.window,
    );
    let watchers: Vec<TurnProgress> = plans.iter().map(|_| TurnProgress::default()).collect();
    let results: Vec<StepResult> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(&watchers)
            .map(|((i, plan), watch)| {
                let (engine, turns) = (targets[*i].engine, &turns);
                s.spawn(move || {
                    // A target that fails before its window must not hold the others.
                    let _leave = GiveUp(turns);
                    measure_planned(engine, plan, stop, watch)
                })
            })
            .collect();
        let t0 = Instant::now();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            let queries = watchers
                .iter()
                .map(|w| w.queries.load(Ordering::Relaxed))
                .sum();
            progress.step_tick(t0.elapsed(), queries);
        }
        handles
            .into_iter()
            .zip(&plans)
            .map(|(h, (_, plan))| {
                h.join().unwrap_or_else(|_| {
                    crate::measure::failed_result(
                        plan,
                        StepKind::Measured,
                        "the measuring thread panicked".into(),
                    )
                })
            })
            .collect()
    });
    for w in &watchers {
        for m in w.messages.lock().map(|m| m.clone()).unwrap_or_default() {
            progress.message(&m);
        }
    }
    plans
        .into_iter()
        .zip(results)
        .map(|((i, plan), r)| {
            progress.step_finished(&r);
            (i, plan, r)
        })
        .collect()
}

/// Lets the other targets start when dropped (a no-op once they met).
struct GiveUp<'t>(&'t Turns);

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        self.0.give_up();
    }
}

/// Progress of one target measured in turns, read by the coordinating thread.
#[derive(Default)]
struct TurnProgress {
    queries: AtomicU64,
    messages: Mutex<Vec<String>>,
}

impl Progress for TurnProgress {
    fn step_started(&self, _: &str, _: &str, _: u32, _: Duration, _: Duration) {}
    fn step_tick(&self, _: Duration, queries: u64) {
        self.queries.store(queries, Ordering::Relaxed);
    }
    fn step_finished(&self, _: &StepResult) {}
    fn message(&self, text: &str) {
        if let Ok(mut m) = self.messages.lock() {
            m.push(text.to_string());
        }
    }
}

/// The order of the targets in a round: forward in odd rounds, backward in even ones
/// (A B, B A, …), so a cost of going first or second (a cold cache, the other target's
/// leftover background work) lands on both sides of the ratio.
fn round_order(targets: usize, round: u32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..targets).collect();
    if round.is_multiple_of(2) {
        order.reverse();
    }
    order
}

/// Loads one target: the rows loaded, or why the load failed (its result says so too).
fn run_load(
    t: &TargetUnderTest<'_>,
    order: u32,
    dataset: Dataset,
    opts: &RunOptions,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), SinkError>,
) -> Result<Result<u64, String>, SinkError> {
    progress.message(&match dataset {
        Dataset::Sbtest => format!(
            "[{}] load: {} table(s) x {} rows",
            t.name, opts.tables, opts.table_size
        ),
        Dataset::Usertable => format!("[{}] load: usertable, {} records", t.name, opts.table_size),
        Dataset::Keys => format!("[{}] load", t.name),
        Dataset::Pgbench => format!(
            "[{}] load: pgbench tables at scale {}",
            t.name, opts.tpc.scale_factor
        ),
        Dataset::Tpcc => format!(
            "[{}] load: TPC-C, {} warehouse(s)",
            t.name, opts.tpc.warehouses
        ),
    });
    let sampler = crate::measure::start_sampler(t.engine, opts.os_metrics, &opts.device, None);
    let loaded = match dataset {
        Dataset::Sbtest => load(t.engine, opts, opts.i_own_this_database),
        Dataset::Usertable => load_usertable(t.engine, opts),
        Dataset::Pgbench => load_pgbench(t.engine, opts),
        Dataset::Tpcc => load_tpcc(t.engine, opts),
        // Refused when the suite is parsed: fillseq writes the keys.
        Dataset::Keys => Err(EngineError::config(
            "db_bench's keys are written by the fillseq step, not by a load",
        )),
    };
    let os = sampler.map(|s| s.stop());
    match loaded {
        Ok((rows, secs)) => {
            let mut r = action_result(
                t.name,
                order,
                StepKind::Load,
                "load",
                StepStatus::Ok,
                secs,
                rows,
            );
            // Per-row costs, like sb.prepare.met (normalised by rows/s).
            if let Some(os) = os {
                r.costs = dbdelta_osmetrics::op_costs(&os.summary, r.throughput.value);
                r.os = Some(os);
            }
            sink(&r)?;
            Ok(Ok(rows))
        }
        Err(e) => {
            let reason = e.to_string();
            sink(&action_result(
                t.name,
                order,
                StepKind::Load,
                "load",
                StepStatus::Failed {
                    reason: reason.clone(),
                },
                0.0,
                0,
            ))?;
            Ok(Err(reason))
        }
    }
}

/// What the target needs before a measured step, and what was done for its result.
/// db_bench runs each job in a new process that reopens the database, which flushes the
/// memtables: do the same. Write steps (updates, deletes, inserts, read-write) get the
/// engine's housekeeping, such as MySQL's binary-log reset (§A2.2).
fn before_step(engine: &dyn Engine, plan: &StepPlan) -> Result<Vec<String>, EngineError> {
    let mut actions = Vec::new();
    if plan.db_bench.is_some() {
        engine
            .flush_writes()
            .map_err(|e| EngineError::new(e.kind, format!("flushing: {e}")))?;
    }
    if plan.step.group == Group::Write && !plan.step.warm {
        actions.extend(engine.before_write_step()?);
    }
    Ok(actions)
}

/// One settle point of the suite for one target.
struct SettlePoint<'a> {
    /// Its position in the suite.
    order: u32,
    /// It is the suite's `n`-th settle point.
    n: u32,
    /// The tables to maintain.
    tables: &'a [String],
    /// Rows the target loaded: they set the spec's settle time.
    rows: u64,
}

/// Settles one target: the engine's maintenance, then the rest of the settle time (see
/// [`dbdelta_model::SettleTime`]); the result holds what was done, how long it waited and
/// why.
fn run_settle(
    t: &TargetUnderTest<'_>,
    point: &SettlePoint<'_>,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), SinkError>,
) -> Result<(), SinkError> {
    let secs = opts.settle.secs(point.rows);
    progress.message(&format!("[{}] settle ({secs} s at least)", t.name));
    let why = opts.settle.why(point.rows);
    let stopping = || stop.requested();
    let wait = SettleWait {
        at_least: Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO),
        why: &why,
        stopping: &stopping,
    };
    let start = Instant::now();
    let (status, actions) = match t.engine.settle(point.tables, &wait) {
        Ok(report) => (StepStatus::Ok, report.actions),
        Err(e) => (
            StepStatus::Failed {
                reason: e.to_string(),
            },
            Vec::new(),
        ),
    };
    let mut r = action_result(
        t.name,
        point.order,
        StepKind::Settle,
        &format!("settle-{}", point.n),
        status,
        start.elapsed().as_secs_f64(),
        0,
    );
    r.actions = actions;
    sink(&r)
}

/// What `measure_step` needs for one step of one target at one thread count.
fn step_plan(
    target: &str,
    step: &Step,
    threads: u32,
    opts: &RunOptions,
    profiling: Option<&TargetProfiling>,
) -> StepPlan {
    StepPlan {
        target: target.to_string(),
        step: step.clone(),
        threads,
        warmup: Duration::from_secs_f64(opts.warmup_secs.max(0.0)),
        window: window_of(step, opts),
        tables: opts.tables,
        table_size: opts.table_size,
        seed: opts.seed,
        os_metrics: opts.os_metrics,
        device: opts.device.clone(),
        rate: step.rate.or(opts.rate),
        active: opts.client.active.unwrap_or(threads).min(threads),
        connect: ConnectPlan {
            count: threads,
            rate: opts.client.connect_rate,
            timeout: secs(opts.client.connect_timeout_secs),
            io_timeout: Some(secs(opts.client.statement_timeout_secs)),
        },
        statement_timeout: secs(opts.client.statement_timeout_secs),
        max_error_rate: opts.client.max_error_rate,
        ycsb: None,
        db_bench: None,
        tpcb: step.params.kind.pgbench_script().map(|script| TpcbConfig {
            script,
            scale: opts.tpc.scale_factor,
            transactions: opts.tpc.transactions,
        }),
        tpcc: (step.params.kind == dbdelta_workload::WorkloadKind::Tpcc).then(|| TpccConfig {
            warehouses: opts.tpc.warehouses,
            terminals: threads,
            all_warehouses: opts.tpc.all_warehouses,
            spec_waits: opts.tpc.tpcc_mode == dbdelta_model::TpccMode::Spec,
            c_run: dbdelta_workload::tpcc::gen::run_constants(opts.seed),
            transactions: opts.tpc.transactions,
        }),
        txn: txn_policy(step, opts),
        window_probe: (step.params.kind == dbdelta_workload::WorkloadKind::Tpcc).then(|| {
            crate::measure::WindowProbe {
                sql: "SELECT sum(d_next_o_id) FROM district".into(),
                name: "new-orders".into(),
                per_minute_unit: Some(dbdelta_model::ThroughputUnit::Nopm),
            }
        }),
        turn: None,
        profile: profiling
            .filter(|p| !step.warm && p.settings.wants(&step.name, &step.label))
            .map(|p| dbdelta_profile::ProfileSpec {
                perf: p.perf.clone(),
                dir: p.dir.clone(),
                target: target.to_string(),
                step: step.name.clone(),
                label: step.label.clone(),
                order: step.order,
                threads,
                settings: p.settings.clone(),
            }),
    }
}

/// How the reason of a step whose TPC-C consistency conditions failed begins (the CLI
/// exits 1 on it).
pub const INCONSISTENT: &str = "TPC-C consistency:";

/// TPC-C's consistency conditions after a step: each condition's violations go into the
/// result (`consistency.N`), and any violation fails the step, naming the condition.
fn check_tpcc(engine: &dyn Engine, result: &mut StepResult) {
    let checked = engine
        .connect()
        .and_then(|mut c| dbdelta_workload::tpcc::check::check(&mut *c));
    match checked {
        Ok(conditions) => {
            let mut broken = Vec::new();
            for v in &conditions {
                result
                    .workload_stats
                    .insert(format!("consistency.{}", v.condition), v.count as f64);
                if v.count > 0 {
                    broken.push(format!(
                        "condition {} ({}) violated {} time(s)",
                        v.condition, v.description, v.count
                    ));
                }
            }
            if !broken.is_empty() {
                result.status = StepStatus::Failed {
                    reason: format!(
                        "{INCONSISTENT} {} — the engine or the workload is wrong",
                        broken.join("; ")
                    ),
                };
            }
        }
        Err(e) => {
            result.status = StepStatus::Failed {
                reason: format!("TPC-C consistency check could not run: {e}"),
            }
        }
    }
}

/// pgbench's transaction rules for a step: `--max-tries` and `--latency-limit` apply to
/// every step; pgbench's scripts are paced with Poisson arrivals.
fn txn_policy(step: &Step, opts: &RunOptions) -> crate::schedule::TxnPolicy {
    let tpcc = step.params.kind == dbdelta_workload::WorkloadKind::Tpcc;
    crate::schedule::TxnPolicy {
        // TPC-C re-runs serialization failures and deadlocks by default; pgbench does not.
        max_tries: opts
            .tpc
            .max_tries
            .unwrap_or(if tpcc { DEFAULT_TPCC_TRIES } else { 1 })
            .max(1),
        latency_limit: opts
            .tpc
            .latency_limit_ms
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()),
        poisson: step.params.kind.pgbench_script().is_some(),
        failures_count: step.params.kind.counts_transactions(),
    }
}

/// A validated, finite, non-negative number of seconds as a duration (bad values were
/// refused when the options were parsed; this only keeps a corrupt file from panicking).
fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

/// The thread counts a step runs at: the run's, or one per table (scan).
fn thread_counts(step: &Step, opts: &RunOptions) -> Vec<u32> {
    match step.threads {
        Some(ThreadsRule::Tables) => vec![opts.tables.max(1)],
        Some(ThreadsRule::One) => vec![1],
        Some(ThreadsRule::Terminals) => vec![opts
            .tpc
            .terminals
            .unwrap_or(10 * opts.tpc.warehouses)
            .max(1)],
        None => opts.threads.clone(),
    }
}
