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
use crate::markup::{esc, ratio, Html};
use crate::table::{evidence_rounds, values, Grouped};

pub use crate::across::Between;
use crate::across::{round_values, AcrossRuns};
use dbdelta_inference::{
    benjamini_hochberg, coefficient_of_variation, compare_across_runs, compare_paired,
    compare_repeats, compare_within_run, BetweenRuns, Comparison, Direction, Evidence, Verdict,
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
    /// Rounds in turns (A B B A … in one shared window) when the comparison is paired.
    pub in_turns: bool,
    /// Set when target and base come from different runs: the between-run variance in the
    /// interval and where it came from.
    pub between: Option<Between>,
    /// Target/base of the mean values when there is no interval (one round on a side, or
    /// rounds that do not pair), so the cell can still say what it is and why it has no
    /// interval.
    pub bare_ratio: Option<f64>,
    /// Completed rounds of the side with fewer of them.
    pub rounds: usize,
}

impl VerdictCell {
    /// Why the cell has no interval ("no interval: 1 round"), `None` when it has one. Every
    /// ratio printed without an interval says this next to it.
    pub fn no_interval(&self) -> Option<String> {
        if self.comparison.is_some() {
            return None;
        }
        Some(match self.rounds {
            0 | 1 => "no interval: 1 round".to_string(),
            n => format!("no interval: {n} rounds that do not pair"),
        })
    }
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

pub(crate) fn grouped(data: &ReportData) -> Grouped<'_> {
    let mut out: Grouped<'_> = BTreeMap::new();
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

/// (base, target) per round measured on both sides (repeat numbers; a round that failed on
/// one side drops out), at least two of them; `None` when the repeats cannot be paired.
/// Only the [`evidence_rounds`] count: the last round, measured one window per target for
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

/// The half-width, in percent of the ratio, of the 95 % interval of target/base that the
/// verdicts would give these rounds of one step (paired rounds, the rounds in turns when
/// there are two or more); `None` while they give none. `--resolve` stops adding rounds to a
/// step with it, so a step stops exactly when its report's interval is narrow enough.
pub fn paired_half_width_pct(base: &[&StepResult], target: &[&StepResult]) -> Option<f64> {
    fn usable<'a>(rs: &[&'a StepResult]) -> Vec<&'a StepResult> {
        rs.iter()
            .copied()
            .filter(|r| r.kind == StepKind::Measured && r.is_complete() && r.is_ok())
            .filter(|r| r.throughput.value > 0.0)
            .collect()
    }
    let pairs = rounds(&usable(base), &usable(target))?;
    let c = compare_paired(&pairs, LEVEL, Direction::HigherIsBetter)?;
    let half = c.relative_width() / 2.0 * 100.0;
    half.is_finite().then_some(half)
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

