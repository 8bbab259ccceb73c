//! The table model every format prints: per thread count, rows of steps in canonical order,
//! one cell per target (base first).

use crate::order::RowKey;
use dbdelta_model::{Group, StepKind, StepResult, StepStatus, ThroughputUnit};
use std::collections::{BTreeMap, HashMap};

/// One cell of a table: a number, a failure, or nothing measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A measured number (throughput, or a ratio in relative tables).
    Value {
        /// The number.
        value: f64,
        /// The step (or, for a ratio, either step) was stopped early by Ctrl-C.
        interrupted: bool,
    },
    /// The step failed on this target; printed `fail`, never 0.
    Failed {
        /// Why it failed.
        reason: String,
    },
    /// The target did not run this step; printed `NA`.
    Missing,
    /// The target's engine does not serve the step's operations; printed `n/s`, never
    /// counted as a failure or compared.
    NotSupported {
        /// `… not supported by <engine>`.
        reason: String,
    },
}

impl Cell {
    fn of(result: &StepResult) -> Cell {
        match &result.status {
            StepStatus::Failed { reason } => Cell::Failed {
                reason: reason.clone(),
            },
            StepStatus::NotSupported { reason } => Cell::NotSupported {
                reason: reason.clone(),
            },
            // Its numbers are in the result file; a table shows why it is not one.
            StepStatus::Stalled { reason } => Cell::Failed {
                reason: format!("stalled: {reason}"),
            },
            status => Cell::Value {
                value: result.throughput.value,
                interrupted: *status == StepStatus::Interrupted,
            },
        }
    }

    /// This cell divided by the base cell. A failed cell stays failed; anything else
    /// without two numbers is `Missing`. As in the published scripts 0/0 is 1 and x/0 is
    /// infinite.
    pub fn relative_to(&self, base: &Cell) -> Cell {
        match (self, base) {
            (Cell::Failed { reason }, _) => Cell::Failed {
                reason: reason.clone(),
            },
            (Cell::NotSupported { reason }, _) => Cell::NotSupported {
                reason: reason.clone(),
            },
            (
                Cell::Value {
                    value: v,
                    interrupted: i,
                },
                Cell::Value {
                    value: b,
                    interrupted: j,
                },
            ) => {
                let value = if *b == 0.0 && *v == 0.0 { 1.0 } else { v / b };
                Cell::Value {
                    value,
                    interrupted: *i || *j,
                }
            }
            _ => Cell::Missing,
        }
    }

    /// The number, if there is one.
    pub fn value(&self) -> Option<f64> {
        match self {
            Cell::Value { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// True for a number measured (partly) after Ctrl-C.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            Cell::Value {
                interrupted: true,
                ..
            }
        )
    }

    /// The plain-text form: the number with `decimals` decimals (a relative value with
    /// [`crate::digits::RATIO`]), `fail` or `NA`.
    pub fn plain(&self, decimals: usize) -> String {
        match self {
            Cell::Value { value, .. } => crate::digits::number(*value, decimals),
            Cell::Failed { .. } => "fail".to_string(),
            Cell::Missing => "NA".to_string(),
            Cell::NotSupported { .. } => "n/s".to_string(),
        }
    }
}

/// One step (one label) at one thread count across all targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Report label, e.g. `point-query.pre_range=100`.
    pub label: String,
    /// Step name, e.g. `point-query.pre`.
    pub step: String,
    /// Report group.
    pub group: Group,
    /// Unit of the absolute values (QPS, or Krows/s for scan).
    pub unit: ThroughputUnit,
    /// One cell per target, in column order (base first).
    pub cells: Vec<Cell>,
}

impl Row {
    /// The cells of the non-base targets relative to the base (one fewer than `cells`).
    pub fn relative(&self) -> Vec<Cell> {
        match self.cells.split_first() {
            Some((base, rest)) => rest.iter().map(|c| c.relative_to(base)).collect(),
            None => Vec::new(),
        }
    }
}

/// All rows measured at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Client threads.
    pub threads: u32,
    /// Rows in canonical order.
    pub rows: Vec<Row>,
}

struct RowAcc<'a> {
    step: String,
    group: Group,
    unit: Option<ThroughputUnit>,
    order: u32,
    /// Per column, the results by round (repeat number).
    rounds: Vec<BTreeMap<u32, &'a StepResult>>,
}

/// Builds one table per thread count (ascending) from the measured results of `columns`.
/// Results of other targets and unreported kinds (load, warm, settle) are ignored. A cell
/// measured in several rounds shows their geometric mean (as the verdict's ratio does), over
/// the rounds that completed; a second result for the same target, step label, thread count
/// and round replaces the first, with a warning.
pub(crate) fn build_tables<'a>(
    columns: &[&str],
    results: impl IntoIterator<Item = &'a StepResult>,
    warnings: &mut Vec<String>,
) -> Vec<Table> {
    let col_of: HashMap<&str, usize> = columns.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let mut thread_counts: BTreeMap<u32, HashMap<String, RowAcc<'a>>> = BTreeMap::new();
    for r in results {
        let Some(&col) = col_of.get(r.target.as_str()) else {
            continue;
        };
        if r.kind != StepKind::Measured {
            continue;
        }
        let acc = thread_counts
            .entry(r.threads)
            .or_default()
            .entry(r.label.clone())
            .or_insert_with(|| RowAcc {
                step: r.step.clone(),
                group: r.group,
                unit: None,
                order: r.order,
                rounds: vec![BTreeMap::new(); columns.len()],
            });
        if acc.rounds[col].insert(r.repeat_no(), r).is_some() {
            warnings.push(format!(
                "target '{}' has two results for {} at dop={}; using the later one",
                r.target, r.label, r.threads
            ));
        }
        acc.order = acc.order.min(r.order);
        if r.is_ok() && acc.unit.is_none() {
            acc.unit = Some(r.throughput.unit);
        }
    }
    thread_counts
        .into_iter()
        .map(|(threads, rows)| Table {
            threads,
            rows: sorted_rows(rows),
        })
        .collect()
}

