//! `dbdelta history prune` and `dbdelta history export`: housekeeping of the results history.

use crate::flags::{ExportArgs, ExportFormat, HistoryAction, PruneArgs};
use crate::output::{print_out, write_output};
use anyhow::{bail, Context, Result};
use dbdelta_history::{export, parse_age, select, series, PruneRule};
use dbdelta_lab::history::open;
use std::fmt::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs one housekeeping action.
pub fn run(action: &HistoryAction) -> Result<ExitCode> {
    match action {
        HistoryAction::Prune(args) => prune(args),
        HistoryAction::Export(args) => export_series(args),
    }
}

/// The rule of the prune flags, against the current time.
fn rule(args: &PruneArgs) -> Result<PruneRule> {
    let started_before = match &args.older_than {
        None => None,
        Some(text) => {
            let Some(age) = parse_age(text) else {
                bail!(
                    "--older-than '{text}' is invalid: give a whole number and a unit s, m, h, d or w, e.g. 30d"
                );
            };
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            Some(now.saturating_sub(age))
        }
    };
    let rule = PruneRule {
        started_before,
        host: args.host.clone(),
        target: args.target.clone(),
    };
    if rule.is_empty() {
        bail!(
            "history prune needs --older-than AGE, --host NAME or --target NAME: it never removes the whole history"
        );
    }
    Ok(rule)
}

fn prune(args: &PruneArgs) -> Result<ExitCode> {
    let rule = rule(args)?;
    let mut store = open(args.store.store.as_deref())?;
    let chosen = select(&store.runs()?, &rule);
    let points: usize = chosen.iter().map(|r| r.points).sum();
    let mut o = String::new();
    for r in &chosen {
        let _ = writeln!(
            o,
            "{}\t{}\t{}\t{}\t{} result(s)",
            r.run_started, r.run_id, r.target, r.host, r.points
        );
    }
    if chosen.is_empty() {
        let _ = writeln!(o, "nothing to prune in {}", store.describe());
    } else if args.yes {
        let removed = store.remove(&chosen)?;
        let _ = writeln!(
            o,
            "removed {removed} result(s) of {} run target(s) from {}",
            chosen.len(),
            store.describe()
        );
    } else {
        let _ = writeln!(
            o,
            "would remove {points} result(s) of {} run target(s) from {}; add --yes to remove them",
            chosen.len(),
            store.describe()
        );
    }
    print_out(&o)?;
    Ok(ExitCode::SUCCESS)
}

fn export_series(args: &ExportArgs) -> Result<ExitCode> {
    let mut store = open(args.store.store.as_deref())?;
    let all = store.points()?;
    let found = series(&all, &crate::history_cmd::filter(&args.series));
    if found.is_empty() {
        bail!(
            "no results in the history {} match; import runs with `dbdelta import RUN_DIR` or loosen --target-like/--step",
            store.describe()
        );
    }
    let text = match args.format {
        ExportFormat::Csv => export::csv(&found),
        ExportFormat::Json => export::json(&found).context("encoding the series as JSON")?,
    };
    match &args.output {
        Some(path) => write_output(path, &text)?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
