//! Cells whose target and base come from different runs (`dbdelta report RUN_A RUN_B`): the
//! twin of the base in the target's run, the between-run variance of a cell (from that twin
//! or assumed, see [`dbdelta_inference::across`]).

use crate::data::{Column, ReportData};
use crate::table::{evidence_rounds, values, Grouped};
use dbdelta_inference::{between_runs_assumed, between_runs_from_bridges, BetweenRuns};
use dbdelta_model::{Group, StepResult, TargetManifest};

/// The between-run variance of a cross-run cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Between {
    /// The variance (log scale) and its source.
    pub runs: BetweenRuns,
    /// The base's configuration measured in the target's run that gave the estimate;
    /// `None` when it was assumed.
    pub twin: Option<String>,
}

/// The values a cross-run comparison uses: the rounds that are evidence ([`evidence_rounds`]).
pub(crate) fn round_values(rs: &[&StepResult]) -> Vec<f64> {
    values(&evidence_rounds(rs))
}

fn as_slices(pairs: &[(Vec<f64>, Vec<f64>)]) -> Vec<(&[f64], &[f64])> {
    pairs
        .iter()
        .map(|(b, t)| (b.as_slice(), t.as_slice()))
        .collect()
}

/// Settings that say where a target lives or what its link measured, not how it is
/// configured: they differ between two runs of one configuration.
const PLACE_SETTINGS: [&str; 7] = [
    "file",
    "port",
    "basedir",
    "datadir",
    "dbdelta.address",
    "net.measured_mbit",
    "net.rtt_ms",
];

/// True when two targets are the same configuration: the same engine, version, spec (after
/// its `NAME=`, so that a target renamed with `--rename` still matches) and settings apart
/// from [`PLACE_SETTINGS`].
fn same_config(a: &TargetManifest, b: &TargetManifest) -> bool {
    let body = |t: &TargetManifest| {
        t.spec
            .split_once('=')
            .map_or(t.spec.clone(), |(_, rest)| rest.to_string())
    };
    let settings = |t: &TargetManifest| {
        t.settings
            .iter()
            .filter(|(k, _)| !PLACE_SETTINGS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    a.engine == b.engine
        && a.version == b.version
        && body(a) == body(b)
        && settings(a) == settings(b)
}

/// The between-run variance of every (run, group) a cross-run cell needs, and the twins that
/// give it (see [`dbdelta_inference::across`]).
pub(crate) struct AcrossRuns<'a> {
    /// The report.
    pub(crate) data: &'a ReportData,
    /// Its results by step and target.
    pub(crate) grouped: &'a Grouped<'a>,
}

impl AcrossRuns<'_> {
    /// The column measured in run `run` with the base's configuration, if any.
    fn twin(&self, run: usize) -> Option<&Column> {
        let base = self.data.columns.first()?;
        self.data
            .columns
            .iter()
            .find(|c| c.run == run && same_config(&c.target, &base.target))
    }

    /// (base values, `target` values) of every step of `group` at `threads` both measured.
    fn pairs(&self, target: &str, group: Group, threads: u32) -> Vec<(Vec<f64>, Vec<f64>)> {
        let base = self.data.base();
        self.grouped
            .iter()
            .filter(|((t, _, _), by)| {
                *t == threads
                    && by
                        .values()
                        .flatten()
                        .next()
                        .is_some_and(|r| r.group == group)
            })
            .filter_map(|(_, by)| {
                Some((round_values(by.get(base)?), round_values(by.get(target)?)))
            })
            .collect()
    }

    /// The between-run variance for a cell of `target` (measured in run `run`) in `group`:
    /// from the base's twin in that run when there is one, else assumed (conservatively).
    pub(crate) fn between(
        &self,
        target: &str,
        run: usize,
        group: Group,
        threads: u32,
    ) -> (BetweenRuns, Option<String>) {
        if let Some(twin) = self.twin(run) {
            let pairs = self.pairs(twin.name(), group, threads);
            if let Some(b) = between_runs_from_bridges(&as_slices(&pairs)) {
                return (b, Some(twin.name().to_string()));
            }
        }
        let pairs = self.pairs(target, group, threads);
        (between_runs_assumed(&as_slices(&pairs)), None)
    }
}
