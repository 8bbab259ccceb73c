//! Verdicts: every target/base value with a 95 % confidence interval and whether the
//! difference is significant, plus the noise of each step on this host (coefficient of
//! variation).
//!
//! With at least two repeats on both sides the interval comes from the independent runs
//! (`--repeat`, the strong evidence). With one run each it comes from the per-second
//! samples, corrected for autocorrelation, and is marked as weaker evidence (`~`): it does
//! not contain run-to-run noise.
//!
//! A report tests every step of every target at once, so a cell is significant only when it
//! survives Benjamini–Hochberg control of the false discovery rate at 5 % over all of the
//! report's cells ([`FDR`]); an interval that excludes 1.0 on its own but does not survive is
//! shown with `°` and counted as no significant change.

use crate::data::ReportData;
use crate::markup::esc;
use crate::table::evidence_rounds;

use dbdelta_inference::{
    benjamini_hochberg, coefficient_of_variation, compare_paired, compare_repeats,
    compare_within_run, Comparison, Direction, Evidence, Verdict,
};
use dbdelta_model::{Group, StepKind, StepResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// False discovery rate controlled over all cells of a report (Benjamini–Hochberg).
pub const FDR: f64 = 0.05;

/// One target/base cell.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictCell {
    /// Step label.
    pub label: String,
    /// Run order of the step (rows are sorted by it).
    pub order: u32,
    /// Thread count.
    pub threads: u32,
    /// The target compared with the base.
    pub target: String,
    /// The comparison; `None` when there is too little data (a failed step, a single run
    /// without per-second samples). Its verdict is the one after false discovery rate
    /// control.
    pub comparison: Option<Comparison>,
    /// The interval excludes 1.0, but the cell did not survive the false discovery rate
    /// control over the report: its verdict is "no significant change".
    pub withheld: bool,
}

/// Noise of one step on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseCell {
    /// Step label.
    pub label: String,
    /// Run order of the step.
    pub order: u32,
    /// Thread count.
    pub threads: u32,
    /// Target.
    pub target: String,
    /// Coefficient of variation across repeats (or across seconds with one run).
    pub cv: Option<f64>,
    /// True when `cv` is across repeats (false: across the seconds of one run).
    pub across_repeats: bool,
}

type Key = (u32, u32, String); // (threads, order, label)

/// The cells at one thread count, by (step label, target).
pub(crate) fn by_cell(
    cells: &[VerdictCell],
    threads: u32,
) -> std::collections::HashMap<(String, String), &VerdictCell> {
    cells
        .iter()
        .filter(|v| v.threads == threads)
        .map(|v| ((v.label.clone(), v.target.clone()), v))
        .collect()
}

/// The report's first line: the median 95 % half-width of target/base per step group, i.e.
/// the smallest difference this run can resolve; `None` without any interval.
pub fn noise_floor(data: &ReportData, cells: &[VerdictCell]) -> Option<String> {
    let group_of: BTreeMap<(u32, &str), Group> = data
        .tables
        .iter()
        .flat_map(|t| {
            t.rows
                .iter()
                .map(move |r| ((t.threads, r.label.as_str()), r.group))
        })
        .collect();
    let mut widths: BTreeMap<Group, Vec<f64>> = BTreeMap::new();
    for c in cells {
        let (Some(x), Some(g)) = (c.comparison, group_of.get(&(c.threads, c.label.as_str())))
        else {
            continue;
        };
        let half = x.relative_width() / 2.0 * 100.0;
        if half.is_finite() {
            widths.entry(*g).or_default().push(half);
        }
    }
    if widths.is_empty() {
        return None;
    }
    let parts: Vec<String> = widths
        .into_iter()
        .filter_map(|(g, mut w)| {
            crate::summary::median(&mut w).map(|m| format!("±{m:.1} % on {} steps", g.name()))
        })
        .collect();
    Some(format!(
        "Noise floor: this run resolves differences larger than {} (median half-width of the 95 % intervals of target/base)",
        parts.join(", ")
    ))
}

