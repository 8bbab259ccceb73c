//! A target's settle point: the engine's maintenance, then the rest of the settle time.

use super::action::action_result;
use super::target::TargetUnderTest;
use crate::control::StopFlag;
use crate::progress::Progress;
use dbdelta_engine::SettleWait;
use dbdelta_model::{RunOptions, StepKind, StepResult, StepStatus};
use std::time::{Duration, Instant};

/// One settle point of the suite for one target.
pub(super) struct SettlePoint<'a> {
    /// Its position in the suite.
    pub order: u32,
    /// It is the suite's `n`-th settle point.
    pub n: u32,
    /// The tables to maintain.
    pub tables: &'a [String],
    /// Rows the target loaded: they set the spec's settle time.
    pub rows: u64,
}

/// Settles one target: the engine's maintenance, then the rest of the settle time (see
/// [`dbdelta_model::SettleTime`]); the result holds what was done, how long it waited and
/// why.
pub(super) fn run_settle<E>(
    t: &TargetUnderTest<'_>,
    point: &SettlePoint<'_>,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<(), E> {
    let secs = opts.settle.secs(point.rows);
    progress.message(&format!("[{}] settle ({secs} s at least)", t.name));
    let why = opts.settle.why(point.rows);
    let stopping = || stop.requested();
    let wait = SettleWait {
        at_least: Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO),
        why: &why,
        stopping: &stopping,
    };
    let start = Instant::now();
    let (status, actions) = match t.engine.settle(point.tables, &wait) {
        Ok(report) => (StepStatus::Ok, report.actions),
        Err(e) => (
            StepStatus::Failed {
                reason: e.to_string(),
            },
            Vec::new(),
        ),
    };
    let mut r = action_result(
        t.name,
        point.order,
        StepKind::Settle,
        &format!("settle-{}", point.n),
        status,
        start.elapsed().as_secs_f64(),
        0,
    );
    r.actions = actions;
    sink(&r)
}
