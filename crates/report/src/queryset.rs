//! The report of a query-set run: per query the speed of every target relative to the
//! base with its interval, the cold run apart, warm-run statistics, rows and checksums
//! (a query whose result differs from the base's is flagged: a faster wrong answer is not
//! faster), setup times and table sizes.
//!
//! The sections are built once as [`Grid`]s; text, Markdown and HTML only lay them out.

use crate::markup::{esc, md, Color, Grid, GridCell, Layout};
use crate::verdict::{FDR, LEVEL};
use dbdelta_inference::{benjamini_hochberg, compare_paired, Comparison, Direction, Verdict};
use dbdelta_model::queryset::{ChecksumMode, QsTarget, QueryRuns, QuerySetResult};
use serde::Serialize;
use std::fmt::Write;

/// The JSON name of a cell's mark, as the sections have always been exported.
fn mark_name(color: Color) -> &'static str {
    match color {
        Color::Green => "faster",
        Color::Red => "slower",
        Color::Yellow => "wrong",
        _ => "plain",
    }
}

/// A section as JSON exports it: the header with the row-name column first, cells as
/// (text, mark).
#[derive(Serialize)]
struct SectionDoc {
    title: String,
    notes: Vec<String>,
    header: Vec<String>,
    rows: Vec<Vec<(String, &'static str)>>,
}

impl From<Grid> for SectionDoc {
    fn from(g: Grid) -> Self {
        let mut header = vec![g.corner];
        header.extend(g.columns);
        SectionDoc {
            title: g.title,
            notes: g.notes,
            header,
            rows: g
                .rows
                .into_iter()
                .map(|(name, cells)| {
                    std::iter::once((name, "plain"))
                        .chain(cells.into_iter().map(|c| (c.text, mark_name(c.color))))
                        .collect()
                })
                .collect(),
        }
    }
}

/// A section of the report: the row's first text is its name, the header's first the
/// heading of the name column.
fn grid(
    title: &str,
    notes: Vec<String>,
    header: Vec<String>,
    rows: Vec<Vec<(String, Color)>>,
) -> Grid {
    let mut header = header.into_iter();
    Grid {
        title: title.to_string(),
        notes,
        corner: header.next().unwrap_or_default(),
        columns: header.collect(),
        rows: rows
            .into_iter()
            .map(|r| {
                let mut cells = r
                    .into_iter()
                    .map(|(text, color)| GridCell::colored(text, color));
                let name = cells.next().map(|c| c.text).unwrap_or_default();
                (name, cells.collect())
            })
            .collect(),
        legend: String::new(),
        layout: Layout::Marked,
    }
}

/// One target/base comparison of a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedCell {
    /// Query name.
    pub query: String,
    /// Target name.
    pub target: String,
    /// Base time / target time (geometric mean over paired warm rounds); above 1 = faster.
    pub speed: Option<f64>,
    /// 95 % interval of `speed`.
    pub low: Option<f64>,
    /// Upper bound.
    pub high: Option<f64>,
    /// Two-sided p-value.
    pub p: Option<f64>,
    /// Significant after false discovery rate control.
    pub significant: bool,
    /// The result's checksum differs from the base's.
    pub result_differs: bool,
}

/// Everything the report shows, computed once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuerySetReport {
    /// The measurements.
    pub result: QuerySetResult,
    /// The base target.
    pub base: String,
    /// Every target/base cell.
    pub speed: Vec<SpeedCell>,
    /// Queries whose result differs between targets: (query, target, its checksum, base's).
    pub mismatches: Vec<(String, String, String, String)>,
}