fn grouped(data: &ReportData) -> BTreeMap<Key, BTreeMap<String, Vec<&StepResult>>> {
    let mut out: BTreeMap<Key, BTreeMap<String, Vec<&StepResult>>> = BTreeMap::new();
    for r in data.runs.iter().flat_map(|r| &r.results) {
        // Interrupted steps cover a cut window: never compared.
        if r.kind != StepKind::Measured || !r.is_complete() || r.throughput.value <= 0.0 {
            continue;
        }
        out.entry((r.threads, r.order, r.label.clone()))
            .or_default()
            .entry(r.target.clone())
            .or_default()
            .push(r);
    }
    out
}

fn values(rs: &[&StepResult]) -> Vec<f64> {
    rs.iter().map(|r| r.throughput.value).collect()
}

/// (base, target) per round measured on both sides (repeat numbers; a round that failed on
/// one side drops out), at least two of them; `None` when the repeats cannot be paired.
/// Only the [`evidence_rounds`] count: the first round, measured one window per target for
/// the costs and the profile, would widen an interval of rounds in turns ~8x.
fn rounds(b: &[&StepResult], t: &[&StepResult]) -> Option<Vec<(f64, f64)>> {
    let by_round = |rs: &[&StepResult]| -> Option<BTreeMap<u32, f64>> {
        let rs = evidence_rounds(rs);
        let m: BTreeMap<u32, f64> = rs.iter().map(|r| (r.repeat, r.throughput.value)).collect();
        // Unnumbered or duplicate rounds are independent runs, not rounds.
        (m.len() == rs.len() && !m.contains_key(&0)).then_some(m)
    };
    let (bm, tm) = (by_round(b)?, by_round(t)?);
    let pairs: Vec<(f64, f64)> = bm
        .iter()
        .filter_map(|(k, vb)| tm.get(k).map(|vt| (*vb, *vt)))
        .collect();
    (pairs.len() >= 2).then_some(pairs)
}

fn per_second(r: &StepResult) -> Vec<f64> {
    // The last interval may be cut short; only whole seconds are samples.
    let mut prev = 0.0;
    let mut out = Vec::new();
    for i in &r.intervals {
        if i.t - prev >= 0.999 && i.qps > 0.0 {
            out.push(i.qps);
        }
        prev = i.t;
    }
    out
}

/// Every non-base target against the base, per step and thread count.
pub fn verdicts(data: &ReportData) -> Vec<VerdictCell> {
    let base = data.base();
    let mut out = Vec::new();
    for ((threads, order, label), by_target) in grouped(data) {
        let Some(b) = by_target.get(base) else {
            continue;
        };
        for col in data.columns.iter().skip(1) {
            let Some(t) = by_target.get(col.name()) else {
                continue;
            };
            let comparison = if let Some(pairs) = rounds(b, t) {
                compare_paired(&pairs, LEVEL, Direction::HigherIsBetter)
            } else if b.len() >= 2 && t.len() >= 2 {
                compare_repeats(&values(b), &values(t), LEVEL, Direction::HigherIsBetter)
            } else {
                compare_within_run(
                    &per_second(b[0]),
                    &per_second(t[0]),
                    LEVEL,
                    Direction::HigherIsBetter,
                )
            };
            out.push(VerdictCell {
                label: label.clone(),
                order,
                threads,
                target: col.name().to_string(),
                comparison,
                withheld: false,
            });
        }
    }
    control_false_discoveries(&mut out);
    out
}

/// Benjamini–Hochberg over every cell with a comparison: the cells that do not survive keep
/// their interval but lose their verdict.
fn control_false_discoveries(cells: &mut [VerdictCell]) {
    let tested: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i].comparison.is_some())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .filter_map(|&i| cells[i].comparison.map(|c| c.p))
        .collect();
    for (&i, discovered) in tested.iter().zip(benjamini_hochberg(&p, FDR)) {
        if let Some(c) = cells[i].comparison.as_mut() {
            if !discovered && c.verdict != Verdict::NoChange {
                c.verdict = Verdict::NoChange;
                cells[i].withheld = true;
            }
        }
    }
}

