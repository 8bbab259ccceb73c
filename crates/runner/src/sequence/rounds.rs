//! A measured step on every target: at each thread count, rounds (as many as the run's
//! [`RoundPolicy`] asks for) in alternating
//! target order (A B, B A, …), each round measured one target after another or, with
//! `--turn-ms`, all targets in one window taking turns (crate::turns).

use super::plan::{plan_round, takes_turns, thread_counts};
use super::policy::RoundPolicy;
use super::target::TargetUnderTest;
use crate::control::StopFlag;
use crate::measure::{failed_result, measure_step, StepPlan};
use crate::planned::PlannedStep;
use crate::progress::{Progress, StepStart};
use crate::turns::{Turn, Turns};
use dbdelta_engine::{Engine, EngineError};
use dbdelta_model::{Group, RunOptions, StepKind, StepResult, StepStatus};
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

/// Measures `step` on every live target at each of its thread counts, in as many rounds as
/// `policy` asks for (once for a warm or `once` step); each result goes to the sink the
/// moment its window is over, or, when the policy may add rounds, the moment its round is
/// over (the policy notes on the last round what the step reached). `Break` when a stop was
/// requested.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_step<E>(
    lanes: &mut Lanes<'_, '_>,
    bench: &dyn Benchmark,
    step: &Step,
    opts: &RunOptions,
    policy: &mut dyn RoundPolicy,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<ControlFlow<()>, E> {
    let targets = lanes.targets;
    // A warm step only fills caches: it is never compared, so once is enough. A `once` step
    // builds the state later steps read (db_bench's fillseq): a second round would measure
    // something else.
    let single = step.warm || step.once;
    let min_rounds = if single { 1 } else { policy.min_rounds() };
    let adaptive = !single && policy.adaptive();
    let numbered = min_rounds > 1 || adaptive;
    for threads in thread_counts(step, opts) {
        lanes.counter.start(&step.label, threads, progress);
        let mut so_far: Vec<StepResult> = Vec::new();
        let mut round = 0;
        // Rounds in turns come first; a round of windows of their own closes the step (its
        // costs, its profile, the contention line's reference). Measured first, the own
        // windows left the target measured second in them reading 1-2 % faster in every
        // later round in turns: two identical RocksDB stores, 4 runs of 4 in each order
        // (bench/results-kv-aa-20261127.md).
        let mut closing_next = false;
        loop {
            round += 1;
            if stop.requested() {
                return Ok(ControlFlow::Break(()));
            }
            let closing = !numbered || closing_next || (!adaptive && round >= min_rounds);
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
                        (round, closing),
                        &lanes.carries[i],
                    );
                    (i, plan)
                })
                .collect();
            if plans.is_empty() {
                break;
            }
            // Segments start every window at the barrier's time: no turns.
            let in_turns = opts.turn_ms.is_some()
                && !closing
                && plans.len() > 1
                && targets.iter().all(|t| t.segment.is_none())
                && plans
                    .iter()
                    .all(|(i, p)| takes_turns(targets[*i].engine, p));
            let mut last: Vec<StepResult> = Vec::with_capacity(plans.len());
            // Each result is finished (checked, numbered, its state handed on) the moment its
            // window is over, and sunk then unless the policy may still note on it.
            let carries = &mut *lanes.carries;
            let mut keep = |i: usize, plan: &StepPlan, r| -> Result<(), E> {
                let mut finished = finish_round(&targets[i], bench, r, stop);
                if numbered {
                    finished.repeat = round;
                }
                plan.workload.carry_on(&mut carries[i]);
                if let Some(seg) = &plan.segment {
                    after_segment_window(seg, &mut finished, &mut carries[i], stop, progress);
                }
                if !adaptive {
                    sink(&finished)?;
                }
                last.push(finished);
                Ok(())
            };
            let mut stopped = false;
            if let Some(ms) = opts.turn_ms.filter(|_| in_turns) {
                for (i, plan, r) in
                    measure_turns_until_run(targets, plans, ms, round, stop, progress)
                {
                    keep(i, &plan, r)?;
                }
            } else {
                let (measured, interrupted) = measure_windows_until_unstalled(
                    targets, plans, numbered, round, stop, progress,
                );
                stopped = interrupted;
                for (i, plan, r) in measured {
                    keep(i, &plan, r)?;
                }
            }
            let mut more = if stopped || stop.requested() || closing {
                false
            } else if round < min_rounds {
                true
            } else if adaptive {
                policy.another(step, threads, round, &so_far, &mut last)
            } else {
                false
            };
            // The policy is done with a step it measured in turns: its own windows close it.
            if !more && in_turns && !stop.requested() {
                (more, closing_next) = (true, true);
            }
            if adaptive {
                for r in &mut last {
                    if closing {
                        // The round the policy added to close the step says what it reached.
                        r.resolved = so_far
                            .iter()
                            .rev()
                            .find(|p| p.target == r.target)
                            .and_then(|p| p.resolved);
                    }
                    sink(r)?;
                }
                so_far.append(&mut last);
            }
            if stopped {
                return Ok(ControlFlow::Break(()));
            }
            if !more {
                break;
            }
        }
        progress.sequence_step_finished();
    }
    Ok(ControlFlow::Continue(()))
}

