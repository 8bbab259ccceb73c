//! Subcommand dispatch, `run` (resolve the plan, hand it to the lab, print how it ended)
//! and `report`.

use crate::flags::{Cli, Command, FormatArg, ReportArgs, RunArgs, ValuesArg};
use crate::output::{print_out, write_output};
use crate::progress::Bars;
use crate::spec::resolve;
use crate::suites_cmd;
use anyhow::{bail, Result};
use clap::FromArgMatches;
use dbdelta_lab::{End, Lab};
use dbdelta_report::{
    apply_renames, load_run, parse_cost, parse_rename, render, Format, ReportData, ReportOptions,
    Values,
};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// A run that completed but where a step, load or settle failed (its reason is in the
/// report and the result file).
const EXIT_STEP_FAILED: u8 = 3;

/// Parses the command line and runs the subcommand.
pub fn run() -> Result<ExitCode> {
    // The help's defaults are filled in from the code (help.rs), so parse with that command.
    let cli =
        Cli::from_arg_matches(&crate::help::command().get_matches()).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Run(args) => run_cmd(&args),
        Command::Prepare(args) => crate::prepare_cmd::prepare(&args),
        Command::Completions(args) => {
            let mut out = Vec::new();
            clap_complete::generate(args.shell, &mut crate::help::command(), "dbdelta", &mut out);
            print_out(&String::from_utf8_lossy(&out))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) => report_cmd(&args),
        Command::Explain(args) => {
            print_out(&crate::profile_cmd::explain(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Suites(args) => {
            print_out(&suites_cmd::run(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::History(args) => match &args.action {
            Some(action) => crate::history_admin::run(action),
            None => crate::history_cmd::history(&args),
        },
        Command::Import(args) => crate::history_cmd::import(&args),
        Command::Detect(args) => crate::history_cmd::detect(&args),
        Command::Build(args) => {
            let bin = crate::build_cmd::build_cmd(&args)?;
            print_out(&format!("{}\n", bin.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fetch(args) => {
            print_out(&crate::fetch_cmd::fetch_cmd(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge(args) => crate::merge_cmd::merge(&args),
    }
}

fn run_cmd(args: &RunArgs) -> Result<ExitCode> {
    // How progress is drawn is the binary's; everything else the run needs is in the plan,
    // and no flag is read after it is resolved.
    let progress = Arc::new(Bars::new(args.quiet, args.verbose));
    let plan = resolve(args)?;
    if args.dry_run {
        print_out(&crate::dry_run::describe(&plan))?;
        return Ok(ExitCode::SUCCESS);
    }
    let lab = Lab::prepare(plan, progress)?;
    let stop = crate::interrupt::install();
    let outcome = lab.run(&stop)?;
    eprintln!("run directory: {}", outcome.dir().display());
    let conclusion = outcome.conclude()?;
    if let Some(gate) = &conclusion.gate {
        eprint!("{}", gate.summary);
    }
    let (code, errors) = match conclusion.end {
        End::Complete => (0, Vec::new()),
        End::Interrupted { exit_code } => {
            eprintln!("interrupted: the results measured so far are in the run directory");
            (exit_code, Vec::new())
        }
        // The lab's errors name the flag or target; like bad input, exit 2.
        End::TargetsFailed(errors) => (2, errors),
        End::Regressed => (1, Vec::new()),
        // A finding about the engine (or dbdelta), like a regression past --fail-on.
        End::Findings(errors) => (1, errors),
        End::StepsFailed(errors) => (EXIT_STEP_FAILED, errors),
    };
    for e in &errors {
        eprintln!("error: {e}");
    }
    Ok(ExitCode::from(code))
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
        if let Some(result) = dbdelta_lab::queryset::load(one)? {
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
    // A report of nothing would exit 0 with empty tables: say what is missing instead.
    if runs.iter().all(|r| r.results.is_empty()) {
        eprintln!(
            "error: nothing measured: {} holds no step results (the run ended before its first \
             step did; see its run.json and logs)",
            args.runs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(ExitCode::from(EXIT_STEP_FAILED));
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
        threads: args.threads,
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
        FormatArg::Github => return crate::ci_summary::write(args, &data),
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
        FormatArg::Csv | FormatArg::Ycsb | FormatArg::Github => bail!(
            "--format {}: a query-set run has text, md, json and html reports",
            match args.format {
                FormatArg::Csv => "csv",
                FormatArg::Github => "github",
                _ => "ycsb",
            }
        ),
    };
    match &args.output {
        Some(path) => write_output(path, &text)?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