/// A report's results by (threads, order, label), then target.
pub(crate) type Grouped<'a> = BTreeMap<(u32, u32, String), BTreeMap<String, Vec<&'a StepResult>>>;

/// The throughputs of results.
pub(crate) fn values(rs: &[&StepResult]) -> Vec<f64> {
    rs.iter().map(|r| r.throughput.value).collect()
}

/// The rounds a target's value and ratios are made of: the ones measured in turns when there
/// are two or more (the last round's window of its own met other host phases than its
/// pair's), else all of them.
pub(crate) fn evidence_rounds<'a>(rounds: &[&'a StepResult]) -> Vec<&'a StepResult> {
    let in_turns: Vec<&StepResult> = rounds
        .iter()
        .copied()
        .filter(|r| r.turns.is_some())
        .collect();
    if in_turns.len() >= 2 {
        in_turns
    } else {
        rounds.to_vec()
    }
}

/// One cell from a target's rounds: the geometric mean of the completed ones (of
/// [`evidence_rounds`], as in the verdict's ratio), or, when none completed, what the last
/// one was (failed, interrupted, not supported).
fn cell_of_rounds(rounds: &BTreeMap<u32, &StepResult>) -> Cell {
    let completed: Vec<&StepResult> = rounds
        .values()
        .copied()
        .filter(|r| r.is_complete() && r.is_ok())
        .collect();
    let done: Vec<f64> = evidence_rounds(&completed)
        .iter()
        .map(|r| r.throughput.value)
        .collect();
    match (done.len(), rounds.values().last()) {
        (0, Some(last)) => Cell::of(last),
        (0, None) => Cell::Missing,
        (1, _) => Cell::Value {
            value: done[0],
            interrupted: false,
        },
        (n, _) => Cell::Value {
            value: if done.iter().all(|v| *v > 0.0) {
                (done.iter().map(|v| v.ln()).sum::<f64>() / n as f64).exp()
            } else {
                done.iter().sum::<f64>() / n as f64
            },
            interrupted: false,
        },
    }
}

fn sorted_rows(rows: HashMap<String, RowAcc<'_>>) -> Vec<Row> {
    let mut keyed: Vec<(RowKey, Row)> = rows
        .into_iter()
        .map(|(label, a)| {
            let key = RowKey::new(a.group, &a.step, &label, a.order);
            let row = Row {
                label,
                step: a.step,
                group: a.group,
                unit: a.unit.unwrap_or(ThroughputUnit::Qps),
                cells: a.rounds.iter().map(cell_of_rounds).collect(),
            };
            (key, row)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, row)| row).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(value: f64) -> Cell {
        Cell::Value {
            value,
            interrupted: false,
        }
    }

    fn failed() -> Cell {
        Cell::Failed {
            reason: "boom".into(),
        }
    }

    #[test]
    fn relative_arithmetic() {
        assert_eq!(v(1450.0).relative_to(&v(1000.0)), v(1.45));
        assert_eq!(v(0.0).relative_to(&v(0.0)), v(1.0));
        assert_eq!(v(5.0).relative_to(&v(0.0)).value(), Some(f64::INFINITY));
        assert_eq!(v(980.0).relative_to(&v(1000.0)).plain(2), "0.98");
        assert_eq!(
            v(822.0)
                .relative_to(&v(556_880.0))
                .plain(crate::digits::RATIO),
            "0.00148"
        );
        let half = Cell::Value {
            value: 50.0,
            interrupted: true,
        };
        assert!(half.relative_to(&v(100.0)).is_interrupted());
        assert!(v(50.0).relative_to(&half).is_interrupted());
    }

    #[test]
    fn fail_and_missing_never_become_numbers() {
        assert_eq!(failed().relative_to(&v(10.0)), failed());
        assert_eq!(failed().relative_to(&Cell::Missing), failed());
        assert_eq!(Cell::Missing.relative_to(&v(10.0)), Cell::Missing);
        assert_eq!(v(10.0).relative_to(&failed()), Cell::Missing);
        assert_eq!(v(10.0).relative_to(&Cell::Missing), Cell::Missing);
        assert_eq!(failed().plain(0), "fail");
        assert_eq!(Cell::Missing.plain(2), "NA");
        assert_eq!(v(12345.5).plain(0), "12346");
    }

    #[test]
    fn row_relative_skips_the_base() {
        let row = Row {
            label: "x".into(),
            step: "x".into(),
            group: Group::Point,
            unit: ThroughputUnit::Qps,
            cells: vec![v(200.0), v(100.0), Cell::Missing],
        };
        assert_eq!(row.relative(), vec![v(0.5), Cell::Missing]);
    }
}
