//! The suite's shared actions when the run is split into segments: the first segment
//! loads the data and runs the settle points, the others wait for it at the barrier (and
//! keep no result of their own for them). Without segments, the target runs them itself.

use super::load::run_load;
use super::settle::{run_settle, SettlePoint};
use super::target::TargetUnderTest;
use crate::control::StopFlag;
use crate::progress::Progress;
use dbdelta_model::{RunOptions, StepResult};
use dbdelta_workload::Benchmark;

/// Loads the target (or waits for the segment that loads it): the rows loaded, or why the
/// load failed.
pub(super) fn load<E>(
    t: &TargetUnderTest<'_>,
    order: u32,
    bench: &dyn Benchmark,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<Result<u64, String>, E> {
    let Some(sync) = &t.segment else {
        return Ok(run_load(t, order, bench, opts, progress, sink)?.map_err(|e| e.to_string()));
    };
    if sync.segment().leads() {
        let loaded = run_load(t, order, bench, opts, progress, sink)?.map_err(|e| e.to_string());
        let told = sync.lead("load", loaded.as_ref().map(|_| ()).map_err(Clone::clone));
        return Ok(match told {
            Ok(()) => loaded,
            Err(e) => Err(format!(
                "the load could not be told to the other segments: {e}"
            )),
        });
    }
    progress.message(&format!(
        "[{}] load: segment 1 loads the data; waiting for it",
        t.name
    ));
    Ok(match sync.follow("load", stop, progress) {
        Ok(Ok(())) => Ok(bench.loaded_rows(opts)),
        Ok(Err(why)) => Err(format!("segment 1's load failed: {why}")),
        Err(e) => Err(e.to_string()),
    })
}

/// Settles the target (or waits for the segment that settles it).
pub(super) fn settle<E>(
    t: &TargetUnderTest<'_>,
    point: &SettlePoint<'_>,
    opts: &RunOptions,
    stop: &StopFlag,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<(), E> {
    let what = format!("settle-{}", point.n);
    let Some(sync) = &t.segment else {
        return run_settle(t, point, opts, stop, progress, sink);
    };
    if sync.segment().leads() {
        run_settle(t, point, opts, stop, progress, sink)?;
        if let Err(e) = sync.lead(&what, Ok(())) {
            progress.message(&format!("[{}] {what}: {e}", t.name));
        }
        return Ok(());
    }
    progress.message(&format!(
        "[{}] {what}: segment 1 settles the target; waiting for it",
        t.name
    ));
    match sync.follow(&what, stop, progress) {
        Ok(Ok(())) => {}
        Ok(Err(why)) => progress.message(&format!("[{}] {what}: {why}", t.name)),
        Err(e) => progress.message(&format!("[{}] {what}: {e}", t.name)),
    }
    Ok(())
}
