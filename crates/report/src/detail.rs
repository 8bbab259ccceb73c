//! The detail sections under the QPS tables: latency percentiles per step and target, and
//! the published `sb.met` per-operation cost blocks (Mark Callaghan's sysbench scripts).

use crate::data::ReportData;
use dbdelta_model::glob::glob_match;
use dbdelta_model::{StepKind, StepResult, ThroughputUnit};
use dbdelta_osmetrics::sb_met_block;
use std::fmt::Write;

/// The stored result of `target` for `label` at `threads`.
pub fn result_of<'a>(
    data: &'a ReportData,
    target: &str,
    label: &str,
    threads: u32,
) -> Option<&'a StepResult> {
    data.runs.iter().flat_map(|r| &r.results).find(|r| {
        r.target == target
            && r.label == label
            && r.threads == threads
            && r.kind == StepKind::Measured
    })
}

/// `--metrics` selection: empty selects every step.
pub fn selected(globs: &[String], step: &str, label: &str) -> bool {
    globs.is_empty()
        || globs
            .iter()
            .any(|g| glob_match(g, step) || glob_match(g, label))
}

/// One latency table per thread count: a line per step and target, microseconds.
pub fn latency_text(out: &mut String, data: &ReportData) {
    for table in &data.tables {
        let _ = writeln!(
            out,
            "--- latency dop={} (event latency, microseconds) ---\n",
            table.threads
        );
        let _ = writeln!(out, "p50\tp95\tp99\tp99.9\tmax\tmean\ttarget\tstep");
        for row in &table.rows {
            for col in &data.columns {
                let Some(r) = result_of(data, col.name(), &row.label, table.threads) else {
                    continue;
                };
                if !r.is_ok() {
                    continue;
                }
                let l = &r.latency;
                let _ = writeln!(
                    out,
                    "{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{}\t{}",
                    l.p50_us,
                    l.p95_us,
                    l.p99_us,
                    l.p999_us,
                    l.max_us,
                    l.mean_us,
                    col.name(),
                    row.label
                );
            }
        }
        out.push('\n');
    }
}

/// The `sb.met` title of a step: `sb.met.<step>.range<R>.pk1.dop<N>`.
fn met_title(r: &StepResult) -> String {
    let range = r
        .label
        .rsplit_once("_range=")
        .map(|(_, n)| n)
        .unwrap_or("0");
    format!("sb.met.{}.range{range}.pk1.dop{}", r.step, r.threads)
}

/// The `sb.met` blocks in the published order: the load first, then the steps in run order
/// without scans, then the scans. Targets without OS metrics are left out of a block.
pub fn met_text(out: &mut String, data: &ReportData, globs: &[String]) {
    let Some(first) = data.columns.first() else {
        return;
    };
    // The load block (sb.prepare.met): per-row costs of each target's load.
    let loads: Vec<(&str, &dbdelta_model::os::OpCosts)> = data
        .columns
        .iter()
        .filter_map(|c| Some((c.name(), c.load.as_ref()?.costs.as_ref()?)))
        .collect();
    if !loads.is_empty() && selected(globs, "load", "load") {
        out.push_str(&sb_met_block("sb.prepare.met.load.pk1", &loads));
    }
    // Step order = the base target's run order; scans last as sum_met.sh does.
    let mut base_results: Vec<&StepResult> = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .filter(|r| r.target == first.name() && r.kind == StepKind::Measured)
        .filter(|r| selected(globs, &r.step, &r.label))
        .collect();
    base_results.sort_by_key(|r| {
        (
            r.throughput.unit == ThroughputUnit::KrowsPerSec,
            r.threads,
            r.order,
        )
    });
    for base in base_results {
        let rows: Vec<(&str, &dbdelta_model::os::OpCosts)> = data
            .columns
            .iter()
            .filter_map(|c| {
                let r = result_of(data, c.name(), &base.label, base.threads)?;
                Some((c.name(), r.costs.as_ref()?))
            })
            .collect();
        if !rows.is_empty() {
            out.push_str(&sb_met_block(&met_title(base), &rows));
        }
    }
}

