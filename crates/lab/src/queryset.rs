//! A query-set run (a suite directory): every target is provisioned up front, the runner
//! sets each up and times the queries in interleaved rounds, `queryset.json` is rewritten
//! after every query, and the reports come from it.
//!
//! How it ends: a target that cannot run (it did not start, or its setup failed: the
//! message names the file and line) is an error, a query that failed on a target a failed
//! step, a query whose result differs from the base's a finding (like a failed consistency
//! check).

use crate::error::LabError;
use crate::plan::QuerySetPlan;
use crate::progress::LabProgress;
use crate::rundir::write_atomic;
use crate::sequential::Bench;
use crate::target::{provision, retire};
use dbdelta_engine::Engine;
use dbdelta_model::queryset::{QuerySetResult, QUERYSET_FILE};
use dbdelta_model::{RunManifest, RunStatus};
use dbdelta_report::queryset::{self, QuerySetReport};
use dbdelta_runner::queryset::{run_query_set, QsTargetUnderTest};
use std::path::{Path, PathBuf};
use std::sync::MutexGuard;

/// Runs the query set of the plan and writes its reports: the result, the messages of
/// targets that could not run, and the guard of the run's orderly close (see
/// [`crate::interrupt::closing`]).
pub(crate) fn run(
    b: &Bench<'_>,
    qs: &QuerySetPlan,
    manifest: &mut RunManifest,
) -> Result<(QuerySetResult, Vec<String>, MutexGuard<'static, ()>), LabError> {
    let (plan, dir, stop, progress) = (b.plan, b.dir, b.stop, b.progress);
    let mut problems = Vec::new();
    let mut engines: Vec<(usize, Box<dyn Engine>, PathBuf, PathBuf)> = Vec::new();
    for (i, spec) in plan.targets.iter().enumerate() {
        if stop.requested() {
            break;
        }
        let scratch = dir.scratch_dir(&spec.name)?;
        let tdir = dir.target_dir(&spec.name)?;
        progress.note(&format!("[{}] starting {}", spec.name, spec.redacted()));
        match provision(plan, spec, None, &scratch, &tdir, manifest, dir, progress)? {
            Ok(engine) => engines.push((i, engine, scratch, tdir)),
            Err(msg) => problems.push(msg),
        }
    }
    let under_test: Vec<QsTargetUnderTest<'_>> = engines
        .iter()
        .map(|(i, engine, _, _)| QsTargetUnderTest {
            name: &plan.targets[*i].name,
            engine_name: &plan.targets[*i].engine,
            engine: engine.as_ref(),
        })
        .collect();
    let file = dir.path().join(QUERYSET_FILE);
    let mut sink = |r: &QuerySetResult| -> Result<(), KeepError> {
        let bytes = serde_json::to_vec_pretty(r)?;
        write_atomic(&file, &bytes).map_err(|source| KeepError::Write {
            path: file.clone(),
            source,
        })
    };
    let limit = std::time::Duration::try_from_secs_f64(plan.options.client.statement_timeout_secs)
        .unwrap_or(std::time::Duration::MAX);
    let outcome = run_query_set(
        &qs.set,
        &under_test,
        qs.repeat,
        limit,
        stop,
        progress,
        &mut sink,
    );
    drop(under_test);
    for (i, engine, scratch, tdir) in engines {
        retire(
            engine,
            &plan.targets[i],
            &tdir,
            &scratch,
            plan.keep_data,
            progress,
        );
    }
    // From here the main thread closes the run itself; a deadline waits for it.
    let closing = crate::interrupt::closing();
    let result = outcome
        .map_err(|e| LabError::Results(format!("cannot keep the query-set results: {e}")))?;
    manifest.finished = Some(crate::time::rfc3339_now());
    manifest.status = if stop.requested() {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    dir.write_manifest(manifest)?;
    write_reports(dir.path(), Some(&plan.base), progress)?;
    Ok((result, problems, closing))
}

/// Reads a query-set result from a run directory; `None` when the run is not a query set.
pub fn load(run: &Path) -> Result<Option<QuerySetResult>, LabError> {
    let file = run.join(QUERYSET_FILE);
    if !file.is_file() {
        return Ok(None);
    }
    let bytes =
        std::fs::read(&file).map_err(|e| LabError::io(format!("reading {}", file.display()), e))?;
    let r = serde_json::from_slice(&bytes).map_err(|source| LabError::QuerySetFile {
        path: file.clone(),
        source,
    })?;
    Ok(Some(r))
}

/// Writes report.{txt,md,json,html} of a query-set run and hands the text report to
/// `progress`. `Ok(false)` when the run is not a query set.
pub(crate) fn write_reports(
    run: &Path,
    base: Option<&str>,
    progress: &dyn LabProgress,
) -> Result<bool, LabError> {
    let Some(mut result) = load(run)? else {
        return Ok(false);
    };
    // A run cut at the interrupt deadline never got to mark its result.
    let status = std::fs::read(run.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<RunManifest>(&b).ok())
        .map(|m| m.status);
    result.interrupted |= status == Some(RunStatus::Interrupted);
    let report = QuerySetReport::new(result, base);
    let text = queryset::text(&report);
    for (name, body) in [
        ("report.txt", text.clone()),
        ("report.md", queryset::markdown(&report)),
        ("report.json", queryset::json(&report)),
        ("report.html", queryset::html(&report)),
    ] {
        let path = run.join(name);
        write_atomic(&path, body.as_bytes())
            .map_err(|e| LabError::io(format!("writing {}", path.display()), e))?;
    }
    progress
        .report(&text)
        .map_err(|e| LabError::io("writing to standard output", e))?;
    Ok(true)
}

/// A query-set result that could not be kept in the run directory.
#[derive(Debug, thiserror::Error)]
enum KeepError {
    /// Serializing the result failed.
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    /// Writing the result file failed.
    #[error("{}: {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}