/// A segment's window is over: the result counts the whole run's connections (this
/// segment's share is in its parts), and the segments hand on the largest insert key
/// any of them reached; a segment that did not end the window is named in the result.
fn after_segment_window(
    seg: &crate::segment::StepSegment,
    result: &mut StepResult,
    carry: &mut Carry,
    stop: &StopFlag,
    progress: &dyn Progress,
) {
    if let Some(w) = result.segments.as_mut() {
        w.threads = result.threads;
    }
    result.threads = seg.total_threads;
    match seg
        .sync
        .after(&seg.what(&result.label), carry.next_insert, stop, progress)
    {
        Ok((next, missing)) => {
            carry.next_insert = next;
            if let Some(w) = result.segments.as_mut() {
                for m in missing {
                    if !w.missing.contains(&m) {
                        w.missing.push(m);
                    }
                }
                w.missing.sort_unstable();
            }
        }
        Err(e) => {
            if result.is_ok() && !stop.requested() {
                result.status = StepStatus::Failed {
                    reason: format!("after the window: {e}"),
                };
            }
        }
    }
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
/// consistency conditions). (The round is numbered and the step's workload hands on its
/// state to the target's next step in [`run_step`].)
fn finish_round(
    t: &TargetUnderTest<'_>,
    bench: &dyn Benchmark,
    mut result: StepResult,
    stop: &StopFlag,
) -> StepResult {
    if !stop.requested() {
        bench.check(t.engine, &mut result);
    }
    result
}

/// Times a round in turns is measured again when a target could not run enough of it.
const MAX_TURN_RETRIES: u32 = 3;

/// The least share of its turns a target must have been able to run (not waiting for a
/// CPU another process held), relative to the target of the round that could run the most,
/// for the round to count. Relative, not absolute: on a 2-core host at a load average of
/// 20 every target waits for a CPU 75-90 % of its turns (measured), alike, and measuring
/// again would not change that; what skews a ratio is one target held off more than the
/// other (a competitor pinned to its CPU during its turns).
const MIN_COULD_RUN: f64 = 0.5;

/// Why the results of a round in turns do not count and the round is measured again: a
/// target could run less than [`MIN_COULD_RUN`] of what the best-placed target could, or
/// it completed no event in its turns without an error to say why (its workers were held
/// off the CPU). A target whose server stalls fails with its error instead (its result
/// has no turns), and is not measured again.
fn starved(round: &[&StepResult]) -> Vec<String> {
    let best = round
        .iter()
        .filter_map(|r| r.turns.map(|t| t.could_run()))
        .fold(0.0, f64::max);
    round
        .iter()
        .filter_map(|r| {
            let could_run = r.turns?.could_run();
            if could_run < MIN_COULD_RUN * best {
                return Some(format!(
                    "{} could run {:.0} % of its turns, another target {:.0} %",
                    r.target,
                    could_run * 100.0,
                    best * 100.0
                ));
            }
            let no_event =
                matches!(r.status, dbdelta_model::StepStatus::Failed { .. }) && r.events == 0;
            no_event.then(|| format!("{} completed no event in its turns", r.target))
        })
        .collect()
}

/// [`measure_in_turns`], measured again (at most [`MAX_TURN_RETRIES`] times) while a target
/// was starved ([`starved`]) or a window stalled while its events went on completing
/// ([`stalled`]; one target's stalled event holds its turn, so the others' windows stall
/// too): a busy host makes a round slower, not a failure. Every result of the round says
/// how often it was measured again and why.
fn measure_turns_until_run(
    targets: &[TargetUnderTest<'_>],
    plans: Vec<(usize, StepPlan)>,
    turn_ms: f64,
    round: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> Vec<(usize, StepPlan, StepResult)> {
    let again = Again {
        round,
        most: MAX_TURN_RETRIES,
        how: "in turns ",
    };
    let (mut results, retries, why) = again.measure(
        || {
            (
                measure_in_turns(targets, plans.clone(), turn_ms, stop, progress),
                false,
            )
        },
        |rs| {
            let mut why = starved(&rs.iter().map(|(_, _, r)| r).collect::<Vec<_>>());
            why.extend(stalled(rs.iter().map(|(_, _, r)| r)));
            why
        },
        stop,
        progress,
    );
    for (_, _, r) in &mut results {
        if let Some(t) = r.turns.as_mut() {
            t.retries = retries;
        }
        note_again(r, retries, &why);
        progress.step_finished(r);
    }
    results
}

/// Says in a result's actions that its round was measured again, how often and why.
fn note_again(r: &mut StepResult, tries: u32, why: &[String]) {
    if tries > 0 {
        r.actions.push(format!(
            "round measured again {tries} time(s): {}",
            why.join("; ")
        ));
    }
}

/// A round measured again while its results do not count, at most `most` times.
struct Again {
    round: u32,
    most: u32,
    /// How the round is measured, for the message ("in turns ", or nothing).
    how: &'static str,
}

impl Again {
    /// Runs `measure` (its results, and true when a stop ended it) until `why` finds no
    /// reason, the tries are spent or a stop was asked for; each repeat is said on the
    /// progress. Returns the last results, how often the round was measured again and why.
    fn measure(
        &self,
        mut measure: impl FnMut() -> (Vec<(usize, StepPlan, StepResult)>, bool),
        why: impl Fn(&[(usize, StepPlan, StepResult)]) -> Vec<String>,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> (Vec<(usize, StepPlan, StepResult)>, u32, Vec<String>) {
        let (mut tries, mut reasons) = (0, Vec::new());
        loop {
            let (results, stopped) = measure();
            let now = if stopped { Vec::new() } else { why(&results) };
            if now.is_empty() || tries >= self.most || stop.requested() {
                return (results, tries, reasons);
            }
            tries += 1;
            if let Some((_, _, r)) = results.first() {
                progress.message(&format!(
                    "{} round {}: measured again {}({tries} of {}): {}",
                    r.label,
                    self.round,
                    self.how,
                    self.most,
                    now.join("; ")
                ));
            }
            reasons.extend(now);
        }
    }
}

/// Times a round of windows of their own is measured again when a target's window stalled.
const MAX_STALL_RETRIES: u32 = 5;

/// Why a round of windows of their own is measured again: a target's window stalled (no
/// operation completed for 2 s or more) although its events went on completing — on a busy
/// host a commit's fsync can wait seconds for the kernel's writeback threads (SQLite's
/// TPC-C at 10 terminals beside two CPU hogs: 1 transaction in 9 s, its lock holder
/// blocked in `folio_wait_bit`). A failed window (a server that stopped answering ends in
/// timeouts) is not measured again.
fn stalled<'r>(round: impl IntoIterator<Item = &'r StepResult>) -> Vec<String> {
    round
        .into_iter()
        .filter_map(|r| match &r.status {
            dbdelta_model::StepStatus::Stalled { reason } if r.events > 0 => {
                Some(format!("{}'s window stalled ({reason})", r.target))
            }
            _ => None,
        })
        .collect()
}

/// Measures each target's window of a round one after the other, and the whole round again
/// (every target, so the rounds stay paired; at most [`MAX_STALL_RETRIES`] times) while a
/// window of a numbered round stalled ([`stalled`]): a busy host makes a round slower, not a
/// failure; a stall in every try stands. Every result of a round measured again says so and
/// why in its actions. True with the results when a stop ended it.
fn measure_windows_until_unstalled(
    targets: &[TargetUnderTest<'_>],
    plans: Vec<(usize, StepPlan)>,
    numbered: bool,
    round: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> (Vec<(usize, StepPlan, StepResult)>, bool) {
    let again = Again {
        round,
        most: if numbered { MAX_STALL_RETRIES } else { 0 },
        how: "",
    };
    let (mut results, tries, why) = again.measure(
        || {
            let mut results = Vec::with_capacity(plans.len());
            for (i, plan) in &plans {
                if stop.requested() {
                    return (results, true);
                }
                let r = measure_planned(targets[*i].engine, plan, stop, &HoldFinished(progress));
                results.push((*i, plan.clone(), r));
            }
            (results, false)
        },
        |rs| stalled(rs.iter().map(|(_, _, r)| r)),
        stop,
        progress,
    );
    for (_, _, r) in &mut results {
        note_again(r, tries, &why);
        progress.step_finished(r);
    }
    (results, stop.requested())
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
        .map(|((i, plan), r)| (i, plan, r))
        .collect()
}

/// Passes progress on, except each window's end: a round that may be measured again
/// reports its results when it counts, so the console shows one line per round.
struct HoldFinished<'p>(&'p dyn Progress);

impl Progress for HoldFinished<'_> {
    fn step_started(
        &self,
        target: &str,
        label: &str,
        threads: u32,
        warmup: Duration,
        window: Duration,
    ) {
        self.0.step_started(target, label, threads, warmup, window);
    }
    fn step_tick(&self, elapsed: Duration, queries: u64) {
        self.0.step_tick(elapsed, queries);
    }
    fn step_finished(&self, _: &StepResult) {}
    fn message(&self, text: &str) {
        self.0.message(text);
    }
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
pub(crate) fn round_order(targets: usize, round: u32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..targets).collect();
    if round.is_multiple_of(2) {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_model::TurnsInfo;

    fn in_turns(turn_secs: f64, lost_secs: f64, events: u64, status: StepStatus) -> StepResult {
        StepResult {
            target: "a".into(),
            events,
            status,
            turns: Some(TurnsInfo {
                slice_ms: 10.0,
                targets: 2,
                wall_secs: 0.2,
                turn_secs,
                lost_secs,
                waited_secs: None,
                retries: 0,
            }),
            ..StepResult::default()
        }
    }

    #[test]
    fn a_window_that_stalled_while_its_events_completed_is_measured_again() {
        let window = |events: u64, status: StepStatus| StepResult {
            target: "a".into(),
            events,
            status,
            ..StepResult::default()
        };
        let stall = || StepStatus::Stalled {
            reason: "no operation completed for 9 s (seconds 0 to 9 of the window)".into(),
        };
        let ok = window(250, StepStatus::Ok);
        assert!(stalled([&ok, &ok]).is_empty());
        let why = stalled([&ok, &window(1, stall())]);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("a's window stalled (no operation completed for 9 s"));
        // Nothing completed at all, or a failure (timeouts): not measured again.
        assert!(stalled([&ok, &window(0, stall())]).is_empty());
        let failed = StepStatus::Failed {
            reason: "statement timeout".into(),
        };
        assert!(stalled([&ok, &window(3, failed)]).is_empty());
    }

    #[test]
    fn a_target_held_off_more_than_the_other_is_measured_again_a_stalled_one_is_not() {
        let ok = StepStatus::Ok;
        let a = in_turns(0.1, 0.02, 50, ok.clone());
        // Both ran 80 % of their turns, or both only 20 % (a uniformly busy host): counts.
        assert!(starved(&[&a, &in_turns(0.1, 0.02, 50, ok.clone())]).is_empty());
        let busy = in_turns(0.1, 0.08, 50, ok.clone());
        assert!(starved(&[&busy, &busy.clone()]).is_empty());
        // One could run 30 % where the other could 80 %: measured again.
        let held = StepResult {
            target: "b".into(),
            ..in_turns(0.1, 0.07, 50, ok.clone())
        };
        let why = starved(&[&a, &held]);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].starts_with("b could run 30 %"), "{why:?}");
        // Completed nothing in its turns without an error: measured again.
        let failed = StepStatus::Failed {
            reason: "no event completed in 0.0 s (0 retried errors)".into(),
        };
        assert_eq!(starved(&[&a, &in_turns(0.1, 0.0, 0, failed)]).len(), 1);
        // A failure with its own error (a stalled server's timeout: its result has no
        // turns) is never measured again.
        let stalled = StepResult {
            turns: None,
            ..in_turns(0.1, 0.0, 0, StepStatus::Ok)
        };
        assert!(starved(&[&a, &stalled]).is_empty());
    }
}