impl QuerySetReport {
    /// Computes the comparisons; the base is `base` or the first target.
    pub fn new(mut result: QuerySetResult, base: Option<&str>) -> QuerySetReport {
        if let Some(i) = base.and_then(|b| result.targets.iter().position(|t| t.name == b)) {
            let t = result.targets.remove(i);
            result.targets.insert(0, t);
        }
        let base = result
            .targets
            .first()
            .map(|t| t.name.clone())
            .unwrap_or_default();
        let mut speed = Vec::new();
        let mut mismatches = Vec::new();
        let mut tested = Vec::new();
        let mut p = Vec::new();
        for q in &result.queries {
            let Some(b) = result.targets.first().and_then(|t| runs(t, &q.name)) else {
                continue;
            };
            for t in result.targets.iter().skip(1) {
                let Some(r) = runs(t, &q.name) else { continue };
                let pairs: Vec<(f64, f64)> = b
                    .warm()
                    .iter()
                    .zip(r.warm())
                    .map(|(&bt, &tt)| (1.0 / bt, 1.0 / tt))
                    .collect();
                let c: Option<Comparison> = if b.error.is_none() && r.error.is_none() {
                    compare_paired(&pairs, LEVEL, Direction::HigherIsBetter)
                } else {
                    None
                };
                let differs = q.checksum != ChecksumMode::None
                    && matches!((&b.checksum, &r.checksum), (Some(x), Some(y)) if x != y);
                if differs {
                    mismatches.push((
                        q.name.clone(),
                        t.name.clone(),
                        r.checksum.clone().unwrap_or_default(),
                        b.checksum.clone().unwrap_or_default(),
                    ));
                }
                if let Some(c) = &c {
                    tested.push(speed.len());
                    p.push(c.p);
                }
                speed.push(SpeedCell {
                    query: q.name.clone(),
                    target: t.name.clone(),
                    speed: c.map(|c| c.ratio),
                    low: c.map(|c| c.low),
                    high: c.map(|c| c.high),
                    p: c.map(|c| c.p),
                    significant: c.is_some_and(|c| c.verdict != Verdict::NoChange),
                    result_differs: differs,
                });
            }
        }
        for (&i, discovered) in tested.iter().zip(benjamini_hochberg(&p, FDR)) {
            speed[i].significant &= discovered;
        }
        QuerySetReport {
            result,
            base,
            speed,
            mismatches,
        }
    }

    fn cell(&self, query: &str, target: &str) -> Option<&SpeedCell> {
        self.speed
            .iter()
            .find(|c| c.query == query && c.target == target)
    }

    /// The report's sections in order.
    pub fn grids(&self) -> Vec<Grid> {
        // With one target there is nothing to be relative to.
        let mut out = Vec::new();
        if self.result.targets.len() > 1 {
            out.push(self.speed_grid());
        }
        out.push(self.times_grid());
        out.extend(self.setup_grid());
        out.extend(self.size_grid());
        out
    }

    fn speed_grid(&self) -> Grid {
        let r = &self.result;
        let warm = r.repeat_query.saturating_sub(1);
        let mut header = vec!["query".to_string()];
        header.extend(r.targets.iter().map(|t| t.name.clone()));
        let rows = r
            .queries
            .iter()
            .map(|q| {
                let mut row = vec![(q.name.clone(), Color::None)];
                for (i, t) in r.targets.iter().enumerate() {
                    let runs = runs(t, &q.name);
                    let text = match runs {
                        None if t.error.is_some() => ("failed".to_string(), Color::Yellow),
                        None => ("-".to_string(), Color::None),
                        Some(x) if x.skipped.is_some() => ("n/a".to_string(), Color::None),
                        Some(x) if x.error.is_some() => ("error".to_string(), Color::Yellow),
                        Some(_) if i == 0 => ("1.00".to_string(), Color::None),
                        Some(_) => match self.cell(&q.name, &t.name) {
                            Some(c) => speed_text(c),
                            None => ("-".to_string(), Color::None),
                        },
                    };
                    row.push(text);
                }
                row
            })
            .collect();
        let mut notes = Vec::new();
        if let Some(floor) = self.noise_floor() {
            notes.push(floor);
        }
        notes.extend([
                format!(
                    "{} runs per query: the first (cold, after setup) is reported apart; speed = base time / target time over the {warm} paired warm rounds (geometric mean; above 1 = faster than {}).",
                    r.repeat_query, self.base
                ),
                "▲ faster / ▼ slower: the 95 % interval excludes 1 after false discovery rate control (5 %); unmarked = no significant difference; ? = fewer than 2 warm rounds (use --repeat-query 3 or more); ✗ = wrong result or error; n/a = no file for this engine.".to_string(),
            ]);
        grid("Speed relative to the base", notes, header, rows)
    }

