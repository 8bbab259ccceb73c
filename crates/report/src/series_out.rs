//! The version-series section of the text, Markdown, HTML and JSON reports (see
//! [`crate::series`] for its numbers): the versions, per thread count a table of the geometric
//! mean of relative QPS per group (one column per version, relative to the oldest) and the
//! significant changes between adjacent versions — each with its differential flamegraph
//! and drill-down table when the run was profiled — and the settings whose defaults changed.
//! The HTML adds a chart of relative QPS by version per group.

use crate::data::ReportData;
use crate::markup::{esc, md, ratio};
use crate::series::{self, Adjacent, DefaultChange, GroupMean, Series};
use crate::verdict::VerdictCell;
use crate::ReportOptions;
use dbdelta_inference::Verdict;
use dbdelta_model::Group;
use dbdelta_profile::store::{explain, file_safe, load_infos};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Rows of the grew/shrank function lists of an adjacent change's drill-down table.
const TOP: usize = 8;

/// Everything the section shows, computed once.
struct Section {
    series: Series,
    means: BTreeMap<u32, Vec<GroupMean>>,
    adjacent: Vec<Adjacent>,
    defaults: Vec<DefaultChange>,
}

fn section(data: &ReportData, opts: &ReportOptions, cells: &[VerdictCell]) -> Option<Section> {
    let series = series::detect(data, opts.series)?;
    Some(Section {
        means: series::group_means(data, &series, cells),
        adjacent: series::adjacent(data, &series),
        defaults: series::default_changes(data, &series),
        series,
    })
}

/// "point", "range", "write" or "all steps".
fn group_name(g: Option<Group>) -> &'static str {
    g.map_or("all steps", Group::name)
}

fn interval(m: &GroupMean) -> String {
    match m.interval {
        Some((low, high)) => format!(
            "{} [{}, {}]",
            ratio(m.mean, 2),
            ratio(low, 2),
            ratio(high, 2)
        ),
        None => format!("{} (no interval)", ratio(m.mean, 2)),
    }
}

/// A ratio with its interval and verdict mark (▲ faster, ▼ slower, ° excluded 1 alone).
fn change(a: &Adjacent) -> String {
    match (a.comparison, a.bare_ratio) {
        (Some(c), _) => {
            let mark = match c.verdict {
                Verdict::Improvement => " ▲",
                Verdict::Regression => " ▼",
                Verdict::NoChange if a.withheld => " °",
                Verdict::NoChange => "",
            };
            format!(
                "{} [{}, {}]{mark}",
                ratio(c.ratio, 2),
                ratio(c.low, 2),
                ratio(c.high, 2)
            )
        }
        (None, Some(r)) => format!("{} (no interval)", ratio(r, 2)),
        (None, None) => "n/a".to_string(),
    }
}

impl Section {
    fn title(&self) -> String {
        let headings: Vec<String> = (0..self.series.names.len())
            .map(|i| self.series.heading(i))
            .collect();
        format!(
            "Version series: {}, relative to {} ({})",
            headings.join(", "),
            self.series.names[0],
            if self.series.named {
                "named by --series"
            } else {
                "detected from the versions: the oldest first"
            }
        )
    }

    fn pair(&self, a: &Adjacent) -> String {
        format!(
            "{} → {}",
            self.series.names[a.after - 1],
            self.series.names[a.after]
        )
    }

    /// (header, rows) of one thread count's group means: a row per group, a column per
    /// version after the oldest.
    fn means_rows(&self, means: &[GroupMean]) -> (Vec<String>, Vec<Vec<String>>) {
        let n = self.series.names.len();
        let header: Vec<String> = std::iter::once("group".to_string())
            .chain((1..n).map(|i| self.series.heading(i)))
            .collect();
        let mut rows = Vec::new();
        for group in [
            Some(Group::Point),
            Some(Group::Range),
            Some(Group::Write),
            None,
        ] {
            let of: Vec<&GroupMean> = means.iter().filter(|m| m.group == group).collect();
            if of.is_empty() {
                continue;
            }
            let steps = of.iter().map(|m| m.steps).max().unwrap_or(0);
            let mut row = vec![format!(
                "{} ({steps} step{})",
                group_name(group),
                if steps == 1 { "" } else { "s" }
            )];
            for i in 1..n {
                row.push(
                    of.iter()
                        .find(|m| m.target == i)
                        .map_or("n/a".to_string(), |m| interval(m)),
                );
            }
            rows.push(row);
        }
        (header, rows)
    }

