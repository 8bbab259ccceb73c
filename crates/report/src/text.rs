//! The published plain-text layout (Mark Callaghan's sysbench result tables): per thread
//! count a relative table (`Relative to: <base>`), an absolute table, then the load lines.
//! Tab-separated, the label last, so existing spreadsheets and scripts read it unchanged.

use crate::data::{load_rows, ReportData};
use crate::table::{Cell, Table};
use crate::verdict::VerdictCell;
use crate::ReportOptions;
use dbdelta_model::StepStatus;
use std::fmt::Write;

/// Renders every thread count as a `--- dop=N ---` section.
pub fn render(data: &ReportData, opts: &ReportOptions) -> String {
    let mut out = String::new();
    let cells = crate::verdict::verdicts(data);
    for (i, table) in data.tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        section(&mut out, data, table, &cells);
    }
    if data.tables.is_empty() {
        load_lines(&mut out, data);
    }
    if opts.details && !data.tables.is_empty() {
        out.push('\n');
        crate::detail::latency_text(&mut out, data);
        crate::detail::pacing_text(&mut out, data);
        crate::detail::connections_text(&mut out, data);
        crate::detail::errors_text(&mut out, data);
        crate::ycsb::op_types_text(&mut out, data);
        crate::tpc::tpc_text(&mut out, data);
        crate::dbbench::kv_text(&mut out, data);
        crate::detail::cost_text(&mut out, data, &opts.metrics);
        crate::dbcounters::text(&mut out, data, opts);
        crate::detail::met_text(&mut out, data, &opts.metrics);
        crate::detail::actions_text(&mut out, data);
        crate::segments::text(&mut out, data);
    }
    out
}

fn section(out: &mut String, data: &ReportData, table: &Table, cells: &[VerdictCell]) {
    let names: Vec<&str> = data.columns.iter().map(|c| c.name()).collect();
    // `col-N :` lines describe the target: its name, and its emulated link if any.
    let described: Vec<String> = data.columns.iter().map(|c| c.described()).collect();
    let described: Vec<&str> = described.iter().map(String::as_str).collect();
    let _ = writeln!(out, "--- dop={} ---\n", table.threads);
    if names.len() >= 2 {
        let _ = writeln!(out, "Relative to: {}", names[0]);
        let rows = table.rows.iter().map(|r| (r.relative(), r.label.as_str()));
        block(out, &described[1..], rows, crate::markup::RATIO);
        no_interval_lines(out, &names[1..], table, cells);
        out.push('\n');
    }
    let rows = table
        .rows
        .iter()
        .map(|r| (r.cells.clone(), r.label.as_str()));
    block(out, &described, rows, 0);
    if data.columns.iter().any(|c| c.load.is_some()) {
        out.push('\n');
        load_lines(out, data);
    }
}

/// `col-N : name` lines, a blank line, the `col-1<TAB>col-2` header, then one line per row.
fn block<'a>(
    out: &mut String,
    names: &[&str],
    rows: impl Iterator<Item = (Vec<Cell>, &'a str)>,
    decimals: usize,
) {
    for (i, name) in names.iter().enumerate() {
        let _ = writeln!(out, "col-{} : {name}", i + 1);
    }
    out.push('\n');
    let header: Vec<String> = (1..=names.len()).map(|i| format!("col-{i}")).collect();
    let _ = writeln!(out, "{}", header.join("\t"));
    for (cells, label) in rows {
        for cell in &cells {
            out.push_str(&cell.plain(decimals));
            out.push('\t');
        }
        let _ = writeln!(out, "{label}");
    }
}

/// Under a relative block, the ratios it printed without an interval and why: one line when
/// none of them has one, else one line per row that has such a ratio (the block's columns
/// stay numbers with the label last, as scripts read them).
fn no_interval_lines(out: &mut String, names: &[&str], table: &Table, cells: &[VerdictCell]) {
    let mut compared = 0;
    let mut lines = Vec::new();
    let mut reasons = std::collections::BTreeSet::new();
    for row in &table.rows {
        let mut why = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let Some(cell) = cells
                .iter()
                .find(|c| c.threads == table.threads && c.label == row.label && c.target == *name)
            else {
                continue;
            };
            compared += 1;
            if let Some(w) = cell.no_interval() {
                why.push(format!("col-{} {w}", k + 1));
                reasons.insert(w);
            }
        }
        if !why.is_empty() {
            lines.push((row.label.as_str(), why));
        }
    }
    let bare: usize = lines.iter().map(|(_, w)| w.len()).sum();
    match reasons.iter().next() {
        Some(reason) if bare == compared && reasons.len() == 1 => {
            let _ = writeln!(
                out,
                "every ratio above: {reason} (--repeat 3 or more gives intervals)"
            );
        }
        _ => {
            for (label, why) in lines {
                let _ = writeln!(out, "{label}: {}", why.join(", "));
            }
        }
    }
}

fn load_lines(out: &mut String, data: &ReportData) {
    for col in &data.columns {
        let Some(load) = &col.load else { continue };
        let _ = match &load.status {
            StepStatus::Failed { reason } => {
                writeln!(out, "Load failed for {}: {reason}", col.name())
            }
            _ => writeln!(
                out,
                "Load seconds is {:.1} for {}: {} rows, {:.0} rows/s",
                load.seconds,
                col.name(),
                load_rows(load),
                load.throughput.value
            ),
        };
    }
}