    /// The line every report opens with: the median half-width of the speed intervals, i.e.
    /// the smallest difference this run resolves; `None` without any interval.
    fn noise_floor(&self) -> Option<String> {
        let mut halves: Vec<f64> = self
            .speed
            .iter()
            .filter_map(|c| Some((c.high? - c.low?) / c.speed? / 2.0 * 100.0))
            .filter(|h| h.is_finite())
            .collect();
        let m = crate::summary::median(&mut halves)?;
        Some(format!(
            "Noise floor: this run resolves differences larger than ±{m:.1} % (median half-width of the 95 % intervals of the speeds)."
        ))
    }

    fn times_grid(&self) -> Grid {
        let r = &self.result;
        let header = [
            "query", "target", "cold ms", "min", "median", "mean", "max", "sd", "rows", "checksum",
        ]
        .map(String::from)
        .to_vec();
        let mut rows = Vec::new();
        for q in &r.queries {
            for (i, t) in r.targets.iter().enumerate() {
                let Some(x) = runs(t, &q.name) else { continue };
                let differs = i > 0
                    && self
                        .cell(&q.name, &t.name)
                        .is_some_and(|c| c.result_differs);
                let mut row = vec![(q.name.clone(), Color::None), (t.name.clone(), Color::None)];
                if let Some(why) = x.skipped.as_ref().or(x.error.as_ref()) {
                    let mark = if x.error.is_some() {
                        Color::Yellow
                    } else {
                        Color::None
                    };
                    row.push((why.clone(), mark));
                    rows.push(row);
                    continue;
                }
                let ms = |v: Option<f64>| v.map_or("-".to_string(), |s| format_ms(s * 1e3));
                let stats = Stats::of(x.warm());
                row.push((ms(x.runs_secs.first().copied()), Color::None));
                for v in [stats.min, stats.median, stats.mean, stats.max, stats.sd] {
                    row.push((ms(v), Color::None));
                }
                row.push((x.rows.map_or("-".into(), |n| n.to_string()), Color::None));
                let sum = match (q.checksum, &x.checksum) {
                    (ChecksumMode::None, _) => "not compared".to_string(),
                    (_, Some(c)) => c.clone(),
                    (_, None) => "-".to_string(),
                };
                row.push((sum, if differs { Color::Yellow } else { Color::None }));
                rows.push(row);
            }
        }
        let mut notes = vec![
            "Times of the warm runs in milliseconds (cold = the first run); rows returned; checksum of the result (numbers canonicalized, row order ignored unless the suite says ordered).".to_string(),
        ];
        for (q, t, got, base) in &self.mismatches {
            notes.push(format!(
                "✗ {q}: {t}'s result differs from {}'s (checksum {got} vs {base}); a faster wrong answer is not faster",
                self.base
            ));
        }
        for q in r.queries.iter().filter(|q| q.note.is_some()) {
            notes.push(format!(
                "{}: {}",
                q.name,
                q.note.as_deref().unwrap_or_default()
            ));
        }
        grid("Query times", notes, header, rows)
    }

    fn setup_grid(&self) -> Option<Grid> {
        let r = &self.result;
        let mut names: Vec<String> = Vec::new();
        for t in &r.targets {
            for s in &t.setup {
                let key = setup_key(&s.name);
                if !names.contains(&key) {
                    names.push(key);
                }
            }
        }
        if names.is_empty() && r.targets.iter().all(|t| t.error.is_none()) {
            return None;
        }
        let mut header = vec!["setup".to_string()];
        header.extend(r.targets.iter().map(|t| t.name.clone()));
        let mut rows: Vec<Vec<(String, Color)>> = names
            .iter()
            .map(|n| {
                let mut row = vec![(n.clone(), Color::None)];
                for t in &r.targets {
                    row.push(match t.setup.iter().find(|s| &setup_key(&s.name) == n) {
                        Some(s) => match (s.secs, &s.error) {
                            (Some(secs), _) => (format!("{secs:.2}"), Color::None),
                            (None, _) => ("failed".to_string(), Color::Yellow),
                        },
                        None => ("-".to_string(), Color::None),
                    });
                }
                row
            })
            .collect();
        let mut notes = vec!["Wall time of each setup file in seconds (index builds included), per target's own variant.".to_string()];
        for t in r.targets.iter().filter(|t| t.error.is_some()) {
            notes.push(format!(
                "✗ {}: {}",
                t.name,
                t.error.as_deref().unwrap_or_default()
            ));
        }
        if rows.is_empty() {
            rows.push(vec![("(none)".to_string(), Color::None)]);
        }
        Some(grid("Setup", notes, header, rows))
    }