/// The noise of every step on every target.
pub fn noise(data: &ReportData) -> Vec<NoiseCell> {
    let mut out = Vec::new();
    for ((threads, order, label), by_target) in grouped(data) {
        for col in &data.columns {
            let Some(rs) = by_target.get(col.name()) else {
                continue;
            };
            let across_repeats = rs.len() >= 2;
            let cv = if across_repeats {
                coefficient_of_variation(&values(rs))
            } else {
                coefficient_of_variation(&per_second(rs[0]))
            };
            out.push(NoiseCell {
                label: label.clone(),
                order,
                threads,
                target: col.name().to_string(),
                cv,
                across_repeats,
            });
        }
    }
    out
}

fn mark(c: &Comparison) -> &'static str {
    match c.verdict {
        Verdict::Improvement => "▲",
        Verdict::Regression => "▼",
        Verdict::NoChange => "",
    }
}

pub(crate) fn cell_text(cell: &VerdictCell) -> String {
    match &cell.comparison {
        None => "-".to_string(),
        Some(c) => format!(
            "{}{:.3} [{:.3}, {:.3}]{}{}",
            if c.evidence == Evidence::WithinRun {
                "~"
            } else {
                ""
            },
            c.ratio,
            c.low,
            c.high,
            mark(c),
            if cell.withheld { "°" } else { "" }
        ),
    }
}

fn evidence_note(data: &ReportData, cells: &[VerdictCell]) -> String {
    // `--reuse-load` keeps one server and data set per target: its repeats share them, so
    // the intervals hold measurement noise but not load-to-load variation.
    let reused = data
        .runs
        .iter()
        .any(|r| r.manifest.command.iter().any(|a| a == "--reuse-load"));
    let repeats = cells
        .iter()
        .filter_map(|c| c.comparison)
        .find_map(|c| match c.evidence {
            Evidence::Repeats { base, target } => Some((base, target, false)),
            Evidence::Paired { pairs } => Some((pairs, pairs, true)),
            Evidence::WithinRun => None,
        });
    let turn_ms = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .find_map(|r| r.turns.map(|t| t.slice_ms));
    match repeats {
        Some((n, _, true)) if turn_ms.is_some() => format!(
            "95 % confidence intervals of target/base from {n} paired rounds in which the targets shared one window in turns of {} ms (A B B A …, worker k of every target on the same CPU, so the host's fast and slow phases fall on both; t-test on the per-round log ratios). The first round, one window per target, gives the costs and profiles; the intervals and ratios use the rounds in turns (steps that cannot take turns — writes on servers and RocksDB, paced, counted or profiled steps — pair whole windows)",
            turn_ms.unwrap_or_default()
        ),
        Some((n, _, true)) if reused => format!(
            "95 % confidence intervals of target/base from {n} paired rounds (base and target measured back to back in each) that shared one server and load per target (--reuse-load; t-test on the per-round log ratios); load-to-load variation is not included"
        ),
        Some((n, _, true)) => format!(
            "95 % confidence intervals of target/base from {n} paired rounds (base and target back to back in each, A B then B A; t-test on the per-round log ratios, so drift that hits both sides of a round cancels)"
        ),
        Some((b, t, false)) if reused => format!(
            "95 % confidence intervals of target/base from repeated runs that shared one server and load per target (--reuse-load: {b} of the base, {t} of each target; Welch test on log QPS); load-to-load variation is not included"
        ),
        Some((b, t, false)) => format!(
            "95 % confidence intervals of target/base from independent repeated runs ({b} of the base, {t} of each target; Welch test on log QPS)"
        ),
        None => "95 % confidence intervals of target/base within one run (~: per-second samples, autocorrelation-corrected; weaker evidence: run-to-run noise is not included; use --repeat 3 or more)".to_string(),
    }
}

struct Rows<'a> {
    threads: u32,
    rows: Vec<(String, Vec<&'a VerdictCell>)>,
}

