//! Profiling a run's servers: the set-up (perf check) and the wrap-up (differential
//! flamegraphs vs the base, explain tables per step).

use crate::error::LabError;
use crate::plan::RunPlan;
use crate::progress::LabProgress;
use dbdelta_profile::store::{
    explain as explain_tables, write_adjacent_diffs, write_diffs, write_no_profiles,
};
use dbdelta_profile::{check_perf, ProfileSettings};
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

/// Checks perf. Without perf (or permission) the run goes on without profiles; why is
/// told as a warning and kept in `profiles/NO-PROFILES.txt`.
pub fn setup(
    settings: Option<ProfileSettings>,
    run_dir: &Path,
    progress: &dyn LabProgress,
) -> Result<Option<Profiling>, LabError> {
    let Some(settings) = settings else {
        return Ok(None);
    };
    let profiles = run_dir.join("profiles");
    match check_perf() {
        Ok(perf) => {
            std::fs::create_dir_all(&profiles)
                .map_err(|e| LabError::io(format!("creating {}", profiles.display()), e))?;
            let _ = crate::rundir::write_atomic(
                &profiles.join("settings.json"),
                &serde_json::to_vec_pretty(&settings).unwrap_or_default(),
            );
            progress.note(&format!(
                "profiling with {} at {} Hz ({} call graphs); profiled steps run slower than unprofiled ones",
                perf.display(),
                settings.freq,
                settings.callgraph.perf_arg()
            ));
            Ok(Some(Profiling { perf, settings }))
        }
        Err(e) => {
            progress.warning(&format!("no profiles: {e}"));
            write_no_profiles(&profiles, &e.to_string())?;
            Ok(None)
        }
    }
}

/// After every target ran: differential flamegraphs vs the base (and, with three targets or
/// more, of each target vs the one before it) and `profiles/explain.txt`
/// with every profiled step's drill-down table.
pub fn finish(plan: &RunPlan, run_dir: &Path, progress: &dyn LabProgress) {
    let profiles = run_dir.join("profiles");
    let names: Vec<String> = plan.targets.iter().map(|t| t.name.clone()).collect();
    let mut diffs = write_diffs(&profiles, &plan.base, &names);
    // Three targets or more may be a version series: its report explains each significant
    // change between adjacent versions with their diff, so every adjacent pair gets one.
    if names.len() >= 3 {
        diffs.extend(write_adjacent_diffs(&profiles, &plan.base, &names));
    }
    let mut text = String::new();
    if let Ok(tables) = explain_tables(&profiles, &plan.base, &names, "*", None) {
        for t in tables {
            text.push_str(&t.render(12));
            text.push('\n');
        }
    }
    let _ = crate::rundir::write_atomic(&profiles.join("explain.txt"), text.as_bytes());
    progress.note(&format!(
        "profiles: {} ({} differential flamegraph(s)); explain a step with `dbdelta explain {} --step STEP`",
        profiles.display(),
        diffs.len(),
        run_dir.display()
    ));
}
