//! The Insert Benchmark on one or more targets in interleaved rounds: each target's steps run
//! in the published order, and every measured step except l.x is split into `rounds` rounds
//! that alternate the targets (A B, B A, …). A round inserts its share of the step's batches
//! ([`Share`]): the rounds of l.i0, l.i1 and l.i2 add up to the step's rows, and those of a
//! read+write step, paced at the step's insert rate, to its `--query-secs`. Each round is a
//! paired sample (its result's `repeat` is the round) measured minutes at most from the
//! other targets' same round. l.x builds the secondary indexes once per target; settle runs
//! once per target.

use super::step::{rounds_for, run_step, Share, StepContext};
use super::{create_tables, settle, IbenchEnv};
use crate::control::StopFlag;
use crate::progress::Progress;
use crate::sequence::{round_order, TargetOutcome};
use dbdelta_engine::Engine;
use dbdelta_model::ibench::IbenchOptions;
use dbdelta_model::{Group, StepKind, StepResult, StepStatus};
use dbdelta_workload::ibench::IbenchStep;
use std::time::{Duration, Instant};

/// One provisioned target of an Insert Benchmark run.
#[derive(Clone, Copy)]
pub struct IbenchTarget<'a> {
    /// Target name (results and messages).
    pub name: &'a str,
    /// Its engine.
    pub engine: &'a dyn Engine,
}

/// What every target runs: the steps, the options, and into how many rounds a step splits.
#[derive(Debug, Clone, Copy)]
pub struct IbenchRun<'a> {
    /// The steps in order.
    pub steps: &'a [IbenchStep],
    /// The run's Insert Benchmark options.
    pub opts: &'a IbenchOptions,
    /// Where OS metrics come from and what may be dropped.
    pub env: &'a IbenchEnv,
    /// Rounds per measured step (1: every step whole, one target after another).
    pub rounds: u32,
}

/// A target's state between steps.
struct Lane {
    /// `Some` once the target stopped running steps.
    ended: Option<TargetOutcome>,
    /// Rows l.i0 inserted over all clients and rounds (l.x's indexed rows/s counts them).
    loaded_rows: u64,
}