fn by_threads<'a>(cells: &'a [VerdictCell], targets: &[String]) -> Vec<Rows<'a>> {
    let mut map: BTreeMap<u32, BTreeMap<(u32, String), Vec<&VerdictCell>>> = BTreeMap::new();
    for c in cells {
        map.entry(c.threads)
            .or_default()
            .entry((c.order, c.label.clone()))
            .or_default()
            .push(c);
    }
    map.into_iter()
        .map(|(threads, rows)| Rows {
            threads,
            rows: rows
                .into_iter()
                .map(|((_, label), mut cs)| {
                    cs.sort_by_key(|c| targets.iter().position(|t| *t == c.target));
                    (label, cs)
                })
                .collect(),
        })
        .collect()
}

fn targets(data: &ReportData) -> Vec<String> {
    data.columns
        .iter()
        .skip(1)
        .map(|c| c.name().to_string())
        .collect()
}

fn summary_line(cells: &[VerdictCell]) -> String {
    let n = |v: Verdict| {
        cells
            .iter()
            .filter(|c| c.comparison.is_some_and(|c| c.verdict == v))
            .count()
    };
    let tested = cells.iter().filter(|c| c.comparison.is_some()).count();
    let withheld = cells.iter().filter(|c| c.withheld).count();
    format!(
        "{} regression(s), {} improvement(s), {} without significant change, {} without enough data; significance controls the false discovery rate at {:.0} % over the {tested} compared cells (Benjamini–Hochberg){}",
        n(Verdict::Regression),
        n(Verdict::Improvement),
        n(Verdict::NoChange),
        cells.iter().filter(|c| c.comparison.is_none()).count(),
        FDR * 100.0,
        match withheld {
            0 => String::new(),
            k => format!("; ° = {k} interval(s) excluding 1.0 on their own that do not survive it"),
        }
    )
}

pub(crate) fn cv_text(c: &NoiseCell) -> String {
    c.cv.map_or("-".to_string(), |v| {
        format!(
            "{:.1}%{}",
            v * 100.0,
            if c.across_repeats { "" } else { "~" }
        )
    })
}

fn noise_rows(data: &ReportData) -> Vec<(u32, String, Vec<String>)> {
    let cols: Vec<String> = data.columns.iter().map(|c| c.name().to_string()).collect();
    let mut map: BTreeMap<(u32, u32, String), Vec<String>> = BTreeMap::new();
    for n in noise(data) {
        let row = map
            .entry((n.threads, n.order, n.label.clone()))
            .or_insert_with(|| vec!["-".to_string(); cols.len()]);
        if let Some(i) = cols.iter().position(|c| *c == n.target) {
            row[i] = cv_text(&n);
        }
    }
    map.into_iter().map(|((d, _, l), v)| (d, l, v)).collect()
}

/// The plain-text verdict and noise sections (empty without any interval: one target, or no per-second samples).
pub fn render_text(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.iter().all(|c| c.comparison.is_none()) {
        return String::new();
    }
    let ts = targets(data);
    let mut o = String::new();
    let _ = writeln!(o, "\nVerdicts relative to: {}", data.base());
    let _ = writeln!(o, "{}", evidence_note(data, cells));
    let _ = writeln!(o, "▲ significant improvement, ▼ significant regression");
    let _ = writeln!(o, "{}", summary_line(cells));
    for t in by_threads(cells, &ts) {
        let _ = writeln!(o, "\ndop={}\tstep\t{}", t.threads, ts.join("\t"));
        for (label, cs) in t.rows {
            let vals: Vec<String> = cs.iter().map(|c| cell_text(c)).collect();
            let _ = writeln!(o, "\t{label}\t{}", vals.join("\t"));
        }
    }
    let _ = writeln!(
        o,
        "\nNoise: coefficient of variation of each step (what this host can resolve; ~ = across the seconds of one run)"
    );
    let cols: Vec<String> = data.columns.iter().map(|c| c.name().to_string()).collect();
    let _ = writeln!(o, "dop\tstep\t{}", cols.join("\t"));
    for (threads, label, vals) in noise_rows(data) {
        let _ = writeln!(o, "{threads}\t{label}\t{}", vals.join("\t"));
    }
    o
}

