//! One target after another: each target's whole suite (provision, load, steps, stop), then
//! the next; with repeats, the targets take turns at the level of whole runs (A B A B …).
//! The schedule of a single target, of the Insert Benchmark, and of `--sequential`.

use crate::error::LabError;
use crate::plan::RunPlan;
use crate::profiling::Profiling;
use crate::progress::LabProgress;
use crate::rundir::RunDir;
use crate::target::{
    copy_server_log, keep_result, manifest_entry, outcome_problem, provision, retire,
};
use dbdelta_engine::Engine;
use dbdelta_model::RunManifest;
use dbdelta_runner::{StopFlag, TargetOutcome};
use dbdelta_workload::{Action, SuiteItem};

/// Which repeat `run_one_target` runs and what happens to the engine afterwards.
pub(crate) struct Repeat<'a> {
    /// The repeat number when the run has repeats.
    pub number: Option<u32>,
    /// Keep the engine running with its data for the next repeat (--reuse-load).
    pub keep: bool,
    /// The engine kept by the previous repeat, and where to keep this one.
    pub slot: &'a mut Option<Box<dyn Engine>>,
}

/// What one run needs besides the target: the plan, where results go, how it is watched.
pub(crate) struct Bench<'a> {
    pub plan: &'a RunPlan,
    pub dir: &'a RunDir,
    pub profiling: Option<&'a Profiling>,
    pub stop: &'a StopFlag,
    pub progress: &'a dyn LabProgress,
}

/// Provisions and runs one target. `Ok(Some(msg))` when the target could not run at all.
pub(crate) fn run_one_target(
    b: &Bench<'_>,
    spec: &crate::plan::Target,
    manifest: &mut RunManifest,
    rep: Repeat<'_>,
) -> Result<Option<String>, LabError> {
    let (plan, dir) = (b.plan, b.dir);
    let repeat = rep.number;
    let reused = rep.slot.take();
    // Every repeat starts from a fresh scratch area (a new server and a new load) unless the
    // engine of the previous repeat was kept (--reuse-load).
    let scratch = match repeat {
        // Prepared data (--use-existing) is the same for every repeat.
        Some(k) if k > 1 && reused.is_none() && plan.existing.is_none() => {
            dir.scratch_dir(&format!("{}.r{k}", spec.name))?
        }
        _ => plan.scratch_dir(&spec.name, || dir.scratch_dir(&spec.name))?,
    };
    let tdir = dir.target_dir(&spec.name)?;
    let entry_idx = manifest_entry(manifest, &spec.name)?;
    let what = match repeat {
        Some(k) => format!("[{}] repeat {k}: starting {}", spec.name, spec.redacted()),
        None => format!("[{}] starting {}", spec.name, spec.redacted()),
    };
    b.progress.message(&what);
    let suite = match &reused {
        // The data is already loaded: run the suite without its load action.
        Some(_) => {
            let mut suite = plan.suite.clone();
            suite.items.retain(|i| {
                !matches!(
                    i,
                    SuiteItem::Action {
                        action: Action::Load,
                        ..
                    }
                )
            });
            suite
        }
        None => plan.suite.clone(),
    };
    let engine = match provision(
        plan, spec, reused, &scratch, &tdir, manifest, dir, b.progress,
    )? {
        Ok(e) => e,
        Err(msg) => return Ok(Some(msg)),
    };
    let mut sink = |r: &dbdelta_model::StepResult| keep_result(dir, r, repeat);
    // One segment of a run: join the run's barrier on this target first.
    let joined = match &plan.segment {
        Some(seg) => {
            match crate::segment::join(plan, seg, spec, engine.as_ref(), b.stop, b.progress) {
                Ok(j) => Some(j),
                Err(e) => {
                    retire(engine, spec, &tdir, &scratch, plan.keep_data, b.progress);
                    return Err(e);
                }
            }
        }
        None => None,
    };
    let outcome = match &plan.ibench {
        Some(ib) => dbdelta_runner::ibench::run_ibench(
            engine.as_ref(),
            &spec.name,
            &dbdelta_workload::ibench::steps::builtin(),
            ib,
            &ibench_env(plan),
            b.stop,
            b.progress,
            &mut sink,
        ),
        None => {
            let profiling = b.profiling.map(|p| p.for_target(dir.path(), &spec.name));
            let t = dbdelta_runner::TargetUnderTest {
                name: &spec.name,
                engine: engine.as_ref(),
                profiling: profiling.as_ref(),
                segment: joined.as_ref().map(|j| {
                    j.sync.clone() as std::sync::Arc<dyn dbdelta_runner::segment::SegmentSync>
                }),
            };
            dbdelta_runner::run_interleaved(
                std::slice::from_ref(&t),
                &suite,
                &plan.options,
                1,
                b.stop,
                b.progress,
                &mut sink,
            )
            .map(|mut o| o.pop().unwrap_or(TargetOutcome::Complete))
        }
    };
    drop(joined);
    if rep.keep && matches!(outcome, Ok(TargetOutcome::Complete)) {
        copy_server_log(engine.as_ref(), &tdir);
        *rep.slot = Some(engine);
    } else {
        retire(engine, spec, &tdir, &scratch, plan.keep_data, b.progress);
    }
    outcome_problem(outcome, spec, manifest, entry_idx, b.progress)
}

/// Where the Insert Benchmark's OS sampler looks and what it may drop, from the plan.
pub(crate) fn ibench_env(plan: &RunPlan) -> dbdelta_runner::ibench::IbenchEnv {
    dbdelta_runner::ibench::IbenchEnv {
        os_metrics: plan.options.os_metrics,
        device: plan.options.device.clone(),
        i_own_this_database: plan.options.i_own_this_database,
    }
}
