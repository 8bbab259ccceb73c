//! `dbdelta merge`: the run directories of every segment of one run become one ordinary
//! run directory (run.json, results, reports), so every report, verdict and the history
//! take it as any other run. Runs of different plans are refused; a step that misses a
//! segment is merged as failed, never as a smaller whole.

use crate::error::{input, LabError};
use crate::merge_step::{merge_step, Part};
use crate::progress::LabProgress;
use crate::rundir::RunDir;
use dbdelta_model::{RunManifest, RunSegments, RunStatus, StepKind, StepResult};
use dbdelta_report::{load_run, RunData};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a merge made.
#[derive(Debug)]
pub struct Merged {
    /// The merged run directory.
    pub dir: PathBuf,
    /// Segments merged.
    pub segments: u32,
    /// Distinct hosts that measured them.
    pub hosts: usize,
    /// `target/label: reason` of every merged step that is not complete.
    pub incomplete: Vec<String>,
}

/// Reads the segments' run directories, checks they are the segments of one plan, merges
/// every step and writes the merged run directory `out` with its reports.
pub fn merge(dirs: &[PathBuf], out: &Path, progress: &dyn LabProgress) -> Result<Merged, LabError> {
    let runs = read(dirs)?;
    let count = runs[0].1.count;
    check_plans(&runs)?;
    let (dir, _claim) = RunDir::create(out.to_path_buf())?;
    let hosts: Vec<String> = runs
        .iter()
        .map(|(r, _)| r.manifest.host.hostname.clone())
        .collect();
    let lead = &runs[0].0;
    let mut manifest = lead.manifest.clone();
    manifest.segments = Some(RunSegments {
        count,
        index: None,
        run: runs[0].1.run.clone(),
        hosts,
    });
    manifest.started = runs
        .iter()
        .map(|(r, _)| r.manifest.started.clone())
        .min()
        .unwrap_or_default();
    manifest.finished = runs
        .iter()
        .map(|(r, _)| r.manifest.finished.clone())
        .collect::<Option<Vec<String>>>()
        .and_then(|f| f.into_iter().max());
    manifest.status = if runs
        .iter()
        .all(|(r, _)| r.manifest.status == RunStatus::Complete)
    {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted
    };
    manifest.command = std::iter::once("dbdelta merge".to_string())
        .chain(dirs.iter().map(|d| d.display().to_string()))
        .collect();
    dir.write_manifest(&manifest)?;
    let mut incomplete = Vec::new();
    for r in merged_results(&runs, count, manifest.options.table_size)? {
        if r.kind == StepKind::Measured && !r.is_complete() {
            let why = match &r.status {
                dbdelta_model::StepStatus::Failed { reason }
                | dbdelta_model::StepStatus::Stalled { reason } => reason.clone(),
                _ => "interrupted".to_string(),
            };
            incomplete.push(format!("{}/{}: {why}", r.target, r.label));
        }
        dir.write_result(&r)?;
    }
    let distinct = manifest
        .segments
        .as_ref()
        .map_or(1, RunSegments::distinct_hosts);
    progress.note(&format!(
        "merged {count} segment(s) measured on {distinct} host(s) into {}",
        dir.path().display()
    ));
    crate::reports::write_reports(&dir, &lead_base(&manifest), false, progress)?;
    Ok(Merged {
        dir: dir.path().to_path_buf(),
        segments: count,
        hosts: distinct,
        incomplete,
    })
}

/// The base of the merged run: the segments' (the manifest lists it first).
fn lead_base(m: &RunManifest) -> String {
    m.targets
        .first()
        .map(|t| t.name.clone())
        .unwrap_or_default()
}

