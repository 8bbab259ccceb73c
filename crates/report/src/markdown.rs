//! GitHub-flavoured markdown: per thread count a relative table with ▼/▲ markers, the
//! per-group statistics of the relative values and an absolute table; then concurrency
//! tables (rows = targets, columns = thread counts), latency percentiles, hardware cost per
//! operation with marked relative columns, the server's own counters per operation (server
//! engines), operations per hour per dollar (`--cost`), the load table and every failed step
//! with its reason. The same numbers as the HTML report,
//! with the coloring replaced by markers so it reads in plain text.

use crate::data::{load_rows, ReportData};
use crate::markup::{md as escape, Markdown, RATIO};
use crate::sections::{self, LATENCY_CELLS};
use crate::table::{Cell, Row, Table};
use crate::verdict::VerdictCell;
use crate::ReportOptions;
use dbdelta_inference::Verdict;
use dbdelta_model::StepStatus;
use std::fmt::Write;

/// Renders the legend, the tables of every thread count and the load table.
pub fn render(data: &ReportData, opts: &ReportOptions, verdicts: &[VerdictCell]) -> String {
    let mut out = String::new();
    if let Some(line) = crate::verdict::noise_floor(data, verdicts) {
        let _ = writeln!(out, "**{line}.**\n");
    }
    if let Some(line) = crate::contention::line(data.results()) {
        let _ = writeln!(out, "{line}.\n");
    }
    legend(&mut out, data);
    let w = Markdown { opts };
    for table in &data.tables {
        if data.columns.len() >= 2 {
            relative_table(&mut out, data, table, verdicts);
            group_table(&mut out, &w, data, table);
        }
        absolute_table(&mut out, data, table);
    }
    concurrency_tables(&mut out, &w, data);
    if opts.details {
        latency_tables(&mut out, &w, data);
        cost_tables(&mut out, &w, data, opts);
        crate::dbcounters::markdown(&mut out, data, opts);
    }
    dollar_tables(&mut out, &w, data, opts);
    load_table(&mut out, data);
    failure_list(&mut out, &w, data);
    crate::segments::markdown(&mut out, data);
    out
}

/// Avg, median, min, max and stddev of each non-base target's relative QPS per group.
fn group_table(out: &mut String, w: &Markdown, data: &ReportData, table: &Table) {
    let lines = sections::group_lines(data, table);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Relative QPS per group, dop={}\n\n| group | target | steps | avg | median | min | max | stddev |\n|---|---|---:|---:|---:|---:|---:|---:|",
        table.threads
    );
    for l in &lines {
        w.line(out, l, 0);
    }
}

/// One table per step when the run has several thread counts: rows = targets, columns =
/// thread counts (the published "1 2 4 concurrency/version" layout).
fn concurrency_tables(out: &mut String, w: &Markdown, data: &ReportData) {
    let tables = sections::concurrency_lines(data);
    if tables.is_empty() {
        return;
    }
    let thread_counts = data.thread_counts();
    out.push_str("\n## Throughput vs thread count\n");
    for (t, lines) in &tables {
        let _ = writeln!(
            out,
            "\n### {} ({})\n\n| target | {} |\n|---|{}",
            escape(&t.label),
            t.group.name(),
            thread_counts
                .iter()
                .map(|d| format!("{d} threads"))
                .collect::<Vec<_>>()
                .join(" | "),
            "---:|".repeat(thread_counts.len())
        );
        for l in lines {
            w.line(out, l, 0);
        }
    }
}

/// Event latency percentiles (µs) per thread count, step and target.
fn latency_tables(out: &mut String, w: &Markdown, data: &ReportData) {
    for table in &data.tables {
        let _ = writeln!(
            out,
            "\n### Latency, dop={} (µs per event)\n\n| step | target | p50 | p95 | p99 | p99.9 | max | mean |\n|---|---|---:|---:|---:|---:|---:|---:|",
            table.threads
        );
        w.blocks(out, &sections::latency(data, table), LATENCY_CELLS);
    }
}

