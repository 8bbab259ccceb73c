//! How a finished run ends: interrupted, a target that could not run, a regression past the
//! gate, a finding (a broken consistency condition, a query result that differs from the
//! base's), failed steps, or complete. The binary turns each into its exit code.

use crate::error::LabError;
use crate::gate::{gate, GateVerdict};
use crate::reports::failed_steps;
use dbdelta_model::queryset::QuerySetResult;
use dbdelta_report::queryset::QuerySetReport;
use dbdelta_runner::sequence::INCONSISTENT;
use std::path::{Path, PathBuf};
use std::sync::MutexGuard;

/// A run that went to its end; [`RunOutcome::conclude`] says how it ended. While it lives,
/// an interrupt's deadline leaves the closing of the run to its owner.
#[derive(Debug)]
pub struct RunOutcome {
    pub(crate) dir: PathBuf,
    pub(crate) base: String,
    pub(crate) fail_on: Option<f64>,
    pub(crate) ending: Ending,
    pub(crate) _closing: Option<MutexGuard<'static, ()>>,
}

/// What the schedule left for the conclusion.
#[derive(Debug)]
pub(crate) enum Ending {
    /// A suite of steps; the messages of targets that could not run or load.
    Suite { failures: Vec<String> },
    /// A query set: its result and the messages of targets that could not run.
    QuerySet {
        result: QuerySetResult,
        problems: Vec<String>,
    },
}

/// How a run ended, and the gate's summary when `--fail-on` was evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    /// The `--fail-on` gate's verdict (evaluated when nothing before it ended the run).
    pub gate: Option<GateVerdict>,
    /// The end.
    pub end: End,
}

/// The end of a run, in the order the conclusion checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Everything ran.
    Complete,
    /// A signal stopped the run; the exit code it asks for (130 SIGINT, 143 SIGTERM).
    Interrupted {
        /// 128 + the signal number.
        exit_code: u8,
    },
    /// Targets that could not run or load (one message each).
    TargetsFailed(Vec<String>),
    /// A step regressed past the `--fail-on` threshold (see the gate's summary).
    Regressed,
    /// Findings about an engine (or dbdelta): a broken consistency condition, a query result
    /// that differs from the base's.
    Findings(Vec<String>),
    /// Steps, loads, settles or queries that failed (the reasons are in the reports).
    StepsFailed(Vec<String>),
}

impl RunOutcome {
    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How the run ended: reads the run directory back for the gate and failed steps.
    pub fn conclude(&self) -> Result<Conclusion, LabError> {
        if let Some(exit_code) = crate::interrupt::exit_code() {
            // The signal may have come after the manifest was closed as complete (while the
            // reports were written): an exit as interrupted says so in run.json too.
            crate::reports::mark_interrupted(&self.dir)?;
            return Ok(Conclusion {
                gate: None,
                end: End::Interrupted { exit_code },
            });
        }
        match &self.ending {
            Ending::QuerySet { result, problems } => Ok(Conclusion {
                gate: None,
                end: query_set_end(result.clone(), problems.clone(), &self.base),
            }),
            Ending::Suite { failures } => self.suite_end(failures),
        }
    }

    fn suite_end(&self, failures: &[String]) -> Result<Conclusion, LabError> {
        if !failures.is_empty() {
            return Ok(Conclusion {
                gate: None,
                end: End::TargetsFailed(failures.to_vec()),
            });
        }
        let verdict = match self.fail_on {
            Some(threshold) => Some(gate(threshold, &self.dir, &self.base)?),
            None => None,
        };
        let end = if verdict.as_ref().is_some_and(|v| v.failed) {
            End::Regressed
        } else {
            steps_end(&self.dir)
        };
        Ok(Conclusion { gate: verdict, end })
    }
}

/// The end told by the step results of a run directory.
fn steps_end(dir: &Path) -> End {
    let failed = failed_steps(dir);
    let inconsistent: Vec<String> = failed
        .iter()
        .filter(|f| f.contains(INCONSISTENT))
        .cloned()
        .collect();
    if !inconsistent.is_empty() {
        // A broken consistency condition is a finding about the engine (or dbdelta), like
        // a regression past --fail-on, not a failed measurement.
        return End::Findings(inconsistent);
    }
    if !failed.is_empty() {
        return End::StepsFailed(vec![format!(
            "{} step(s) failed: {}",
            failed.len(),
            failed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        )]);
    }
    End::Complete
}

/// How a finished query-set run ends: targets that could not run (exit 2), results that
/// differ from the base's (a finding, exit 1), failed queries (exit 3).
fn query_set_end(result: QuerySetResult, mut problems: Vec<String>, base: &str) -> End {
    for t in &result.targets {
        if let Some(e) = &t.error {
            problems.push(format!("target {}: {e}", t.name));
        }
    }
    if !problems.is_empty() {
        return End::TargetsFailed(problems);
    }
    let report = QuerySetReport::new(result, Some(base));
    if !report.mismatches.is_empty() {
        return End::Findings(
            report
                .mismatches
                .iter()
                .map(|(q, t, _, _)| {
                    format!("query {q}: {t}'s result differs from {}'s", report.base)
                })
                .collect(),
        );
    }
    let failed: Vec<String> = report
        .result
        .targets
        .iter()
        .flat_map(|t| {
            t.queries
                .iter()
                .filter_map(|q| q.error.clone())
                .map(move |e| format!("{}: {e}", t.name))
        })
        .collect();
    if !failed.is_empty() {
        return End::StepsFailed(failed);
    }
    End::Complete
}
