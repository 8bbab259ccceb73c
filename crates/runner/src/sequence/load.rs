//! A target's load: the suite's benchmark creates and fills its data set; the result holds
//! the rows, the time and, with OS metrics, the cost per row.

use super::action::action_result;
use super::target::TargetUnderTest;
use crate::progress::Progress;
use dbdelta_model::{RunOptions, StepKind, StepResult, StepStatus};
use dbdelta_workload::{Benchmark, LoadError};
use std::time::Instant;

/// Loads one target: the rows loaded, or why the load failed (its result says so too).
/// Only the sink's error ends the run.
pub(super) fn run_load<E>(
    t: &TargetUnderTest<'_>,
    order: u32,
    bench: &dyn Benchmark,
    opts: &RunOptions,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&StepResult) -> Result<(), E>,
) -> Result<Result<u64, LoadError>, E> {
    progress.message(&match bench.load_summary(opts) {
        Some(what) => format!("[{}] load: {what}", t.name),
        None => format!("[{}] load", t.name),
    });
    let sampler = crate::observe::start_sampler(t.engine, opts.os_metrics, &opts.device, None);
    let start = Instant::now();
    let loaded = bench.load(t.engine, opts);
    let secs = start.elapsed().as_secs_f64();
    let os = sampler.map(|s| s.stop());
    match loaded {
        Ok(rows) => {
            let mut r = action_result(
                t.name,
                order,
                StepKind::Load,
                "load",
                StepStatus::Ok,
                secs,
                rows,
            );
            // Per-row costs, like sb.prepare.met (normalised by rows/s).
            if let Some(os) = os {
                r.costs = dbdelta_osmetrics::op_costs(&os.summary, r.throughput.value);
                r.os = Some(os);
            }
            sink(&r)?;
            Ok(Ok(rows))
        }
        Err(e) => {
            sink(&action_result(
                t.name,
                order,
                StepKind::Load,
                "load",
                StepStatus::Failed {
                    reason: e.to_string(),
                },
                0.0,
                0,
            ))?;
            Ok(Err(e))
        }
    }
}
