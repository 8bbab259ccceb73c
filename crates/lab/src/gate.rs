//! The `--fail-on` gate: after a run, whether some step of some target is significantly
//! slower than the base by more than the threshold, with a one-screen summary.

use crate::error::LabError;
use dbdelta_inference::{Evidence, Verdict};
use dbdelta_report::verdict::verdicts;
use dbdelta_report::{load_run, ReportData};
use std::fmt::Write;
use std::path::Path;

/// Lines of failing steps the `--fail-on` summary prints before "… and N more".
const SUMMARY_LINES: usize = 15;

/// What the gate found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateVerdict {
    /// The one-screen summary (lines ending in newlines).
    pub summary: String,
    /// Some step regressed past the threshold, or a compared measurement is missing.
    pub failed: bool,
}

/// The `--fail-on` gate over a finished run: a one-screen summary, failed when some step of
/// some target is a significant regression by more than `threshold`.
pub fn gate(threshold: f64, dir: &Path, base: &str) -> Result<GateVerdict, LabError> {
    let run = load_run(dir).map_err(|source| LabError::ReadBack {
        context: "reading back the run's results for --fail-on".into(),
        source,
    })?;
    let data = ReportData::from_runs(vec![run], Some(base))?;
    let cells = verdicts(&data);
    let failing: Vec<_> = cells
        .iter()
        .filter_map(|c| c.comparison.map(|x| (c, x)))
        .filter(|(_, x)| x.verdict == Verdict::Regression && x.ratio < 1.0 - threshold)
        .collect();
    let broken = broken_steps(&data, base);
    let mut o = String::new();
    if !broken.is_empty() {
        let _ = writeln!(
            o,
            "FAIL (--fail-on): {} measurement(s) of compared targets failed or are missing, so they cannot be compared:",
            broken.len()
        );
        for line in broken.iter().take(SUMMARY_LINES) {
            let _ = writeln!(o, "  {line}");
        }
        if broken.len() > SUMMARY_LINES {
            let _ = writeln!(o, "  … and {} more", broken.len() - SUMMARY_LINES);
        }
    }
    if failing.is_empty() && !broken.is_empty() {
        return Ok(GateVerdict {
            summary: o,
            failed: true,
        });
    }
    if failing.is_empty() {
        let _ = writeln!(
            o,
            "--fail-on: no step regressed significantly by more than {:.1} % vs {base} ({} comparisons)",
            threshold * 100.0,
            cells.len()
        );
        return Ok(GateVerdict {
            summary: o,
            failed: false,
        });
    }
    let _ = writeln!(
        o,
        "FAIL (--fail-on regression>{:.1}%): {} step(s) significantly slower than {base}:",
        threshold * 100.0,
        failing.len()
    );
    for (c, x) in failing.iter().take(SUMMARY_LINES) {
        let evidence = match x.evidence {
            Evidence::Repeats { base, target } => format!("{base} vs {target} runs"),
            Evidence::Paired { pairs } => format!("{pairs} paired rounds"),
            Evidence::WithinRun => "within one run; weaker evidence".to_string(),
            Evidence::AcrossRuns { base, target } => {
                format!("{base} vs {target} rounds of two runs, unpaired")
            }
        };
        let _ = writeln!(
            o,
            "  {:<34} dop={:<3} {:<12} QPS {:+.1} % [{:+.1} %, {:+.1} %] p={:.1e} ({evidence})",
            c.label,
            c.threads,
            c.target,
            (x.ratio - 1.0) * 100.0,
            (x.low - 1.0) * 100.0,
            (x.high - 1.0) * 100.0,
            x.p
        );
    }
    if failing.len() > SUMMARY_LINES {
        let _ = writeln!(o, "  … and {} more", failing.len() - SUMMARY_LINES);
    }
    let _ = writeln!(
        o,
        "intervals are 95 % confidence intervals of target/base QPS; full tables in {}",
        dir.join("report.txt").display()
    );
    Ok(GateVerdict {
        summary: o,
        failed: true,
    })
}

/// Measured steps that a gate cannot pass over: a compared target's step that failed, or
/// that the base measured and the target did not (a target whose load failed has none).
/// Interrupted and not-supported steps are left out: they say nothing about speed.
fn broken_steps(data: &ReportData, base: &str) -> Vec<String> {
    use dbdelta_model::{StepKind, StepStatus};
    use std::collections::BTreeMap;
    // (order, label, threads) → target → status
    let mut steps: BTreeMap<(u32, String, u32), BTreeMap<String, &StepStatus>> = BTreeMap::new();
    for r in data.runs.iter().flat_map(|r| &r.results) {
        if r.kind == StepKind::Measured {
            steps
                .entry((r.order, r.label.clone(), r.threads))
                .or_default()
                .insert(r.target.clone(), &r.status);
        }
    }
    let mut out = Vec::new();
    for ((_, label, threads), by_target) in &steps {
        for col in &data.columns {
            let name = col.name();
            match by_target.get(name) {
                Some(StepStatus::Failed { reason }) => {
                    out.push(format!("{name} {label} dop={threads}: failed: {reason}"))
                }
                Some(StepStatus::Stalled { reason }) => {
                    out.push(format!("{name} {label} dop={threads}: stalled: {reason}"))
                }
                None if name != base
                    && by_target.get(base).is_some_and(|s| **s == StepStatus::Ok) =>
                {
                    out.push(format!("{name} {label} dop={threads}: not measured"))
                }
                _ => {}
            }
        }
    }
    out
}
