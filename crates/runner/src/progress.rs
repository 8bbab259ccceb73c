//! Progress reporting hooks, so the CLI can draw bars without the runner knowing about it.

use dbdelta_model::StepResult;
use std::time::Duration;

/// Receives progress while a target runs. Called from the coordinating thread only.
pub trait Progress {
    /// A measured step starts (warm-up first, then the window).
    fn step_started(
        &self,
        target: &str,
        label: &str,
        threads: u32,
        warmup: Duration,
        window: Duration,
    );
    /// About every 100 ms: time since the step started and statements so far (warm-up included).
    fn step_tick(&self, elapsed: Duration, queries: u64);
    /// The step ended (its result was already handed to the sink).
    fn step_finished(&self, result: &StepResult);
    /// A non-measured action or a note.
    fn message(&self, text: &str);
}

/// Progress that shows nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn step_started(&self, _: &str, _: &str, _: u32, _: Duration, _: Duration) {}
    fn step_tick(&self, _: Duration, _: u64) {}
    fn step_finished(&self, _: &StepResult) {}
    fn message(&self, _: &str) {}
}