    fn size_grid(&self) -> Option<Grid> {
        let r = &self.result;
        if r.tables.is_empty() {
            return None;
        }
        let header = [
            "table",
            "target",
            "data",
            "indexes",
            "total",
            "uncompressed",
        ]
        .map(String::from)
        .to_vec();
        let mut rows = Vec::new();
        for table in &r.tables {
            for t in &r.targets {
                let Some(s) = t.tables.iter().find(|s| &s.table == table) else {
                    continue;
                };
                let mut row = vec![(table.clone(), Color::None), (t.name.clone(), Color::None)];
                match (&s.bytes, &s.error) {
                    (Some(b), _) => {
                        row.push((bytes(b.data), Color::None));
                        row.push((b.index.map_or("-".into(), bytes), Color::None));
                        row.push((bytes(b.data + b.index.unwrap_or(0)), Color::None));
                        row.push((b.uncompressed.map_or("-".into(), bytes), Color::None));
                    }
                    (None, Some(e)) => row.push((e.clone(), Color::Yellow)),
                    (None, None) => row.push(("unknown to the engine".into(), Color::None)),
                }
                rows.push(row);
            }
        }
        Some(grid(
            "Table sizes",
            vec![
                "On-disk size after setup, from each engine's catalog (compressed as stored)."
                    .to_string(),
            ],
            header,
            rows,
        ))
    }

    fn heading(&self) -> Vec<String> {
        let r = &self.result;
        let mut lines = vec![format!(
            "Query set {} ({}): {} queries on {} targets, base {}",
            r.suite,
            r.origin,
            r.queries.len(),
            r.targets.len(),
            self.base
        )];
        if !r.description.is_empty() {
            lines.push(r.description.clone());
        }
        if r.interrupted {
            lines.push(
                "INTERRUPTED: the run was stopped; queries that did not run are missing."
                    .to_string(),
            );
        }
        lines
    }
}

/// A setup file's row key: `setup/02-index.postgres.sql` and `setup/02-index.sql` share one.
fn setup_key(name: &str) -> String {
    let stem = name.trim_end_matches(".sql");
    match stem.rsplit_once('.') {
        Some((s, e)) if VARIANT_ENGINES.contains(&e) => s.to_string(),
        _ => stem.to_string(),
    }
}

/// Engine suffixes of file variants (the suite loader's list).
const VARIANT_ENGINES: &[&str] = &["sqlite", "postgres", "mysql", "clickhouse"];

fn runs<'a>(t: &'a QsTarget, query: &str) -> Option<&'a QueryRuns> {
    t.queries.iter().find(|q| q.name == query)
}

fn speed_text(c: &SpeedCell) -> (String, Color) {
    let Some(s) = c.speed else {
        return ("?".to_string(), Color::None);
    };
    let mut text = match (c.low, c.high) {
        (Some(l), Some(h)) => format!("{s:.2} [{l:.2},{h:.2}]"),
        _ => format!("{s:.2}"),
    };
    let mark = match (c.result_differs, c.significant) {
        (true, _) => Color::Yellow,
        (false, true) if s > 1.0 => Color::Green,
        (false, true) => Color::Red,
        _ => Color::None,
    };
    text.push_str(match mark {
        Color::Green => " ▲",
        Color::Red => " ▼",
        Color::Yellow => " ✗",
        _ => "",
    });
    (text, mark)
}

fn format_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Summary statistics of the warm runs.
#[derive(Debug, Default)]
struct Stats {
    min: Option<f64>,
    median: Option<f64>,
    mean: Option<f64>,
    max: Option<f64>,
    sd: Option<f64>,
}

