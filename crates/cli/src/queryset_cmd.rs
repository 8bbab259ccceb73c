//! `dbdelta run --suite DIR`: a query-set run. Every target is provisioned up front, the
//! runner sets each up and times the queries in interleaved rounds, `queryset.json` is
//! rewritten after every query, and the reports come from it.
//!
//! Exit codes: 2 when a target cannot run (it did not start, or its setup failed: the
//! message names the file and line), 3 when a query failed on a target, 1 when a query's
//! result differs from the base's (a finding, like a failed consistency check).

use crate::app::{print_out, provision, retire};
use crate::flags::RunArgs;
use crate::progress::Bars;
use crate::rundir::{write_atomic, RunDir};
use crate::spec::RunPlan;
use anyhow::{Context, Result};
use dbdelta_engine::Engine;
use dbdelta_model::queryset::{QuerySetResult, QUERYSET_FILE};
use dbdelta_model::RunManifest;
use dbdelta_report::queryset::{self, QuerySetReport};
use dbdelta_runner::queryset::{run_query_set, QsTargetUnderTest};
use dbdelta_runner::StopFlag;
use dbdelta_workload::queryset::{QuerySet, DEFAULT_REPEAT};
use std::path::Path;
use std::process::ExitCode;

/// Runs the query set of `plan` and writes its reports; returns the exit code.
pub(crate) fn run(
    plan: &RunPlan,
    set: &QuerySet,
    args: &RunArgs,
    dir: &RunDir,
    stop: &StopFlag,
    progress: &Bars,
    manifest: &mut RunManifest,
) -> Result<ExitCode> {
    let repeat = args.repeat_query.or(set.repeat).unwrap_or(DEFAULT_REPEAT);
    let mut problems = Vec::new();
    let mut engines: Vec<(
        usize,
        Box<dyn Engine>,
        std::path::PathBuf,
        std::path::PathBuf,
    )> = Vec::new();
    for (i, spec) in plan.targets.iter().enumerate() {
        if stop.requested() {
            break;
        }
        let scratch = dir.scratch_dir(&spec.name)?;
        let tdir = dir.target_dir(&spec.name)?;
        eprintln!("[{}] starting {}", spec.name, spec.redacted());
        match provision(plan, spec, None, &scratch, &tdir, manifest, dir)? {
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
    let mut sink = |r: &QuerySetResult| -> Result<(), String> {
        let bytes = serde_json::to_vec_pretty(r).map_err(|e| e.to_string())?;
        write_atomic(&file, &bytes).map_err(|e| format!("{}: {e}", file.display()))
    };
    let outcome = run_query_set(set, &under_test, repeat, stop, progress, &mut sink);
    drop(under_test);
    for (i, engine, scratch, tdir) in engines {
        retire(engine, &plan.targets[i], &tdir, &scratch, plan.keep_data);
    }
    let result = outcome.map_err(|e| anyhow::anyhow!("cannot keep the query-set results: {e}"))?;
    manifest.finished = Some(crate::time::rfc3339_now());
    manifest.status = if stop.requested() {
        dbdelta_model::RunStatus::Interrupted
    } else {
        dbdelta_model::RunStatus::Complete
    };
    dir.write_manifest(manifest)?;
    write_reports(dir.path(), Some(&plan.base))?;
    eprintln!("run directory: {}", dir.path().display());
    if let Some(code) = crate::interrupt::exit_code() {
        eprintln!("interrupted: the results measured so far are in the run directory");
        return Ok(ExitCode::from(code));
    }
    for t in &result.targets {
        if let Some(e) = &t.error {
            problems.push(format!("target {}: {e}", t.name));
        }
    }
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("error: {p}");
        }
        return Ok(ExitCode::from(2));
    }
    let report = QuerySetReport::new(result, Some(&plan.base));
    if !report.mismatches.is_empty() {
        for (q, t, _, _) in &report.mismatches {
            eprintln!(
                "error: query {q}: {t}'s result differs from {}'s",
                report.base
            );
        }
        return Ok(ExitCode::from(1));
    }
    let failed: Vec<String> = report
        .result
        .targets
        .iter()
        .flat_map(|t| {
            t.queries
                .iter()
                .filter_map(|q| q.error.clone())
                .map(move |e| format!("{}: {e}", t.name))
        })
        .collect();
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("error: {f}");
        }
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads a query-set result from a run directory; `None` when the run is not a query set.
pub(crate) fn load(run: &Path) -> Result<Option<QuerySetResult>> {
    let file = run.join(QUERYSET_FILE);
    if !file.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    let r = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not a query-set result", file.display()))?;
    Ok(Some(r))
}

/// Writes report.{txt,md,json,html} of a query-set run and prints the text report.
/// `Ok(false)` when the run is not a query set.
pub(crate) fn write_reports(run: &Path, base: Option<&str>) -> Result<bool> {
    let Some(mut result) = load(run)? else {
        return Ok(false);
    };
    // A run cut at the interrupt deadline never got to mark its result.
    let status = std::fs::read(run.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<RunManifest>(&b).ok())
        .map(|m| m.status);
    result.interrupted |= status == Some(dbdelta_model::RunStatus::Interrupted);
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
            .with_context(|| format!("writing {}", path.display()))?;
    }
    print_out(&text)?;
    Ok(true)
}
