//! What a finished run prints on standard output: per thread count one aligned table (each
//! target's throughput, each non-base target's ratio to the base with its interval and
//! verdict, each target's noise), a short key, the count of regressions, and one bottom line
//! per non-base target (like hyperfine's "A ran 1.23 ± 0.04 times faster than B"). The
//! published tab-separated layout stays in `report.txt` ([`crate::text`]).

use crate::data::ReportData;
use crate::digits::significant;
use crate::table::Cell;
use crate::verdict::{self, VerdictCell};
use dbdelta_inference::{Evidence, Verdict};
use dbdelta_model::Group;
use std::collections::HashMap;
use std::fmt::Write;

/// The console's report of one run: the tables, the verdict count, the bottom lines.
pub fn brief(data: &ReportData) -> String {
    let cells = verdict::verdicts(data);
    let mut out = String::new();
    let noise: HashMap<(u32, String, String), String> = verdict::noise(data)
        .iter()
        .map(|n| {
            (
                (n.threads, n.label.clone(), n.target.clone()),
                verdict::cv_text(n),
            )
        })
        .collect();
    let names: Vec<&str> = data.columns.iter().map(|c| c.name()).collect();
    let compared = cells.iter().any(|c| c.comparison.is_some());
    for table in &data.tables {
        let by = verdict::by_cell(&cells, table.threads);
        let mut header = vec![format!("dop={}", table.threads), "unit".to_string()];
        header.extend(names.iter().map(|n| n.to_string()));
        if let Some(base) = names.first() {
            header.extend(names.iter().skip(1).map(|n| format!("{n}/{base}")));
        }
        if compared {
            header.extend(names.iter().map(|n| format!("cv {n}")));
        }
        let mut rows = vec![header];
        for row in &table.rows {
            let mut line = vec![row.label.clone(), row.unit.name().to_string()];
            line.extend(row.cells.iter().map(absolute));
            for (i, rel) in row.relative().iter().enumerate() {
                let target = names.get(i + 1).copied().unwrap_or_default();
                line.push(match by.get(&(row.label.clone(), target.to_string())) {
                    Some(v) if v.comparison.is_some() => verdict::cell_text(v),
                    _ => rel
                        .value()
                        .map_or_else(|| rel.plain(0), |v| significant(v, 3)),
                });
            }
            if compared {
                line.extend(names.iter().map(|n| {
                    noise
                        .get(&(table.threads, row.label.clone(), n.to_string()))
                        .cloned()
                        .unwrap_or_else(|| "-".to_string())
                }));
            }
            rows.push(line);
        }
        out.push_str(&align(&rows));
        out.push('\n');
    }
    if compared {
        let _ = writeln!(out, "{}", key(data, &cells));
        let _ = writeln!(out, "\n{}", counts(&cells));
        for line in bottom_lines(data, &cells) {
            let _ = writeln!(out, "{line}");
        }
    }
    for line in crate::segments::summary_lines(data) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A throughput cell: whole numbers from 100 up, three significant digits below.
fn absolute(cell: &Cell) -> String {
    match cell.value() {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => significant(v, 3),
        None => cell.plain(0),
    }
}

/// How to read the ratio and noise columns, in one line.
fn key(data: &ReportData, cells: &[VerdictCell]) -> String {
    let evidence = cells
        .iter()
        .filter_map(|c| c.comparison)
        .map(|c| c.evidence)
        .next();
    let turn_ms = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .find_map(|r| r.turns.map(|t| t.slice_ms));
    let basis = match evidence {
        Some(Evidence::Paired { pairs }) => match turn_ms {
            Some(ms) => format!("{pairs} paired rounds in turns of {} ms", trimmed(ms)),
            None => format!("{pairs} paired rounds"),
        },
        Some(Evidence::Repeats { base, target }) => {
            format!("repeated runs ({base} of the base, {target} of the target)")
        }
        _ => "the per-second samples of one run (~, weaker evidence)".to_string(),
    };
    format!(
        "Ratios with 95 % intervals from {basis}; ▲ faster, ▼ slower (significant at a {:.0} % false discovery rate; ° excludes 1.0 alone but not after it); cv = noise of the step. Details: report.txt, report.html.",
        verdict::FDR * 100.0
    )
}

/// "N regression(s), M improvement(s), K without significant change".
pub(crate) fn counts(cells: &[VerdictCell]) -> String {
    let n = |v: Verdict| verdict::count_verdicts(cells, v);
    let missing = cells.iter().filter(|c| c.comparison.is_none()).count();
    format!(
        "{} regression(s), {} improvement(s), {} without significant change{}",
        n(Verdict::Regression),
        n(Verdict::Improvement),
        n(Verdict::NoChange),
        if missing > 0 {
            format!(", {missing} without enough data")
        } else {
            String::new()
        }
    )
}

/// One line per non-base target that has a comparison: how many steps are significantly
/// slower and faster, the geometric mean of its ratios with an interval, the geometric mean
/// per group and the noise floor (median half-width of its intervals).
///
/// The interval of the geometric mean treats the steps as fixed and each step's ratio as
/// uncertain: on the log scale each step's standard error is its interval's half-width over
/// the normal quantile, and the mean of n logs has the root of the summed squares over n.
pub fn bottom_lines(data: &ReportData, cells: &[VerdictCell]) -> Vec<String> {
    let group_of: HashMap<(u32, &str), Group> = data
        .tables
        .iter()
        .flat_map(|t| {
            t.rows
                .iter()
                .map(move |r| ((t.threads, r.label.as_str()), r.group))
        })
        .collect();
    let mut out = Vec::new();
    for col in data.columns.iter().skip(1) {
        let mine: Vec<_> = cells
            .iter()
            .filter(|c| c.target == col.name())
            .filter_map(|c| c.comparison.map(|x| (c, x)))
            .filter(|(_, x)| x.ratio > 0.0 && x.low > 0.0 && x.high.is_finite())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let n = mine.len() as f64;
        let slower = mine
            .iter()
            .filter(|(_, x)| x.verdict == Verdict::Regression)
            .count();
        let faster = mine
            .iter()
            .filter(|(_, x)| x.verdict == Verdict::Improvement)
            .count();
        let mean_log = mine.iter().map(|(_, x)| x.ratio.ln()).sum::<f64>() / n;
        let z = normal_quantile(verdict::LEVEL);
        let se = mine
            .iter()
            .map(|(_, x)| ((x.high.ln() - x.low.ln()) / (2.0 * z)).powi(2))
            .sum::<f64>()
            .sqrt()
            / n;
        let mut groups = Vec::new();
        for g in [Group::Write, Group::Point, Group::Range] {
            let logs: Vec<f64> = mine
                .iter()
                .filter(|(c, _)| group_of.get(&(c.threads, c.label.as_str())) == Some(&g))
                .map(|(_, x)| x.ratio.ln())
                .collect();
            if !logs.is_empty() {
                let gm = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
                groups.push(format!("{} {}×", plural(g), significant(gm, 3)));
            }
        }
        let mut halves: Vec<f64> = mine
            .iter()
            .map(|(_, x)| x.relative_width() / 2.0 * 100.0)
            .filter(|h| h.is_finite())
            .collect();
        let floor = crate::summary::median(&mut halves)
            .map(|m| format!("; noise floor ±{} %", significant(m, 2)))
            .unwrap_or_default();
        out.push(format!(
            "{} vs {}: {slower} of {} steps slower, {faster} faster; geometric mean {}× [{}, {}]{}{floor}",
            col.name(),
            data.base(),
            mine.len(),
            significant(mean_log.exp(), 3),
            significant((mean_log - z * se).exp(), 3),
            significant((mean_log + z * se).exp(), 3),
            if groups.is_empty() {
                String::new()
            } else {
                format!("; {}", groups.join(", "))
            },
        ));
    }
    out
}

fn plural(g: Group) -> &'static str {
    match g {
        Group::Write => "writes",
        Group::Point => "point",
        Group::Range => "range",
    }
}

