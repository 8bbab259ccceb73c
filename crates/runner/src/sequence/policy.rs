//! How many rounds a measured step runs: a fixed number (`--repeat`, the scale's preset), or
//! as many as a policy asks for after each round (`--resolve`: until the step's interval is
//! narrow enough, within a budget). The runner only asks; the policy lives with the caller.

use dbdelta_model::StepResult;
use dbdelta_workload::Step;

/// Decides, round by round, how long a step at one thread count goes on.
pub trait RoundPolicy {
    /// Rounds every compared step runs at least.
    fn min_rounds(&self) -> u32;
    /// Whether rounds beyond the minimum may follow (results then carry round numbers even
    /// when the minimum is one).
    fn adaptive(&self) -> bool {
        false
    }
    /// Called after round `done` (at least [`RoundPolicy::min_rounds`]) of `step` at
    /// `threads`, before the round's results are kept: `so_far` holds every earlier round's
    /// results of this step and thread count (all targets), `last` this round's. `true` runs
    /// another round; when it returns `false` it may note on `last` what the step reached.
    fn another(
        &mut self,
        step: &Step,
        threads: u32,
        done: u32,
        so_far: &[StepResult],
        last: &mut [StepResult],
    ) -> bool;
}

/// Exactly `n` rounds per step.
#[derive(Debug, Clone, Copy)]
pub struct FixedRounds(pub u32);

impl RoundPolicy for FixedRounds {
    fn min_rounds(&self) -> u32 {
        self.0.max(1)
    }
    fn another(
        &mut self,
        _: &Step,
        _: u32,
        _: u32,
        _: &[StepResult],
        _: &mut [StepResult],
    ) -> bool {
        false
    }
}
