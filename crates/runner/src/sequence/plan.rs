//! What one target measures for one round of a step: its [`StepPlan`] from the run's
//! options and the suite's benchmark, the thread counts of a step, and whether a round can
//! share its window in turns.

use super::target::{TargetProfiling, TargetUnderTest};
use crate::connect::ConnectPlan;
use crate::measure::StepPlan;
use crate::schedule::TxnPolicy;
use dbdelta_engine::Engine;
use dbdelta_model::RunOptions;
use dbdelta_workload::suite::ThreadsRule;
use dbdelta_workload::{Benchmark, Carry, DurationClass, Step, StepSetup};
use std::time::Duration;

/// A target's plan for one round of a step (`closing`: the step's last round, measured in
/// windows of their own); `carry` is what its earlier steps handed on.
pub(super) fn plan_round(
    t: &TargetUnderTest<'_>,
    bench: &dyn Benchmark,
    step: &Step,
    threads: u32,
    opts: &RunOptions,
    (round, closing): (u32, bool),
    carry: &Carry,
) -> StepPlan {
    // One profile per step and target: the closing round's (windows of their own).
    let profiling = t.profiling.filter(|_| closing);
    let segment = t.segment.as_ref().map(|s| s.segment());
    let mut plan = step_plan(
        t.name, bench, step, threads, opts, profiling, carry, segment,
    );
    if let Some(sync) = &t.segment {
        split(&mut plan, sync.clone());
    }
    if round > 1 {
        if let Some(w) = opts.round_warmup_secs {
            plan.warmup = Duration::from_secs_f64(w.max(0.0));
        }
    }
    if plan.workload.counted() {
        // Counted steps end when their operations are done: every operation is measured,
        // however long it takes (db_bench's fillseq writes every key), so the duration flag
        // is no bound: a quick preset's 0.3 s window cut the kv suite's fill short and
        // failed the step. The stall watchdog still ends a store that stops progressing.
        plan.warmup = Duration::ZERO;
        plan.window = plan.window.max(COUNTED_STEP_BOUND);
    }
    plan
}

/// The longest a counted step may run before its window ends: far above any fill this tool
/// is sized for (a million keys take seconds), a bound only for a store that is progressing
/// too slowly to finish.
const COUNTED_STEP_BOUND: Duration = Duration::from_secs(3600);

/// This segment's share of a step planned for the whole run: its connections and active
/// ones (striped over the segments, as [`dbdelta_model::Segment::share`] says); the
/// workload keeps the whole run's thread count (TPC-C deals its warehouses by it).
fn split(plan: &mut StepPlan, sync: std::sync::Arc<dyn crate::segment::SegmentSync>) {
    let segment = sync.segment();
    let (total_threads, total_active) = (plan.threads, plan.active);
    plan.threads = segment.share(total_threads);
    plan.active = segment.share(total_active);
    plan.connect.count = plan.threads;
    // Paced load: each segment paces its share of the rate.
    if let Some(rate) = plan.rate {
        plan.rate = Some(rate * f64::from(plan.active) / f64::from(total_active.max(1)));
    }
    plan.segment = Some(crate::segment::StepSegment {
        sync,
        segment,
        total_threads,
        total_active,
    });
}

/// What `measure_step` needs for one step of one target at one thread count.
#[allow(clippy::too_many_arguments)] // each is one independent input of the plan
fn step_plan(
    target: &str,
    bench: &dyn Benchmark,
    step: &Step,
    threads: u32,
    opts: &RunOptions,
    profiling: Option<&TargetProfiling>,
    carry: &Carry,
    segment: Option<dbdelta_model::Segment>,
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
        workload: bench.step(
            &StepSetup {
                step,
                threads,
                opts,
                segment,
            },
            carry,
        ),
        txn: txn_policy(bench, step, opts),
        window_probe: bench.window_probe(),
        turn: None,
        segment: None,
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

/// The window of a step: the duration flag of its class.
pub(super) fn window_of(step: &Step, opts: &RunOptions) -> Duration {
    let secs = match step.duration {
        DurationClass::Read => opts.read_secs,
        DurationClass::Write => opts.write_secs,
        DurationClass::Insert => opts.insert_secs,
    };
    Duration::from_secs_f64(secs.max(0.0))
}

/// Whether a target's round of a step can share its window in turns: an engine fit for
/// turns, a closed loop that runs for a time, not a count, is not profiled, leaves no work
/// behind for the other target's turns to pay (reads, or writes on an engine without
/// background work), and whose suite does not keep it out of turns (`turns = false`: TPC-C).
pub(super) fn takes_turns(engine: &dyn Engine, plan: &StepPlan) -> bool {
    engine.fit_for_turns()
        && (!plan.step.params.kind.writes() || !engine.background_work())
        && plan.step.turns
        && plan.rate.is_none()
        && plan.profile.is_none()
        && !plan.step.warm
        && !plan.workload.counted()
}

/// pgbench's transaction rules for a step: `--max-tries` (else the benchmark's default)
/// and `--latency-limit` apply to every step; the benchmark says whether paced events
/// arrive as a Poisson process (pgbench's scripts).
fn txn_policy(bench: &dyn Benchmark, step: &Step, opts: &RunOptions) -> TxnPolicy {
    TxnPolicy {
        max_tries: opts
            .tpc
            .max_tries
            .unwrap_or_else(|| bench.default_max_tries())
            .max(1),
        latency_limit: opts
            .tpc
            .latency_limit_ms
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok()),
        poisson: bench.poisson_arrivals(),
        failures_count: step.params.kind.counts_transactions(),
    }
}

/// A validated, finite, non-negative number of seconds as a duration (bad values were
/// refused when the options were parsed; this only keeps a corrupt file from panicking).
fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

/// The thread counts a step runs at: the run's, or one per table (scan).
pub(super) fn thread_counts(step: &Step, opts: &RunOptions) -> Vec<u32> {
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
