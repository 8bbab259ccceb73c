//! `dbdelta history --html DIR`: reads the history and hands it to the dashboard crate.

use crate::flags::HistoryArgs;
use anyhow::{bail, Context, Result};
use dbdelta_dashboard::{build, DashboardError, Options, RunDirs};
use dbdelta_inference::DetectOptions;
use dbdelta_lab::history::open;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes the dashboard of the matching series into `dir`.
pub fn dashboard(args: &HistoryArgs, dir: &Path) -> Result<ExitCode> {
    if dir.is_file() {
        bail!(
            "--html {}: this is a file; give a directory for the dashboard's pages",
            dir.display()
        );
    }
    for r in &args.runs {
        if !r.is_dir() {
            bail!(
                "--runs {}: no such directory; give a run directory or the directory holding them (e.g. dbdelta-runs)",
                r.display()
            );
        }
    }
    let runs = if args.runs.is_empty() {
        vec![PathBuf::from(crate::spec::DEFAULT_OUT)]
    } else {
        args.runs.clone()
    };
    let mut store = open(args.store.store.as_deref())?;
    let points = store.points()?;
    let opts = Options {
        filter: crate::history_cmd::filter(&args.series),
        detect: DetectOptions::default(),
        runs: RunDirs::new(runs),
    };
    let summary = match build(&points, dir, &opts) {
        Err(DashboardError::Empty) => bail!(
            "no results in the history {} match; import runs with `dbdelta import RUN_DIR` or loosen --target-like/--step",
            store.describe()
        ),
        other => other.with_context(|| format!("--html {}", dir.display()))?,
    };
    println!(
        "{}: {} series, {} change point(s) at {} run(s) ({} with a verdict, {} with a differential flamegraph); open {}",
        dir.display(),
        summary.series,
        summary.changes,
        summary.evidence,
        summary.verdicts,
        summary.flamegraphs,
        dir.join("index.html").display()
    );
    Ok(ExitCode::SUCCESS)
}