    fn significant(&self, threads: u32) -> Vec<&Adjacent> {
        self.adjacent
            .iter()
            .filter(|a| a.threads == threads && a.significant())
            .collect()
    }

    /// Without any interval (one window per target and step): every step's newer/older per
    /// adjacent pair, a row per step and a column per pair.
    fn bare_rows(&self, threads: u32) -> Option<(Vec<String>, Vec<Vec<String>>)> {
        if self.tested() > 0 {
            return None;
        }
        let n = self.series.names.len();
        let header: Vec<String> = std::iter::once("step".to_string())
            .chain((1..n).map(|i| format!("{}/{}", self.series.names[i], self.series.names[i - 1])))
            .collect();
        let mut labels: Vec<&str> = Vec::new();
        for a in self.adjacent.iter().filter(|a| a.threads == threads) {
            if !labels.contains(&a.label.as_str()) {
                labels.push(&a.label);
            }
        }
        let rows: Vec<Vec<String>> = labels
            .iter()
            .map(|l| {
                std::iter::once(l.to_string())
                    .chain((1..n).map(|i| {
                        self.adjacent
                            .iter()
                            .find(|a| a.threads == threads && a.after == i && a.label == *l)
                            .and_then(Adjacent::ratio)
                            .map_or("n/a".to_string(), |r| ratio(r, 2))
                    }))
                    .collect()
            })
            .collect();
        (!rows.is_empty()).then_some((header, rows))
    }

    fn tested(&self) -> usize {
        self.adjacent
            .iter()
            .filter(|a| a.comparison.is_some())
            .count()
    }

    fn defaults_rows(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let header: Vec<String> = std::iter::once("setting".to_string())
            .chain(self.series.names.iter().cloned())
            .collect();
        let rows = self
            .defaults
            .iter()
            .map(|d| {
                std::iter::once(d.name.clone())
                    .chain(
                        d.values
                            .iter()
                            .map(|v| v.clone().unwrap_or_else(|| "-".to_string())),
                    )
                    .collect()
            })
            .collect();
        (header, rows)
    }
}

const MEANS_NOTE: &str = "Geometric mean over the group's steps of relative QPS against the oldest version, with its 95 % interval (each step's ratio uncertain, the steps fixed); steps without an interval are left out.";
const BARE_NOTE: &str = "No step has an interval (one window per target): each version's rate over the one before it, without a verdict.";
const DEFAULTS_NOTE: &str = "Server settings whose recorded values differ between the versions although no target sets them: a default changed (the server's, or the one its initdb writes). - = not recorded (the built-in default, or a setting the version does not have).";

fn adjacent_note(s: &Section) -> String {
    format!(
        "Each version against the one before it, every step (paired rounds when both ran in one run); listed: the significant changes after false discovery rate control at 5 % over all {} adjacent comparisons. ▲ faster, ▼ slower.",
        s.tested()
    )
}

/// The differential flamegraph (newer vs older) of an adjacent change and its drill-down
/// table, when the run that measured both was profiled.
struct Explained {
    /// The SVG's path, relative to the report (as [`crate::profiles`] links files).
    diff: Option<String>,
    /// The drill-down table, rendered.
    drill: Option<String>,
}

