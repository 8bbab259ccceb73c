//! A run measured by segments (`dbdelta run --segment K/N`, then `dbdelta merge`): how
//! many segments and hosts measured it, and per step what each segment measured (its
//! connections, rate and client CPU kept apart) and how far apart the segments' clocks were.

use crate::data::ReportData;
use std::fmt::Write;

/// `measured by 4 segments on 4 hosts (a, b, c, d)` for each run merged from segments.
pub fn summary_lines(data: &ReportData) -> Vec<String> {
    data.runs
        .iter()
        .filter_map(|r| r.manifest.segments.as_ref().filter(|s| s.index.is_none()))
        .map(|s| {
            format!(
                "measured by {} segment(s) on {} host(s) ({}), merged with dbdelta merge",
                s.count,
                s.distinct_hosts(),
                s.hosts.join(", ")
            )
        })
        .collect()
}

/// Each merged step's segments: connections, qps, client µs per op, and clock spread.
fn step_lines(data: &ReportData) -> Vec<String> {
    let mut lines = Vec::new();
    for r in data.runs.iter().flat_map(|r| &r.results) {
        let Some(w) = r.segments.as_ref().filter(|w| w.index.is_none()) else {
            continue;
        };
        for p in &w.parts {
            let cpu = p
                .client_cpu_us_per_op
                .map_or("-".to_string(), |c| format!("{c:.1}"));
            lines.push(format!(
                "{}/{}\t{}\t{}\t{:.0}\t{cpu}\t{:.1}\t{}\t{}",
                p.segment,
                w.count,
                p.host,
                p.threads,
                p.qps,
                w.clock_spread_ms(),
                r.target,
                r.label
            ));
        }
    }
    lines
}

/// The text report's segments section.
pub fn text(out: &mut String, data: &ReportData) {
    for l in summary_lines(data) {
        let _ = writeln!(out, "{l}\n");
    }
    crate::detail::section(
        out,
        "segments (what each segment measured; clock spread in ms)",
        "segment\thost\tconns\tqps\tclient-us/op\tclock-spread\ttarget\tstep",
        step_lines(data),
    );
}

/// The Markdown report's segments paragraph.
pub fn markdown(out: &mut String, data: &ReportData) {
    for l in summary_lines(data) {
        let _ = writeln!(out, "\n*{}.*", capitalized(&l));
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
