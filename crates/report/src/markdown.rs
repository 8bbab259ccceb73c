//! GitHub-flavoured markdown: per thread count a relative table with ▼/▲ markers and an
//! absolute table, then a load table. Same numbers as the text layout, plus the failure
//! reasons and interrupted flags that plain TSV cannot carry.

use crate::data::{load_rows, ReportData};
use crate::table::{Cell, Row, Table};
use crate::ReportOptions;
use dbdelta_model::StepStatus;
use std::fmt::Write;

/// Longest failure reason shown in a cell; the full text is in the JSON report.
const REASON_CHARS: usize = 40;

/// Renders the legend, the tables of every thread count and the load table.
pub fn render(data: &ReportData, opts: &ReportOptions) -> String {
    let mut out = String::new();
    legend(&mut out, data, opts);
    for table in &data.tables {
        if data.columns.len() >= 2 {
            relative_table(&mut out, data, table, opts);
        }
        absolute_table(&mut out, data, table);
    }
    load_table(&mut out, data);
    out
}

fn legend(out: &mut String, data: &ReportData, opts: &ReportOptions) {
    if data.columns.len() >= 2 {
        let _ = write!(
            out,
            "Relative QPS is target / base: ▼ ≤ {:.2}, ▲ ≥ {:.2}. ",
            opts.low, opts.high
        );
    }
    out.push_str(
        "Absolute values are queries/s, except scan in thousands of rows/s (Krows/s). \
         `fail`: the step failed; NA: not run; †: interrupted by Ctrl-C (partial measurement).\n",
    );
}

fn relative_table(out: &mut String, data: &ReportData, table: &Table, opts: &ReportOptions) {
    let _ = writeln!(
        out,
        "\n### Relative QPS, dop={} (base: {})\n",
        table.dop,
        data.base()
    );
    header(out, data.columns.iter().skip(1).map(|c| c.name()));
    for row in &table.rows {
        let base_failed = matches!(row.cells.first(), Some(Cell::Failed { .. }));
        let cells: Vec<String> = row
            .relative()
            .iter()
            .zip(row.cells.iter().skip(1))
            .map(|(rel, own)| match own {
                // Say why a measured number has no ratio; the base's reason is in its table.
                Cell::Value { .. } if base_failed => "NA (base failed)".to_string(),
                _ => cell(rel, 2, Some(opts)),
            })
            .collect();
        line(out, row, &cells);
    }
}

fn absolute_table(out: &mut String, data: &ReportData, table: &Table) {
    let _ = writeln!(out, "\n### Absolute QPS, dop={}\n", table.dop);
    header(out, data.columns.iter().map(|c| c.name()));
    for row in &table.rows {
        let cells: Vec<String> = row.cells.iter().map(|c| cell(c, 0, None)).collect();
        line(out, row, &cells);
    }
}

fn header<'a>(out: &mut String, names: impl Iterator<Item = &'a str>) {
    let names: Vec<&str> = names.collect();
    let _ = writeln!(out, "| group | step | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---:|".repeat(names.len()));
}

fn line(out: &mut String, row: &Row, cells: &[String]) {
    let _ = writeln!(
        out,
        "| {} | {} | {} |",
        row.group.name(),
        escape(&row.label),
        cells.join(" | ")
    );
}

/// One cell; `thresholds` adds the ▼/▲ markers of relative values.
fn cell(c: &Cell, decimals: usize, thresholds: Option<&ReportOptions>) -> String {
    match c {
        Cell::Value { value, interrupted } => {
            let mut s = format!("{value:.decimals$}");
            if let Some(opts) = thresholds {
                s.push_str(marker(*value, opts));
            }
            if *interrupted {
                s.push_str(" †");
            }
            s
        }
        Cell::Failed { reason } => format!("fail ({})", escape(&truncate(reason))),
        Cell::Missing => "NA".to_string(),
    }
}

/// Compares the value as printed (two decimals), so a cell showing 0.95 is always marked.
fn marker(value: f64, opts: &ReportOptions) -> &'static str {
    // Parsing the printed text back gives exactly the number the reader sees.
    let shown: f64 = format!("{value:.2}").parse().unwrap_or(value);
    const EPS: f64 = 1e-9;
    if shown <= opts.low + EPS {
        " ▼"
    } else if shown >= opts.high - EPS {
        " ▲"
    } else {
        ""
    }
}

fn load_table(out: &mut String, data: &ReportData) {
    if data.columns.iter().all(|c| c.load.is_none()) {
        return;
    }
    out.push_str("\n### Load\n\n| target | seconds | rows | rows/s |\n|---|---:|---:|---:|\n");
    for col in &data.columns {
        let Some(load) = &col.load else { continue };
        let _ = match &load.status {
            StepStatus::Failed { reason } => writeln!(
                out,
                "| {} | fail ({}) | NA | NA |",
                col.name(),
                escape(&truncate(reason))
            ),
            status => writeln!(
                out,
                "| {} | {:.1} | {} | {:.0}{} |",
                col.name(),
                load.seconds,
                load_rows(load),
                load.throughput.value,
                if *status == StepStatus::Interrupted {
                    " †"
                } else {
                    ""
                }
            ),
        };
    }
}

fn truncate(reason: &str) -> String {
    let first_line = reason.lines().next().unwrap_or_default().trim();
    if first_line.chars().count() <= REASON_CHARS && first_line.len() == reason.trim().len() {
        return first_line.to_string();
    }
    let cut: String = first_line.chars().take(REASON_CHARS).collect();
    format!("{}…", cut.trim_end())
}

/// Keeps text from breaking the table: pipes escaped, line breaks flattened.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_use_printed_value() {
        let o = ReportOptions::default();
        assert_eq!(marker(0.9504, &o), " ▼");
        assert_eq!(marker(0.9551, &o), "");
        assert_eq!(marker(1.0451, &o), " ▲");
        assert_eq!(marker(1.0449, &o), "");
        assert_eq!(marker(1.0, &o), "");
        assert_eq!(marker(f64::INFINITY, &o), " ▲");
    }

    #[test]
    fn reasons_are_short_and_safe() {
        assert_eq!(truncate("SQLITE_BUSY"), "SQLITE_BUSY");
        let long = "a".repeat(60);
        assert_eq!(truncate(&long), format!("{}…", "a".repeat(40)));
        assert_eq!(truncate("first\nsecond"), "first…");
        assert_eq!(escape("a|b"), "a\\|b");
    }
}