/// Every segment's run, sorted by segment; refuses directories that are not segments of
/// one run, a segment given twice and a missing one.
fn read(dirs: &[PathBuf]) -> Result<Vec<(RunData, RunSegments)>, LabError> {
    let mut runs = Vec::new();
    for d in dirs {
        let run = load_run(d).map_err(|source| LabError::ReadBack {
            context: format!("dbdelta merge: {}", d.display()),
            source,
        })?;
        let Some(seg) = run.manifest.segments.clone().filter(|s| s.index.is_some()) else {
            return Err(input!(
                "dbdelta merge: {} is not a segment's run directory (its run.json has no \
                 segment): give the directories of `dbdelta run --segment K/N`",
                d.display()
            ));
        };
        runs.push((run, seg));
    }
    runs.sort_by_key(|(_, s)| s.index);
    let count = runs[0].1.count;
    for (run, seg) in &runs {
        if seg.count != count || seg.run != runs[0].1.run {
            return Err(input!(
                "dbdelta merge: {} is segment {}/{} of run '{}', {} is of {}/{} of run '{}': \
                 give the segments of one run",
                run.dir.display(),
                seg.index.unwrap_or(0),
                seg.count,
                seg.run,
                runs[0].0.dir.display(),
                runs[0].1.index.unwrap_or(0),
                count,
                runs[0].1.run
            ));
        }
    }
    for k in 1..=count {
        let with: Vec<&PathBuf> = runs
            .iter()
            .filter(|(_, s)| s.index == Some(k))
            .map(|(r, _)| &r.dir)
            .collect();
        match with.len() {
            1 => {}
            0 => {
                return Err(input!(
                    "dbdelta merge: segment {k} of {count} is missing: give every segment's run \
                     directory (a segment that died still has one; its missed steps are merged \
                     as incomplete)"
                ))
            }
            _ => {
                return Err(input!(
                    "dbdelta merge: segment {k} is given twice ({} and {})",
                    with[0].display(),
                    with[1].display()
                ))
            }
        }
    }
    Ok(runs)
}

/// Refuses segments of different plans, naming the difference.
fn check_plans(runs: &[(RunData, RunSegments)]) -> Result<(), LabError> {
    let describe = |m: &RunManifest| {
        let mut options = serde_json::to_value(&m.options).unwrap_or_default();
        if let serde_json::Value::Object(o) = &mut options {
            o.remove("device");
            o.remove("os_metrics");
        }
        serde_json::json!({
            "dbdelta": m.tool.version,
            "options": options,
            "targets": m.targets.iter().map(|t| serde_json::json!({"name": t.name, "engine": t.engine})).collect::<Vec<_>>(),
        })
    };
    let first = describe(&runs[0].0.manifest);
    for (run, seg) in &runs[1..] {
        let other = describe(&run.manifest);
        if other != first {
            return Err(input!(
                "dbdelta merge: segment {} ({}) ran another plan than segment {} ({}): {}; \
                 merge only the segments of one run",
                seg.index.unwrap_or(0),
                run.dir.display(),
                runs[0].1.index.unwrap_or(0),
                runs[0].0.dir.display(),
                crate::plan_diff::plan_difference(&other, &first)
                    .replace(" here,", " in this segment,")
                    .replace(" there", " in the first")
            ));
        }
    }
    Ok(())
}

/// The key of one result across segments.
type Key = (String, String, u32, u32, u32, String);

fn key(r: &StepResult) -> Key {
    (
        r.target.clone(),
        r.label.clone(),
        r.threads,
        r.repeat,
        r.order,
        format!("{:?}", r.kind),
    )
}

/// Every step's merged result: loads and settle points are the first segment's (it ran
/// them for every segment); measured and warm steps are merged from every segment.
fn merged_results(
    runs: &[(RunData, RunSegments)],
    count: u32,
    table_size: u64,
) -> Result<Vec<StepResult>, LabError> {
    let mut by_key: BTreeMap<Key, Vec<Part<'_>>> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for (run, seg) in runs {
        let segment = seg.index.unwrap_or(0);
        for r in &run.results {
            let k = key(r);
            let entry = by_key.entry(k.clone()).or_default();
            if entry.is_empty() {
                order.push(k);
            }
            entry.push(Part {
                segment,
                host: &run.manifest.host.hostname,
                result: r,
            });
        }
    }
    let mut out = Vec::new();
    for k in order {
        let parts = &by_key[&k];
        let r = match parts[0].result.kind {
            StepKind::Load | StepKind::Settle => parts
                .iter()
                .min_by_key(|p| p.segment)
                .map(|p| p.result.clone())
                .expect("a key has a part"),
            StepKind::Measured | StepKind::Warm => {
                merge_step(parts, count, table_size).map_err(|e| {
                    input!(
                        "dbdelta merge: {}/{}: {}",
                        parts[0].result.target,
                        parts[0].result.label,
                        crate::error::chain(&e)
                    )
                })?
            }
        };
        out.push(r);
    }
    Ok(out)
}