fn explained(data: &ReportData, s: &Section, a: &Adjacent, opts: &ReportOptions) -> Explained {
    let none = Explained {
        diff: None,
        drill: None,
    };
    let (older, newer) = (&s.series.names[a.after - 1], &s.series.names[a.after]);
    let run_of = |n: &str| data.columns.iter().find(|c| c.name() == n).map(|c| c.run);
    let (Some(ro), Some(rn)) = (run_of(older), run_of(newer)) else {
        return none;
    };
    let Some(run) = data.runs.get(rn).filter(|_| ro == rn) else {
        return none;
    };
    let profiles = run.dir.join("profiles");
    let infos = load_infos(&profiles.join(newer));
    let Some(info) = infos
        .iter()
        .find(|i| i.label == a.label && i.threads == a.threads)
    else {
        return none;
    };
    let file = format!("{}.diff-vs-{}.svg", info.stem, file_safe(older));
    let diff = profiles.join(newer).join(&file).is_file().then(|| {
        format!(
            "{}profiles/{newer}/{file}",
            crate::profiles::link_prefix(run, opts)
        )
    });
    let drill = explain(
        &profiles,
        older,
        std::slice::from_ref(newer),
        &a.label,
        Some(a.threads),
    )
    .ok()
    .and_then(|tables| {
        tables
            .into_iter()
            .find(|t| t.title == format!("{} dop{}", a.label, a.threads))
    })
    .map(|t| t.render(TOP));
    Explained { diff, drill }
}

/// Columns padded to their widest cell, two spaces apart.
fn aligned(header: &[String], rows: &[Vec<String>], out: &mut String) {
    let all: Vec<Vec<String>> = std::iter::once(header.to_vec())
        .chain(rows.iter().cloned())
        .collect();
    out.push_str(&crate::console::align(&all));
}

fn md_table(header: &[String], rows: &[Vec<String>], out: &mut String) {
    let _ = writeln!(
        out,
        "| {} |\n|{}",
        header.iter().map(|h| md(h)).collect::<Vec<_>>().join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} |",
            r.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    out.push('\n');
}

