//! The Insert Benchmark report (Mark Callaghan's `gen_html.sh`): the absolute throughput table
//! (`tput.tab`, quartile colors, SLA failures gray), the relative throughput table
//! (`tputr.tab`, blue above 1.05, yellow below 0.95) and the background insert-rate table
//! (`iput.tab`, red below 95 % of the target, with the target row), then per-step cost and
//! latency details. Rows are targets with the base first.

use crate::data::ReportData;
use crate::markup::Layout;
pub use crate::markup::{Color, Grid, GridCell};
use dbdelta_model::{IbenchStats, StepKind, StepResult, StepStatus};
use serde::Serialize;

/// The measured steps in report order (the published `tput.tab` columns).
pub const STEPS: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];
/// The read+write steps and their published column names (`iput.tab`).
pub const RW_STEPS: [(&str, &str); 6] = [
    ("qr100", "qr100.L1"),
    ("qp100", "qp100.L2"),
    ("qr500", "qr500.L3"),
    ("qp500", "qp500.L4"),
    ("qr1000", "qr1000.L5"),
    ("qp1000", "qp1000.L6"),
];

/// True when the report's runs hold Insert Benchmark results.
pub fn present(data: &ReportData) -> bool {
    data.runs
        .iter()
        .any(|r| r.results.iter().any(|s| s.ibench.is_some()))
}

/// The last result of `step` for `target`: the last round when the step ran in rounds.
fn result<'a>(data: &'a ReportData, target: &str, step: &str) -> Option<&'a StepResult> {
    rounds(data, target, step)
        .into_iter()
        .max_by_key(|r| r.repeat)
}

/// Every result of `step` for `target` in the last run that has one: its rounds when the
/// step ran in interleaved rounds, else the one result.
fn rounds<'a>(data: &'a ReportData, target: &str, step: &str) -> Vec<&'a StepResult> {
    let of = |r: &&StepResult| r.target == target && r.step == step && r.kind == StepKind::Measured;
    let Some(run) = data
        .runs
        .iter()
        .rev()
        .find(|run| run.results.iter().any(|r| of(&r)))
    else {
        return Vec::new();
    };
    let all: Vec<&StepResult> = run.results.iter().filter(of).collect();
    match all.last() {
        Some(last) if last.repeat == 0 => vec![*last],
        _ => all.into_iter().filter(|r| r.repeat > 0).collect(),
    }
}

/// A step on one target over its rounds: the headline as the geometric mean of the completed
/// rounds (the verdicts' ratio is of the same means), the background insert rate as rows over
/// seconds of them, and whether that rate missed the step's target.
struct StepView {
    headline: f64,
    inserts_per_s: f64,
    target_insert_rate: Option<f64>,
    sla_failed: bool,
}

/// `None` without a result; `Some(Err(()))` when no round completed.
fn view(data: &ReportData, target: &str, step: &str) -> Option<Result<StepView, ()>> {
    let rs = rounds(data, target, step);
    if rs.is_empty() {
        return None;
    }
    let ok: Vec<(&StepResult, &IbenchStats)> = rs
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| r.ibench.as_ref().map(|st| (*r, st)))
        .collect();
    if ok.is_empty() {
        return Some(Err(()));
    }
    let logs: f64 = ok.iter().map(|(_, st)| st.headline().max(1e-9).ln()).sum();
    let headline = (logs / ok.len() as f64).exp();
    let rows: u64 = ok.iter().map(|(_, st)| st.rows_inserted).sum();
    let secs: f64 = ok.iter().map(|(r, _)| r.seconds).sum();
    let inserts_per_s = if ok.len() == 1 {
        ok[0].1.inserts_per_s
    } else {
        rows as f64 / secs.max(1e-6)
    };
    let target_insert_rate = ok.iter().find_map(|(_, st)| st.target_insert_rate);
    let sla_failed = match (ok.len(), target_insert_rate) {
        (1, _) => ok[0].1.sla_failed,
        (_, Some(t)) => dbdelta_model::ibench::sla_failed(inserts_per_s, t),
        (_, None) => false,
    };
    Some(Ok(StepView {
        headline,
        inserts_per_s,
        target_insert_rate,
        sla_failed,
    }))
}

