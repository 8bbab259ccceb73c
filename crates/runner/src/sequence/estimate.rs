//! The plan of a sequence's measured steps before anything runs: for each selected step and
//! thread count its rounds, warm-ups, window and an estimate of its wall time, so a console
//! can count steps, show an ETA and print a dry run.

use super::plan::{thread_counts, window_of};
use super::selected;
use crate::planned::PlannedStep;
use dbdelta_model::RunOptions;
use dbdelta_workload::Suite;
use std::time::Duration;

/// The measured steps `opts` selects from `suite`, in run order, at each thread count, for
/// `targets` interleaved targets and `rounds` rounds; `turns` when every target's engine is
/// fit for turns (`Engine::fit_for_turns`; the flag `--turn-ms` is read here).
pub fn planned_steps(
    suite: &Suite,
    opts: &RunOptions,
    targets: usize,
    rounds: u32,
    turns: bool,
) -> Vec<PlannedStep> {
    let targets = targets.max(1) as u32;
    let mut out = Vec::new();
    for step in selected(suite, opts) {
        let rounds = if step.warm { 1 } else { rounds.max(1) };
        let warmup = Duration::from_secs_f64(opts.warmup_secs.max(0.0));
        let round_warmup = opts
            .round_warmup_secs
            .map_or(warmup, |w| Duration::from_secs_f64(w.max(0.0)));
        let window = window_of(step, opts);
        let in_turns = turns
            && opts.turn_ms.is_some()
            && targets > 1
            && !step.warm
            && step.rate.or(opts.rate).is_none();
        // Rounds before the last share one window in turns; the last is one window per
        // target (a single round too, with the first round's warm-up).
        let estimate = if rounds == 1 {
            (warmup + window) * targets
        } else if in_turns {
            warmup + window + (round_warmup + window) * (rounds - 2 + targets)
        } else {
            (warmup + window) * targets + (round_warmup + window) * targets * (rounds - 1)
        };
        for threads in thread_counts(step, opts) {
            out.push(PlannedStep {
                label: step.label.clone(),
                threads,
                rounds,
                warmup,
                round_warmup,
                window,
                in_turns,
                estimate,
            });
        }
    }
    out
}
