//! Server CPU per operation relative to the base, with 95 % intervals: a second verdict
//! beside throughput. A host's slow phase lowers a target's rate but hardly the CPU an
//! operation costs, so a compiler-flag or code change that saves CPU shows here even when the
//! rates are noisy. Each interval pairs the rounds both targets measured in a window of their
//! own (rounds in turns share a window and carry no costs of their own), as the throughput
//! verdicts pair rounds; ▲ = less CPU per operation, ▼ = more, after false discovery rate
//! control over these cells alone.

use crate::data::ReportData;
use crate::markup::esc;
use crate::verdict::{
    by_threads, cell_text, control_false_discoveries, count_verdicts, grouped, html_tables,
    targets, with_heads, VerdictCell, FDR, LEVEL,
};
use dbdelta_inference::{compare_paired, Direction, Verdict};
use dbdelta_model::StepResult;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Server CPU µs per operation by round, of the rounds measured in a window of their own.
fn cpu_by_round(rs: &[&StepResult]) -> BTreeMap<u32, f64> {
    rs.iter()
        .filter(|r| r.turns.is_none() && r.repeat > 0)
        .filter_map(|r| {
            let cpu = r.costs.as_ref()?.server_cpu_us_op?;
            (cpu.is_finite() && cpu > 0.0).then_some((r.repeat, cpu))
        })
        .collect()
}

/// Every non-base target of the base's run against the base, per step and thread count,
/// where at least two rounds in windows of their own have the server's CPU on both sides.
pub fn cpu_verdicts(data: &ReportData) -> Vec<VerdictCell> {
    let base = data.base();
    let base_run = data.columns.first().map_or(0, |c| c.run);
    let mut out = Vec::new();
    for ((threads, order, label), by_target) in &grouped(data) {
        let Some(b) = by_target.get(base) else {
            continue;
        };
        let bm = cpu_by_round(b);
        // Rounds of another run share no host state with the base's: never paired.
        for col in data.columns.iter().skip(1).filter(|c| c.run == base_run) {
            let Some(t) = by_target.get(col.name()) else {
                continue;
            };
            let tm = cpu_by_round(t);
            let pairs: Vec<(f64, f64)> = bm
                .iter()
                .filter_map(|(k, vb)| tm.get(k).map(|vt| (*vb, *vt)))
                .collect();
            let Some(comparison) = compare_paired(&pairs, LEVEL, Direction::LowerIsBetter) else {
                continue;
            };
            out.push(VerdictCell {
                label: label.clone(),
                order: *order,
                threads: *threads,
                target: col.name().to_string(),
                comparison: Some(comparison),
                withheld: false,
                in_turns: false,
                between: None,
                bare_ratio: None,
                rounds: pairs.len(),
            });
        }
    }
    control_false_discoveries(&mut out);
    out
}

fn heading(data: &ReportData, cells: &[VerdictCell]) -> String {
    let rounds = cells.iter().map(|c| c.rounds).max().unwrap_or(0);
    format!(
        "target/base of the server's CPU µs per operation (the process tree; an embedded engine's worker threads), 95 % intervals from up to {rounds} paired rounds in windows of their own; ▲ less CPU per operation, ▼ more: {} ▲ and {} ▼ of {} cells (false discovery rate {:.0} %); base {}",
        count_verdicts(cells, Verdict::Improvement),
        count_verdicts(cells, Verdict::Regression),
        cells.len(),
        FDR * 100.0,
        data.base()
    )
}

/// The text section; empty without any cell.
pub fn render_text(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.is_empty() {
        return String::new();
    }
    let ts = targets(data);
    let mut o = String::new();
    let _ = writeln!(o, "\nServer CPU per operation: {}", heading(data, cells));
    for t in by_threads(data, cells, &ts) {
        let _ = writeln!(o, "\ndop={}\tstep\t{}", t.threads, ts.join("\t"));
        for (_, label, cs) in with_heads(&t.rows) {
            let vals: Vec<String> = row(&ts, cs);
            let _ = writeln!(o, "\t{label}\t{}", vals.join("\t"));
        }
    }
    o
}

/// The Markdown section; empty without any cell.
pub fn render_markdown(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.is_empty() {
        return String::new();
    }
    let ts = targets(data);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n## Server CPU per operation relative to {}\n\n{}.",
        data.base(),
        heading(data, cells)
    );
    for t in by_threads(data, cells, &ts) {
        let _ = writeln!(o, "\n### dop={}\n", t.threads);
        let _ = writeln!(o, "| step | {} |", ts.join(" | "));
        let _ = writeln!(o, "|---|{}", "---:|".repeat(ts.len()));
        for (_, label, cs) in with_heads(&t.rows) {
            let _ = writeln!(o, "| {label} | {} |", row(&ts, cs).join(" | "));
        }
    }
    o
}

/// The HTML section (after the throughput verdicts); empty without any cell.
pub fn render_html(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.is_empty() {
        return String::new();
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<h2 id=\"cpu-verdicts\">Server CPU per operation relative to {}</h2>\n<p>{}. Only significant cells are colored.</p>",
        esc(data.base()),
        esc(&heading(data, cells))
    );
    html_tables(&mut o, data, cells);
    o
}

/// One row's cells in target order, `-` for a target without an interval on this step.
fn row(targets: &[String], cells: &[&VerdictCell]) -> Vec<String> {
    targets
        .iter()
        .map(|t| {
            cells
                .iter()
                .find(|c| &c.target == t)
                .map_or("-".to_string(), |c| cell_text(c))
        })
        .collect()
}