fn targets(data: &ReportData) -> Vec<&str> {
    data.columns.iter().map(|c| c.name()).collect()
}

fn fmt0(v: f64) -> String {
    format!("{v:.0}")
}

/// `tput.tab`: absolute throughput with quartile colors, SLA failures gray.
pub fn tput(data: &ReportData) -> Grid {
    let names = targets(data);
    let mut rows: Vec<(String, Vec<GridCell>)> = names
        .iter()
        .map(|t| {
            let cells = STEPS
                .iter()
                .map(|s| match view(data, t, s) {
                    None => GridCell::missing("-"),
                    Some(Err(())) => GridCell::missing("failed"),
                    Some(Ok(v)) => GridCell::num(v.headline, fmt0(v.headline)),
                })
                .collect();
            (t.to_string(), cells)
        })
        .collect();
    for (c, step) in STEPS.iter().enumerate() {
        let failed = |t: &str| matches!(view(data, t, step), Some(Ok(v)) if v.sla_failed);
        let vals: Vec<(usize, f64, bool)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, (t, cells))| cells[c].value.map(|v| (i, v, failed(t))))
            .collect();
        if vals.is_empty() {
            continue;
        }
        let minv = vals.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
        let maxv = vals
            .iter()
            .filter(|v| !v.2)
            .map(|v| v.1)
            .fold(f64::NEG_INFINITY, f64::max);
        let maxv = if maxv.is_finite() { maxv } else { minv };
        let gap4th = (0.25 * (maxv - minv)).floor();
        let topq = maxv - gap4th;
        let mut botq = minv + gap4th;
        if minv >= 0.8 * maxv {
            botq = 0.0;
        }
        for (i, v, sla) in vals {
            rows[i].1[c].color = if v <= botq {
                Color::Red
            } else if sla {
                Color::Gray
            } else if v >= topq {
                Color::Green
            } else {
                Color::None
            };
        }
    }
    let mut columns = vec![];
    columns.extend(STEPS.iter().map(|s| s.to_string()));
    Grid {
        corner: "dbms".into(),
        notes: Vec::new(),
        layout: Layout::Colored,
        title: "Absolute throughput: inserts/s (l.i0, l.i1, l.i2), indexed rows/s (l.x), queries/s (qr*, qp*); a step in rounds: the geometric mean of its rounds".into(),
        columns,
        rows,
        legend: "red (r): bottom 25% of the column, not used when the minimum is within 80% of the max; green (g): top 25%; gray (sla): the target did not sustain the background insert rate, ignored for the max".into(),
    }
}

/// `tputr.tab`: throughput relative to the first row (the base).
pub fn tputr(data: &ReportData) -> Grid {
    let abs = tput(data);
    let base: Vec<Option<f64>> = abs
        .rows
        .first()
        .map(|r| r.1.iter().map(|c| c.value).collect())
        .unwrap_or_default();
    // A step where the base or the target missed the insert-rate SLA compares unequal write
    // loads: its ratio is marked, as its absolute value is.
    let base_sla: Vec<bool> = abs
        .rows
        .first()
        .map(|r| r.1.iter().map(|c| c.color == Color::Gray).collect())
        .unwrap_or_default();
    let rows = abs
        .rows
        .iter()
        .map(|(t, cells)| {
            let cells = cells
                .iter()
                .zip(base.iter().zip(&base_sla))
                .map(|(c, (b, base_missed))| match (c.value, b) {
                    (Some(v), Some(b)) if *b > 0.0 => {
                        let ratio = v / b;
                        let p = (ratio * 100.0).round();
                        let sla = if *base_missed || c.color == Color::Gray {
                            "*"
                        } else {
                            ""
                        };
                        let mut cell = GridCell::num(
                            ratio,
                            format!("{}{sla}", crate::markup::ratio(ratio, 2)),
                        );
                        cell.color = if p > 105.0 {
                            Color::Blue
                        } else if p < 95.0 {
                            Color::Yellow
                        } else {
                            Color::None
                        };
                        cell
                    }
                    _ => GridCell::missing(if c.text == "failed" { "failed" } else { "-" }),
                })
                .collect();
            (t.clone(), cells)
        })
        .collect();
    Grid {
        corner: "dbms".into(),
        notes: Vec::new(),
        layout: Layout::Colored,
        title: format!("Relative throughput: value / value of {}", data.base()),
        columns: abs.columns,
        rows,
        legend: "blue (b): above 1.05; yellow (y): below 0.95; *: the base or this target missed the insert-rate SLA on this step".into(),
    }
}

