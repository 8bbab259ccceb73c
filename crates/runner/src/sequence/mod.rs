//! Runs a suite's sequence against one target or several interleaved: load, settle,
//! measured steps at every thread count. Each result goes to the sink the moment it
//! exists, so nothing measured is lost; the sink's error (e.g. a full disk) stops the run
//! and is handed back as it was.
//!
//! The suite's benchmark (`dbdelta_workload::registry`) loads the data, builds each step's
//! shared state and checks the data after a round; this module only sequences.

mod action;
pub mod estimate;
mod load;
mod plan;
pub mod policy;
mod rounds;
mod settle;
mod shared;
mod target;

pub use dbdelta_workload::tpcc::benchmark::INCONSISTENT;
pub use policy::{FixedRounds, RoundPolicy};
/// The Insert Benchmark's rounds alternate targets the same way (crate::ibench::rounds).
pub(crate) use rounds::round_order;
pub use target::{TargetOutcome, TargetProfiling, TargetUnderTest};

use crate::control::StopFlag;
use crate::progress::Progress;
use dbdelta_engine::Engine;
use dbdelta_model::{RunOptions, StepResult};
use dbdelta_workload::{Action, Carry, Step, Suite, SuiteItem};
use std::ops::ControlFlow;

/// The steps of `suite` that `opts.steps` selects (all when it is empty).
pub fn selected<'a>(suite: &'a Suite, opts: &RunOptions) -> Vec<&'a Step> {
    suite
        .steps()
        .filter(|s| opts.steps.is_empty() || opts.steps.iter().any(|g| s.matches(g)))
        .collect()
}

/// Runs the suite against one target. `sink` persists each result; an error from it stops
/// the target (the results so far are already kept) and is returned.
pub fn run_target<E>(
    engine: &dyn Engine,
    target: &str,
    suite: &Suite,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<TargetOutcome, E> {
    run_target_profiled(engine, target, suite, opts, None, stop, progress, sink)
}

/// [`run_target`], CPU-profiling the measured steps that `profiling` selects.
#[allow(clippy::too_many_arguments)]
pub fn run_target_profiled<E>(
    engine: &dyn Engine,
    target: &str,
    suite: &Suite,
    opts: &RunOptions,
    profiling: Option<&TargetProfiling>,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<TargetOutcome, E> {
    let one = [TargetUnderTest {
        name: target,
        engine,
        profiling,
        segment: None,
    }];
    let mut outcomes = run_interleaved(&one, suite, opts, 1, stop, progress, sink)?;
    Ok(outcomes.pop().unwrap_or(TargetOutcome::Complete))
}

/// Runs the suite on every target at once, item by item: each load and settle on every
/// target in turn, and each measured step (at each thread count) `rounds` times as A B, B A,
/// … so every pair of a ratio is measured minutes apart at most and host drift hits both
/// sides. Every target sees the suite's items in the suite's order, so the state each step
/// finds (rows written by earlier steps, settle points) is the same on all of them. With
/// more than one round, results carry the round as their repeat number. A target whose load
/// fails drops out; the others go on. Returns each target's outcome, in order.
pub fn run_interleaved<E>(
    targets: &[TargetUnderTest<'_>],
    suite: &Suite,
    opts: &RunOptions,
    rounds: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<Vec<TargetOutcome>, E> {
    let mut fixed = FixedRounds(rounds);
    run_interleaved_with(targets, suite, opts, &mut fixed, stop, progress, sink)
}

/// [`run_interleaved`] with the rounds of each step decided by `policy` (`--resolve`).
pub fn run_interleaved_with<E>(
    targets: &[TargetUnderTest<'_>],
    suite: &Suite,
    opts: &RunOptions,
    policy: &mut dyn RoundPolicy,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<Vec<TargetOutcome>, E> {
    let chosen = selected(suite, opts);
    let bench = dbdelta_workload::registry::benchmark(suite.dataset);
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
            for threads in plan::thread_counts(step, opts) {
                sink(&crate::families::not_supported(
                    t.name, step, threads, &reason,
                ))?;
            }
        }
        alive[i] = false;
    }
    let tables = bench.tables(opts);
    // What each target's steps hand on (YCSB's next insert key), reset by its load.
    let mut carries: Vec<Carry> = vec![Carry::after_load(opts); targets.len()];
    // Rows each target loaded, which set the settle time (db_bench's keys have no load:
    // fillseq writes the table size).
    let mut loaded_rows: Vec<u64> = vec![bench.loaded_rows(opts); targets.len()];
    // The step counter and ETA plan the rounds every step runs at least (`--resolve` may
    // add some).
    let live = alive.iter().filter(|a| **a).count();
    let turns = targets
        .iter()
        .zip(&alive)
        .all(|(t, a)| !a || t.engine.fit_for_turns());
    let mut counter = rounds::Counter {
        plan: estimate::planned_steps(suite, opts, live, policy.min_rounds().max(1), turns),
        begun: 0,
        targets: live,
    };
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
                    carries[i] = Carry::after_load(opts);
                    match shared::load(t, *order, bench, opts, stop, progress, sink)? {
                        Ok(rows) => loaded_rows[i] = rows,
                        Err(e) => {
                            alive[i] = false;
                            outcomes[i] = TargetOutcome::LoadFailed(e);
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
                    let point = settle::SettlePoint {
                        order: *order,
                        n: settles,
                        tables: &tables,
                        rows: loaded_rows[i],
                    };
                    shared::settle(t, &point, opts, stop, progress, sink)?;
                }
            }
            SuiteItem::Step(step) => {
                if !chosen.iter().any(|c| c.order == step.order) {
                    continue;
                }
                let mut lanes = rounds::Lanes {
                    targets,
                    alive: &alive,
                    carries: &mut carries,
                    counter: &mut counter,
                };
                let flow =
                    rounds::run_step(&mut lanes, bench, step, opts, policy, stop, progress, sink)?;
                if flow == ControlFlow::Break(()) {
                    break 'items;
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
