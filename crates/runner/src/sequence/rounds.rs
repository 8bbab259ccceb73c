//! A measured step on every target: at each thread count, `rounds` rounds in alternating
//! target order (A B, B A, …), each round measured one target after another or, with
//! `--turn-ms`, all targets in one window taking turns (crate::turns).

use super::plan::{plan_round, takes_turns, thread_counts};
use super::target::TargetUnderTest;
use crate::control::StopFlag;
use crate::measure::{failed_result, measure_step, StepPlan};
use crate::planned::PlannedStep;
use crate::progress::{Progress, StepStart};
use crate::turns::{Turn, Turns};
use dbdelta_engine::{Engine, EngineError};
use dbdelta_model::{Group, RunOptions, StepKind, StepResult};
use dbdelta_workload::{Benchmark, Carry, Step};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The targets of a sequence and what the rounds keep per target.
pub(super) struct Lanes<'t, 'a> {
    /// Every target of the run, in order.
    pub targets: &'t [TargetUnderTest<'a>],
    /// Targets still running the suite.
    pub alive: &'t [bool],
    /// What each target's steps hand on to the next (YCSB's insert sequence).
    pub carries: &'t mut [Carry],
    /// The measured steps as planned, and how many of them began.
    pub counter: &'t mut Counter,
}

/// The sequence's measured steps as planned, for the step counter and ETA of
/// [`Progress::sequence_step_started`].
pub(super) struct Counter {
    /// Every measured step at every thread count, in run order.
    pub plan: Vec<PlannedStep>,
    /// How many of them began.
    pub begun: usize,
    /// Targets that measure them.
    pub targets: usize,
}

impl Counter {
    /// Announces the step `label` at `threads`, the next one of the plan.
    fn start(&mut self, label: &str, threads: u32, progress: &dyn Progress) {
        let Some(at) = self.plan[self.begun.min(self.plan.len())..]
            .iter()
            .position(|p| p.label == label && p.threads == threads)
            .map(|k| k + self.begun)
        else {
            return;
        };
        self.begun = at + 1;
        progress.sequence_step_started(&StepStart {
            index: at + 1,
            total: self.plan.len(),
            plan: &self.plan[at],
            remaining: self.plan[at..].iter().map(|p| p.estimate).sum(),
            steps: &self.plan,
            targets: self.targets,
        });
    }
}

/// Measures `step` on every live target at each of its thread counts, `rounds` times
/// (once for a warm step); each result goes to the sink the moment its window is over.
/// `Break` when a stop was requested.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_step<E>(
    lanes: &mut Lanes<'_, '_>,
    bench: &dyn Benchmark,
    step: &Step,
    opts: &RunOptions,
    rounds: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<ControlFlow<()>, E> {
    // A warm step only fills caches: it is never compared, so once is enough.
    let step_rounds = if step.warm { 1 } else { rounds };
    for threads in thread_counts(step, opts) {
        lanes.counter.start(&step.label, threads, progress);
        let flow = run_rounds(
            lanes,
            bench,
            step,
            threads,
            opts,
            step_rounds,
            stop,
            progress,
            sink,
        );
        progress.sequence_step_finished();
        if flow? == ControlFlow::Break(()) {
            return Ok(ControlFlow::Break(()));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// The `step_rounds` rounds of `step` at `threads` on every live target.
#[allow(clippy::too_many_arguments)]
fn run_rounds<E>(
    lanes: &mut Lanes<'_, '_>,
    bench: &dyn Benchmark,
    step: &Step,
    threads: u32,
    opts: &RunOptions,
    step_rounds: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<ControlFlow<()>, E> {
    let targets = lanes.targets;
    for round in 1..=step_rounds {
        if stop.requested() {
            return Ok(ControlFlow::Break(()));
        }
        let plans: Vec<(usize, StepPlan)> = round_order(targets.len(), round)
            .into_iter()
            .filter(|&i| lanes.alive[i])
            .map(|i| {
                let plan = plan_round(
                    &targets[i],
                    bench,
                    step,
                    threads,
                    opts,
                    round,
                    &lanes.carries[i],
                );
                (i, plan)
            })
            .collect();
        let in_turns = round > 1
            && plans.len() > 1
            && plans
                .iter()
                .all(|(i, p)| takes_turns(targets[*i].engine, p));
        // Each result is sunk the moment its window is over.
        let carries = &mut *lanes.carries;
        let mut keep = |i: usize, plan: &StepPlan, r| {
            let t = &targets[i];
            let finished = finish_round(t, bench, r, round, step_rounds, stop);
            plan.workload.carry_on(&mut carries[i]);
            sink(&finished)
        };
        if let Some(ms) = opts.turn_ms.filter(|_| in_turns) {
            for (i, plan, r) in measure_in_turns(targets, plans, ms, stop, progress) {
                keep(i, &plan, r)?;
            }
        } else {
            for (i, plan) in plans {
                if stop.requested() {
                    return Ok(ControlFlow::Break(()));
                }
                let r = measure_planned(targets[i].engine, &plan, stop, progress);
                keep(i, &plan, r)?;
            }
        }
    }
    Ok(ControlFlow::Continue(()))
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
        Err(e) => failed_result(plan, StepKind::Measured, format!("before the step: {e}")),
    }
}

/// What the target needs before a measured step, and what was done for its result: the
/// flush the step's workload asks for (db_bench reopens the database per job), and for
/// write steps (updates, deletes, inserts, read-write) the engine's housekeeping, such as
/// MySQL's binary-log reset.
fn before_step(engine: &dyn Engine, plan: &StepPlan) -> Result<Vec<String>, EngineError> {
    let mut actions = Vec::new();
    if plan.workload.flush_before() {
        engine
            .flush_writes()
            .map_err(|e| EngineError::new(e.kind, format!("flushing: {e}")))?;
    }
    if plan.step.group == Group::Write && !plan.step.warm {
        actions.extend(engine.before_write_step()?);
    }
    Ok(actions)
}

/// What follows a target's measured round: the benchmark checks the data (TPC-C's
/// consistency conditions), the round is numbered. (The step's workload hands on its
/// state to the target's next step in [`run_step`].)
fn finish_round(
    t: &TargetUnderTest<'_>,
    bench: &dyn Benchmark,
    mut result: StepResult,
    round: u32,
    step_rounds: u32,
    stop: &StopFlag,
) -> StepResult {
    if !stop.requested() {
        bench.check(t.engine, &mut result);
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
                h.join().unwrap_or_else(|payload| {
                    failed_result(
                        plan,
                        StepKind::Measured,
                        format!(
                            "the measuring thread panicked: {}",
                            dbdelta_workload::benchmark::panic_message(payload.as_ref())
                        ),
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
