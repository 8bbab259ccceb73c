//! The run: [`Lab::prepare`] checks the plan against this machine (builds, open files,
//! threads, disk room) and creates the run directory; [`Lab::run`] provisions the targets,
//! runs the schedule (interleaved rounds, one target after another, or a query set), writes
//! the reports and indexes the run in the history.

use crate::error::{chain, LabError};
use crate::interleave::Interleaved;
use crate::outcome::{Ending, RunOutcome};
use crate::plan::{History, OutDir, RunPlan};
use crate::profiling::Profiling;
use crate::progress::LabProgress;
use crate::rundir::{Claim, RunDir};
use crate::sequential::{run_one_target, Bench, Repeat};
use dbdelta_engine::Engine;
use dbdelta_model::{RunManifest, RunStatus, TargetManifest};
use dbdelta_runner::StopFlag;
use std::sync::Arc;

/// A run whose checks passed and whose directory exists, ready to measure.
pub struct Lab<P: LabProgress + 'static> {
    plan: RunPlan,
    dir: RunDir,
    /// The run directory's lock, held until the run returns.
    claim: Claim,
    manifest: RunManifest,
    profiling: Option<Profiling>,
    progress: Arc<P>,
}

impl<P: LabProgress + 'static> Lab<P> {
    /// Builds the targets that are built from source, fetches those on fetched binaries, checks that this machine can hold the
    /// run (open files, memory, threads, disk), creates the run directory with its manifest,
    /// and sets up profiling.
    pub fn prepare(mut plan: RunPlan, progress: Arc<P>) -> Result<Self, LabError> {
        // postgres-build: targets are built (or found in the cache) before anything runs.
        crate::build::materialize(&mut plan.targets, &*progress)?;
        // postgres-dist: targets are fetched (or found in the cache) likewise.
        crate::dist::materialize(&mut plan.targets, &*progress)?;
        // rocksdb-build: targets likewise (librocksdb.so and db_bench from source).
        crate::rocks_build::materialize(&mut plan.targets, &*progress)?;
        // ferretdb: targets' FerretDB is built (or found in the cache) likewise.
        crate::ferret::materialize(&plan.targets, &*progress)?;
        if let Some(data) = plan.existing.clone() {
            // The prepared data is checked, kept, and stands for the load.
            crate::prepared::check(&plan, &data, &*progress)?;
            plan.keep_data = true;
            plan.suite.items.retain(|item| {
                !matches!(
                    item,
                    dbdelta_workload::SuiteItem::Action {
                        action: dbdelta_workload::Action::Load,
                        ..
                    }
                )
            });
        }
        let (most, flag) = crate::capacity::most_clients(&plan);
        let active = plan.options.client.active.map_or(most, |k| k.min(most));
        // A segment opens only its share of every step's connections (its fds, threads and
        // memory); the target's own limit is checked against the whole run's.
        let (most, active) = match &plan.segment {
            Some(s) => (s.segment.share(most), s.segment.share(active)),
            None => (most, active),
        };
        crate::capacity::ensure_capacity(
            flag.unwrap_or("--connections"),
            u64::from(most),
            u64::from(active),
        )?;
        // Prepared data is loaded already: a run on it needs no room for a load.
        if plan.existing.is_none() {
            crate::disk::ensure_room(&plan)?;
        }
        // TLS and compressed connections have no session form either.
        if plan.open.tls
            || plan.open.compress
            || plan
                .targets
                .iter()
                .any(crate::plan::Target::thread_per_connection)
        {
            crate::capacity::ensure_threads(flag.unwrap_or("--threads"), u64::from(most))?;
        }
        let (dir, claim) = match &plan.out {
            OutDir::Exact(p) => RunDir::create(p.clone())?,
            OutDir::Under(parent) => RunDir::create_unique(
                parent,
                &format!("{}-{}", crate::time::compact_now(), plan.options.suite),
            )?,
        };
        let mut manifest = RunManifest {
            schema: dbdelta_model::manifest::MANIFEST_SCHEMA,
            tool: plan.tool.clone(),
            host: dbdelta_osmetrics::host::host_info(),
            started: crate::time::rfc3339_now(),
            finished: None,
            status: RunStatus::Running,
            options: plan.options.clone(),
            targets: plan
                .targets
                .iter()
                .map(|t| TargetManifest {
                    name: t.name.clone(),
                    engine: t.engine.clone(),
                    spec: t.redacted(),
                    version: None,
                    settings: Default::default(),
                    error: None,
                })
                .collect(),
            command: plan.command.clone(),
            segments: plan.segment.as_ref().map(|s| dbdelta_model::RunSegments {
                count: s.segment.count,
                index: Some(s.segment.index),
                run: s.run.clone(),
                hosts: vec![crate::segment::hostname()],
            }),
        };
        // Base first: reports take the first manifest target as the default base.
        if let Some(i) = manifest.targets.iter().position(|t| t.name == plan.base) {
            let base = manifest.targets.remove(i);
            manifest.targets.insert(0, base);
        }
        dir.write_manifest(&manifest)?;
        progress.note(&format!("run directory: {}", dir.path().display()));
        for w in &manifest.host.warnings {
            progress.warning(w);
        }
        let profiling = crate::profiling::setup(plan.profile.clone(), dir.path(), &*progress)?;
        Ok(Lab {
            plan,
            dir,
            claim,
            manifest,
            profiling,
            progress,
        })
    }

    /// The run directory.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Measures every target, writes the reports and indexes the run. `stop` ends it early
    /// (an interrupt); when an interrupt's deadline passes, the run directory is closed as
    /// interrupted and the process exits (see [`crate::interrupt`]).
    pub fn run(self, stop: &StopFlag) -> Result<RunOutcome, LabError> {
        let Lab {
            plan,
            dir,
            claim: _claim,
            mut manifest,
            profiling,
            progress,
        } = self;
        crate::interrupt::set_closer({
            let dir = dir.clone();
            let base = plan.base.clone();
            let ibench = plan.ibench.is_some();
            let keep_data = plan.keep_data;
            let progress = Arc::clone(&progress);
            move || crate::reports::close_interrupted(&dir, &base, ibench, keep_data, &*progress)
        });
        let bench = Bench {
            plan: &plan,
            dir: &dir,
            profiling: profiling.as_ref(),
            stop,
            progress: &*progress,
        };
        let outcome = |ending, closing| RunOutcome {
            dir: dir.path().to_path_buf(),
            base: plan.base.clone(),
            fail_on: plan.fail_on,
            ending,
            _closing: closing,
        };
        if let Some(qs) = &plan.queryset {
            let (result, problems, closing) = crate::queryset::run(&bench, qs, &mut manifest)?;
            return Ok(outcome(
                Ending::QuerySet { result, problems },
                Some(closing),
            ));
        }
        let mut failures = Vec::new();
        let schedule = plan.schedule;
        let repeats = schedule.repeats;
        // With --reuse-load every target's engine (server and data) stays up between repeats.
        let mut kept: Vec<Option<Box<dyn Engine>>> = plan.targets.iter().map(|_| None).collect();
        let mut sequential = plan.targets.len() < 2 || schedule.sequential || schedule.reuse_load;
        if !sequential {
            match crate::interleave::run(&bench, &mut manifest)? {
                Interleaved::Done(problems) => failures = problems,
                Interleaved::TooLittleMemory(why) => {
                    progress.warning(&why);
                    sequential = true;
                }
            }
        }
        // Sequential repeats interleave the targets (A B A B …) at the level of whole runs.
        for repeat in (1..=repeats).filter(|_| sequential) {
            for (ti, spec) in plan.targets.iter().enumerate() {
                if stop.requested() {
                    break;
                }
                let rep = Repeat {
                    number: (repeats > 1).then_some(repeat),
                    keep: schedule.reuse_load && repeat < repeats,
                    slot: &mut kept[ti],
                };
                match run_one_target(&bench, spec, &mut manifest, rep) {
                    Ok(None) => {}
                    Ok(Some(problem)) => failures.push(problem),
                    Err(e) => {
                        // The sink could not write: results can no longer be kept.
                        manifest.status = RunStatus::Interrupted;
                        let _ = dir.write_manifest(&manifest);
                        return Err(e);
                    }
                }
                dir.write_manifest(&manifest)?;
            }
        }
        let closing = crate::interrupt::closing();
        if let Some(data) = &plan.existing {
            crate::prepared::record_after_run(&plan, data, dir.path(), &*progress);
        }
        // Engines kept for a repeat that never came (Ctrl-C): stop their servers now.
        for mut engine in kept.into_iter().flatten() {
            let _ = engine.shutdown();
        }
        manifest.finished = Some(crate::time::rfc3339_now());
        manifest.status = if stop.requested() {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        dir.write_manifest(&manifest)?;
        if profiling.is_some() {
            crate::profiling::finish(&plan, dir.path(), &*progress);
        }
        crate::reports::write_reports(&dir, &plan.base, plan.ibench.is_some(), &*progress)?;
        if let History::Store(flag) = &plan.history {
            // A store problem is a warning, never a lost run.
            match crate::history::index_run(flag.as_deref(), dir.path()) {
                Ok((n, where_)) => {
                    progress.note(&format!("indexed {n} result(s) in the history {where_}"))
                }
                Err(e) => progress.warning(&format!(
                    "the run was not indexed in the results history: {}",
                    chain(&e)
                )),
            }
        }
        Ok(outcome(Ending::Suite { failures }, Some(closing)))
    }
}
