//! `--resolve`: rounds are added to each step until the 95 % interval of every target/base
//! ratio is at most the goal's half-width wide (the interval the report will print, from
//! `dbdelta_report::verdict::paired_half_width_pct`), within a budget for the whole run.
//! The budget is shared out as the run goes: a step may use the time left less what the steps
//! after it are expected to need (twice the mean time the finished steps took, each; before
//! any finished, the time left divided by the steps left), so a step that resolves early
//! leaves its share to the
//! others and a noisy step cannot starve the ones after it.

use crate::progress::LabProgress;
use dbdelta_model::{ResolveStop, Resolved, RunOptions, StepResult};
use dbdelta_runner::RoundPolicy;
use dbdelta_workload::{Step, Suite};
use std::time::{Duration, Instant};

/// Rounds a step runs at least under `--resolve` unless `--repeat` says otherwise: the
/// first (one window per target) and two in turns, the fewest that give an interval.
pub const MIN_ROUNDS: u32 = 3;

/// The most rounds one step may run, whatever the budget: a bound on the results a step
/// keeps (a file per target and round). 400 stopped SQLite's two range-notcovered-si steps
/// at ±2.1 % and ±2.2 % of a ±2 % goal with the budget not spent; they need ~500.
pub const MAX_ROUNDS: u32 = 1000;

/// Failed round-results (any target) after which a step gets no more rounds.
pub const MAX_FAILED_ROUNDS: usize = 3;

/// `--resolve` and `--budget` as resolved by the binary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolve {
    /// The half-width to reach, percent of the ratio.
    pub goal_pct: f64,
    /// Measuring time the whole run may use for it.
    pub budget: Duration,
}

/// The round policy of a `--resolve` run.
pub(crate) struct ResolvePolicy<'a> {
    goal: Resolve,
    min: u32,
    base: &'a str,
    deadline: Instant,
    /// (step order, threads) and the deadline of the step being measured.
    current: Option<((u32, u32), Instant)>,
    /// Step × thread-count units not yet started.
    units_left: usize,
    /// Time the finished units took, and how many finished.
    spent: Duration,
    finished: u32,
    /// When the unit being measured got its share.
    started: Instant,
    progress: &'a dyn LabProgress,
}

impl<'a> ResolvePolicy<'a> {
    /// A policy for `suite` as `opts` selects it; the budget starts now.
    pub(crate) fn new(
        goal: Resolve,
        min: u32,
        base: &'a str,
        suite: &Suite,
        opts: &RunOptions,
        progress: &'a dyn LabProgress,
    ) -> Self {
        let units_left = dbdelta_runner::sequence::selected(suite, opts)
            .into_iter()
            .filter(|s| !s.warm && !s.once)
            .map(|s| match s.threads {
                Some(_) => 1,
                None => opts.threads.len().max(1),
            })
            .sum();
        ResolvePolicy {
            goal,
            min: min.max(2),
            base,
            deadline: Instant::now() + goal.budget,
            current: None,
            units_left,
            spent: Duration::ZERO,
            finished: 0,
            started: Instant::now(),
            progress,
        }
    }

    /// The deadline of the step at `key`, set when its first decision is asked for: its
    /// share of the budget left.
    fn step_deadline(&mut self, key: (u32, u32)) -> Instant {
        match self.current {
            Some((k, d)) if k == key => d,
            _ => {
                let now = Instant::now();
                let left = self.deadline.saturating_duration_since(now);
                let typical = (self.finished > 0).then(|| self.spent / self.finished);
                let share = step_share(left, self.units_left, typical);
                self.units_left = self.units_left.saturating_sub(1);
                let d = now + share;
                self.current = Some((key, d));
                self.started = now;
                d
            }
        }
    }
}

/// The share of the budget `left` for the next of `units_left` units (itself included): all
/// of it but what the units after it are expected to need, twice `typical` each (the mean
/// time of the finished units: most steps resolve in a few rounds, so a noisy one may use
/// what they leave instead of the budget ending unspent), and never less than an equal share.
fn step_share(left: Duration, units_left: usize, typical: Option<Duration>) -> Duration {
    let units = units_left.max(1) as u32;
    let equal = left / units;
    match typical {
        Some(t) => left.saturating_sub(t * 2 * (units - 1)).max(equal),
        None => equal,
    }
}

/// The widest half-width over the compared targets, percent; `None` while any of them has
/// no interval.
pub(crate) fn widest_half_width(base: &str, results: &[&StepResult]) -> Option<f64> {
    let of = |t: &str| -> Vec<&StepResult> {
        results.iter().copied().filter(|r| r.target == t).collect()
    };
    let b = of(base);
    let mut targets: Vec<&str> = results
        .iter()
        .map(|r| r.target.as_str())
        .filter(|t| *t != base)
        .collect();
    targets.sort_unstable();
    targets.dedup();
    if b.is_empty() || targets.is_empty() {
        return None;
    }
    let mut widest: f64 = 0.0;
    for t in targets {
        widest = widest.max(dbdelta_report::verdict::paired_half_width_pct(&b, &of(t))?);
    }
    Some(widest)
}

impl RoundPolicy for ResolvePolicy<'_> {
    fn min_rounds(&self) -> u32 {
        self.min
    }

    fn adaptive(&self) -> bool {
        true
    }

    fn another(
        &mut self,
        step: &Step,
        threads: u32,
        done: u32,
        so_far: &[StepResult],
        last: &mut [StepResult],
    ) -> bool {
        let deadline = self.step_deadline((step.order, threads));
        let all: Vec<&StepResult> = so_far.iter().chain(last.iter()).collect();
        let half = widest_half_width(self.base, &all);
        // A failed round drops out of the pairs (a busy host can starve one window); a step
        // whose rounds keep failing is broken, not noisy.
        let failed = all
            .iter()
            .filter(|r| !(r.is_complete() && r.is_ok()))
            .count();
        let stop = if failed >= MAX_FAILED_ROUNDS {
            ResolveStop::Failed
        } else if half.is_some_and(|h| h <= self.goal.goal_pct) {
            ResolveStop::Resolved
        } else if done >= MAX_ROUNDS {
            ResolveStop::MaxRounds
        } else if Instant::now() >= deadline {
            ResolveStop::Budget
        } else {
            return true;
        };
        self.spent += self.started.elapsed();
        self.finished += 1;
        let resolved = Resolved {
            goal_pct: self.goal.goal_pct,
            half_width_pct: half,
            rounds: done,
            stop,
        };
        for r in last.iter_mut() {
            r.resolved = Some(resolved);
        }
        self.progress.message(&format!(
            "[resolve] {} dop={threads}: {}",
            step.label,
            dbdelta_report::resolved::describe(&resolved)
        ));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::step_share;
    use std::time::Duration;

    #[test]
    fn a_step_gets_what_the_steps_after_it_are_expected_to_leave() {
        let s = Duration::from_secs;
        // Nothing finished yet: an equal share.
        assert_eq!(step_share(s(600), 40, None), s(15));
        // Finished steps took 2 s each: the 9 after this one are kept 4 s each.
        assert_eq!(step_share(s(300), 10, Some(s(2))), s(264));
        // Slow steps so far: never below an equal share.
        assert_eq!(step_share(s(100), 10, Some(s(30))), s(10));
        // The last step gets all that is left.
        assert_eq!(step_share(s(50), 1, Some(s(5))), s(50));
        assert_eq!(step_share(Duration::ZERO, 0, None), Duration::ZERO);
    }
}