/// Hardware cost per operation (the `sb.met` figures and CPU µs per operation) with the
/// relative columns (target / base) marked: for costs more is worse, so ▲ = costlier.
fn cost_tables(out: &mut String, w: &Markdown, data: &ReportData, opts: &ReportOptions) {
    for table in &data.tables {
        let costs = sections::costs(data, table, &opts.metrics);
        if costs.is_empty() {
            continue;
        }
        let mut body = String::new();
        w.blocks(&mut body, &costs.blocks, costs.width());
        let note = crate::detail::remote_note(data)
            .map(|n| format!(" {}", escape(&n)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "\n### Hardware cost per operation, dop={}\n\nOS metrics of the measured window; scan: per thousand rows. rel = target / base: more is worse, so ▲ = costlier, ▼ = cheaper, at fixed thresholds ≥ {:.2} / ≤ {:.2} (costs have no interval); n/a: the base is below a floor ({} host µs/op, {} cs/o, {} wKB/o), noise rather than a cost.{note}\n\n| step | target | cpu/o | cs/o | r/o | rKB/o | wKB/o | o/s | host µs/op | server µs/op | client µs/op |{} rel host CPU | rel cs/o | rel wKB/o |\n|---|---|{}\n{body}",
            table.threads,
            opts.high,
            opts.low,
            crate::detail::COST_FLOORS[0],
            crate::detail::COST_FLOORS[1],
            crate::detail::COST_FLOORS[2],
            if costs.proxy { " proxy µs/op |" } else { "" },
            // Step and target stay left-aligned; every figure is right-aligned.
            "---:|".repeat(costs.width() - 2)
        );
    }
}

/// `--cost NAME=$/h`: operations per hour per dollar and the share of the row's best.
fn dollar_tables(out: &mut String, w: &Markdown, data: &ReportData, opts: &ReportOptions) {
    if opts.costs.is_empty() {
        return;
    }
    let prices: Vec<String> = opts
        .costs
        .iter()
        .map(|(n, p)| format!("{} ${p}/hour", escape(n)))
        .collect();
    for table in &data.tables {
        let _ = writeln!(
            out,
            "\n### Operations per hour per dollar, dop={}\n\nPrices: {}. Throughput × 3600 (NOPM × 60) / price; % = share of the row's best (best = 100 %).\n",
            table.threads,
            prices.join(", ")
        );
        let mut head = String::from("| step |");
        for (n, _) in &opts.costs {
            let _ = write!(head, " {0} ops/hour/$ | {0} % of best |", escape(n));
        }
        let _ = writeln!(out, "{head}\n|---|{}", "---:|".repeat(2 * opts.costs.len()));
        for l in sections::dollars(data, table, &opts.costs) {
            w.line(out, &l, 0);
        }
    }
}

/// Every failed step with its full first-line reason: failures are never shown as zero.
fn failure_list(out: &mut String, w: &Markdown, data: &ReportData) {
    let lines = sections::failures(data);
    if lines.is_empty() {
        return;
    }
    out.push_str("\n### Failed steps\n\n| dop | step | target | reason |\n|---:|---|---|---|\n");
    for l in &lines {
        w.line(out, l, 0);
    }
}

fn legend(out: &mut String, data: &ReportData) {
    if data.columns.len() >= 2 {
        out.push_str(
            "Relative QPS is target / base: ▼ significantly slower, ▲ significantly faster (the \
             95 % interval excludes 1.0 and survives false discovery rate control at 5 %); \
             unmarked: no significant difference; `?`: no interval (one window shorter than \
             2 s per target: use --repeat 3 or more). ",
        );
    }
    out.push_str(
        "Absolute values are queries/s, except scan in thousands of rows/s (Krows/s). \
         `fail`: the step failed; NA: not run; †: interrupted by Ctrl-C (partial measurement).\n",
    );
}

fn relative_table(out: &mut String, data: &ReportData, table: &Table, verdicts: &[VerdictCell]) {
    let _ = writeln!(
        out,
        "\n### Relative QPS, dop={} (base: {})\n",
        table.threads,
        data.base()
    );
    let by_cell = crate::verdict::by_cell(verdicts, table.threads);
    let targets: Vec<&str> = data.columns.iter().skip(1).map(|c| c.name()).collect();
    header(out, targets.iter().copied());
    for row in &table.rows {
        let base_failed = matches!(row.cells.first(), Some(Cell::Failed { .. }));
        let cells: Vec<String> = row
            .relative()
            .iter()
            .zip(row.cells.iter().skip(1))
            .zip(&targets)
            .map(|((rel, own), target)| match own {
                // Say why a measured number has no ratio; the base's reason is in its table.
                Cell::Value { .. } if base_failed => "NA (base failed)".to_string(),
                _ => {
                    let v = by_cell.get(&(row.label.clone(), target.to_string()));
                    Markdown::cell(rel, RATIO, Some(&marker(v.copied())))
                }
            })
            .collect();
        line(out, row, &cells);
    }
}

fn absolute_table(out: &mut String, data: &ReportData, table: &Table) {
    let _ = writeln!(out, "\n### Absolute QPS, dop={}\n", table.threads);
    header(out, data.columns.iter().map(|c| c.name()));
    for row in &table.rows {
        let cells: Vec<String> = row
            .cells
            .iter()
            .map(|c| Markdown::cell(c, 0, None))
            .collect();
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

/// The marker of a relative value: its verdict, `°` when only false discovery rate control
/// made it insignificant, `?` without an interval.
fn marker(v: Option<&VerdictCell>) -> String {
    if let Some(why) = v.and_then(VerdictCell::no_interval) {
        return format!(" ? ({why})");
    }
    match v.and_then(|v| v.comparison.map(|c| (c.verdict, v.withheld))) {
        None => " ?",
        Some((Verdict::Regression, _)) => " ▼",
        Some((Verdict::Improvement, _)) => " ▲",
        Some((Verdict::NoChange, true)) => " °",
        Some((Verdict::NoChange, false)) => "",
    }
    .to_string()
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
                Markdown::reason(reason)
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
