//! Pretty JSON with everything: manifests, the tables as numbers, every stored result and the
//! warnings. Numbers that do not exist (failed, not run, not finite) are `null`, and each
//! table cell has a status saying why.

use crate::data::ReportData;
use crate::table::{Cell, Row, Table};
use crate::ReportOptions;
use dbdelta_model::{Group, RunManifest, StepResult, TargetManifest, ThroughputUnit};
use serde::Serialize;

#[derive(Serialize)]
struct Doc<'a> {
    base: &'a str,
    targets: Vec<&'a TargetManifest>,
    runs: Vec<RunDoc<'a>>,
    tables: Vec<TableDoc<'a>>,
    results: Vec<&'a StepResult>,
    /// Every non-base cell with its 95 % interval and verdict (see `verdict`).
    verdicts: Vec<VerdictDoc>,
    /// Target/base of the server's CPU µs per operation with 95 % intervals from paired
    /// rounds in windows of their own (see `cpu_verdict`); absent without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cpu_verdicts: Vec<VerdictDoc>,
    /// Every non-base cell compared without an interval, and why ("no interval: 1 round").
    no_interval: Vec<NoIntervalDoc>,
    /// Coefficient of variation per step and target: what this host can resolve.
    noise: Vec<NoiseDoc>,
    /// The median 95 % half-width per step group, as the reports' first line says it.
    noise_floor: Option<String>,
    /// What sharing the host in turns cost, as the reports' line beside the noise floor
    /// says it, and per step and target (rate in turns over the rate alone, time taken by
    /// other processes, rounds measured again, windows extended).
    #[serde(skip_serializing_if = "Option::is_none")]
    contention: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    turns: Vec<crate::contention::TurnsCost>,
    warnings: &'a [String],
    /// The version series (see `series_out::json`), when the targets form one.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    series: serde_json::Value,
}

#[derive(Serialize)]
struct VerdictDoc {
    #[serde(rename = "dop")]
    threads: u32,
    label: String,
    target: String,
    ratio: f64,
    low: f64,
    high: f64,
    p: f64,
    level: f64,
    /// "repeats" (independent runs, counted in base_runs/target_runs), "paired" (rounds),
    /// "within-run" (per-second samples of one run each: weaker evidence) or "across-runs"
    /// (unpaired rounds of two runs with the between-run variance in the interval).
    evidence: &'static str,
    base_runs: usize,
    target_runs: usize,
    /// After false discovery rate control over the report's cells.
    verdict: &'static str,
    /// The interval excludes 1.0 on its own but the cell did not survive that control.
    withheld: bool,
}

#[derive(Serialize)]
struct NoIntervalDoc {
    #[serde(rename = "dop")]
    threads: u32,
    label: String,
    target: String,
    ratio: Option<f64>,
    why: String,
}

#[derive(Serialize)]
struct NoiseDoc {
    #[serde(rename = "dop")]
    threads: u32,
    label: String,
    target: String,
    cv: Option<f64>,
    across_repeats: bool,
}

#[derive(Serialize)]
struct RunDoc<'a> {
    dir: String,
    manifest: &'a RunManifest,
}

#[derive(Serialize)]
struct TableDoc<'a> {
    #[serde(rename = "dop")]
    threads: u32,
    columns: Vec<&'a str>,
    rows: Vec<RowDoc<'a>>,
}

/// One row; `values`, `relative` and `status` are aligned with the table's `columns`, and
/// `relative[i]` is `values[i] / values[0]` (the base).
#[derive(Serialize)]
struct RowDoc<'a> {
    label: &'a str,
    step: &'a str,
    group: Group,
    unit: ThroughputUnit,
    values: Vec<Option<f64>>,
    relative: Vec<Option<f64>>,
    status: Vec<&'static str>,
}

/// Renders the whole report as pretty JSON (ending with a newline).
pub fn render(data: &ReportData, opts: &ReportOptions) -> String {
    let cells = crate::verdict::verdicts(data);
    let series = crate::series_out::json(data, opts, &cells);
    let doc = Doc {
        base: data.base(),
        targets: data.columns.iter().map(|c| &c.target).collect(),
        runs: data
            .runs
            .iter()
            .map(|r| RunDoc {
                dir: r.dir.display().to_string(),
                manifest: &r.manifest,
            })
            .collect(),
        tables: data.tables.iter().map(|t| table(data, t)).collect(),
        results: data.runs.iter().flat_map(|r| &r.results).collect(),
        noise_floor: crate::verdict::noise_floor(data, &cells),
        no_interval: cells
            .iter()
            .filter_map(|v| {
                Some(NoIntervalDoc {
                    threads: v.threads,
                    label: v.label.clone(),
                    target: v.target.clone(),
                    ratio: v.bare_ratio,
                    why: v.no_interval()?,
                })
            })
            .collect(),
        contention: crate::contention::line(data.results()),
        turns: crate::contention::costs(data.results()),
        verdicts: verdicts(cells),
        cpu_verdicts: verdicts(crate::cpu_verdict::cpu_verdicts(data)),
        noise: crate::verdict::noise(data)
            .into_iter()
            .map(|n| NoiseDoc {
                threads: n.threads,
                label: n.label,
                target: n.target,
                cv: n.cv,
                across_repeats: n.across_repeats,
            })
            .collect(),
        warnings: &data.warnings,
        series,
    };
    // Serializing plain data to a string cannot fail; keep a valid document regardless.
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot serialize report: {e}") }).to_string()
    });
    text.push('\n');
    text
}

fn verdicts(cells: Vec<crate::verdict::VerdictCell>) -> Vec<VerdictDoc> {
    use dbdelta_inference::Evidence;
    cells
        .into_iter()
        .filter_map(|v| {
            let c = v.comparison?;
            let (evidence, base_runs, target_runs) = match c.evidence {
                Evidence::Repeats { base, target } => ("repeats", base, target),
                Evidence::Paired { pairs } => ("paired", pairs, pairs),
                Evidence::WithinRun => ("within-run", 1, 1),
                Evidence::AcrossRuns { base, target } => ("across-runs", base, target),
            };
            Some(VerdictDoc {
                threads: v.threads,
                label: v.label,
                target: v.target,
                ratio: c.ratio,
                low: c.low,
                high: c.high,
                p: c.p,
                level: c.level,
                evidence,
                base_runs,
                target_runs,
                verdict: c.verdict.name(),
                withheld: v.withheld,
            })
        })
        .collect()
}

fn table<'a>(data: &'a ReportData, t: &'a Table) -> TableDoc<'a> {
    TableDoc {
        threads: t.threads,
        columns: data.columns.iter().map(|c| c.name()).collect(),
        rows: t.rows.iter().map(row).collect(),
    }
}

fn row(r: &Row) -> RowDoc<'_> {
    let base = r.cells.first().cloned().unwrap_or(Cell::Missing);
    RowDoc {
        label: &r.label,
        step: &r.step,
        group: r.group,
        unit: r.unit,
        values: r.cells.iter().map(number).collect(),
        relative: r
            .cells
            .iter()
            .map(|c| number(&c.relative_to(&base)))
            .collect(),
        status: r.cells.iter().map(status).collect(),
    }
}

fn number(c: &Cell) -> Option<f64> {
    c.value().filter(|v| v.is_finite())
}

fn status(c: &Cell) -> &'static str {
    match c {
        Cell::Value {
            interrupted: true, ..
        } => "interrupted",
        Cell::Value { .. } => "ok",
        Cell::Failed { .. } => "failed",
        Cell::Missing => "missing",
        Cell::NotSupported { .. } => "not-supported",
    }
}