/// Every non-base target against the base, per step and thread count. A target measured in
/// the base's run is compared by its paired rounds (or repeats, or per-second samples); one
/// measured in another run, unpaired with the between-run variance
/// ([`dbdelta_inference::compare_across_runs`]).
pub fn verdicts(data: &ReportData) -> Vec<VerdictCell> {
    let base = data.base();
    let base_run = data.columns.first().map_or(0, |c| c.run);
    let groups = grouped(data);
    let across = AcrossRuns {
        data,
        grouped: &groups,
    };
    let mut cache: BTreeMap<(String, Group, u32), (BetweenRuns, Option<String>)> = BTreeMap::new();
    let mut out = Vec::new();
    for ((threads, order, label), by_target) in &groups {
        let Some(b) = by_target.get(base) else {
            continue;
        };
        for col in data.columns.iter().skip(1) {
            let Some(t) = by_target.get(col.name()) else {
                continue;
            };
            let mut between = None;
            let comparison = if col.run != base_run {
                // Rounds of two runs share no host state: never paired.
                let group = b[0].group;
                let (v, twin) = cache
                    .entry((col.name().to_string(), group, *threads))
                    .or_insert_with(|| across.between(col.name(), col.run, group, *threads))
                    .clone();
                between = Some(Between { runs: v, twin });
                compare_across_runs(
                    &round_values(b),
                    &round_values(t),
                    v,
                    LEVEL,
                    Direction::HigherIsBetter,
                )
            } else if let Some(pairs) = rounds(b, t) {
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
            let in_turns = comparison
                .is_some_and(|c| matches!(c.evidence, Evidence::Paired { .. }))
                && evidence_rounds(b).iter().all(|r| r.turns.is_some());
            let mean = |rs: &[&StepResult]| {
                let v = values(&evidence_rounds(rs));
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            let bare_ratio = match (comparison, mean(b), mean(t)) {
                (None, Some(vb), Some(vt)) if vb > 0.0 => Some(vt / vb),
                _ => None,
            };
            out.push(VerdictCell {
                label: label.clone(),
                order: *order,
                threads: *threads,
                target: col.name().to_string(),
                comparison,
                withheld: false,
                in_turns,
                between,
                bare_ratio,
                rounds: b.len().min(t.len()),
            });
        }
    }
    control_false_discoveries(&mut out);
    out
}

/// Benjamini–Hochberg over every cell with a comparison: the cells that do not survive keep
/// their interval but lose their verdict.
pub(crate) fn control_false_discoveries(cells: &mut [VerdictCell]) {
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
        None => match (cell.bare_ratio, cell.no_interval()) {
            (Some(r), Some(why)) => format!("{r:.3} ({why})"),
            _ => "-".to_string(),
        },
        Some(c) => format!(
            "{}{} [{}, {}]{}{}",
            match c.evidence {
                Evidence::WithinRun => "~",
                Evidence::AcrossRuns { .. } => "≈",
                _ => "",
            },
            ratio(c.ratio, 3),
            ratio(c.low, 3),
            ratio(c.high, 3),
            mark(c),
            if cell.withheld { "°" } else { "" }
        ),
    }
}

/// The sentence of one kind of evidence (all cells of that kind share it).
fn evidence_sentence(data: &ReportData, cells: &[&VerdictCell]) -> Option<String> {
    // `--reuse-load` keeps one server and data set per target: its repeats share them, so
    // the intervals hold measurement noise but not load-to-load variation.
    let reused = data
        .runs
        .iter()
        .any(|r| r.manifest.command.iter().any(|a| a == "--reuse-load"));
    let first = cells.first()?;
    let c = first.comparison?;
    let turn_ms = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .find_map(|r| r.turns.map(|t| t.slice_ms));
    Some(match c.evidence {
        Evidence::Paired { pairs: n } if first.in_turns => format!(
            "paired in turns: {n} rounds in which the targets shared one window in turns of {} ms (A B B A …, worker k of every target on the same CPU, so the host's fast and slow phases fall on both; t-test on the per-round log ratios; the last round, one window per target, gives the costs and profiles)",
            turn_ms.unwrap_or_default()
        ),
        Evidence::Paired { pairs: n } if reused => format!(
            "paired windows: {n} rounds (base and target measured back to back in each) that shared one server and load per target (--reuse-load; t-test on the per-round log ratios); load-to-load variation is not included"
        ),
        Evidence::Paired { pairs: n } => format!(
            "paired windows: {n} rounds (base and target back to back in each, A B then B A; t-test on the per-round log ratios, so drift that hits both sides of a round cancels)"
        ),
        Evidence::Repeats { base: b, target: t } if reused => format!(
            "repeated runs that shared one server and load per target (--reuse-load: {b} of the base, {t} of each target; Welch test on log QPS); load-to-load variation is not included"
        ),
        Evidence::Repeats { base: b, target: t } => format!(
            "independent repeated runs ({b} of the base, {t} of each target; Welch test on log QPS)"
        ),
        Evidence::WithinRun => "within one run (~: per-second samples, autocorrelation-corrected; weaker evidence: run-to-run noise is not included; use --repeat 3 or more)".to_string(),
        Evidence::AcrossRuns { .. } => across_sentence(cells),
    })
}

/// The sentence of the cells whose target and base come from different runs.
fn across_sentence(cells: &[&VerdictCell]) -> String {
    let sds = |bridged: bool| -> Option<(f64, f64)> {
        let v: Vec<f64> = cells
            .iter()
            .filter_map(|c| c.between.as_ref())
            .filter(|b| b.twin.is_some() == bridged)
            .map(|b| b.runs.sd() * 100.0)
            .collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        Some((lo, v.iter().copied().fold(lo, f64::max)))
    };
    let mut twins: Vec<&str> = cells
        .iter()
        .filter_map(|c| c.between.as_ref()?.twin.as_deref())
        .collect();
    twins.sort_unstable();
    twins.dedup();
    let mut how = Vec::new();
    if let Some((lo, hi)) = sds(true) {
        how.push(format!(
            "estimated per step group from the base's configuration measured in both runs ({}: run-to-run SD {lo:.1}–{hi:.1} %)",
            twins.join(", ")
        ));
    }
    if let Some((lo, hi)) = sds(false) {
        how.push(format!(
            "assumed where no configuration was measured in both runs (run-to-run SD {lo:.1}–{hi:.1} %: at least {:.0} %, more when the cell's steps spread more)",
            dbdelta_inference::across::ASSUMED_BETWEEN_RUN_SD * 100.0
        ));
    }
    format!(
        "≈ unpaired across runs: target and base were measured in different runs, whose rounds share no host state; Welch test on the per-round log QPS plus the between-run variance (a run-level random effect), {}",
        how.join("; ")
    )
}

/// What each cell's interval rests on: one sentence per kind of evidence, with its number of
/// cells when the kinds are mixed.
fn evidence_note(data: &ReportData, cells: &[VerdictCell]) -> String {
    let kind = |c: &VerdictCell| -> Option<u8> {
        Some(match c.comparison?.evidence {
            Evidence::Paired { .. } if c.in_turns => 0,
            Evidence::Paired { .. } => 1,
            Evidence::Repeats { .. } => 2,
            Evidence::WithinRun => 3,
            Evidence::AcrossRuns { .. } => 4,
        })
    };
    let mut kinds: BTreeMap<u8, Vec<&VerdictCell>> = BTreeMap::new();
    for c in cells {
        if let Some(k) = kind(c) {
            kinds.entry(k).or_default().push(c);
        }
    }
    let mixed = kinds.len() > 1;
    let parts: Vec<String> = kinds
        .values()
        .filter_map(|cs| {
            let s = evidence_sentence(data, cs)?;
            Some(if mixed {
                format!("{} cell(s) {s}", cs.len())
            } else {
                s
            })
        })
        .collect();
    format!(
        "95 % confidence intervals of target/base from: {}",
        parts.join("; ")
    )
}

pub(crate) struct Rows<'a> {
    pub(crate) threads: u32,
    /// (group, step label, cells in target order), in the order of the report's tables.
    pub(crate) rows: Vec<(Group, String, Vec<&'a VerdictCell>)>,
}

/// The cells per thread count, in the rows' order of the QPS tables (by the suite's groups:
/// point, range, write …), each row's cells in target order.
pub(crate) fn by_threads<'a>(
    data: &ReportData,
    cells: &'a [VerdictCell],
    targets: &[String],
) -> Vec<Rows<'a>> {
    data.tables
        .iter()
        .filter_map(|table| {
            let mut by_label: BTreeMap<&str, Vec<&VerdictCell>> = BTreeMap::new();
            for c in cells.iter().filter(|c| c.threads == table.threads) {
                by_label.entry(c.label.as_str()).or_default().push(c);
            }
            let rows: Vec<(Group, String, Vec<&VerdictCell>)> = table
                .rows
                .iter()
                .filter_map(|r| {
                    let mut cs = by_label.remove(r.label.as_str())?;
                    cs.sort_by_key(|c| targets.iter().position(|t| *t == c.target));
                    Some((r.group, r.label.clone(), cs))
                })
                .collect();
            (!rows.is_empty()).then_some(Rows {
                threads: table.threads,
                rows,
            })
        })
        .collect()
}