/// Clearer per-operation costs than the published units: CPU µs per operation of the whole
/// host, the server and the client (dbdelta), server context switches and KB written per op.
pub fn cost_text(out: &mut String, data: &ReportData, globs: &[String]) {
    for table in &data.tables {
        let mut cells = Vec::new();
        for row in &table.rows {
            if !selected(globs, &row.step, &row.label) {
                continue;
            }
            for col in &data.columns {
                if let Some(c) = result_of(data, col.name(), &row.label, table.threads)
                    .and_then(|r| r.costs.as_ref())
                {
                    cells.push((c, col.name(), row.label.as_str()));
                }
            }
        }
        // A proxy (managed pgbouncer) is a third process group: its column only when present.
        let has_proxy = cells.iter().any(|(c, _, _)| c.proxy_cpu_us_op.is_some());
        let opt =
            |v: Option<f64>, d: usize| v.map(|v| format!("{v:.d$}")).unwrap_or_else(|| "-".into());
        let lines: Vec<String> = cells
            .iter()
            .map(|(c, target, label)| {
                let server = if data.is_remote(target) {
                    "remote".to_string()
                } else {
                    opt(c.server_cpu_us_op, 1)
                };
                let proxy = if has_proxy {
                    format!("{}\t", opt(c.proxy_cpu_us_op, 1))
                } else {
                    String::new()
                };
                format!(
                    "{:.1}\t{}\t{proxy}{:.1}\t{}\t{}\t{}\t{}",
                    c.host_cpu_us_op,
                    server,
                    c.client_cpu_us_op,
                    opt(c.server_cs_op, 3),
                    opt(c.server_wkb_op, 3),
                    target,
                    label
                )
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "--- cost per operation dop={} (CPU us/op; scan: per thousand rows) ---\n",
            table.threads
        );
        let _ = writeln!(
            out,
            "OS metrics cover the measured window only (the published scripts also include the \
             warm-up).\nhost = whole machine; server = the server's process tree (embedded \
             SQLite: the worker threads); client = dbdelta (embedded: the rest of its process).\n\
             srv-cs = server context switches per op; srv-wKB = KB the server wrote per op.\n"
        );
        if let Some(note) = remote_note(data) {
            let _ = writeln!(out, "{note}\n");
        }
        if has_proxy {
            let _ = writeln!(
                out,
                "proxy = the proxy between them (pgbouncer), a process group of its own.\n"
            );
        }
        let proxy_head = if has_proxy { "proxy\t" } else { "" };
        let _ = writeln!(
            out,
            "host\tserver\t{proxy_head}client\tsrv-cs\tsrv-wKB\ttarget\tstep"
        );
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// The note under every cost table when targets run on another host: their "host" figures
/// are this client machine's and their server's cost is not measured; `None` without such
/// targets.
pub(crate) fn remote_note(data: &ReportData) -> Option<String> {
    let remote: Vec<&str> = data
        .columns
        .iter()
        .map(|c| c.name())
        .filter(|n| data.is_remote(n))
        .collect();
    (!remote.is_empty()).then(|| {
        format!(
            "{} on another host: \"host\" is this client machine, not the server's; the \
             server's cost is not measured (remote server).",
            remote.join(", ")
        )
    })
}

/// Every (threads, step label, target, result) of the report's tables, in table order.
pub(crate) fn each_result(
    data: &ReportData,
) -> impl Iterator<Item = (u32, &str, &str, &StepResult)> {
    data.tables.iter().flat_map(move |table| {
        table.rows.iter().flat_map(move |row| {
            data.columns.iter().filter_map(move |col| {
                result_of(data, col.name(), &row.label, table.threads)
                    .map(|r| (table.threads, row.label.as_str(), col.name(), r))
            })
        })
    })
}

/// Writes a `--- title ---` section: a blank line, the tab-separated header, one line per
/// row and a blank line; nothing when there are no rows.
pub(crate) fn section(out: &mut String, title: &str, header: &str, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "--- {title} ---\n");
    let _ = writeln!(out, "{header}");
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    out.push('\n');
}

/// Paced steps (`--rate`): target and achieved rate, whether it was sustained (≥ 95 %), the
/// events intended in the window, the backlog at its end (events due and not started), how
/// long draining it took and how many never ran (the drain stops at the statement timeout),
/// the warm-up's backlog the window inherited, and the schedule lag.
pub fn pacing_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for (threads, label, target, r) in each_result(data) {
        let Some(p) = &r.pacing else { continue };
        lines.push(format!(
            "{:.0}\t{:.0}\t{}\t{}\t{}\t{:.2}\t{}\t{}\t{:.1}\t{:.1}\t{threads}\t{target}\t{label}",
            p.target_per_s,
            p.achieved_per_s,
            if p.sustained { "yes" } else { "NO" },
            p.intended,
            p.backlog,
            p.drain_secs,
            p.not_executed,
            p.warmup_backlog,
            p.lag.p50_us,
            p.lag.p99_us,
        ));
    }
    section(
        out,
        "paced steps (events/s; latency above is from the intended start and includes the \
         backlog drained after the window; lag in us)",
        "target\tachieved\tsustained\tintended\tbacklog\tdrain-s\tnot-run\twarmup-backlog\tlag-p50\tlag-p99\tdop\ttarget\tstep",
        lines,
    );
}

/// What was done to the targets besides measuring, one line per action in run order: each
/// settle point's statements and how long it waited and why, a binary-log reset before a
/// write step.
pub fn actions_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for r in data.runs.iter().flat_map(|run| &run.results) {
        let step = match r.kind {
            StepKind::Measured | StepKind::Warm => format!("{} dop={}", r.label, r.threads),
            _ => r.label.clone(),
        };
        for a in &r.actions {
            lines.push(format!("{}\t{step}\t{a}", r.target));
        }
    }
    section(
        out,
        "actions (settle points, and what ran before a step)",
        "target\tstep\taction",
        lines,
    );
}