/// Runs the Insert Benchmark on every target, each measured step in rounds that alternate
/// the targets. `sink` persists each result the moment it exists; an error from it stops the
/// run and is returned. One outcome per target, in order.
pub fn run_ibench_rounds<E>(
    targets: &[IbenchTarget<'_>],
    run: &IbenchRun<'_>,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<Vec<TargetOutcome>, E> {
    let opts = run.opts;
    let mut lanes: Vec<Lane> = Vec::with_capacity(targets.len());
    for t in targets {
        progress.message(&format!(
            "[{}] ibench: {} client(s), tables {}",
            t.name,
            opts.clients,
            opts.tables().join(",")
        ));
        let ended = match create_tables(t.engine, opts, run.env.i_own_this_database) {
            Ok(()) => None,
            Err(e) => {
                let reason = e.to_string();
                let mut r =
                    StepResult::empty(t.name, "l.i0", "l.i0", 1, Group::Write, StepKind::Load, 1);
                r.status = StepStatus::Failed {
                    reason: reason.clone(),
                };
                sink(&r)?;
                Some(TargetOutcome::LoadFailed(reason))
            }
        };
        lanes.push(Lane {
            ended,
            loaded_rows: 0,
        });
    }
    for (i, step) in run.steps.iter().enumerate() {
        let order = i as u32 + 1;
        if step.settle {
            for (t, lane) in targets.iter().zip(&lanes) {
                if lane.ended.is_some() || stop.requested() {
                    continue;
                }
                sink(&settle_result(t, run, step, order, stop, progress))?;
            }
            continue;
        }
        let split = rounds_for(opts, step, run.rounds);
        if split > 1 {
            progress.message(&format!(
                "{}: {split} rounds alternating the targets",
                step.name
            ));
        }
        for round in 1..=split {
            for ti in round_order(targets.len(), round) {
                let (t, lane) = (&targets[ti], &mut lanes[ti]);
                if lane.ended.is_some() {
                    continue;
                }
                if stop.requested() {
                    lane.ended = Some(TargetOutcome::Interrupted);
                    continue;
                }
                let share = Share { round, of: split };
                let r = measure(t, run, step, order, share, lane.loaded_rows, stop, progress);
                sink(&r)?;
                if let StepStatus::Failed { reason } = &r.status {
                    lane.ended = Some(if i == 0 {
                        TargetOutcome::LoadFailed(reason.clone())
                    } else {
                        progress.message(&format!(
                            "[{}] {} failed: the remaining steps depend on it and are skipped",
                            t.name, step.name
                        ));
                        TargetOutcome::Complete
                    });
                    continue;
                }
                if i == 0 {
                    lane.loaded_rows += r.ibench.as_ref().map_or(0, |s| s.rows_inserted);
                }
            }
        }
    }
    Ok(lanes
        .into_iter()
        .map(|l| match l.ended {
            Some(o) => o,
            None if stop.requested() => TargetOutcome::Interrupted,
            None => TargetOutcome::Complete,
        })
        .collect())
}

/// Measures one round (or the whole) of a step on one target; the result's `repeat` is the
/// round when the step is split.
#[allow(clippy::too_many_arguments)]
fn measure(
    t: &IbenchTarget<'_>,
    run: &IbenchRun<'_>,
    step: &IbenchStep,
    order: u32,
    share: Share,
    loaded_rows: u64,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> StepResult {
    let ctx = StepContext {
        target: t.name,
        opts: run.opts,
        step,
        order,
        loaded_rows,
        os_metrics: run.env.os_metrics,
        device: run.env.device.clone(),
        share,
    };
    let expected = if step.rate.is_some() {
        Duration::from_secs_f64(run.opts.query_secs / f64::from(share.of.max(1)))
    } else {
        Duration::ZERO
    };
    progress.step_started(
        t.name,
        &step.name,
        run.opts.clients,
        Duration::ZERO,
        expected,
    );
    let mut r = run_step(t.engine, &ctx, stop);
    if share.of > 1 {
        r.repeat = share.round;
    }
    progress.step_finished(&r);
    r
}

/// The settle step on one target.
fn settle_result(
    t: &IbenchTarget<'_>,
    run: &IbenchRun<'_>,
    step: &IbenchStep,
    order: u32,
    stop: &StopFlag,
    progress: &dyn Progress,
) -> StepResult {
    progress.message(&format!("[{}] settle", t.name));
    let start = Instant::now();
    let mut r = StepResult::empty(
        t.name,
        &step.name,
        &step.name,
        order,
        Group::Write,
        StepKind::Settle,
        1,
    );
    match settle(t.engine, run.opts, stop) {
        Ok(actions) => r.actions = actions,
        Err(e) => {
            r.status = StepStatus::Failed {
                reason: e.to_string(),
            }
        }
    }
    r.seconds = start.elapsed().as_secs_f64();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole_step() {
        for total in [0u64, 1, 7, 20, 200, 2001] {
            for unit in [1u64, 2, 20] {
                for of in 1..=12 {
                    let parts: Vec<u64> = (1..=of)
                        .map(|round| Share { round, of }.batches(total, unit))
                        .collect();
                    assert_eq!(parts.iter().sum::<u64>(), total, "{total}/{unit} in {of}");
                    // Every round but the last is whole windows.
                    for p in &parts[..parts.len() - 1] {
                        assert_eq!(p % unit, 0, "{parts:?}");
                    }
                }
            }
        }
        assert_eq!(Share::WHOLE.batches(37, 1), 37);
    }

    #[test]
    fn rounds_alternate_and_index_creation_runs_once() {
        assert_eq!(round_order(2, 1), [0, 1]);
        assert_eq!(round_order(2, 2), [1, 0]);
        let steps = dbdelta_workload::ibench::steps::builtin();
        let quick = IbenchOptions::quick(1);
        let split: Vec<u32> = steps.iter().map(|s| rounds_for(&quick, s, 10)).collect();
        assert_eq!(split, [10, 1, 10, 10, 1, 10, 10, 10, 10, 10, 10]);
        // Ten 1-second windows of each paced step at the quick scale: one per round.
        for s in steps.iter().filter(|s| s.rate.is_some()) {
            let per_round = Share { round: 3, of: 10 }.batches(
                (quick.query_secs * f64::from(s.rate.unwrap_or(0))
                    / 50f64.min(f64::from(s.rate.unwrap_or(1))))
                .ceil() as u64,
                unit_of_test(s),
            );
            assert_eq!(per_round, unit_of_test(s), "{}", s.name);
        }
        // A step with fewer windows than rounds asked runs one round per window.
        let tiny = IbenchOptions {
            query_secs: 1.0,
            ..quick
        };
        assert_eq!(rounds_for(&tiny, &steps[5], 10), 1);
    }

    fn unit_of_test(s: &IbenchStep) -> u64 {
        let rpc = s.rows_per_commit.min(u64::from(s.rate.unwrap_or(0))).max(1);
        u64::from(s.rate.unwrap_or(0)).div_ceil(rpc)
    }
}