/// The Markdown verdict and noise sections (empty without any interval: one target, or no per-second samples).
pub fn render_markdown(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.iter().all(|c| c.comparison.is_none()) {
        return String::new();
    }
    let ts = targets(data);
    let mut o = String::new();
    let _ = writeln!(o, "\n## Verdicts relative to {}\n", data.base());
    let _ = writeln!(
        o,
        "{}. **Bold ▲/▼** = significant improvement/regression; others are within the noise.\n\n{}\n",
        evidence_note(data, cells),
        summary_line(cells)
    );
    for t in by_threads(cells, &ts) {
        let _ = writeln!(o, "\n### dop={}\n", t.threads);
        let _ = writeln!(o, "| step | {} |", ts.join(" | "));
        let _ = writeln!(o, "|---|{}", "---:|".repeat(ts.len()));
        for (label, cs) in t.rows {
            let vals: Vec<String> = cs
                .iter()
                .map(|c| match &c.comparison {
                    Some(x) if x.verdict != Verdict::NoChange => {
                        format!("**{}**", cell_text(c))
                    }
                    _ => cell_text(c),
                })
                .collect();
            let _ = writeln!(o, "| {label} | {} |", vals.join(" | "));
        }
    }
    let cols: Vec<String> = data.columns.iter().map(|c| c.name().to_string()).collect();
    let _ = writeln!(
        o,
        "\n## Noise (coefficient of variation; what this host can resolve)\n\n~ = across the seconds of one run.\n"
    );
    let _ = writeln!(o, "| dop | step | {} |", cols.join(" | "));
    let _ = writeln!(o, "|---:|---|{}", "---:|".repeat(cols.len()));
    for (threads, label, vals) in noise_rows(data) {
        let _ = writeln!(o, "| {threads} | {label} | {} |", vals.join(" | "));
    }
    o
}

/// The HTML verdict and noise sections: only significant cells are colored.
pub fn render_html(data: &ReportData, cells: &[VerdictCell]) -> String {
    if cells.iter().all(|c| c.comparison.is_none()) {
        return String::new();
    }
    let ts = targets(data);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<h2 id=\"verdicts\">Verdicts relative to {}</h2>\n<p>{}. Only significant cells are colored.</p>\n<p>{}</p>",
        esc(data.base()),
        esc(&evidence_note(data, cells)),
        esc(&summary_line(cells))
    );
    for t in by_threads(cells, &ts) {
        let _ = write!(
            o,
            "<h3>dop={}</h3>\n<table class=\"verdicts\"><tr><th>step</th>",
            t.threads
        );
        for name in &ts {
            let _ = write!(o, "<th>{}</th>", esc(name));
        }
        o.push_str("</tr>\n");
        for (label, cs) in t.rows {
            let _ = write!(o, "<tr><td>{}</td>", esc(&label));
            for c in cs {
                let style = match c.comparison.map(|x| x.verdict) {
                    Some(Verdict::Improvement) => " style=\"background:#c8f0c8\"",
                    Some(Verdict::Regression) => " style=\"background:#f6c4c4\"",
                    _ => "",
                };
                let title = c.comparison.map_or(String::new(), |x| {
                    format!(" title=\"{}, p={:.2e}\"", x.verdict.name(), x.p)
                });
                let _ = write!(o, "<td{style}{title}>{}</td>", esc(&cell_text(c)));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
    let cols: Vec<String> = data.columns.iter().map(|c| c.name().to_string()).collect();
    o.push_str("<h2 id=\"noise\">Noise: coefficient of variation per step</h2>\n<p>What this host can resolve; ~ = across the seconds of one run.</p>\n<table class=\"noise\"><tr><th>dop</th><th>step</th>");
    for c in &cols {
        let _ = write!(o, "<th>{}</th>", esc(c));
    }
    o.push_str("</tr>\n");
    for (threads, label, vals) in noise_rows(data) {
        let _ = write!(o, "<tr><td>{threads}</td><td>{}</td>", esc(&label));
        for v in vals {
            let _ = write!(o, "<td>{}</td>", esc(&v));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    o
}