/// Errors of the steps that had any: retried errors, failed events (not retried; the step
/// went on) and the count per server code or kind.
pub fn errors_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for (threads, label, target, r) in each_result(data).filter(|(.., r)| !r.error_codes.is_empty())
    {
        let codes: Vec<String> = r
            .error_codes
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        lines.push(format!(
            "{}\t{}\t{:.3}\t{}\t{threads}\t{target}\t{label}",
            r.errors,
            r.failed_events,
            100.0 * r.failed_events as f64 / (r.events + r.failed_events).max(1) as f64,
            codes.join(", "),
        ));
    }
    section(
        out,
        "errors (retried, failed and not retried, failed % of events; by server code)",
        "retried\tfailed\tfailed-%\tcodes\tdop\ttarget\tstep",
        lines,
    );
}

/// The connect phase of server engines, per thread count and target: connections opened
/// (active ones in parentheses), how long opening them took, connect latency, and the
/// client's and the server's memory per connection. Medians over the steps.
pub fn connections_text(out: &mut String, data: &ReportData) {
    let mut lines = Vec::new();
    for threads in data.thread_counts() {
        for col in &data.columns {
            let stats: Vec<&dbdelta_model::ConnectStats> = data
                .runs
                .iter()
                .flat_map(|r| &r.results)
                .filter(|r| r.target == col.name() && r.threads == threads && r.is_ok())
                .filter_map(|r| r.connect.as_ref())
                .collect();
            let Some(first) = stats.first() else { continue };
            let med = |f: &dyn Fn(&dbdelta_model::ConnectStats) -> Option<f64>| {
                let mut v: Vec<f64> = stats.iter().filter_map(|s| f(s)).collect();
                v.sort_by(f64::total_cmp);
                v.get(v.len() / 2).copied()
            };
            let kb = |v: Option<f64>| v.map_or("-".to_string(), |b| format!("{:.1}", b / 1024.0));
            lines.push(format!(
                "{} ({})	{:.2}	{:.0}	{:.0}	{:.0}	{}	{}	{}",
                first.connections,
                first.active,
                med(&|s| Some(s.seconds)).unwrap_or(0.0),
                med(&|s| Some(s.latency.p50_us)).unwrap_or(0.0),
                med(&|s| Some(s.latency.p99_us)).unwrap_or(0.0),
                med(&|s| Some(s.latency.max_us)).unwrap_or(0.0),
                kb(med(&|s| s.client_bytes_per_connection)),
                kb(med(&|s| s.server_bytes_per_connection)),
                col.name(),
            ));
        }
    }
    section(
        out,
        "connections (median over steps; connect latency in us, memory in KB per connection)",
        "conns (active)\tconnect-s\tconnect-p50\tconnect-p99\tconnect-max\tclient-KB\tserver-KB\ttarget",
        lines,
    );
}

/// The smallest base cost a relative cost is computed from, per relative column (host CPU
/// µs/op, context switches/op, KB written/op): below it the base's figure is background
/// noise of the window (a journal flush, a checkpoint during a read-only step), and a ratio
/// over it reads `inf`, `6711` or a green `0.00` that means nothing. Such a cell is `n/a`;
/// the absolute columns still show both figures.
pub const COST_FLOORS: [f64; 3] = [0.01, 0.01, 0.1];

/// One target's row of the hardware-cost table, shared by the Markdown and HTML formats:
/// the `sb.met` figures and CPU µs per operation with their decimals, then target / base for
/// host CPU, context switches and KB written per operation (`None` where either side lacks it).
pub(crate) struct CostRow {
    /// cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s, host, server and client CPU µs/op.
    pub absolute: [(Option<f64>, usize); 9],
    /// Relative host CPU µs/op, context switches/op and KB written/op; NaN (printed `n/a`)
    /// where the base is below [`COST_FLOORS`].
    pub relative: [Option<f64>; 3],
}

/// True when a step of `table` measured a proxy between client and server: the cost tables
/// then get a proxy column.
pub(crate) fn table_has_proxy(data: &ReportData, table: &crate::Table) -> bool {
    table.rows.iter().any(|row| {
        data.columns.iter().any(|col| {
            result_of(data, col.name(), &row.label, table.threads)
                .and_then(|r| r.costs.as_ref())
                .is_some_and(|c| c.proxy_cpu_us_op.is_some())
        })
    })
}

