//! The tables of the detail sections, built once for the Markdown and HTML writers of
//! [`crate::markup`]: per thread count the latency percentiles, the hardware cost per
//! operation and the operations per dollar; the per-group statistics of relative QPS; and
//! one table per step of throughput against thread count. The writers only lay them out.

use crate::data::ReportData;
use crate::detail::{cost_row, result_of, selected, table_has_proxy, SERVER_CPU};
use crate::markup::{Block, Line, Out};
use crate::summary::{concurrency, group_stats, per_dollar, Concurrency};
use crate::table::{Cell, Table};

/// Cells of a latency line: step, target, p50, p95, p99, p99.9, max, mean.
pub(crate) const LATENCY_CELLS: usize = 8;

/// Event latency percentiles (µs) of every step and target at `table`'s thread count: a
/// failed step keeps its cell and leaves the figures empty; a step not run has no line.
pub(crate) fn latency(data: &ReportData, table: &Table) -> Vec<Block> {
    table
        .rows
        .iter()
        .map(|row| Block {
            group: row.group,
            lines: data
                .columns
                .iter()
                .zip(&row.cells)
                .filter_map(|(col, c)| {
                    let cells = match (c, result_of(data, col.name(), &row.label, table.threads)) {
                        (Cell::Failed { .. }, _) => vec![Out::Step(c.clone(), 0)],
                        (Cell::Value { .. }, Some(r)) => {
                            let l = &r.latency;
                            [l.p50_us, l.p95_us, l.p99_us, l.p999_us, l.max_us, l.mean_us]
                                .into_iter()
                                .map(|v| Out::Num(v, 1))
                                .collect()
                        }
                        _ => return None,
                    };
                    Some(Line::keyed([&row.label, col.name()], cells))
                })
                .collect(),
        })
        .collect()
}

/// The hardware-cost table of one thread count.
pub(crate) struct Costs {
    /// A proxy between client and server was measured: its column is shown.
    pub proxy: bool,
    /// The steps selected by `--metrics`, each with a line per target that has costs.
    pub blocks: Vec<Block>,
}

impl Costs {
    /// Cells of a line: step, target, nine absolute figures, the proxy's, three relative
    /// ones.
    pub(crate) fn width(&self) -> usize {
        if self.proxy {
            15
        } else {
            14
        }
    }

    /// True when no step has a cost line.
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.lines.is_empty())
    }
}

/// Hardware cost per operation (the `sb.met` figures and CPU µs per operation) of the
/// steps `metrics` selects, with target / base for host CPU, context switches and KB
/// written; a server on another host reads "remote" (its cost is not measured).
pub(crate) fn costs(data: &ReportData, table: &Table, metrics: &[String]) -> Costs {
    let proxy = table_has_proxy(data, table);
    let blocks = table
        .rows
        .iter()
        .filter(|row| selected(metrics, &row.step, &row.label))
        .map(|row| {
            let base = data
                .columns
                .first()
                .and_then(|c| result_of(data, c.name(), &row.label, table.threads))
                .and_then(|r| r.costs.as_ref());
            let lines = data
                .columns
                .iter()
                .zip(&row.cells)
                .filter_map(|(col, cell)| {
                    let keys = [row.label.as_str(), col.name()];
                    if let Cell::Failed { .. } = cell {
                        return Some(Line::keyed(keys, [Out::Step(cell.clone(), 0)]));
                    }
                    let c = result_of(data, col.name(), &row.label, table.threads)
                        .and_then(|r| r.costs.as_ref())?;
                    let costs = cost_row(c, base);
                    let remote = data.is_remote(col.name());
                    let mut cells: Vec<Out> = costs
                        .absolute
                        .into_iter()
                        .enumerate()
                        .map(|(i, (v, d))| match v {
                            _ if remote && i == SERVER_CPU => Out::Word("remote"),
                            Some(v) => Out::Num(v, d),
                            None => Out::Word("-"),
                        })
                        .collect();
                    if proxy {
                        cells.push(c.proxy_cpu_us_op.map_or(Out::Word("-"), |v| Out::Num(v, 1)));
                    }
                    cells.extend(
                        costs
                            .relative
                            .into_iter()
                            .map(|v| v.map_or(Out::Word("-"), Out::Costlier)),
                    );
                    Some(Line::keyed(keys, cells))
                })
                .collect();
            Block {
                group: row.group,
                lines,
            }
        })
        .collect();
    Costs { proxy, blocks }
}

/// `--cost NAME=$/h`: per step, operations per hour per dollar of every priced target and
/// its share of the row's best.
pub(crate) fn dollars(data: &ReportData, table: &Table, prices: &[(String, f64)]) -> Vec<Line> {
    table
        .rows
        .iter()
        .zip(per_dollar(data, table, prices))
        .map(|(row, cells)| {
            Line::keyed(
                [&row.label],
                cells
                    .into_iter()
                    .flat_map(|pd| [Out::Step(pd.cell, 0), Out::Share(pd.percent)]),
            )
        })
        .collect()
}

/// Avg, median, min, max and stddev of each non-base target's relative QPS per group.
pub(crate) fn group_lines(data: &ReportData, table: &Table) -> Vec<Line> {
    group_stats(data, table)
        .into_iter()
        .map(|s| {
            Line::keyed(
                [s.group.name(), data.columns[s.column].name()],
                [
                    Out::Num(s.n as f64, 0),
                    Out::Shaded(s.avg),
                    Out::Shaded(s.median),
                    Out::Shaded(s.min),
                    Out::Shaded(s.max),
                    Out::Num(s.stddev, 3),
                ],
            )
        })
        .collect()
}

/// One table per step when the run has several thread counts: a line per target, a cell per
/// thread count (the published "1 2 4 concurrency/version" layout).
pub(crate) fn concurrency_lines(data: &ReportData) -> Vec<(Concurrency, Vec<Line>)> {
    concurrency(data)
        .into_iter()
        .map(|t| {
            let lines = data
                .columns
                .iter()
                .zip(&t.cells)
                .map(|(col, cells)| {
                    Line::keyed([col.name()], cells.iter().map(|c| Out::Step(c.clone(), 0)))
                })
                .collect();
            (t, lines)
        })
        .collect()
}

/// Every failed step with its reason (failures are never shown as zero): thread count,
/// step, target, reason.
pub(crate) fn failures(data: &ReportData) -> Vec<Line> {
    crate::detail::failed_cells(data)
        .map(|(threads, label, target, reason)| Line {
            cells: vec![
                Out::Num(f64::from(threads), 0),
                Out::Text(label.to_string()),
                Out::Text(target.to_string()),
                Out::Reason(reason.to_string()),
            ],
        })
        .collect()
}
