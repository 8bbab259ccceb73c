//! Reading one run directory: `run.json` plus every `results/<target>/*.json`.
//!
//! The runner writes results while we may be reading (and may have been killed), so anything
//! unreadable below `results/` becomes a warning naming the file, never an error or a panic.

use crate::error::ReportError;
use dbdelta_model::{RunManifest, RunStatus, StepResult, RESULT_SCHEMA};
use std::fs;
use std::path::{Path, PathBuf};

/// One run directory as read from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct RunData {
    /// The run directory as given.
    pub dir: PathBuf,
    /// `run.json`.
    pub manifest: RunManifest,
    /// Every readable result, in manifest target order, then file name (run) order.
    pub results: Vec<StepResult>,
    /// Files that were skipped and why; each message names the file.
    pub warnings: Vec<String>,
}

impl RunData {
    /// Renames a target (its manifest entry and its results), e.g. to tell apart the same
    /// target name measured in two runs before merging them.
    pub fn rename_target(&mut self, from: &str, to: &str) -> Result<(), ReportError> {
        let err = |why: &str| ReportError::Rename {
            dir: self.dir.clone(),
            from: from.to_string(),
            to: to.to_string(),
            why: why.to_string(),
        };
        if from != to && self.manifest.targets.iter().any(|t| t.name == to) {
            return Err(err("the new name is already a target of this run"));
        }
        let Some(target) = self.manifest.targets.iter_mut().find(|t| t.name == from) else {
            return Err(err("no target of that name in this run"));
        };
        target.name = to.to_string();
        for r in self.results.iter_mut().filter(|r| r.target == from) {
            r.target = to.to_string();
        }
        Ok(())
    }
}

/// Reads a run directory. Fails only when `run.json` is missing or unreadable; a result
/// file that cannot be read or parsed is skipped with a warning.
pub fn load_run(dir: &Path) -> Result<RunData, ReportError> {
    let manifest_path = dir.join("run.json");
    if !manifest_path.is_file() {
        return Err(ReportError::NotARun {
            dir: dir.to_path_buf(),
        });
    }
    let text = fs::read_to_string(&manifest_path).map_err(|source| ReportError::Io {
        path: manifest_path.clone(),
        source,
    })?;
    let manifest: RunManifest =
        serde_json::from_str(&text).map_err(|source| ReportError::Manifest {
            path: manifest_path.clone(),
            source,
        })?;
    let mut warnings = Vec::new();
    if manifest.status == RunStatus::Running {
        warnings.push(format!(
            "{}: status is 'running' (still running or killed); reporting the results written so far",
            manifest_path.display()
        ));
    }
    let results = read_results(dir, &manifest, &mut warnings);
    Ok(RunData {
        dir: dir.to_path_buf(),
        manifest,
        results,
        warnings,
    })
}

fn read_results(dir: &Path, manifest: &RunManifest, warnings: &mut Vec<String>) -> Vec<StepResult> {
    let results_dir = dir.join("results");
    if !results_dir.is_dir() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for target in &manifest.targets {
        let target_dir = results_dir.join(&target.name);
        if target_dir.is_dir() {
            read_target_dir(&target_dir, &target.name, &mut out, warnings);
        }
    }
    // A results directory of a target the manifest does not list cannot be given a column.
    for sub in sorted_entries(&results_dir, warnings) {
        let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if sub.is_dir() && !manifest.targets.iter().any(|t| t.name == name) {
            warnings.push(format!(
                "skipping {}: target '{name}' is not listed in run.json",
                sub.display()
            ));
        }
    }
    out
}

fn read_target_dir(
    dir: &Path,
    target: &str,
    out: &mut Vec<StepResult>,
    warnings: &mut Vec<String>,
) {
    for path in sorted_entries(dir, warnings) {
        // Only finished files: the runner writes `*.tmp` and renames it when complete.
        if !path.is_file() || path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        match read_result(&path) {
            Ok(r) if r.target != target => warnings.push(format!(
                "skipping {}: it holds a result of target '{}', not '{target}'",
                path.display(),
                r.target
            )),
            Ok(r) if r.schema > RESULT_SCHEMA => warnings.push(format!(
                "skipping {}: result schema {} is newer than this dbdelta understands ({RESULT_SCHEMA}); upgrade dbdelta",
                path.display(),
                r.schema
            )),
            Ok(r) => out.push(r),
            Err(why) => warnings.push(format!("skipping {}: {why}", path.display())),
        }
    }
}

/// Why one result file was skipped; its text is the warning's reason.
#[derive(Debug, thiserror::Error)]
enum ResultFileError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// The file is not a result document.
    #[error("not a valid result file ({0})")]
    Parse(#[source] serde_json::Error),
}

fn read_result(path: &Path) -> Result<StepResult, ResultFileError> {
    let text = fs::read_to_string(path).map_err(ResultFileError::Read)?;
    serde_json::from_str(&text).map_err(ResultFileError::Parse)
}

/// Directory entries sorted by name, so that reading order never depends on the file system.
fn sorted_entries(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("skipping {}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
}
