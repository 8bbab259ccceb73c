//! Subcommand dispatch and the `run` pipeline: plan → run directory → targets in turn
//! (provision, run the suite, stop) → reports.

use crate::flags::{Cli, Command, FormatArg, ReportArgs, RunArgs, ValuesArg};
use crate::progress::Bars;
use crate::rundir::RunDir;
use crate::spec::{resolve, OutDir, RunPlan};
use crate::{host, registry, suites_cmd, time};
use anyhow::{bail, Context, Result};
use clap::Parser;
use dbdelta_engine::Engine;
use dbdelta_model::{RunManifest, RunStatus, TargetManifest, ToolInfo};
use dbdelta_report::{
    apply_renames, load_run, parse_cost, parse_rename, render, Format, ReportData, ReportOptions,
    Values,
};
use dbdelta_runner::{StopFlag, TargetOutcome};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A run that completed but where a step, load or settle failed (its reason is in the
/// report and the result file).
const EXIT_STEP_FAILED: u8 = 3;
use dbdelta_runner::sequence::INCONSISTENT;

/// Parses the command line and runs the subcommand.
pub fn run() -> Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run_cmd(&args),
        Command::Report(args) => report_cmd(&args),
        Command::Explain(args) => {
            print_out(&crate::profile_cmd::explain(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Suites(args) => {
            print_out(&suites_cmd::run(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::History(args) => crate::verdict_cmd::history(&args),
        Command::Import(args) => crate::verdict_cmd::import(&args),
        Command::Detect(args) => crate::verdict_cmd::detect(&args),
        Command::Build(args) => {
            let bin = crate::build_cmd::build_cmd(&args)?;
            print_out(&format!("{}\n", bin.display()))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to standard output"),
    }
}

fn redacted_command_line() -> Vec<String> {
    std::env::args()
        .map(|a| match dbdelta_model::TargetSpec::parse(&a) {
            Ok(t) if matches!(t.location, dbdelta_model::Location::Url { .. }) => t.redacted(),
            _ => a,
        })
        .collect()
}

fn run_cmd(args: &RunArgs) -> Result<ExitCode> {
    let mut plan = resolve(args)?;
    // postgres-build: targets are built (or found in the cache) before anything runs.
    crate::build_cmd::materialize(&mut plan.targets)?;
    let most = plan.options.threads.iter().copied().max().unwrap_or(1);
    let active = plan.options.client.active.map_or(most, |k| k.min(most));
    crate::connections::ensure_capacity(u64::from(most), u64::from(active))?;
    crate::disk_room::ensure_room(&plan)?;
    // TLS and compressed connections have no session form either.
    if plan.open.tls
        || plan.open.compress
        || plan.targets.iter().any(registry::thread_per_connection)
    {
        crate::connections::ensure_threads(u64::from(most))?;
    }
    // Validate the gate before measuring anything.
    let fail_on = args
        .fail_on
        .as_deref()
        .map(crate::verdict_cmd::parse_fail_on)
        .transpose()?;
    let profile_settings = crate::profile_cmd::settings(args)?;
    let dir = match &plan.out {
        OutDir::Exact(p) => RunDir::create(p.clone())?,
        OutDir::Under(parent) => RunDir::create_unique(
            parent,
            &format!("{}-{}", time::compact_now(), plan.options.suite),
        )?,
    };
    let mut manifest = RunManifest {
        schema: dbdelta_model::manifest::MANIFEST_SCHEMA,
        tool: ToolInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: env!("DBDELTA_GIT_COMMIT").to_string(),
        },
        host: host::host_info(),
        started: time::rfc3339_now(),
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
        command: redacted_command_line(),
    };
    // Base first: reports take the first manifest target as the default base.
    if let Some(i) = manifest.targets.iter().position(|t| t.name == plan.base) {
        let base = manifest.targets.remove(i);
        manifest.targets.insert(0, base);
    }
    dir.write_manifest(&manifest)?;
    eprintln!("run directory: {}", dir.path().display());
    for w in &manifest.host.warnings {
        eprintln!("warning: {w}");
    }
    let profiling = crate::profile_cmd::setup(profile_settings, dir.path())?;
    let stop = crate::interrupt::install();
    crate::interrupt::set_closer({
        let dir = dir.clone();
        let base = plan.base.clone();
        let ibench = plan.ibench.is_some();
        let keep_data = plan.keep_data;
        move || close_interrupted(&dir, &base, ibench, keep_data)
    });
    let progress = Bars::new(args.quiet);
    if let Some(set) = &plan.queryset {
        return crate::queryset_cmd::run(&plan, set, args, &dir, &stop, &progress, &mut manifest);
    }
    let mut failures = Vec::new();
    let asked = crate::verdict_cmd::repeats(args)?;
    // Interleaved rounds are cheap (one load per target): the scale's default gives every
    // ratio an interval. Sequential repeats reload everything, so they are opt-in.
    let rounds = asked.unwrap_or(plan.rounds);
    let repeats = asked.unwrap_or(1);
    // With --reuse-load every target's engine (server and data) stays up between repeats.
    let mut kept: Vec<Option<Box<dyn Engine>>> = plan.targets.iter().map(|_| None).collect();
    let mut sequential =
        plan.targets.len() < 2 || plan.ibench.is_some() || args.sequential || args.reuse_load;
    if !sequential {
        match crate::interleave::run(
            &plan,
            &dir,
            profiling.as_ref(),
            &stop,
            &progress,
            &mut manifest,
            rounds,
        )? {
            crate::interleave::Interleaved::Done(problems) => failures = problems,
            crate::interleave::Interleaved::TooLittleMemory(why) => {
                eprintln!("warning: {why}");
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
                keep: args.reuse_load && repeat < repeats,
                slot: &mut kept[ti],
            };
            match run_one_target(
                &plan,
                spec,
                &dir,
                profiling.as_ref(),
                &stop,
                &progress,
                &mut manifest,
                rep,
            ) {
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
    let _closing = crate::interrupt::closing();
    // Engines kept for a repeat that never came (Ctrl-C): stop their servers now.
    for mut engine in kept.into_iter().flatten() {
        let _ = engine.shutdown();
    }
    manifest.finished = Some(time::rfc3339_now());
    manifest.status = if stop.requested() {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    dir.write_manifest(&manifest)?;
    if profiling.is_some() {
        crate::profile_cmd::finish(&plan, dir.path());
    }
    write_reports(&dir, &plan.base, plan.ibench.is_some())?;
    crate::verdict_cmd::index_run(args, dir.path());
    eprintln!("run directory: {}", dir.path().display());
    if let Some(code) = crate::interrupt::exit_code() {
        eprintln!("interrupted: the results measured so far are in the run directory");
        return Ok(ExitCode::from(code));
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("error: {f}");
        }
        return Ok(ExitCode::from(2));
    }
    if let Some(rule) = &fail_on {
        if crate::verdict_cmd::gate(rule, dir.path(), &plan.base)? {
            return Ok(ExitCode::from(1));
        }
    }
    let failed = failed_steps(dir.path());
    let inconsistent: Vec<&String> = failed.iter().filter(|f| f.contains(INCONSISTENT)).collect();
    if !inconsistent.is_empty() {
        // A broken consistency condition is a finding about the engine (or dbdelta), like
        // a regression past --fail-on: exit 1, not a failed measurement.
        for f in &inconsistent {
            eprintln!("error: {f}");
        }
        return Ok(ExitCode::from(1));
    }
    if !failed.is_empty() {
        eprintln!(
            "error: {} step(s) failed: {}",
            failed.len(),
            failed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
        return Ok(ExitCode::from(EXIT_STEP_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// `target/label: reason` of every failed step, load or settle in the run directory.
fn failed_steps(run: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(targets) = std::fs::read_dir(run.join("results")) else {
        return out;
    };
    for t in targets.flatten() {
        let Ok(files) = std::fs::read_dir(t.path()) else {
            continue;
        };
        let mut files: Vec<_> = files.flatten().map(|f| f.path()).collect();
        files.sort();
        for f in files {
            let Ok(r) = std::fs::read(&f).map_err(|_| ()).and_then(|b| {
                serde_json::from_slice::<dbdelta_model::StepResult>(&b).map_err(|_| ())
            }) else {
                continue;
            };
            match &r.status {
                dbdelta_model::StepStatus::Failed { reason } => {
                    out.push(format!("{}/{}: {reason}", r.target, r.label))
                }
                dbdelta_model::StepStatus::Stalled { reason } => {
                    out.push(format!("{}/{}: stalled: {reason}", r.target, r.label))
                }
                _ => {}
            }
        }
    }
    out
}

/// Provisions and runs one target. `Ok(Some(msg))` when the target could not run at all.
/// Which repeat `run_one_target` runs and what happens to the engine afterwards.
struct Repeat<'a> {
    /// The repeat number when the run has repeats.
    number: Option<u32>,
    /// Keep the engine running with its data for the next repeat (--reuse-load).
    keep: bool,
    /// The engine kept by the previous repeat, and where to keep this one.
    slot: &'a mut Option<Box<dyn Engine>>,
}

#[allow(clippy::too_many_arguments)]
fn run_one_target(
    plan: &RunPlan,
    spec: &dbdelta_model::TargetSpec,
    dir: &RunDir,
    profiling: Option<&crate::profile_cmd::Profiling>,
    stop: &StopFlag,
    progress: &Bars,
    manifest: &mut RunManifest,
    rep: Repeat<'_>,
) -> Result<Option<String>> {
    let repeat = rep.number;
    let reused = rep.slot.take();
    // Every repeat starts from a fresh scratch area (a new server and a new load) unless the
    // engine of the previous repeat was kept (--reuse-load).
    let scratch = match repeat {
        Some(k) if k > 1 && reused.is_none() => dir.scratch_dir(&format!("{}.r{k}", spec.name))?,
        _ => dir.scratch_dir(&spec.name)?,
    };
    let tdir = dir.target_dir(&spec.name)?;
    let entry_idx = manifest_entry(manifest, &spec.name)?;
    let what = match repeat {
        Some(k) => format!("[{}] repeat {k}: starting {}", spec.name, spec.redacted()),
        None => format!("[{}] starting {}", spec.name, spec.redacted()),
    };
    progress_message(progress, &what);
    let suite = match &reused {
        // The data is already loaded: run the suite without its load action.
        Some(_) => {
            let mut suite = plan.suite.clone();
            suite.items.retain(|i| {
                !matches!(
                    i,
                    dbdelta_workload::SuiteItem::Action {
                        action: dbdelta_workload::Action::Load,
                        ..
                    }
                )
            });
            suite
        }
        None => plan.suite.clone(),
    };
    let engine = match provision(plan, spec, reused, &scratch, &tdir, manifest, dir)? {
        Ok(e) => e,
        Err(msg) => return Ok(Some(msg)),
    };
    let mut sink = |r: &dbdelta_model::StepResult| -> Result<(), String> {
        let written = match repeat {
            Some(k) => {
                let mut r = r.clone();
                r.repeat = k;
                dir.write_result(&r)
            }
            None => dir.write_result(r),
        };
        written.map(|_| ()).map_err(|e| format!("{e:#}"))
    };
    let outcome = match &plan.ibench {
        Some(ib) => dbdelta_runner::ibench::run_ibench(
            engine.as_ref(),
            &spec.name,
            &dbdelta_workload::ibench::steps::builtin(),
            ib,
            &dbdelta_runner::ibench::IbenchEnv {
                os_metrics: plan.options.os_metrics,
                device: plan.options.device.clone(),
                i_own_this_database: plan.options.i_own_this_database,
            },
            stop,
            progress,
            &mut sink,
        ),
        None => dbdelta_runner::run_target_profiled(
            engine.as_ref(),
            &spec.name,
            &suite,
            &plan.options,
            profiling
                .map(|p| p.for_target(dir.path(), &spec.name))
                .as_ref(),
            stop,
            progress,
            &mut sink,
        ),
    };
    if rep.keep && matches!(outcome, Ok(TargetOutcome::Complete)) {
        copy_server_log(engine.as_ref(), &tdir);
        *rep.slot = Some(engine);
    } else {
        retire(engine, spec, &tdir, &scratch, plan.keep_data);
    }
    outcome_problem(outcome, spec, manifest, entry_idx)
}

/// What a target's outcome means for the run: `Err` when its results could not be kept,
/// `Ok(Some(msg))` when its load failed.
pub(crate) fn outcome_problem(
    outcome: Result<TargetOutcome, String>,
    spec: &dbdelta_model::TargetSpec,
    manifest: &mut RunManifest,
    entry_idx: usize,
) -> Result<Option<String>> {
    match outcome {
        Err(e) => bail!("cannot keep results of target {}: {e}", spec.name),
        Ok(TargetOutcome::LoadFailed(reason)) => {
            let msg = format!("target {}: load failed: {reason}", spec.name);
            manifest.targets[entry_idx].error = Some(format!("load failed: {reason}"));
            eprintln!("error: {msg}");
            Ok(Some(msg))
        }
        Ok(TargetOutcome::Complete | TargetOutcome::Interrupted) => Ok(None),
    }
}

/// Opens a target (or takes the engine kept by the previous repeat), records its version and
/// settings in the manifest, and checks its connection limit. `Ok(Err(msg))` when the
/// target cannot run; the message is printed and in the manifest.
pub(crate) fn provision(
    plan: &RunPlan,
    spec: &dbdelta_model::TargetSpec,
    reused: Option<Box<dyn Engine>>,
    scratch: &Path,
    tdir: &Path,
    manifest: &mut RunManifest,
    dir: &RunDir,
) -> Result<std::result::Result<Box<dyn Engine>, String>> {
    let entry_idx = manifest_entry(manifest, &spec.name)?;
    let opened = match reused {
        Some(e) => Ok(e),
        None => registry::open(spec, scratch, &plan.open),
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
            eprintln!("error: {msg}");
            return Ok(Err(msg));
        }
    };
    match engine.info() {
        Ok(info) => {
            let _ = std::fs::write(tdir.join("version.txt"), format!("{}\n", info.version));
            let mut settings = info.settings;
            // A server built by dbdelta: how it was built (source, recipe, flags, compiler).
            settings.extend(crate::build_cmd::build_settings(spec));
            let _ = std::fs::write(
                tdir.join("settings.json"),
                serde_json::to_vec_pretty(&settings).unwrap_or_default(),
            );
            let e = &mut manifest.targets[entry_idx];
            e.version = Some(info.version);
            e.settings = settings;
        }
        Err(e) => eprintln!("warning: [{}] cannot read version/settings: {e}", spec.name),
    }
    dir.write_manifest(manifest)?;
    if let Some(problem) = crate::connections::over_server_limit(engine.as_ref(), plan) {
        let msg = format!("target {}: {problem}", spec.name);
        manifest.targets[entry_idx].error = Some(problem);
        eprintln!("error: {msg}");
        let _ = engine.shutdown();
        return Ok(Err(msg));
    }
    Ok(Ok(engine))
}

/// The index of a target's entry in the manifest.
fn manifest_entry(manifest: &RunManifest, name: &str) -> Result<usize> {
    manifest
        .targets
        .iter()
        .position(|t| t.name == name)
        .context("target missing from manifest")
}

fn copy_server_log(engine: &dyn Engine, tdir: &Path) {
    if let Some(log) = engine.server_log() {
        let _ = std::fs::copy(&log, tdir.join("server.log"));
    }
}

/// Stops a target's engine, keeps its server log, and removes its data unless --keep-data.
pub(crate) fn retire(
    mut engine: Box<dyn Engine>,
    spec: &dbdelta_model::TargetSpec,
    tdir: &Path,
    scratch: &Path,
    keep_data: bool,
) {
    copy_server_log(engine.as_ref(), tdir);
    if let Err(e) = engine.shutdown() {
        eprintln!("warning: [{}] shutdown: {e}", spec.name);
    }
    drop(engine);
    if !keep_data {
        let _ = std::fs::remove_dir_all(scratch);
    }
}

fn progress_message(p: &Bars, text: &str) {
    use dbdelta_runner::Progress;
    p.message(text);
}

/// Closes a run cut by the interrupt deadline: the manifest says interrupted, the reports
/// show what finished, and the scratch data goes unless `--keep-data`.
fn close_interrupted(dir: &RunDir, base: &str, ibench: bool, keep_data: bool) {
    let manifest = std::fs::read(dir.path().join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<RunManifest>(&b).ok());
    if let Some(mut m) = manifest {
        m.status = RunStatus::Interrupted;
        m.finished = Some(time::rfc3339_now());
        let _ = dir.write_manifest(&m);
    }
    if let Err(e) = write_reports(dir, base, ibench) {
        eprintln!("warning: no report for the interrupted run: {e:#}");
    }
    if !keep_data {
        let _ = std::fs::remove_dir_all(dir.path().join("data"));
    }
    eprintln!(
        "interrupted: the results measured so far are in {}",
        dir.path().display()
    );
}

fn write_reports(dir: &RunDir, base: &str, ibench: bool) -> Result<()> {
    if crate::queryset_cmd::write_reports(dir.path(), Some(base))? {
        return Ok(());
    }
    let run = load_run(dir.path()).context("reading back the run's results")?;
    let data = ReportData::from_runs(vec![run], Some(base))?;
    for w in &data.warnings {
        eprintln!("warning: {w}");
    }
    let opts = ReportOptions::default();
    dir.write_report("report.txt", &render(&data, Format::Text, &opts)?)?;
    dir.write_report("report.md", &render(&data, Format::Markdown, &opts)?)?;
    dir.write_report("report.json", &render(&data, Format::Json, &opts)?)?;
    dir.write_report("report.html", &render(&data, Format::Html, &opts)?)?;
    // The terminal gets the QPS tables; latency, costs and sb.met blocks are in report.txt.
    let brief = ReportOptions {
        details: false,
        ..ReportOptions::default()
    };
    print_out(&render(&data, Format::Text, &brief)?)?;
    let contents = if ibench {
        "per-step rates, latency by kind and costs"
    } else {
        "latency, cost per operation and sb.met blocks"
    };
    eprintln!(
        "full report with {contents}: {} (with charts: {})",
        dir.path().join("report.txt").display(),
        dir.path().join("report.html").display()
    );
    Ok(())
}

fn parse_thresholds(text: &str) -> Result<(f64, f64)> {
    let bad = || {
        anyhow::anyhow!(
            "--thresholds '{text}' is invalid: write LOW,HIGH with LOW < 1 < HIGH, e.g. 0.95,1.05"
        )
    };
    let (l, h) = text.split_once(',').ok_or_else(bad)?;
    let (l, h): (f64, f64) = (
        l.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(l > 0.0 && l < h) {
        return Err(bad());
    }
    Ok((l, h))
}

fn report_cmd(args: &ReportArgs) -> Result<ExitCode> {
    if let [one] = args.runs.as_slice() {
        if let Some(result) = crate::queryset_cmd::load(one)? {
            return query_set_report(args, result);
        }
    }
    let mut runs = Vec::new();
    for dir in &args.runs {
        if !dir.join("run.json").is_file() {
            bail!(
                "{}: not a dbdelta run directory (no run.json); give the directory printed by `dbdelta run`",
                dir.display()
            );
        }
        runs.push(load_run(dir)?);
    }
    let renames = args
        .rename
        .iter()
        .map(|r| parse_rename(r))
        .collect::<Result<Vec<_>, _>>()?;
    apply_renames(&mut runs, &renames)?;
    let data = ReportData::from_runs(runs, args.base.as_deref())?;
    for w in &data.warnings {
        eprintln!("warning: {w}");
    }
    let mut opts = ReportOptions {
        dop: args.dop,
        metrics: args.metrics.clone().unwrap_or_default(),
        details: !args.brief,
        values: match args.values {
            ValuesArg::Relative => Values::Relative,
            ValuesArg::Absolute => Values::Absolute,
        },
        costs: args
            .cost
            .iter()
            .map(|c| parse_cost(c))
            .collect::<Result<Vec<_>, _>>()?,
        timeline: args.timeline.clone(),
        // Links to profile files are relative to where the report is written.
        link_dir: Some(match args.output.as_ref().and_then(|p| p.parent()) {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }),
        ..ReportOptions::default()
    };
    if let Some(t) = &args.thresholds {
        (opts.low, opts.high) = parse_thresholds(t)?;
    }
    let format = match args.format {
        FormatArg::Text => Format::Text,
        FormatArg::Md => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
        FormatArg::Ycsb => Format::Ycsb,
    };
    let text = render(&data, format, &opts)?;
    match &args.output {
        Some(path) => write_output(path, &text)?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `dbdelta report DIR` of a query-set run.
fn query_set_report(
    args: &ReportArgs,
    result: dbdelta_model::queryset::QuerySetResult,
) -> Result<ExitCode> {
    use dbdelta_report::queryset as qs;
    let report = qs::QuerySetReport::new(result, args.base.as_deref());
    let text = match args.format {
        FormatArg::Text => qs::text(&report),
        FormatArg::Md => qs::markdown(&report),
        FormatArg::Json => qs::json(&report),
        FormatArg::Html => qs::html(&report),
        FormatArg::Csv | FormatArg::Ycsb => bail!(
            "--format {}: a query-set run has text, md, json and html reports",
            if matches!(args.format, FormatArg::Csv) {
                "csv"
            } else {
                "ycsb"
            }
        ),
    };
    match &args.output {
        Some(path) => write_output(path, &text)?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn write_output(path: &Path, text: &str) -> Result<()> {
    crate::rundir::write_atomic(path, text.as_bytes()).with_context(|| {
        format!(
            "-o {}: cannot write the file; choose a writable path",
            path.display()
        )
    })
}
