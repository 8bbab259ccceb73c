//! A compact Markdown summary for a pull-request comment or `$GITHUB_STEP_SUMMARY`
//! (`dbdelta report --format github`): the verdict count, each target's bottom line, the
//! significant changes with their intervals (largest first), the noise floor, and links to
//! the full HTML report and the history dashboard. The numbers are the console's and the
//! full reports' (the same verdicts, bottom lines and noise floor), only fewer of them.

use crate::console::{bottom_lines, counts};
use crate::data::ReportData;
use crate::verdict::{self, VerdictCell};
use dbdelta_inference::Verdict;
use std::fmt::Write;

/// Where the summary's links point; a link that is `None` is left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The full HTML report.
    pub report: Option<String>,
    /// The history dashboard's page of this suite or series.
    pub dashboard: Option<String>,
}

/// At most this many significant changes are listed (a comment stays readable); the rest
/// are counted below the table.
pub const MAX_CHANGES: usize = 20;

/// A table cell: `|` would end the cell, a line break the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The summary of `data`.
pub fn render(data: &ReportData, links: &Links) -> String {
    let cells = verdict::verdicts(data);
    let mut o = String::new();
    let suite = data
        .runs
        .first()
        .map_or("", |r| r.manifest.options.suite.as_str());
    let others: Vec<&str> = data.columns.iter().skip(1).map(|c| c.name()).collect();
    let title = if others.is_empty() {
        data.base().to_string()
    } else {
        format!("{} vs {}", others.join(", "), data.base())
    };
    let _ = writeln!(o, "### dbdelta {}: {}\n", cell(suite), cell(&title));
    if cells.iter().all(|c| c.comparison.is_none()) {
        let _ = writeln!(
            o,
            "No verdicts: {}. See the full report for the measured values.",
            if others.is_empty() {
                "one target, nothing to compare"
            } else {
                "no intervals (one round of each step and no per-second samples)"
            }
        );
        push_links(&mut o, links);
        return o;
    }
    let regressions = verdict::count_verdicts(&cells, Verdict::Regression);
    let _ = writeln!(
        o,
        "{} **{}**\n",
        if regressions > 0 { "❌" } else { "✅" },
        counts(&cells)
    );
    for line in bottom_lines(data, &cells) {
        let _ = writeln!(o, "- {}", cell(&line));
    }
    let mut changes: Vec<&VerdictCell> = cells
        .iter()
        .filter(|c| {
            c.comparison
                .is_some_and(|x| x.verdict != Verdict::NoChange && x.ratio > 0.0)
        })
        .collect();
    // Largest change first, whichever its direction; ties in report order.
    changes.sort_by(|a, b| {
        let size = |c: &VerdictCell| c.comparison.map_or(0.0, |x| x.ratio.ln().abs());
        size(b)
            .total_cmp(&size(a))
            .then((a.threads, a.order, &a.target).cmp(&(b.threads, b.order, &b.target)))
    });
    if !changes.is_empty() {
        let _ = writeln!(
            o,
            "\n| | step | dop | target | target/{} [95 % interval] | change |",
            cell(data.base())
        );
        let _ = writeln!(o, "|---|---|---:|---|---|---:|");
        for c in changes.iter().take(MAX_CHANGES) {
            let Some(x) = c.comparison else { continue };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {:+.1} % |",
                if x.verdict == Verdict::Regression {
                    "▼"
                } else {
                    "▲"
                },
                cell(&c.label),
                c.threads,
                cell(&c.target),
                verdict::cell_text(c),
                x.change_percent()
            );
        }
        if changes.len() > MAX_CHANGES {
            let _ = writeln!(
                o,
                "\n…and {} more significant change(s) in the full report.",
                changes.len() - MAX_CHANGES
            );
        }
    }
    if let Some(floor) = verdict::noise_floor(data, &cells) {
        let _ = writeln!(o, "\n{floor}.");
    }
    push_links(&mut o, links);
    o
}

fn push_links(o: &mut String, links: &Links) {
    let mut parts = Vec::new();
    if let Some(r) = &links.report {
        parts.push(format!("[Full report]({})", url(r)));
    }
    if let Some(d) = &links.dashboard {
        parts.push(format!("[History dashboard]({})", url(d)));
    }
    if !parts.is_empty() {
        let _ = writeln!(o, "\n{}", parts.join(" · "));
    }
}

/// A link target Markdown keeps whole: spaces and parentheses are percent-encoded.
fn url(link: &str) -> String {
    link.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_survive_markdown() {
        assert_eq!(
            url("runs/a b (1)/report.html"),
            "runs/a%20b%20%281%29/report.html"
        );
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
