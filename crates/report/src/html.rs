//! One self-contained HTML page (inline CSS and SVG; no scripts, fonts or network): run
//! summary, metric legend, colored relative-QPS tables with bar charts and group statistics,
//! absolute QPS/TPS, concurrency, QPS over time, latency, hardware cost per operation,
//! operations per dollar, load, and every failure with its reason.
//!
//! The output depends only on the stored results and options (no timestamps of its own), so
//! it can be a golden file.

use crate::data::{load_rows, ReportData};
use crate::detail::result_of;
use crate::markup::{esc, ratio, Html, RATIO};
use crate::sections::{self, LATENCY_CELLS};
use crate::svg::{self, BarRow, Series};
use crate::table::{Cell, Table};
use crate::verdict::VerdictCell;
use crate::ReportOptions;
use dbdelta_model::{StepStatus, ThroughputUnit};
use std::fmt::Write;

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;\
font-size:14px;color:#222;margin:24px;max-width:1400px}\
h1{font-size:22px}h2{font-size:18px;margin-top:34px;border-bottom:1px solid #ccc;padding-bottom:4px}\
h3{font-size:15px;margin-top:22px}\
table{border-collapse:collapse;margin:8px 0 14px}\
th,td{border:1px solid #d0d0d0;padding:3px 8px;font-size:13px}\
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.g th{background:#e6ecf5}\
td.lo{background:#f4c7c3}td.hi{background:#c6efce}\
td.fail{background:#fbe3e3;color:#a00;font-weight:bold}td.na{color:#999}\
.note{color:#555;font-size:13px}.warn{color:#8a5a00}\
.swatch{display:inline-block;width:12px;height:12px;vertical-align:-1px;border:1px solid #999}\
.multi{display:flex;flex-wrap:wrap;gap:6px}pre.drill{background:#f7f7f7;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}svg.chart{background:#fff;border:1px solid #eee}span.ci{color:#555;font-size:11px;white-space:nowrap}";

/// Renders the whole page; `cpu_verdicts` are the server-CPU cells (their section is linked
/// from the contents when there are any).
pub fn render(
    data: &ReportData,
    opts: &ReportOptions,
    verdicts: &[VerdictCell],
    cpu_verdicts: &[VerdictCell],
) -> String {
    let mut o = String::new();
    let w = Html { opts };
    let names: Vec<&str> = data.columns.iter().map(|c| c.name()).collect();
    let title = if names.len() >= 2 {
        format!(
            "dbdelta report: {} relative to {}",
            names[1..].join(", "),
            data.base()
        )
    } else {
        format!("dbdelta report: {}", names.join(", "))
    };
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    intro(&mut o, data, verdicts);
    toc(&mut o, data, opts, verdicts, !cpu_verdicts.is_empty());
    glance(&mut o, data, verdicts);
    summary(&mut o, data);
    legend(&mut o, opts);
    if !data.warnings.is_empty() {
        o.push_str("<h2 id=\"warnings\">Warnings</h2>\n<ul class=\"warn\">\n");
        for w in &data.warnings {
            let _ = writeln!(o, "<li>{}</li>", esc(w));
        }
        o.push_str("</ul>\n");
    }
    if data.columns.len() >= 2 {
        for table in &data.tables {
            relative(&mut o, &w, data, table, verdicts);
        }
    }
    for table in &data.tables {
        absolute(&mut o, data, table);
    }
    concurrency_section(&mut o, &w, data);
    crate::timeline::html(&mut o, data, opts);
    latency(&mut o, &w, data);
    costs(&mut o, &w, data);
    crate::dbcounters::html(&mut o, data, opts);
    crate::myrocks::html(&mut o, data, opts);
    dollars(&mut o, &w, data);
    load(&mut o, data);
    failures(&mut o, &w, data);
    crate::profiles::section(&mut o, data, opts);
    o.push_str("</body>\n</html>\n");
    o
}

fn intro(o: &mut String, data: &ReportData, verdicts: &[VerdictCell]) {
    if data.columns.len() >= 2 {
        let _ = writeln!(
            o,
            "<p>Every target is compared with the base target <b>{}</b>: relative QPS = target \
             QPS / base QPS, so 1.10 means 10&nbsp;% more queries per second and 0.90 means \
             10&nbsp;% fewer. A cell is colored only when its difference is significant: \
             <span class=\"swatch\" style=\"background:#c6efce\"></span> green = significantly \
             faster, <span class=\"swatch\" style=\"background:#f4c7c3\"></span> red = \
             significantly slower (its 95&nbsp;% confidence interval excludes 1.0 and it survives \
             false discovery rate control at 5&nbsp;% over the report); an uncolored cell is no \
             significant difference. Each cell shows its 95&nbsp;% interval in brackets; all of \
             them, by group, are in <a href=\"#verdicts\">Verdicts</a>. \
             <b>fail</b> marks a step that failed (the reason is shown), NA one that was not run.</p>",
            esc(data.base()),
        );
        if let Some(line) = crate::verdict::noise_floor(data, verdicts) {
            let _ = writeln!(o, "<p><b>{}</b></p>", esc(&line));
        }
        if let Some(line) = crate::contention::line(data.results()) {
            let _ = writeln!(o, "<p>{}</p>", esc(&line));
        }
        let missing = verdicts.iter().filter(|v| v.comparison.is_none()).count();
        if missing > 0 {
            let _ = writeln!(
                o,
                "<p class=\"warn\">{missing} relative cell(s) have no interval (one window \
                 shorter than 2&nbsp;s per target) and stay uncolored whatever their value: \
                 use --repeat 3 or more.</p>"
            );
        }
    } else {
        o.push_str("<p>One target: absolute throughput only (give two or more targets for relative QPS).</p>\n");
    }
}

fn toc(
    o: &mut String,
    data: &ReportData,
    opts: &ReportOptions,
    verdicts: &[VerdictCell],
    cpu_section: bool,
) {
    o.push_str("<p class=\"note\">Sections: <a href=\"#summary\">run</a> · <a href=\"#legend\">metrics</a>");
    // The verdict section is written only when some cell has an interval.
    if verdicts.iter().any(|v| v.comparison.is_some()) {
        o.push_str(" · <a href=\"#verdicts\">verdicts</a>");
    }
    if cpu_section {
        o.push_str(" · <a href=\"#cpu-verdicts\">server CPU per operation</a>");
    }
    if data.columns.len() >= 2 {
        for t in &data.tables {
            let _ = write!(
                o,
                " · <a href=\"#rel-{0}\">relative QPS dop={0}</a>",
                t.threads
            );
        }
    }
    o.push_str(" · <a href=\"#abs\">absolute QPS</a>");
    if data.tables.len() >= 2 {
        o.push_str(" · <a href=\"#concurrency\">throughput vs threads</a>");
    }
    o.push_str(" · <a href=\"#timeline\">QPS over time</a> · <a href=\"#latency\">latency</a> · <a href=\"#cost\">hardware cost</a>");
    if crate::dbcounters::any(data, opts) {
        o.push_str(" · <a href=\"#dbcounters\">database counters</a>");
    }
    if !opts.costs.is_empty() {
        o.push_str(" · <a href=\"#dollars\">ops per dollar</a>");
    }
    if data.runs.iter().any(|r| r.dir.join("profiles").is_dir()) {
        o.push_str(" · <a href=\"#profiles\">server CPU profiles</a>");
    }
    o.push_str("</p>\n");
}

/// Per thread count and target: how many steps got faster, slower, or failed.
fn glance(o: &mut String, data: &ReportData, verdicts: &[VerdictCell]) {
    if data.columns.len() < 2 || data.tables.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"glance\">At a glance</h2>\n");
    let mut sentences = String::new();
    let mut rows = String::new();
    for t in &data.tables {
        let by_cell = crate::verdict::by_cell(verdicts, t.threads);
        for (i, col) in data.columns.iter().enumerate().skip(1) {
            let (mut up, mut down, mut same, mut failed, mut unknown) = (0, 0, 0, 0, 0);
            let mut vals = Vec::new();
            let mut worst: Option<(f64, &str)> = None;
            let mut best: Option<(f64, &str)> = None;
            for row in &t.rows {
                if matches!(row.cells.get(i), Some(Cell::Failed { .. })) {
                    failed += 1;
                    continue;
                }
                if let Some(v) = row.relative().get(i - 1).and_then(Cell::value) {
                    let c = by_cell
                        .get(&(row.label.clone(), col.name().to_string()))
                        .and_then(|c| c.comparison);
                    let dir = direction(c.as_ref());
                    match (dir, c) {
                        (Some(true), _) => up += 1,
                        (Some(false), _) => down += 1,
                        (None, Some(_)) => same += 1,
                        (None, None) => unknown += 1,
                    }
                    if v.is_finite() {
                        vals.push(v);
                        // The largest drop and gain are named among the counted ones only.
                        if dir == Some(false) && worst.is_none_or(|(w, _)| v < w) {
                            worst = Some((v, &row.label));
                        }
                        if dir == Some(true) && best.is_none_or(|(b, _)| v > b) {
                            best = Some((v, &row.label));
                        }
                    }
                }
            }
            // Steps not run on this target or the base (NA) are not counted as compared.
            let compared = up + down + same + failed + unknown;
            let mut s = format!(
                "<li><b>{}</b> at {} thread(s): significantly faster on {up}, slower on {down}, no significant difference on {same} of {compared} steps",
                esc(col.name()),
                t.threads,
            );
            if unknown > 0 {
                let _ = write!(s, ", no interval on {unknown} (use --repeat 3 or more)");
            }
            if failed > 0 {
                let _ = write!(s, ", <b>failed</b> on {failed}");
            }
            if t.rows.len() > compared {
                let _ = write!(s, " ({} not run)", t.rows.len() - compared);
            }
            if let Some((v, l)) = worst {
                let _ = write!(
                    s,
                    "; largest drop <b>{}</b> ({}&nbsp;%)",
                    esc(l),
                    change_percent(v)
                );
            }
            if let Some((v, l)) = best {
                let _ = write!(
                    s,
                    "; largest gain <b>{}</b> ({}&nbsp;%)",
                    esc(l),
                    change_percent(v)
                );
            }
            s.push_str(".</li>\n");
            sentences.push_str(&s);
            let median =
                crate::summary::median(&mut vals).map_or_else(|| "NA".to_string(), |m| ratio(m, 2));
            let _ = writeln!(
                rows,
                "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n{}\">{up}</td><td class=\"n{}\">{down}</td><td class=\"n\">{same}</td><td class=\"n\">{unknown}</td><td class=\"n{}\">{failed}</td><td class=\"n\">{median}</td></tr>",
                t.threads,
                esc(col.name()),
                if up > 0 { " hi" } else { "" },
                if down > 0 { " lo" } else { "" },
                if failed > 0 { " fail" } else { "" },
            );
        }
    }
    let _ = write!(
        o,
        "<ul class=\"glance\">\n{sentences}</ul>\n<table>\n<tr><th>dop</th><th>target</th><th>faster</th><th>slower</th><th>no significant difference</th><th>no interval</th><th>failed</th><th>median relative QPS</th></tr>\n{rows}</table>\n"
    );
}

/// A ratio as a signed change in percent with three significant digits (-99.9, -12.3,
/// +4.56, +0.123), and never -100 for a drop that is not total (0.0001 is -99.99).
fn change_percent(ratio: f64) -> String {
    let pct = (ratio - 1.0) * 100.0;
    let size = pct.abs();
    let sign = if pct < 0.0 { "-" } else { "+" };
    if size < 1.0 {
        return format!("{sign}{}", crate::markup::ratio(size, 3));
    }
    let mut decimals = match size {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        _ => 2,
    };
    let mut text = format!("{size:.decimals$}");
    // A partial drop rounds up to 100 only for lack of digits.
    while ratio > 0.0 && pct < 0.0 && text.parse::<f64>().is_ok_and(|v| v >= 100.0) && decimals < 9
    {
        decimals += 1;
        text = format!("{size:.decimals$}");
    }
    format!("{sign}{text}")
}

fn summary(o: &mut String, data: &ReportData) {
    o.push_str("<h2 id=\"summary\">Run</h2>\n");
    for (i, run) in data.runs.iter().enumerate() {
        let m = &run.manifest;
        let dir = run
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| run.dir.display().to_string());
        if data.runs.len() > 1 {
            let _ = writeln!(o, "<h3>Run {}: {}</h3>", i + 1, esc(&dir));
        }
        let h = &m.host;
        let op = &m.options;
        let rows: Vec<(&str, String)> = vec![
            ("run directory", dir.clone()),
            (
                "status",
                format!(
                    "{:?}, started {}, finished {}",
                    m.status,
                    m.started,
                    m.finished.as_deref().unwrap_or("-")
                )
                .to_lowercase(),
            ),
            ("host", h.hostname.clone()),
            ("CPU", format!("{} ({} cores)", h.cpu_model, h.cores)),
            (
                "memory",
                format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
            ),
            (
                "kernel",
                format!(
                    "{} (governor {}, THP {})",
                    h.kernel,
                    h.governor.as_deref().unwrap_or("-"),
                    h.thp.as_deref().unwrap_or("-")
                ),
            ),
            (
                "dbdelta",
                format!("{} ({})", m.tool.version, m.tool.git_commit),
            ),
            (
                "workload",
                format!(
                    "suite {}, scale {:?}, {} table(s) x {} rows, threads {}",
                    op.suite,
                    op.scale,
                    op.tables,
                    op.table_size,
                    op.threads
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            ),
            (
                "durations",
                format!(
                    "read steps {} s, write steps {} s, insert {} s, warm-up {} s",
                    op.read_secs, op.write_secs, op.insert_secs, op.warmup_secs
                ),
            ),
        ];
        o.push_str("<table>\n");
        for (k, v) in rows {
            let _ = writeln!(o, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
        }
        o.push_str("</table>\n");
    }
    o.push_str("<h3>Targets</h3>\n<table>\n<tr><th>color</th><th>target</th><th>engine</th><th>version</th><th>non-default settings</th><th>spec</th></tr>\n");
    for (i, c) in data.columns.iter().enumerate() {
        let t = &c.target;
        let settings = if t.settings.is_empty() {
            "(defaults)".to_string()
        } else {
            t.settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            o,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span></td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            svg::color(i),
            esc(&t.name),
            if i == 0 { " <b>(base)</b>" } else { "" },
            esc(&t.engine),
            esc(t.version.as_deref().unwrap_or("-")),
            esc(&settings),
            esc(&t.spec),
        );
    }
    o.push_str("</table>\n");
    differing_settings(o, data);
}

/// Settings that locate a managed server instance (ports, sockets, directories): they
/// always differ between targets and say nothing about performance.
const INSTANCE_SETTINGS: &[&str] = &[
    "dbdelta.address",
    "port",
    "unix_socket_directories",
    "socket",
    "datadir",
    "data_directory",
    "pid-file",
    "pid_file",
    "hba_file",
    "ident_file",
    "config_file",
    "external_pid_file",
    "log_directory",
    "tmpdir",
];

/// The settings whose values differ between targets (a setting a target does not set shows
/// as "(default)"; instance locations such as ports and sockets are left out), so the cause
/// of a difference is visible next to the numbers.
fn differing_settings(o: &mut String, data: &ReportData) {
    if data.columns.len() < 2 {
        return;
    }
    let mut keys: Vec<&String> = data
        .columns
        .iter()
        .flat_map(|c| c.target.settings.keys())
        .collect();
    keys.sort();
    keys.dedup();
    let differ: Vec<&String> = keys
        .into_iter()
        .filter(|k| !INSTANCE_SETTINGS.contains(&k.as_str()))
        .filter(|k| {
            let first = data.columns[0].target.settings.get(*k);
            data.columns
                .iter()
                .any(|c| c.target.settings.get(*k) != first)
        })
        .collect();
    let versions_differ = data
        .columns
        .iter()
        .any(|c| c.target.version != data.columns[0].target.version);
    if differ.is_empty() && !versions_differ {
        o.push_str("<p class=\"note\">All targets have the same version and settings.</p>\n");
        return;
    }
    o.push_str(
        "<h3>What differs between the targets</h3>\n<table class=\"differ\">\n<tr><th>setting</th>",
    );
    for c in &data.columns {
        let _ = write!(o, "<th>{}</th>", esc(c.name()));
    }
    o.push_str("</tr>\n");
    if versions_differ {
        o.push_str("<tr><th>version</th>");
        for c in &data.columns {
            let _ = write!(
                o,
                "<td>{}</td>",
                esc(c.target.version.as_deref().unwrap_or("-"))
            );
        }
        o.push_str("</tr>\n");
    }
    for k in differ {
        let _ = write!(o, "<tr><th>{}</th>", esc(k));
        for c in &data.columns {
            match c.target.settings.get(k) {
                Some(v) => {
                    let _ = write!(o, "<td>{}</td>", esc(v));
                }
                None => o.push_str("<td class=\"na\">(default)</td>"),
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

fn legend(o: &mut String, opts: &ReportOptions) {
    o.push_str("<h2 id=\"legend\">Metrics and units</h2>\n<table class=\"legend\">\n");
    let mut items: Vec<(&str, String)> = vec![
        ("QPS", "statements per second, every statement counted (BEGIN/COMMIT included), as sysbench's queries/s".into()),
        ("TPS", "events (transactions) per second".into()),
        ("Krows/s", "scan only: thousands of rows read per second".into()),
        ("relative QPS", format!("target QPS / base QPS at the same thread count; colored only when the difference is significant: green = significantly faster, red = significantly slower (the 95 % interval excludes 1.0 and survives false discovery rate control at {:.0} % over the report), uncolored = no significant difference; the dashed lines of the bars mark {:.2} and {:.2} (--thresholds)", crate::verdict::FDR * 100.0, opts.low, opts.high)),
        ("avg, median, min, max, stddev", "statistics of a target's relative QPS over the steps of one group (population stddev)".into()),
        ("dop", "client threads (sysbench --threads)".into()),
        ("groups", "point = point queries; range = range queries and scans; write = inserts, updates, deletes and read-write transactions".into()),
        ("p50 … max", "event latency percentiles in microseconds (µs)".into()),
        ("cpu/o", "published unit: mean host CPU busy % (us+sy) / operations per second".into()),
        ("cs/o, r/o", "host context switches / reads per operation".into()),
        ("rKB/o, wKB/o", "KB read / written by the storage device per operation".into()),
        ("o/s", "operations per second in the metrics window".into()),
        ("host, server, client µs/op", "CPU microseconds per operation of the whole machine, the database server's processes (embedded SQLite: its worker threads) and dbdelta itself".into()),
        ("relative cost", format!("target cost / base cost; here more is worse; costs have no interval, so fixed thresholds color them (--thresholds): red ≥ {:.2}, green ≤ {:.2}; n/a where the base is below a floor ({} host µs/op, {} cs/o, {} wKB/o: background noise, not a cost)", opts.high, opts.low, crate::detail::COST_FLOORS[0], crate::detail::COST_FLOORS[1], crate::detail::COST_FLOORS[2])),
        ("fail, NA, †", "the step failed (reason shown); not run; interrupted by Ctrl-C (partial measurement)".into()),
    ];
    if !opts.costs.is_empty() {
        items.push((
            "ops/hour/$",
            "operations (scan: thousands of rows) per hour per dollar of the target's hourly price; % of best = share of the row's best priced target".into(),
        ));
    }
    for (k, v) in items {
        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    o.push_str("</table>\n");
}

/// Whether a relative value counts as faster (`Some(true)`) or slower (`Some(false)`): only
/// when its difference is significant; `None` without an interval or within the noise.
fn direction(c: Option<&dbdelta_inference::Comparison>) -> Option<bool> {
    match c?.verdict {
        dbdelta_inference::Verdict::Improvement => Some(true),
        dbdelta_inference::Verdict::Regression => Some(false),
        dbdelta_inference::Verdict::NoChange => None,
    }
}

/// A relative-QPS cell colored only when its difference is significant; the interval, or
/// the lack of one, is the cell's tooltip.
fn significant_td(rel: &Cell, cell: Option<&VerdictCell>) -> String {
    if let Some(why) = cell.and_then(VerdictCell::no_interval) {
        // Said next to the ratio, not only in its tooltip.
        let td = Html::titled_td(rel, 2, None, Some(&why));
        return match (rel, td.strip_suffix("</td>")) {
            (Cell::Value { .. }, Some(open)) => {
                format!("{open} <small>({})</small></td>", esc(&why))
            }
            _ => td,
        };
    }
    let Some(c) = cell.and_then(|v| v.comparison) else {
        return Html::titled_td(
            rel,
            RATIO,
            None,
            Some("no interval: one window shorter than 2 s per target; use --repeat 3 or more"),
        );
    };
    let weaker = match c.evidence {
        dbdelta_inference::Evidence::WithinRun => " (within one run: weaker evidence)",
        dbdelta_inference::Evidence::AcrossRuns { .. } => {
            " (unpaired across runs, with the between-run variance)"
        }
        dbdelta_inference::Evidence::Repeats { .. }
        | dbdelta_inference::Evidence::Paired { .. } => "",
    };
    let withheld = if cell.is_some_and(|v| v.withheld) {
        " (excludes 1.0 on its own, not after false discovery rate control)"
    } else {
        ""
    };
    let title = format!(
        "{:.0} % CI [{}, {}], {}{weaker}{withheld}",
        c.level * 100.0,
        ratio(c.low, 2),
        ratio(c.high, 2),
        c.verdict.name()
    );
    let td = Html::titled_td(rel, RATIO, direction(Some(&c)), Some(&title));
    // The interval is visible in the cell, not only in its tooltip.
    match rel {
        Cell::Value { .. } => td.replacen(
            "</td>",
            &format!(
                " <span class=\"ci\">[{}, {}]</span></td>",
                ratio(c.low, 2),
                ratio(c.high, 2)
            ),
            1,
        ),
        _ => td,
    }
}

fn relative(o: &mut String, w: &Html, data: &ReportData, table: &Table, verdicts: &[VerdictCell]) {
    let opts = w.opts;
    let profiled = crate::profiles::profiled_steps(data);
    let others: Vec<&str> = data.columns.iter().skip(1).map(|c| c.name()).collect();
    let by_cell = crate::verdict::by_cell(verdicts, table.threads);
    let _ = writeln!(
        o,
        "<h2 id=\"rel-{0}\">Relative QPS, dop={0} (base: {1})</h2>",
        table.threads,
        esc(data.base())
    );
    o.push_str("<table class=\"rel\">\n<tr><th>step</th>");
    for n in &others {
        let _ = write!(o, "<th>{}</th>", esc(n));
    }
    o.push_str("</tr>\n");
    let mut last = None;
    for row in &table.rows {
        if last != Some(row.group) {
            last = Some(row.group);
            Html::group_row(o, row.group, others.len() + 1);
        }
        let base_failed = matches!(row.cells.first(), Some(Cell::Failed { .. }));
        if profiled.contains(&(row.label.clone(), table.threads)) {
            let _ = write!(
                o,
                "<tr><td><a href=\"#{}\" title=\"flamegraphs and drill-down\">{}</a></td>",
                crate::profiles::anchor(&row.label, table.threads),
                esc(&row.label)
            );
        } else {
            let _ = write!(o, "<tr><td>{}</td>", esc(&row.label));
        }
        for ((rel, own), target) in row
            .relative()
            .iter()
            .zip(row.cells.iter().skip(1))
            .zip(&others)
        {
            match own {
                Cell::Value { .. } if base_failed => {
                    o.push_str("<td class=\"na\">NA (base failed)</td>");
                }
                _ => o.push_str(&significant_td(
                    rel,
                    by_cell
                        .get(&(row.label.clone(), target.to_string()))
                        .copied(),
                )),
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    let rows: Vec<BarRow> = table
        .rows
        .iter()
        .map(|r| BarRow {
            label: &r.label,
            group: r.group,
            cells: r.relative(),
        })
        .collect();
    let _ = writeln!(
        o,
        "<p class=\"note\">Bars start at 1.0 (same as the base): right = faster, left = slower; dashed lines at {:.2} and {:.2}.</p>",
        opts.low, opts.high
    );
    o.push_str(&svg::relative_bars(&rows, &others, opts.low, opts.high));
    o.push('\n');
    let lines = sections::group_lines(data, table);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<h3>Relative QPS per group, dop={}</h3>\n<table class=\"stats\">\n<tr><th>group</th><th>target</th><th>steps</th><th>avg</th><th>median</th><th>min</th><th>max</th><th>stddev</th></tr>",
        table.threads
    );
    for l in &lines {
        w.line(o, l, 0);
    }
    o.push_str("</table>\n");
}

fn absolute(o: &mut String, data: &ReportData, table: &Table) {
    let _ = writeln!(
        o,
        "<h2 id=\"abs{0}\">Absolute QPS and TPS, dop={0}</h2>",
        table.threads
    );
    if table.threads == data.tables.first().map_or(0, |t| t.threads) {
        o.push_str("<span id=\"abs\"></span>");
    }
    o.push_str("<table class=\"abs\">\n<tr><th rowspan=\"2\">step</th><th rowspan=\"2\">unit</th>");
    for c in &data.columns {
        let _ = write!(o, "<th colspan=\"2\">{}</th>", esc(c.name()));
    }
    o.push_str("</tr>\n<tr>");
    for _ in &data.columns {
        o.push_str("<th>QPS</th><th>TPS</th>");
    }
    o.push_str("</tr>\n");
    let mut last = None;
    for row in &table.rows {
        if last != Some(row.group) {
            last = Some(row.group);
            Html::group_row(o, row.group, 2 + 2 * data.columns.len());
        }
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td>",
            esc(&row.label),
            unit_name(row.unit)
        );
        for (col, cell) in data.columns.iter().zip(&row.cells) {
            o.push_str(&Html::cell(cell, 0));
            let tps = match (cell, result_of(data, col.name(), &row.label, table.threads)) {
                (Cell::Value { .. }, Some(r)) => format!("<td class=\"n\">{:.0}</td>", r.tps),
                _ => "<td class=\"na\"></td>".to_string(),
            };
            o.push_str(&tps);
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
}

fn unit_name(u: ThroughputUnit) -> &'static str {
    match u {
        ThroughputUnit::KrowsPerSec => "Krows/s",
        ThroughputUnit::RowsPerSec => "rows/s",
        ThroughputUnit::OpsPerSec => "ops/s",
        ThroughputUnit::Qps => "QPS",
        ThroughputUnit::Tps => "tps",
        ThroughputUnit::Nopm => "NOPM",
    }
}

fn concurrency_section(o: &mut String, w: &Html, data: &ReportData) {
    let tables = sections::concurrency_lines(data);
    if tables.is_empty() {
        return;
    }
    let thread_counts: Vec<f64> = data.thread_counts().into_iter().map(f64::from).collect();
    o.push_str("<h2 id=\"concurrency\">Throughput vs thread count</h2>\n<p class=\"note\">One chart and one table per step: throughput (QPS; scan Krows/s) of each target at each thread count. Failed points are left out.</p>\n<div class=\"multi\">\n");
    for (t, _) in &tables {
        let series: Vec<Series> = data
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Series {
                name: c.name(),
                color: i,
                points: thread_counts
                    .iter()
                    .zip(&t.cells[i])
                    .filter_map(|(d, c)| Some((*d, c.value()?)))
                    .collect(),
            })
            .collect();
        o.push_str(&svg::lines(
            &t.label,
            "client threads",
            "throughput",
            &series,
            Some(&thread_counts),
            (340.0, 210.0),
        ));
        o.push('\n');
    }
    o.push_str("</div>\n");
    for (t, lines) in &tables {
        let _ = write!(
            o,
            "<h3>{} ({})</h3>\n<table class=\"conc\">\n<tr><th>target</th>",
            esc(&t.label),
            t.group.name()
        );
        for d in data.thread_counts() {
            let _ = write!(o, "<th>{d}</th>");
        }
        o.push_str("</tr>\n");
        for l in lines {
            w.line(o, l, 0);
        }
        o.push_str("</table>\n");
    }
}

fn latency(o: &mut String, w: &Html, data: &ReportData) {
    o.push_str("<h2 id=\"latency\">Latency (µs per event)</h2>\n");
    for table in &data.tables {
        let _ = writeln!(
            o,
            "<h3>dop={}</h3>\n<table class=\"lat\">\n<tr><th>step</th><th>target</th><th>p50</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>",
            table.threads
        );
        // Every step heads its group here, even one without a line.
        w.blocks(o, &sections::latency(data, table), 8, LATENCY_CELLS, true);
        o.push_str("</table>\n");
    }
}

fn costs(o: &mut String, w: &Html, data: &ReportData) {
    o.push_str("<h2 id=\"cost\">Hardware cost per operation</h2>\n<p class=\"note\">The sb.met figures (cpu/o, cs/o, r/o, rKB/o, wKB/o, o/s; scan: per thousand rows) and CPU µs per operation. OS metrics cover the measured window only. Relative columns are target / base of the same step: more is worse, so red = costlier, green = cheaper.</p>\n");
    let mut any = false;
    for table in &data.tables {
        let costs = sections::costs(data, table, &w.opts.metrics);
        if costs.is_empty() {
            continue;
        }
        any = true;
        // The group rows span 14 columns with or without the proxy column, as published.
        let mut body = String::new();
        w.blocks(&mut body, &costs.blocks, 14, costs.width(), false);
        let _ = writeln!(
            o,
            "<h3>dop={}</h3>\n<table class=\"cost\">\n<tr><th>step</th><th>target</th><th>cpu/o</th><th>cs/o</th><th>r/o</th><th>rKB/o</th><th>wKB/o</th><th>o/s</th><th>host µs/op</th><th>server µs/op</th><th>client µs/op</th>{}<th>rel host CPU</th><th>rel cs/o</th><th>rel wKB/o</th></tr>\n{body}</table>",
            table.threads,
            if costs.proxy { "<th>proxy µs/op</th>" } else { "" }
        );
    }
    if !any {
        o.push_str("<p class=\"note\">No OS metrics were recorded (run with OS metrics enabled on Linux).</p>\n");
    } else if let Some(note) = crate::detail::remote_note(data) {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(&note));
    }
}

fn dollars(o: &mut String, w: &Html, data: &ReportData) {
    let opts = w.opts;
    if opts.costs.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"dollars\">Operations per hour per dollar</h2>\n<p class=\"note\">Prices (--cost): ");
    let prices: Vec<String> = opts
        .costs
        .iter()
        .map(|(n, p)| format!("{} ${p}/hour", esc(n)))
        .collect();
    o.push_str(&prices.join(", "));
    o.push_str(
        ". Throughput × 3600 (NOPM × 60) / price; % = share of the row's best (best = 100&nbsp;%).</p>\n",
    );
    for table in &data.tables {
        let _ = write!(
            o,
            "<h3>dop={}</h3>\n<table class=\"dollar\">\n<tr><th>step</th>",
            table.threads
        );
        for (n, _) in &opts.costs {
            let _ = write!(o, "<th>{0} ops/hour/$</th><th>{0} %</th>", esc(n));
        }
        o.push_str("</tr>\n");
        for l in sections::dollars(data, table, &opts.costs) {
            w.line(o, &l, 0);
        }
        o.push_str("</table>\n");
    }
}

fn load(o: &mut String, data: &ReportData) {
    if data.columns.iter().all(|c| c.load.is_none()) {
        return;
    }
    o.push_str("<h2 id=\"load\">Load</h2>\n<table>\n<tr><th>target</th><th>seconds</th><th>rows</th><th>rows/s</th></tr>\n");
    for col in &data.columns {
        let Some(l) = &col.load else { continue };
        match &l.status {
            StepStatus::Failed { reason } => {
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td>{}<td class=\"na\">NA</td><td class=\"na\">NA</td></tr>",
                    esc(col.name()),
                    Html::cell(
                        &Cell::Failed {
                            reason: reason.clone()
                        },
                        0
                    )
                );
            }
            _ => {
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{:.0}</td></tr>",
                    esc(col.name()),
                    l.seconds,
                    load_rows(l),
                    l.throughput.value
                );
            }
        }
    }
    o.push_str("</table>\n");
}

fn failures(o: &mut String, w: &Html, data: &ReportData) {
    let lines = sections::failures(data);
    if lines.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"failures\">Failed steps</h2>\n<table>\n<tr><th>dop</th><th>step</th><th>target</th><th>reason</th></tr>\n");
    for l in &lines {
        w.line(o, l, 0);
    }
    o.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    #[test]
    fn changes_keep_their_digits() {
        use super::change_percent;
        assert_eq!(change_percent(0.001), "-99.9");
        assert_eq!(change_percent(0.0001), "-99.99");
        assert_eq!(change_percent(0.0), "-100");
        assert_eq!(change_percent(0.877), "-12.3");
        assert_eq!(change_percent(1.0456), "+4.56");
        assert_eq!(change_percent(1.00123), "+0.123");
        assert_eq!(change_percent(3.5), "+250");
    }
}