/// The two-sided standard normal quantile of a confidence level (0.95 → 1.96): Student's t
/// with degrees of freedom beyond any sample's, where it is the normal.
fn normal_quantile(level: f64) -> f64 {
    dbdelta_inference::dist::t_quantile(0.5 + level / 2.0, 1e6)
}

/// A setting as given: three significant digits without trailing zeros (10, 0.05).
pub fn trimmed(v: f64) -> String {
    let s = significant(v, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Rows (the first a header) as columns padded to their widest cell, two spaces apart;
/// columns of numbers right-aligned, the first column and text left-aligned; no trailing
/// spaces.
pub fn align(rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|s| width(s))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // A column of numbers (below its header) is right-aligned, header included.
    let number = |s: &str| s.starts_with(|c: char| c.is_ascii_digit() || c == '~');
    let right: Vec<bool> = (0..cols)
        .map(|i| {
            i > 0
                && rows
                    .iter()
                    .skip(1)
                    .any(|r| r.get(i).is_some_and(|c| number(c)))
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i].saturating_sub(width(cell));
            if right[i] {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_trimmed() {
        assert_eq!(trimmed(10.0), "10");
        assert_eq!(trimmed(100.0), "100");
        assert_eq!(trimmed(0.05), "0.05");
    }

    #[test]
    fn quantile_of_95_percent_is_1_96() {
        assert!((normal_quantile(0.95) - 1.959_964).abs() < 1e-3);
    }

    #[test]
    fn columns_are_padded_and_numbers_right_aligned() {
        let rows = vec![
            vec!["step".to_string(), "a".to_string()],
            vec!["long-step-name".to_string(), "12".to_string()],
            vec!["s".to_string(), "1234".to_string()],
        ];
        assert_eq!(
            align(&rows),
            "step               a\nlong-step-name    12\ns               1234\n"
        );
    }
}