/// The rows with the group each starts, when it starts one.
pub(crate) fn with_heads<'r, 'a>(
    rows: &'r [(Group, String, Vec<&'a VerdictCell>)],
) -> impl Iterator<Item = (Option<Group>, &'r str, &'r [&'a VerdictCell])> {
    rows.iter().enumerate().map(move |(i, (g, label, cs))| {
        let head = (i == 0 || rows[i - 1].0 != *g).then_some(*g);
        (head, label.as_str(), cs.as_slice())
    })
}

pub(crate) fn targets(data: &ReportData) -> Vec<String> {
    data.columns
        .iter()
        .skip(1)
        .map(|c| c.name().to_string())
        .collect()
}

/// How many of `cells` have verdict `v` (after false discovery rate control).
pub(crate) fn count_verdicts(cells: &[VerdictCell], v: Verdict) -> usize {
    cells
        .iter()
        .filter(|c| c.comparison.is_some_and(|c| c.verdict == v))
        .count()
}

fn summary_line(cells: &[VerdictCell]) -> String {
    let n = |v: Verdict| count_verdicts(cells, v);
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
    for t in by_threads(data, cells, &ts) {
        let _ = writeln!(o, "\ndop={}\tstep\t{}", t.threads, ts.join("\t"));
        for (head, label, cs) in with_heads(&t.rows) {
            if let Some(g) = head {
                let _ = writeln!(o, "\t{} queries:", g.name());
            }
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
    for t in by_threads(data, cells, &ts) {
        let _ = writeln!(o, "\n### dop={}\n", t.threads);
        let _ = writeln!(o, "| step | {} |", ts.join(" | "));
        let _ = writeln!(o, "|---|{}", "---:|".repeat(ts.len()));
        for (head, label, cs) in with_heads(&t.rows) {
            if let Some(g) = head {
                let _ = writeln!(o, "| **{} queries** |{}", g.name(), " |".repeat(ts.len()));
            }
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
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<h2 id=\"verdicts\">Verdicts relative to {}</h2>\n<p>{}. Only significant cells are colored.</p>\n<p>{}</p>",
        esc(data.base()),
        esc(&evidence_note(data, cells)),
        esc(&summary_line(cells))
    );
    html_tables(&mut o, data, cells);
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

/// The verdict tables, one per thread count, of `cells` (colored as the relative QPS table:
/// td.hi better, td.lo worse); shared by the throughput and the server CPU verdicts.
pub(crate) fn html_tables(o: &mut String, data: &ReportData, cells: &[VerdictCell]) {
    let ts = targets(data);
    for t in by_threads(data, cells, &ts) {
        let _ = write!(
            o,
            "<h3>dop={}</h3>\n<table class=\"verdicts\"><tr><th>step</th>",
            t.threads
        );
        for name in &ts {
            let _ = write!(o, "<th>{}</th>", esc(name));
        }
        o.push_str("</tr>\n");
        for (head, label, cs) in with_heads(&t.rows) {
            if let Some(g) = head {
                Html::group_row(o, g, ts.len() + 1);
            }
            let _ = write!(o, "<tr><td>{}</td>", esc(label));
            for name in &ts {
                // A target without an interval on this step: a dash.
                let Some(c) = cs.iter().find(|c| &c.target == name) else {
                    o.push_str("<td class=\"v\">-</td>");
                    continue;
                };
                // The colors of the relative QPS table (td.hi, td.lo), so both read alike.
                let style = match c.comparison.map(|x| x.verdict) {
                    Some(Verdict::Improvement) => " class=\"v hi\"",
                    Some(Verdict::Regression) => " class=\"v lo\"",
                    _ => " class=\"v\"",
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
}