/// `iput.tab`: background insert rates of the read+write steps with a target row.
pub fn iput(data: &ReportData) -> Grid {
    let names = targets(data);
    let mut rows: Vec<(String, Vec<GridCell>)> = names
        .iter()
        .map(|t| {
            let cells = RW_STEPS
                .iter()
                .map(|(s, _)| match view(data, t, s) {
                    None => GridCell::missing("-"),
                    Some(Err(())) => GridCell::missing("failed"),
                    Some(Ok(v)) => {
                        let mut c = GridCell::num(v.inserts_per_s, fmt0(v.inserts_per_s));
                        if v.sla_failed {
                            c.color = Color::Red;
                        }
                        c
                    }
                })
                .collect();
            (t.to_string(), cells)
        })
        .collect();
    let target_row = RW_STEPS
        .iter()
        .map(|(s, _)| {
            let t = names.iter().find_map(|t| match view(data, t, s) {
                Some(Ok(v)) => v.target_insert_rate,
                _ => None,
            });
            match t {
                Some(v) => GridCell {
                    color: Color::Target,
                    ..GridCell::num(v, fmt0(v))
                },
                None => GridCell::missing("-"),
            }
        })
        .collect();
    rows.push(("target".to_string(), target_row));
    Grid {
        corner: "dbms".into(),
        notes: Vec::new(),
        layout: Layout::Colored,
        title: "Background insert rates (rows/s, all clients) during the read+write steps".into(),
        columns: RW_STEPS.iter().map(|(_, c)| c.to_string()).collect(),
        rows,
        legend: "red (r): below 95% of the target (failed the SLA)".into(),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// Per-step details: rates, costs, latency percentiles per kind, max and database size.
pub fn details(data: &ReportData) -> Vec<Grid> {
    let names = targets(data);
    let columns: Vec<String> = [
        "secs",
        "ips",
        "qps",
        "dps",
        "cpu_us/i",
        "cpu_us/q",
        "wKB/i",
        "cs/op",
        "ins p50 ms",
        "ins p99 ms",
        "ins max ms",
        "del p99 ms",
        "del max ms",
        "q p50 ms",
        "q p99 ms",
        "q max ms",
        "dbGB",
        "rows",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    STEPS
        .iter()
        .filter(|s| names.iter().any(|t| result(data, t, s).is_some()))
        .map(|s| {
            let rows = names
                .iter()
                .map(|t| {
                    let r = result(data, t, s);
                    let cells: Vec<GridCell> = match (r, r.and_then(|r| r.ibench.as_ref())) {
                        (Some(r), _) if !r.is_ok() => {
                            let why = match &r.status {
                                StepStatus::Failed { reason } => format!("failed: {reason}"),
                                _ => "failed".into(),
                            };
                            let mut v = vec![GridCell::missing(&why)];
                            v.resize(columns.len(), GridCell::missing(""));
                            v
                        }
                        (Some(r), Some(st)) => [
                            format!("{:.1}", r.seconds),
                            fmt0(st.inserts_per_s),
                            fmt0(st.queries_per_s),
                            fmt0(st.deletes_per_s),
                            opt(st.cpu_us_per_insert, 1),
                            opt(st.cpu_us_per_query, 1),
                            opt(st.wkb_per_insert, 3),
                            opt(st.cs_per_op, 2),
                            ms(st.insert_latency.p50_us),
                            ms(st.insert_latency.p99_us),
                            ms(st.insert_latency.max_us),
                            ms(st.delete_latency.p99_us),
                            ms(st.delete_latency.max_us),
                            ms(st.query_latency.p50_us),
                            ms(st.query_latency.p99_us),
                            ms(st.query_latency.max_us),
                            opt(st.db_bytes.map(|b| b as f64 / 1e9), 3),
                            st.rows_at_end.map_or("-".into(), |n| n.to_string()),
                        ]
                        .into_iter()
                        .map(|t| GridCell::missing(&t))
                        .collect(),
                        _ => vec![GridCell::missing("-"); columns.len()],
                    };
                    (t.to_string(), cells)
                })
                .collect();
            Grid {
                corner: "dbms".into(),
                notes: Vec::new(),
                layout: Layout::Colored,
                title: match names.iter().map(|t| rounds(data, t, s).len()).max() {
                    Some(n) if n > 1 => {
                        format!("{s}: {} (the last of {n} rounds)", section_title(s))
                    }
                    _ => format!("{s}: {}", section_title(s)),
                },
                columns: columns.clone(),
                rows,
                legend: String::new(),
            }
        })
        .collect()
}

/// The published section titles (gen_html.sh).
pub fn section_title(step: &str) -> String {
    match step {
        "l.i0" => "load without secondary indexes".into(),
        "l.x" => "create secondary indexes".into(),
        "l.i1" => {
            "continue load after secondary indexes created with 50 inserts per transaction".into()
        }
        "l.i2" => {
            "continue load after secondary indexes created with 5 inserts per transaction".into()
        }
        s if s.starts_with("qr") => format!("range queries with {} insert/s per client", &s[2..]),
        s if s.starts_with("qp") => format!("point queries with {} insert/s per client", &s[2..]),
        _ => String::new(),
    }
}

fn all_grids(data: &ReportData, details_too: bool) -> Vec<Grid> {
    let mut g = vec![tput(data), tputr(data), iput(data)];
    if details_too {
        g.extend(details(data));
    }
    g
}

/// Tab-separated text: the three tables, then (with `details`) one block per step.
pub fn text(data: &ReportData, details_too: bool) -> String {
    let mut out = String::new();
    for g in all_grids(data, details_too) {
        g.text(&mut out);
    }
    out
}

/// GitHub Markdown tables.
pub fn markdown(data: &ReportData) -> String {
    let mut out = String::from("# Insert Benchmark\n\n");
    for g in all_grids(data, true) {
        g.markdown(&mut out);
    }
    out
}

/// One self-contained HTML page with the colored tables.
pub fn html(data: &ReportData) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Insert Benchmark</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #999;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>\n<h1>Insert Benchmark</h1>\n",
    );
    for g in all_grids(data, true) {
        g.html(&mut out);
    }
    out.push_str("</body></html>\n");
    out
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    base: &'a str,
    tput: Grid,
    tputr: Grid,
    iput: Grid,
    details: Vec<Grid>,
    results: Vec<&'a StepResult>,
    warnings: &'a [String],
}

/// Everything as JSON: the three tables, the per-step details and every result.
pub fn json(data: &ReportData) -> String {
    let doc = JsonDoc {
        base: data.base(),
        tput: tput(data),
        tputr: tputr(data),
        iput: iput(data),
        details: details(data),
        results: data.runs.iter().flat_map(|r| r.results.iter()).collect(),
        warnings: &data.warnings,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// CSV of the absolute throughput table.
pub fn csv(data: &ReportData) -> String {
    let mut out = String::new();
    tput(data).csv(&mut out);
    out
}
