//! The `run --profile*` flags and `dbdelta explain`.

use crate::flags::{CallgraphArg, ExplainArgs, RunArgs};
use anyhow::{bail, Context, Result};
use dbdelta_model::RunManifest;
use dbdelta_profile::store::{explain as explain_tables, NO_PROFILES};
use dbdelta_profile::{Callgraph, ProfileSettings};

/// Validates the `--profile*` flags (before anything is created); `None` = no profiling.
pub fn settings(args: &RunArgs) -> Result<Option<ProfileSettings>> {
    let wanted = args.profile
        || args.profile_steps.is_some()
        || args.profile_callgraph.is_some()
        || args.profile_freq.is_some();
    if !wanted {
        return Ok(None);
    }
    let callgraph = match args.profile_callgraph.unwrap_or(CallgraphArg::Fp) {
        CallgraphArg::Fp => Callgraph::Fp,
        CallgraphArg::Dwarf => Callgraph::Dwarf,
    };
    let settings = ProfileSettings::new(
        args.profile_freq.unwrap_or(99),
        callgraph,
        args.profile_steps.clone().unwrap_or_default(),
    )?;
    Ok(Some(settings))
}

/// `dbdelta explain RUN --step GLOB`.
pub fn explain(args: &ExplainArgs) -> Result<String> {
    let manifest_path = args.run.join("run.json");
    let bytes = std::fs::read(&manifest_path).with_context(|| {
        format!(
            "{}: not a dbdelta run directory (no run.json); give the directory printed by `dbdelta run`",
            args.run.display()
        )
    })?;
    let manifest: RunManifest = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: unreadable run manifest", manifest_path.display()))?;
    let profiles = args.run.join("profiles");
    if let Ok(why) = std::fs::read_to_string(profiles.join(NO_PROFILES)) {
        bail!("{}: {}", args.run.display(), why.trim());
    }
    let names: Vec<String> = manifest.targets.iter().map(|t| t.name.clone()).collect();
    let base = match &args.base {
        Some(b) if names.contains(b) => b.clone(),
        Some(b) => bail!(
            "--base {b}: no such target in this run; targets: {}",
            names.join(", ")
        ),
        None => names
            .first()
            .cloned()
            .context("the run manifest lists no target")?,
    };
    if let Some(bad) = args.targets.iter().find(|t| !names.contains(t)) {
        bail!(
            "--target {bad}: no such target in this run; targets: {}",
            names.join(", ")
        );
    }
    let targets: Vec<String> = if args.targets.is_empty() {
        names.into_iter().filter(|n| *n != base).collect()
    } else {
        args.targets.clone()
    };
    let tables = explain_tables(&profiles, &base, &targets, &args.step, args.threads)?;
    let mut out = String::new();
    for t in tables {
        out.push_str(&t.render(args.top));
        out.push('\n');
    }
    Ok(out)
}
