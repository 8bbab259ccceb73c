//! One target's life in a run: provisioned (opened, its version and settings recorded, its
//! connection limit checked), measured by a schedule, then retired (stopped, its server log
//! kept, its data removed unless kept). Shared by every schedule.

use crate::error::{chain, LabError};
use crate::plan::RunPlan;
use crate::progress::LabProgress;
use crate::rundir::RunDir;
use dbdelta_engine::Engine;
use dbdelta_model::{RunManifest, StepResult, TargetSpec};
use dbdelta_runner::TargetOutcome;
use std::path::Path;

/// What a target's outcome means for the run: `Err` when its results could not be kept,
/// `Ok(Some(msg))` when its load failed.
pub(crate) fn outcome_problem(
    outcome: Result<TargetOutcome, LabError>,
    spec: &TargetSpec,
    manifest: &mut RunManifest,
    entry_idx: usize,
    progress: &dyn LabProgress,
) -> Result<Option<String>, LabError> {
    match outcome {
        Err(e) => Err(LabError::Results(format!(
            "cannot keep results of target {}: {}",
            spec.name,
            chain(&e)
        ))),
        Ok(TargetOutcome::LoadFailed(reason)) => {
            let msg = format!("target {}: load failed: {reason}", spec.name);
            manifest.targets[entry_idx].error = Some(format!("load failed: {reason}"));
            progress.error(&msg);
            Ok(Some(msg))
        }
        Ok(TargetOutcome::Complete | TargetOutcome::Interrupted) => Ok(None),
    }
}

/// Opens a target (or takes the engine kept by the previous repeat), records its version and
/// settings in the manifest, and checks its connection limit. `Ok(Err(msg))` when the
/// target cannot run; the message is told and in the manifest.
#[allow(clippy::too_many_arguments)]
pub(crate) fn provision(
    plan: &RunPlan,
    spec: &crate::plan::Target,
    reused: Option<Box<dyn Engine>>,
    scratch: &Path,
    tdir: &Path,
    manifest: &mut RunManifest,
    dir: &RunDir,
    progress: &dyn LabProgress,
) -> Result<Result<Box<dyn Engine>, String>, LabError> {
    let entry_idx = manifest_entry(manifest, &spec.name)?;
    let opened = match reused {
        Some(e) => Ok(e),
        None => spec.open(scratch, &plan.open),
    };
    let mut engine: Box<dyn Engine> = match opened {
        Ok(e) => e,
        Err(e) => {
            // Engines name the target in their messages already.
            let msg = match e.to_string() {
                m if m.contains(&format!("target '{}'", spec.name)) => m,
                m => format!("target {}: {m}", spec.name),
            };
            manifest.targets[entry_idx].error = Some(e.to_string());
            progress.error(&msg);
            return Ok(Err(msg));
        }
    };
    match engine.info() {
        Ok(info) => {
            let _ = crate::rundir::write_atomic(
                &tdir.join("version.txt"),
                format!("{}\n", info.version).as_bytes(),
            );
            let mut settings = info.settings;
            // A server built by dbdelta: how it was built (source, recipe, flags, compiler).
            settings.extend(crate::build::build_settings(spec));
            // Fetched binaries: which package, version and checksum.
            settings.extend(crate::dist::dist_settings(spec));
            // A librocksdb dbdelta built: how (source, recipe, make line, its db_bench).
            settings.extend(crate::rocks_build::build_settings(spec));
            let _ = crate::rundir::write_atomic(
                &tdir.join("settings.json"),
                &serde_json::to_vec_pretty(&settings).unwrap_or_default(),
            );
            let e = &mut manifest.targets[entry_idx];
            e.version = Some(info.version);
            e.settings = settings;
        }
        Err(e) => progress.warning(&format!(
            "[{}] cannot read version/settings: {e}",
            spec.name
        )),
    }
    dir.write_manifest(manifest)?;
    if let Some(problem) = crate::capacity::over_server_limit(engine.as_ref(), plan) {
        let msg = format!("target {}: {problem}", spec.name);
        manifest.targets[entry_idx].error = Some(problem);
        progress.error(&msg);
        let _ = engine.shutdown();
        return Ok(Err(msg));
    }
    Ok(Ok(engine))
}

/// The index of a target's entry in the manifest.
pub(crate) fn manifest_entry(manifest: &RunManifest, name: &str) -> Result<usize, LabError> {
    manifest
        .targets
        .iter()
        .position(|t| t.name == name)
        .ok_or(LabError::MissingTarget)
}

/// Keeps the server log of a target in its directory of the run.
pub(crate) fn copy_server_log(engine: &dyn Engine, tdir: &Path) {
    if let Some(log) = engine.server_log() {
        let _ = std::fs::copy(&log, tdir.join("server.log"));
    }
}

/// Stops a target's engine, keeps its server log, and removes its data unless `keep_data`.
pub(crate) fn retire(
    mut engine: Box<dyn Engine>,
    spec: &TargetSpec,
    tdir: &Path,
    scratch: &Path,
    keep_data: bool,
    progress: &dyn LabProgress,
) {
    copy_server_log(engine.as_ref(), tdir);
    if let Err(e) = engine.shutdown() {
        progress.warning(&format!("[{}] shutdown: {e}", spec.name));
    }
    drop(engine);
    if !keep_data {
        let _ = std::fs::remove_dir_all(scratch);
    }
}

/// Writes one step result into the run directory (as repeat `repeat` when given); the
/// runner's sink.
pub(crate) fn keep_result(
    dir: &RunDir,
    r: &StepResult,
    repeat: Option<u32>,
) -> Result<(), LabError> {
    let written = match repeat {
        Some(k) => {
            let mut r = r.clone();
            r.repeat = k;
            dir.write_result(&r)
        }
        None => dir.write_result(r),
    };
    written.map(|_| ())
}