/// The server µs/op column of [`CostRow::absolute`], which reads "remote" for a server on
/// another host (its cost is not measured).
pub(crate) const SERVER_CPU: usize = 7;

/// Builds [`CostRow`] for `c` against the base target's costs.
pub(crate) fn cost_row(
    c: &dbdelta_model::os::OpCosts,
    base: Option<&dbdelta_model::os::OpCosts>,
) -> CostRow {
    // Both zero (e.g. no writes on either side) reads as "no change", not as a division error;
    // a base below the metric's floor is noise, not a cost, and gives NaN ("n/a", uncolored).
    let rel = |a: Option<f64>, b: Option<f64>, floor: f64| match (a, b) {
        (Some(a), Some(b)) => Some(if a == 0.0 && b == 0.0 {
            1.0
        } else if b < floor {
            f64::NAN
        } else {
            a / b
        }),
        _ => None,
    };
    CostRow {
        absolute: [
            (Some(c.cpu_o), 6),
            (Some(c.cs_o), 3),
            (c.r_o, 3),
            (c.rkb_o, 3),
            (c.wkb_o, 3),
            (Some(c.o_s), 0),
            (Some(c.host_cpu_us_op), 1),
            (c.server_cpu_us_op, 1),
            (Some(c.client_cpu_us_op), 1),
        ],
        relative: [
            rel(
                Some(c.host_cpu_us_op),
                base.map(|b| b.host_cpu_us_op),
                COST_FLOORS[0],
            ),
            rel(Some(c.cs_o), base.map(|b| b.cs_o), COST_FLOORS[1]),
            rel(c.wkb_o, base.and_then(|b| b.wkb_o), COST_FLOORS[2]),
        ],
    }
}

/// Every failed cell of the QPS tables as (threads, step label, target, reason), in table order:
/// the reports list them so that a failure is never read as zero.
pub(crate) fn failed_cells(
    data: &ReportData,
) -> impl Iterator<Item = (u32, &str, &str, &str)> + '_ {
    data.tables.iter().flat_map(move |t| {
        t.rows.iter().flat_map(move |row| {
            data.columns
                .iter()
                .zip(&row.cells)
                .filter_map(move |(col, c)| match c {
                    crate::table::Cell::Failed { reason } => {
                        Some((t.threads, row.label.as_str(), col.name(), reason.as_str()))
                    }
                    _ => None,
                })
        })
    })
}

#[cfg(test)]
mod cost_tests {
    use super::cost_row;
    use crate::markup::{Html, Markdown, Out};
    use crate::ReportOptions;
    use dbdelta_model::os::OpCosts;

    fn costs(host: f64, cs: f64, wkb: f64) -> OpCosts {
        OpCosts {
            cpu_o: 0.0,
            cs_o: cs,
            r_o: None,
            rkb_o: None,
            wkb_o: Some(wkb),
            o_s: 1000.0,
            host_cpu_us_op: host,
            server_cpu_us_op: None,
            client_cpu_us_op: 1.0,
            proxy_cpu_us_op: None,
            server_cs_op: None,
            server_rkb_op: None,
            server_wkb_op: None,
        }
    }

    #[test]
    fn a_base_below_the_floor_gives_no_ratio() {
        // A read-only step: the base wrote 0.0001 KB/op of background journal, the target
        // 0.67: 6711 would be noise over noise.
        let rel = cost_row(&costs(20.0, 3.0, 0.67), Some(&costs(10.0, 0.001, 0.0001))).relative;
        assert_eq!(rel[0], Some(2.0));
        assert!(rel[1].is_some_and(f64::is_nan) && rel[2].is_some_and(f64::is_nan));
        // Nothing written on either side is no change; a real base gives a real ratio, with
        // its significant digits.
        let rel = cost_row(&costs(20.0, 0.0, 0.0), Some(&costs(10.0, 0.0, 0.0))).relative;
        assert_eq!((rel[1], rel[2]), (Some(1.0), Some(1.0)));
        let rel = cost_row(&costs(20.0, 3.0, 0.0009), Some(&costs(10.0, 3.0, 4.5))).relative;
        let opts = ReportOptions::default();
        let md = Markdown { opts: &opts };
        assert_eq!(
            md.out(&Out::Costlier(rel[2].unwrap_or_default())),
            "0.000200 ▼"
        );
        assert_eq!(md.out(&Out::Costlier(f64::NAN)), "n/a");
        let html = Html { opts: &opts }.out(&Out::Costlier(f64::NAN));
        assert_eq!(html, "<td class=\"n\">n/a</td>");
        assert_eq!(md.out(&Out::Costlier(f64::INFINITY)), "n/a ▲");
    }
}