fn html_table(header: &[String], rows: &[Vec<String>], out: &mut String) {
    out.push_str("<table><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let style = if c.ends_with('▲') {
                " style=\"background:#81FFA6\""
            } else if c.ends_with('▼') {
                " style=\"background:#FF9A9A\""
            } else {
                ""
            };
            let tag = if i == 0 { "td" } else { "td class=\"num\"" };
            let _ = write!(out, "<{tag}{style}>{}</td>", esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn adjacent_rows(s: &Section, list: &[&Adjacent]) -> (Vec<String>, Vec<Vec<String>>) {
    let header = ["step", "group", "versions", "newer/older [95 % interval]"]
        .map(String::from)
        .to_vec();
    let rows = list
        .iter()
        .map(|a| {
            vec![
                a.label.clone(),
                a.group.map_or("-", Group::name).to_string(),
                s.pair(a),
                change(a),
            ]
        })
        .collect();
    (header, rows)
}

/// The text section (empty when the targets are no series).
pub fn text(data: &ReportData, opts: &ReportOptions, cells: &[VerdictCell]) -> String {
    let Some(s) = section(data, opts, cells) else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(o, "--- {}", s.title());
    for (threads, means) in &s.means {
        let _ = writeln!(o, "\nRelative QPS per group, dop={threads}");
        let _ = writeln!(o, "  {MEANS_NOTE}");
        let (h, r) = s.means_rows(means);
        aligned(&h, &r, &mut o);
    }
    for threads in data.thread_counts() {
        let list = s.significant(threads);
        let _ = writeln!(o, "\nChanges between adjacent versions, dop={threads}");
        if let Some((h, r)) = s.bare_rows(threads) {
            let _ = writeln!(o, "  {BARE_NOTE}");
            aligned(&h, &r, &mut o);
            continue;
        }
        let _ = writeln!(o, "  {}", adjacent_note(&s));
        if list.is_empty() {
            let _ = writeln!(o, "none significant");
            continue;
        }
        let (h, r) = adjacent_rows(&s, &list);
        aligned(&h, &r, &mut o);
        for a in list {
            let e = explained(data, &s, a, opts);
            if let Some(d) = &e.diff {
                let _ = writeln!(
                    o,
                    "  {} {}: differential flamegraph {d}",
                    a.label,
                    s.pair(a)
                );
            }
            if let Some(t) = &e.drill {
                for line in t.lines() {
                    let _ = writeln!(o, "    {line}");
                }
            }
        }
    }
    if !s.defaults.is_empty() {
        let _ = writeln!(o, "\nSettings whose defaults changed");
        let _ = writeln!(o, "  {DEFAULTS_NOTE}");
        let (h, r) = s.defaults_rows();
        aligned(&h, &r, &mut o);
    }
    o.push('\n');
    o
}

/// The Markdown section (empty when the targets are no series): `## Version series`, then
/// `###` subsections.
pub fn markdown(data: &ReportData, opts: &ReportOptions, cells: &[VerdictCell]) -> String {
    let Some(s) = section(data, opts, cells) else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(o, "## {}\n", md(&s.title()));
    for (threads, means) in &s.means {
        let _ = writeln!(
            o,
            "### Relative QPS per group, dop={threads}\n\n{MEANS_NOTE}\n"
        );
        let (h, r) = s.means_rows(means);
        md_table(&h, &r, &mut o);
    }
    for threads in data.thread_counts() {
        let list = s.significant(threads);
        if let Some((h, r)) = s.bare_rows(threads) {
            let _ = writeln!(
                o,
                "### Changes between adjacent versions, dop={threads}\n\n{BARE_NOTE}\n"
            );
            md_table(&h, &r, &mut o);
            continue;
        }
        let _ = writeln!(
            o,
            "### Changes between adjacent versions, dop={threads}\n\n{}\n",
            adjacent_note(&s)
        );
        if list.is_empty() {
            o.push_str("None significant.\n\n");
            continue;
        }
        let (h, r) = adjacent_rows(&s, &list);
        md_table(&h, &r, &mut o);
        for a in list {
            let e = explained(data, &s, a, opts);
            if e.diff.is_none() && e.drill.is_none() {
                continue;
            }
            let _ = writeln!(o, "**{} {}**", md(&a.label), md(&s.pair(a)));
            if let Some(d) = &e.diff {
                let _ = writeln!(o, ": [differential flamegraph]({d})");
            }
            o.push('\n');
            if let Some(t) = &e.drill {
                let _ = writeln!(o, "```\n{}```\n", t);
            }
        }
    }
    if !s.defaults.is_empty() {
        let _ = writeln!(
            o,
            "### Settings whose defaults changed\n\n{DEFAULTS_NOTE}\n"
        );
        let (h, r) = s.defaults_rows();
        md_table(&h, &r, &mut o);
    }
    o
}

/// The HTML section (empty when the targets are no series): the tables of the Markdown
/// section, a chart per thread count of relative QPS by version per group, and under each
/// significant adjacent change the link to its differential flamegraph and its drill-down
/// table.
pub fn html(data: &ReportData, opts: &ReportOptions, cells: &[VerdictCell]) -> String {
    let Some(s) = section(data, opts, cells) else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(o, "<h2 id=\"series\">{}</h2>", esc(&s.title()));
    for (threads, means) in &s.means {
        let _ = writeln!(
            o,
            "<h3>Relative QPS per group, dop={threads}</h3>\n<p class=\"note\">{}</p>",
            esc(MEANS_NOTE)
        );
        o.push_str(&chart(&s, *threads, means));
        o.push('\n');
        let (h, r) = s.means_rows(means);
        html_table(&h, &r, &mut o);
    }
    for threads in data.thread_counts() {
        let list = s.significant(threads);
        if let Some((h, r)) = s.bare_rows(threads) {
            let _ = writeln!(
                o,
                "<h3>Changes between adjacent versions, dop={threads}</h3>\n<p class=\"note\">{}</p>",
                esc(BARE_NOTE)
            );
            html_table(&h, &r, &mut o);
            continue;
        }
        let _ = writeln!(
            o,
            "<h3>Changes between adjacent versions, dop={threads}</h3>\n<p class=\"note\">{}</p>",
            esc(&adjacent_note(&s))
        );
        if list.is_empty() {
            o.push_str("<p>None significant.</p>\n");
            continue;
        }
        let (h, r) = adjacent_rows(&s, &list);
        html_table(&h, &r, &mut o);
        for a in list {
            let e = explained(data, &s, a, opts);
            if e.diff.is_none() && e.drill.is_none() {
                continue;
            }
            let _ = write!(o, "<p>{} {}", esc(&a.label), esc(&s.pair(a)));
            if let Some(d) = &e.diff {
                let _ = write!(
                    o,
                    ": <a class=\"adjacent-diff\" href=\"{}\">{} vs {} differential flamegraph</a>",
                    crate::profiles::href(d),
                    esc(&s.series.names[a.after]),
                    esc(&s.series.names[a.after - 1])
                );
            }
            o.push_str("</p>\n");
            if let Some(t) = &e.drill {
                let _ = writeln!(o, "<pre class=\"drill\">{}</pre>", esc(t));
            }
        }
    }
    if !s.defaults.is_empty() {
        let _ = writeln!(
            o,
            "<h3>Settings whose defaults changed</h3>\n<p class=\"note\">{}</p>",
            esc(DEFAULTS_NOTE)
        );
        let (h, r) = s.defaults_rows();
        html_table(&h, &r, &mut o);
    }
    o
}

/// Relative QPS by version, one line per group (the oldest version at 1).
fn chart(s: &Section, threads: u32, means: &[GroupMean]) -> String {
    let groups = [
        Some(Group::Point),
        Some(Group::Range),
        Some(Group::Write),
        None,
    ];
    let lines: Vec<crate::svg::Series> = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| means.iter().any(|m| m.group == **g))
        .map(|(color, g)| crate::svg::Series {
            name: group_name(*g),
            color,
            points: std::iter::once((s.series.x(0), 1.0))
                .chain(
                    means
                        .iter()
                        .filter(|m| m.group == *g)
                        .map(|m| (s.series.x(m.target), m.mean)),
                )
                .collect(),
        })
        .collect();
    let ticks: Vec<f64> = (0..s.series.names.len()).map(|i| s.series.x(i)).collect();
    crate::svg::lines(
        &format!(
            "Relative QPS by version, dop={threads} (geometric mean per group, {} = 1)",
            s.series.names[0]
        ),
        "version",
        "relative QPS",
        &lines,
        Some(&ticks),
        (640.0, 260.0),
    )
}

/// The section as JSON (`null` when the targets are no series): the series, the group
/// means, every adjacent comparison and the default changes.
pub fn json(data: &ReportData, opts: &ReportOptions, cells: &[VerdictCell]) -> serde_json::Value {
    let Some(s) = section(data, opts, cells) else {
        return serde_json::Value::Null;
    };
    let name = |i: usize| s.series.names[i].clone();
    json!({
        "targets": s.series.names,
        "versions": s.series.versions,
        "named": s.series.named,
        "group_means": s.means.iter().flat_map(|(threads, means)| means.iter().map(move |m| json!({
            "dop": threads,
            "group": group_name(m.group),
            "target": name(m.target),
            "steps": m.steps,
            "mean": m.mean,
            "low": m.interval.map(|i| i.0),
            "high": m.interval.map(|i| i.1),
        }))).collect::<Vec<_>>(),
        "adjacent": s.adjacent.iter().map(|a| json!({
            "dop": a.threads,
            "label": a.label,
            "group": a.group.map(Group::name),
            "before": name(a.after - 1),
            "after": name(a.after),
            "ratio": a.ratio(),
            "low": a.comparison.map(|c| c.low),
            "high": a.comparison.map(|c| c.high),
            "p": a.comparison.map(|c| c.p),
            "verdict": a.comparison.map(|c| c.verdict.name()),
            "significant": a.significant(),
            "withheld": a.withheld,
        })).collect::<Vec<_>>(),
        "default_changes": s.defaults.iter().map(|d| json!({
            "setting": d.name,
            "values": d.values,
        })).collect::<Vec<_>>(),
    })
}
