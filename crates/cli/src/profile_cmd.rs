//! `run --profile` set-up and wrap-up (perf check, differential flamegraphs, explain tables
//! per step) and `dbdelta explain`.

use crate::flags::{CallgraphArg, ExplainArgs, RunArgs};
use crate::spec::RunPlan;
use anyhow::{bail, Context, Result};
use dbdelta_model::RunManifest;
use dbdelta_profile::store::{
    explain as explain_tables, write_diffs, write_no_profiles, NO_PROFILES,
};
use dbdelta_profile::{check_perf, Callgraph, ProfileSettings};
use dbdelta_runner::TargetProfiling;
use std::path::{Path, PathBuf};

/// Profiling of a run: perf's path and the options.
#[derive(Debug, Clone)]
pub struct Profiling {
    perf: PathBuf,
    settings: ProfileSettings,
}

impl Profiling {
    /// The runner's profiling of one target: files under `profiles/<target>`.
    pub fn for_target(&self, run_dir: &Path, target: &str) -> TargetProfiling {
        TargetProfiling {
            perf: self.perf.clone(),
            dir: run_dir.join("profiles").join(target),
            settings: self.settings.clone(),
        }
    }
}

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

/// Checks perf. Without perf (or permission) the run goes on without profiles; why is
/// printed and kept in `profiles/NO-PROFILES.txt`.
pub fn setup(settings: Option<ProfileSettings>, run_dir: &Path) -> Result<Option<Profiling>> {
    let Some(settings) = settings else {
        return Ok(None);
    };
    let profiles = run_dir.join("profiles");
    match check_perf() {
        Ok(perf) => {
            std::fs::create_dir_all(&profiles)
                .with_context(|| format!("creating {}", profiles.display()))?;
            let _ = std::fs::write(
                profiles.join("settings.json"),
                serde_json::to_vec_pretty(&settings).unwrap_or_default(),
            );
            eprintln!(
                "profiling with {} at {} Hz ({} call graphs); profiled steps run slower than unprofiled ones",
                perf.display(),
                settings.freq,
                settings.callgraph.perf_arg()
            );
            Ok(Some(Profiling { perf, settings }))
        }
        Err(e) => {
            eprintln!("warning: no profiles: {e}");
            write_no_profiles(&profiles, &e.to_string())?;
            Ok(None)
        }
    }
}

/// After every target ran: differential flamegraphs vs the base and `profiles/explain.txt`
/// with every profiled step's drill-down table.
pub fn finish(plan: &RunPlan, run_dir: &Path) {
    let profiles = run_dir.join("profiles");
    let names: Vec<String> = plan.targets.iter().map(|t| t.name.clone()).collect();
    let diffs = write_diffs(&profiles, &plan.base, &names);
    let mut text = String::new();
    if let Ok(tables) = explain_tables(&profiles, &plan.base, &names, "*", None) {
        for t in tables {
            text.push_str(&t.render(12));
            text.push('\n');
        }
    }
    let _ = std::fs::write(profiles.join("explain.txt"), &text);
    eprintln!(
        "profiles: {} ({} differential flamegraph(s)); explain a step with `dbdelta explain {} --step STEP`",
        profiles.display(),
        diffs.len(),
        run_dir.display()
    );
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
    let tables = explain_tables(&profiles, &base, &targets, &args.step, args.dop)?;
    let mut out = String::new();
    for t in tables {
        out.push_str(&t.render(args.top));
        out.push('\n');
    }
    Ok(out)
}
