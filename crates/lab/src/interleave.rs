//! The default for two or more targets: every target provisioned and loaded up front, then
//! each step measured on A, B, A, B, … (`--repeat` rounds, or with `--resolve` as many as
//! its interval needs within the budget: crate::resolve), so every ratio is made of pairs
//! measured minutes apart at most and drift of the host lands on both sides of it. Managed
//! servers run side by side; the idle ones cost little. When memory runs short while the
//! targets are provisioned, the run falls back to one target after another.

use crate::capacity::mem_available;
use crate::error::LabError;
use crate::progress::LabProgress;
use crate::resolve::ResolvePolicy;
use crate::sequential::Bench;
use crate::target::{keep_result, outcome_problem, provision, retire};
use dbdelta_engine::Engine;
use dbdelta_model::{RunManifest, TargetSpec};
use dbdelta_runner::{FixedRounds, RoundPolicy, TargetProfiling, TargetUnderTest};
use std::path::PathBuf;

/// Memory that must stay available before one more target is provisioned: its server, its
/// data in the page cache, and the client.
const MIN_AVAILABLE_BYTES: u64 = 2 << 30;

/// How an interleaved run went.
pub(crate) enum Interleaved {
    /// It ran; the messages of targets that could not run or load.
    Done(Vec<String>),
    /// Memory ran short before every target was up: nothing was measured, run them in turn.
    TooLittleMemory(String),
}

struct Up<'a> {
    spec: &'a TargetSpec,
    engine: Box<dyn Engine>,
    tdir: PathBuf,
    scratch: PathBuf,
}

/// Provisions every target, runs the suite interleaved, and stops them all.
pub(crate) fn run(b: &Bench<'_>, manifest: &mut RunManifest) -> Result<Interleaved, LabError> {
    let (plan, dir, profiling, stop, progress) = (b.plan, b.dir, b.profiling, b.stop, b.progress);
    let mut failures = Vec::new();
    let mut up: Vec<Up<'_>> = Vec::new();
    for spec in &plan.targets {
        if stop.requested() {
            break;
        }
        if let (false, Some(avail)) = (up.is_empty(), mem_available()) {
            if avail < MIN_AVAILABLE_BYTES {
                let n = up.len();
                retire_all(up, plan.keep_data, progress);
                return Ok(Interleaved::TooLittleMemory(format!(
                    "only {} MiB of memory is available with {} target(s) up: running the \
                     targets one after another instead of interleaved (pairs are then \
                     measured further apart)",
                    avail >> 20,
                    n
                )));
            }
        }
        let scratch = plan.scratch_dir(&spec.name, || dir.scratch_dir(&spec.name))?;
        let tdir = dir.target_dir(&spec.name)?;
        progress.message(&format!("[{}] starting {}", spec.name, spec.redacted()));
        match provision(plan, spec, None, &scratch, &tdir, manifest, dir, progress)? {
            Ok(engine) => up.push(Up {
                spec,
                engine,
                tdir,
                scratch,
            }),
            Err(msg) => failures.push(msg),
        }
    }
    // One segment of a run: every target's barrier is joined before anything runs.
    let mut joined = Vec::new();
    if let Some(seg) = &plan.segment {
        for u in &up {
            let target = plan.targets.iter().find(|t| t.name == u.spec.name);
            let Some(target) = target else { continue };
            match crate::segment::join(plan, seg, target, u.engine.as_ref(), stop, progress) {
                Ok(j) => joined.push(j),
                Err(e) => {
                    drop(joined);
                    retire_all(up, plan.keep_data, progress);
                    return Err(e);
                }
            }
        }
    }
    let profiles: Vec<Option<TargetProfiling>> = up
        .iter()
        .map(|u| profiling.map(|p| p.for_target(dir.path(), &u.spec.name)))
        .collect();
    let targets: Vec<TargetUnderTest<'_>> = up
        .iter()
        .zip(&profiles)
        .enumerate()
        .map(|(i, (u, p))| TargetUnderTest {
            name: &u.spec.name,
            engine: u.engine.as_ref(),
            profiling: p.as_ref(),
            segment: joined.get(i).map(|j| {
                j.sync.clone() as std::sync::Arc<dyn dbdelta_runner::segment::SegmentSync>
            }),
        })
        .collect();
    let mut sink = |r: &dbdelta_model::StepResult| keep_result(dir, r, None);
    // The Insert Benchmark runs its own rounds: shares of each stateful step (crate
    // dbdelta_runner::ibench::rounds).
    if let Some(ib) = &plan.ibench {
        let ib_targets: Vec<dbdelta_runner::ibench::IbenchTarget<'_>> = targets
            .iter()
            .map(|t| dbdelta_runner::ibench::IbenchTarget {
                name: t.name,
                engine: t.engine,
            })
            .collect();
        let outcomes = dbdelta_runner::ibench::run_ibench_rounds(
            &ib_targets,
            &dbdelta_runner::ibench::IbenchRun {
                steps: &dbdelta_workload::ibench::steps::builtin(),
                opts: ib,
                env: &crate::sequential::ibench_env(plan),
                rounds: plan.schedule.rounds,
            },
            stop,
            progress,
            &mut sink,
        );
        drop(ib_targets);
        drop(targets);
        drop(joined);
        return finish(up, outcomes, plan, dir, manifest, failures, progress);
    }
    let mut fixed = FixedRounds(plan.schedule.rounds);
    let mut resolving = plan.schedule.resolve.map(|goal| {
        ResolvePolicy::new(
            goal,
            plan.schedule.rounds,
            &plan.base,
            &plan.suite,
            &plan.options,
            progress,
        )
    });
    let policy: &mut dyn RoundPolicy = match resolving.as_mut() {
        Some(p) => p,
        None => &mut fixed,
    };
    let outcomes = dbdelta_runner::run_interleaved_with(
        &targets,
        &plan.suite,
        &plan.options,
        policy,
        stop,
        progress,
        &mut sink,
    );
    drop(targets);
    drop(joined);
    finish(up, outcomes, plan, dir, manifest, failures, progress)
}

/// Stops every target and records each one's outcome in the manifest.
fn finish<E: std::error::Error>(
    up: Vec<Up<'_>>,
    outcomes: Result<Vec<dbdelta_runner::TargetOutcome>, E>,
    plan: &crate::plan::RunPlan,
    dir: &crate::rundir::RunDir,
    manifest: &mut RunManifest,
    mut failures: Vec<String>,
    progress: &dyn LabProgress,
) -> Result<Interleaved, LabError> {
    let specs: Vec<&TargetSpec> = up.iter().map(|u| u.spec).collect();
    retire_all(up, plan.keep_data, progress);
    let outcomes = match outcomes {
        Ok(o) => o,
        Err(e) => {
            return Err(LabError::Results(format!(
                "cannot keep the run's results: {}",
                crate::error::chain(&e)
            )))
        }
    };
    for (spec, outcome) in specs.into_iter().zip(outcomes) {
        let Some(idx) = manifest.targets.iter().position(|t| t.name == spec.name) else {
            continue;
        };
        if let Some(msg) = outcome_problem(Ok(outcome), spec, manifest, idx, progress)? {
            failures.push(msg);
        }
    }
    dir.write_manifest(manifest)?;
    Ok(Interleaved::Done(failures))
}

/// Stops every target that is up.
fn retire_all(up: Vec<Up<'_>>, keep_data: bool, progress: &dyn LabProgress) {
    for u in up {
        retire(u.engine, u.spec, &u.tdir, &u.scratch, keep_data, progress);
    }
}