impl Stats {
    fn of(xs: &[f64]) -> Stats {
        if xs.is_empty() {
            return Stats::default();
        }
        let mut s = xs.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        let mean = s.iter().sum::<f64>() / n as f64;
        let sd = (n > 1)
            .then(|| (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
        Stats {
            min: s.first().copied(),
            median: Some(median),
            mean: Some(mean),
            max: s.last().copied(),
            sd,
        }
    }
}

/// Plain-text report.
pub fn text(report: &QuerySetReport) -> String {
    let mut out = report.heading().join("\n");
    out.push('\n');
    for g in report.grids() {
        g.text(&mut out);
    }
    out
}

/// Markdown report.
pub fn markdown(report: &QuerySetReport) -> String {
    let mut out = format!("# {}\n\n", md(&report.heading()[0]));
    for l in report.heading().iter().skip(1) {
        let _ = writeln!(out, "{}\n", md(l));
    }
    for g in report.grids() {
        g.markdown(&mut out);
    }
    out
}

/// HTML report (one self-contained page).
pub fn html(report: &QuerySetReport) -> String {
    let head = report.heading();
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin-bottom:1em}}\
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}td:first-child,th:first-child{{text-align:left}}\
p.note{{color:#444;margin:0.2em 0}}</style></head><body>\n<h1>{}</h1>\n",
        esc(&head[0]),
        esc(&head[0])
    );
    for l in head.iter().skip(1) {
        let _ = writeln!(out, "<p>{}</p>", esc(l));
    }
    for g in report.grids() {
        g.html(&mut out);
    }
    out.push_str("</body></html>\n");
    out
}

/// JSON report: the measurements, every comparison and the sections as shown.
pub fn json(report: &QuerySetReport) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        report: &'a QuerySetReport,
        sections: Vec<SectionDoc>,
    }
    serde_json::to_string_pretty(&Out {
        report,
        sections: report.grids().into_iter().map(SectionDoc::from).collect(),
    })
    .unwrap_or_default()
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_model::queryset::{QueryDef, QUERYSET_SCHEMA};

    fn target(name: &str, times: &[f64], sum: &str) -> QsTarget {
        QsTarget {
            name: name.into(),
            engine: "sqlite".into(),
            setup: vec![],
            tables: vec![],
            queries: vec![QueryRuns {
                name: "q1".into(),
                file: "queries/q1.sql".into(),
                runs_secs: times.to_vec(),
                rows: Some(3),
                checksum: Some(sum.into()),
                error: None,
                skipped: None,
            }],
            error: None,
        }
    }

    fn result(targets: Vec<QsTarget>) -> QuerySetResult {
        QuerySetResult {
            schema: QUERYSET_SCHEMA,
            suite: "t".into(),
            description: String::new(),
            origin: "dir".into(),
            repeat_query: 6,
            params: Default::default(),
            queries: vec![QueryDef {
                name: "q1".into(),
                checksum: ChecksumMode::Unordered,
                note: None,
            }],
            tables: vec![],
            targets,
            interrupted: false,
        }
    }

    #[test]
    fn twice_as_fast_is_marked_and_a_different_result_is_flagged() {
        let a = target("a", &[0.5, 0.10, 0.11, 0.10, 0.12, 0.10], "aa");
        let b = target("b", &[0.5, 0.05, 0.055, 0.05, 0.06, 0.051], "aa");
        let r = QuerySetReport::new(result(vec![a.clone(), b]), None);
        let c = &r.speed[0];
        assert!(c.significant && c.speed.unwrap() > 1.8, "{c:?}");
        assert!(r.mismatches.is_empty());
        assert!(text(&r).contains("▲"), "{}", text(&r));
        let wrong = target("b", &[0.5, 0.05, 0.055, 0.05, 0.06, 0.051], "bb");
        let r = QuerySetReport::new(result(vec![a, wrong]), Some("a"));
        assert_eq!(r.mismatches.len(), 1);
        let t = text(&r);
        assert!(t.contains("✗ q1: b's result differs from a's"), "{t}");
        assert!(markdown(&r).contains("✗"));
        assert!(html(&r).contains("#FFDD81"));
    }

    #[test]
    fn equal_times_are_not_marked_and_one_warm_run_has_no_interval() {
        let a = target("a", &[0.5, 0.10, 0.11, 0.10, 0.12, 0.10], "aa");
        let b = target("b", &[0.5, 0.11, 0.10, 0.11, 0.10, 0.12], "aa");
        let r = QuerySetReport::new(result(vec![a, b]), None);
        assert!(!r.speed[0].significant);
        let a = target("a", &[0.5, 0.10], "aa");
        let b = target("b", &[0.5, 0.05], "aa");
        let r = QuerySetReport::new(result(vec![a, b]), None);
        assert!(r.speed[0].speed.is_none());
        assert!(text(&r).contains('?'));
    }
}
