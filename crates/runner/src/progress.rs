//! Progress reporting hooks, so the CLI can draw bars without the runner knowing about it.

use crate::planned::PlannedStep;
use dbdelta_model::StepResult;
use std::time::Duration;

/// A measured step (at one thread count) begins its rounds on every target.
#[derive(Debug, Clone, Copy)]
pub struct StepStart<'a> {
    /// Its place among the sequence's measured steps, from 1.
    pub index: usize,
    /// How many measured steps the sequence has.
    pub total: usize,
    /// Its plan: label, thread count, rounds, windows, estimated wall time.
    pub plan: &'a PlannedStep,
    /// Estimated wall time of this step and every later one (loads and settles not
    /// included).
    pub remaining: Duration,
    /// Every measured step of the sequence as planned (to align the lines of all steps).
    pub steps: &'a [PlannedStep],
    /// How many targets measure it.
    pub targets: usize,
}

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
    /// A measured step of a suite begins its rounds on every target; each round's
    /// [`Progress::step_started`]/[`Progress::step_finished`] follow, then
    /// [`Progress::sequence_step_finished`].
    fn sequence_step_started(&self, step: &StepStart<'_>) {
        let _ = step;
    }
    /// Every round of the step that began last ended.
    fn sequence_step_finished(&self) {}
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
