//! Derived tables shared by the Markdown and HTML reports: per-group statistics of relative
//! QPS (avg, median, min, max, stddev per group of steps), concurrency tables (rows = targets, columns = thread counts)
//! and operations per hour per dollar (`--cost`).

use crate::data::ReportData;
use crate::table::{Cell, Table};
use dbdelta_model::Group;

/// Statistics of the relative QPS of one non-base target over the rows of one group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupStats {
    /// The group (point, range, write).
    pub group: Group,
    /// Index of the target in [`ReportData::columns`] (never 0, the base).
    pub column: usize,
    /// How many rows had a finite ratio.
    pub n: usize,
    /// Arithmetic mean.
    pub avg: f64,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest ratio.
    pub min: f64,
    /// Largest ratio.
    pub max: f64,
    /// Population standard deviation.
    pub stddev: f64,
}

/// Per group (in point, range, write order) and non-base target, the statistics of the finite
/// relative values of `table`; failed, missing and infinite cells are left out. Groups with
/// no such value for a target are omitted.
pub fn group_stats(data: &ReportData, table: &Table) -> Vec<GroupStats> {
    let mut out = Vec::new();
    for group in [Group::Point, Group::Range, Group::Write] {
        for column in 1..data.columns.len() {
            let mut values: Vec<f64> = table
                .rows
                .iter()
                .filter(|r| r.group == group)
                .filter_map(|r| r.relative().get(column - 1).and_then(Cell::value))
                .filter(|v| v.is_finite())
                .collect();
            if let Some(s) = stats(&mut values) {
                out.push(GroupStats { group, column, ..s });
            }
        }
    }
    out
}

/// The median of `values` (sorted in place); `None` when there are none.
pub(crate) fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn stats(values: &mut [f64]) -> Option<GroupStats> {
    if values.is_empty() {
        return None;
    }
    let median = median(values)?;
    let n = values.len();
    let avg = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / n as f64;
    Some(GroupStats {
        group: Group::Point,
        column: 0,
        n,
        avg,
        median,
        min: values[0],
        max: values[n - 1],
        stddev: var.sqrt(),
    })
}

/// One concurrency table: a step's throughput per target (rows) and thread count (columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrency {
    /// The step label.
    pub label: String,
    /// The group of the step.
    pub group: Group,
    /// One row per target in column order; one cell per thread count of [`ReportData::dops`].
    pub cells: Vec<Vec<Cell>>,
}

/// The concurrency tables of every step, in canonical row order; empty with one thread count.
pub fn concurrency(data: &ReportData) -> Vec<Concurrency> {
    if data.tables.len() < 2 {
        return Vec::new();
    }
    // Canonical order: the rows of the longest table, then rows only other tables have.
    let mut order: Vec<&Table> = data.tables.iter().collect();
    order.sort_by_key(|t| std::cmp::Reverse(t.rows.len()));
    let mut labels: Vec<(&str, Group)> = Vec::new();
    for t in order {
        for r in &t.rows {
            if !labels.iter().any(|(l, _)| *l == r.label) {
                labels.push((&r.label, r.group));
            }
        }
    }
    labels
        .into_iter()
        .map(|(label, group)| Concurrency {
            label: label.to_string(),
            group,
            cells: (0..data.columns.len())
                .map(|c| {
                    data.tables
                        .iter()
                        .map(|t| {
                            t.rows
                                .iter()
                                .find(|r| r.label == label)
                                .and_then(|r| r.cells.get(c).cloned())
                                .unwrap_or(Cell::Missing)
                        })
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// Operations per hour per dollar of one priced target for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct PerDollar {
    /// Operations (scan: thousands of rows) per hour per dollar, or the failure.
    pub cell: Cell,
    /// Percent of the best priced target of the row (best = 100).
    pub percent: Option<f64>,
}

/// For each row of `table`, one entry per priced target (in `costs` order): operations per
/// hour (throughput × 3600, or × 60 for TPC-C's per-minute NOPM) / dollars per hour, and the
/// share of the row's best.
pub fn per_dollar(
    data: &ReportData,
    table: &Table,
    costs: &[(String, f64)],
) -> Vec<Vec<PerDollar>> {
    table
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<Cell> = costs
                .iter()
                .map(|(name, price)| {
                    let c = data
                        .columns
                        .iter()
                        .position(|c| c.name() == name)
                        .and_then(|i| row.cells.get(i).cloned())
                        .unwrap_or(Cell::Missing);
                    let per_hour =
                        match crate::detail::result_of(data, name, &row.label, table.threads)
                            .map(|r| r.throughput.unit)
                        {
                            Some(dbdelta_model::ThroughputUnit::Nopm) => 60.0,
                            _ => 3600.0,
                        };
                    match c {
                        Cell::Value { value, interrupted } => Cell::Value {
                            value: value * per_hour / price,
                            interrupted,
                        },
                        other => other,
                    }
                })
                .collect();
            let best = cells.iter().filter_map(Cell::value).fold(0.0_f64, f64::max);
            cells
                .into_iter()
                .map(|cell| PerDollar {
                    percent: cell
                        .value()
                        .filter(|_| best > 0.0)
                        .map(|v| v / best * 100.0),
                    cell,
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_known_values() {
        let s = stats(&mut [1.2, 0.8, 1.0, 1.0]).expect("stats");
        assert_eq!(s.n, 4);
        assert!((s.avg - 1.0).abs() < 1e-12);
        assert!((s.median - 1.0).abs() < 1e-12);
        assert_eq!((s.min, s.max), (0.8, 1.2));
        assert!((s.stddev - 0.02_f64.sqrt()).abs() < 1e-12);
        let odd = stats(&mut [3.0, 1.0, 2.0]).expect("stats");
        assert_eq!(odd.median, 2.0);
        assert!(stats(&mut []).is_none());
    }
}
