//! A measured step of a sequence as planned before it runs (what progress is told, and
//! what a dry run prints); [`crate::sequence::estimate`] makes them.

use std::time::Duration;

/// One measured step at one thread count, as planned.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// The step's label (`read_only range=100`).
    pub label: String,
    /// Thread count.
    pub threads: u32,
    /// Rounds (1 for a warm step, which only fills caches).
    pub rounds: u32,
    /// Warm-up of the first round.
    pub warmup: Duration,
    /// Warm-up of the later rounds.
    pub round_warmup: Duration,
    /// Measured window of one round.
    pub window: Duration,
    /// The later rounds can share one window in turns (`--turn-ms`, two targets or more, a
    /// closed loop that runs for a time); an engine whose writes leave background work still
    /// measures its write steps in their own windows.
    pub in_turns: bool,
    /// Estimated wall time of all rounds on all targets (loads and settles not included;
    /// a step that ends after a count of operations is estimated at one window).
    pub estimate: Duration,
}
