//! The end of a run directory: its reports (text, Markdown, JSON, HTML), the failed steps
//! read back from its results, and the close of a run cut by an interrupt.

use crate::error::{chain, LabError};
use crate::progress::LabProgress;
use crate::rundir::RunDir;
use dbdelta_model::{RunManifest, RunStatus, StepResult, StepStatus};
use dbdelta_report::{load_run, render, Format, ReportData, ReportOptions};
use std::path::Path;

/// Writes report.{txt,md,json,html} and hands the brief text report (QPS tables) to
/// `progress`.
pub(crate) fn write_reports(
    dir: &RunDir,
    base: &str,
    ibench: bool,
    progress: &dyn LabProgress,
) -> Result<(), LabError> {
    if crate::queryset::write_reports(dir.path(), Some(base), progress)? {
        return Ok(());
    }
    let run = load_run(dir.path()).map_err(|source| LabError::ReadBack {
        context: "reading back the run's results".into(),
        source,
    })?;
    let data = ReportData::from_runs(vec![run], Some(base))?;
    for w in &data.warnings {
        progress.warning(w);
    }
    let opts = ReportOptions::default();
    dir.write_report("report.txt", &render(&data, Format::Text, &opts)?)?;
    dir.write_report("report.md", &render(&data, Format::Markdown, &opts)?)?;
    dir.write_report("report.json", &render(&data, Format::Json, &opts)?)?;
    dir.write_report("report.html", &render(&data, Format::Html, &opts)?)?;
    // The terminal gets one aligned table per thread count, the verdict count and a bottom
    // line per target (the Insert Benchmark: its brief tables); latency, costs and sb.met
    // blocks are in report.txt.
    let brief = if ibench {
        let brief = ReportOptions {
            details: false,
            ..ReportOptions::default()
        };
        render(&data, Format::Text, &brief)?
    } else {
        dbdelta_report::console::brief(&data)
    };
    let contents = if ibench {
        "per-step rates, latency by kind and costs"
    } else {
        "latency, cost per operation and sb.met blocks"
    };
    let reports = format!(
        "\nReports: {} (with {contents}), {} (with charts), report.md and report.json beside them\n",
        dir.path().join("report.txt").display(),
        dir.path().join("report.html").display()
    );
    progress
        .report(&(brief + &reports))
        .map_err(|e| LabError::io("writing to standard output", e))?;
    Ok(())
}

/// `target/label: reason` of every failed step, load or settle in the run directory.
pub(crate) fn failed_steps(run: &Path) -> Vec<String> {
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
            let Ok(r) = std::fs::read(&f)
                .map_err(|_| ())
                .and_then(|b| serde_json::from_slice::<StepResult>(&b).map_err(|_| ()))
            else {
                continue;
            };
            match &r.status {
                StepStatus::Failed { reason } => {
                    out.push(format!("{}/{}: {reason}", r.target, r.label))
                }
                StepStatus::Stalled { reason } => {
                    out.push(format!("{}/{}: stalled: {reason}", r.target, r.label))
                }
                _ => {}
            }
        }
    }
    out
}

/// Marks the manifest of `dir` interrupted (and finished now) unless it already is: for a
/// run cut by the deadline, and for one whose signal came while its reports were written.
pub(crate) fn mark_interrupted(dir: &Path) -> Result<(), LabError> {
    let path = dir.join("run.json");
    let bytes =
        std::fs::read(&path).map_err(|e| LabError::io(format!("reading {}", path.display()), e))?;
    let mut m: RunManifest = serde_json::from_slice(&bytes).map_err(LabError::Json)?;
    if m.status != RunStatus::Interrupted {
        m.status = RunStatus::Interrupted;
        m.finished = Some(crate::time::rfc3339_now());
        let mut text = serde_json::to_vec_pretty(&m).map_err(LabError::Json)?;
        text.push(b'\n');
        crate::rundir::write_atomic(&path, &text)
            .map_err(|e| LabError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(())
}

/// Closes a run cut by the interrupt deadline: the manifest says interrupted, the reports
/// show what finished, and the scratch data goes unless `keep_data`.
pub(crate) fn close_interrupted(
    dir: &RunDir,
    base: &str,
    ibench: bool,
    keep_data: bool,
    progress: &dyn LabProgress,
) {
    let _ = mark_interrupted(dir.path());
    if let Err(e) = write_reports(dir, base, ibench, progress) {
        progress.warning(&format!("no report for the interrupted run: {}", chain(&e)));
    }
    if !keep_data {
        let _ = std::fs::remove_dir_all(dir.path().join("data"));
    }
    progress.note(&format!(
        "interrupted: the results measured so far are in {}",
        dir.path().display()
    ));
}
