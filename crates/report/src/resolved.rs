//! What `--resolve` reached per step: the line each step gets in the text and Markdown
//! reports (and on the console while the run goes), from the `resolved` field of the last
//! round's results.

use crate::data::ReportData;
use dbdelta_model::Resolved;
use std::collections::BTreeMap;
use std::fmt::Write;

/// "±1.8 % after 14 rounds (resolved; goal ±2.0 %)": what a step reached.
pub fn describe(r: &Resolved) -> String {
    let reached = r
        .half_width_pct
        .map_or("no interval".to_string(), |h| format!("±{h:.1} %"));
    format!(
        "{reached} after {} rounds ({}; goal ±{:.1} %)",
        r.rounds,
        r.stop.name(),
        r.goal_pct
    )
}

/// (threads, order, label) → what the step reached.
type Steps = BTreeMap<(u32, u32, String), Resolved>;

/// The goal, and (threads, order, label) → what the step reached, from every run's
/// results; `None` without `--resolve`.
fn reached(data: &ReportData) -> Option<(f64, Steps)> {
    let steps: Steps = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .filter_map(|r| {
            r.resolved
                .map(|x| ((r.threads, r.order, r.label.clone()), x))
        })
        .collect();
    let goal = steps.values().next()?.goal_pct;
    Some((goal, steps))
}

/// The text report's `--resolve` section: one line per step and thread count (empty
/// without `--resolve`).
pub fn text(data: &ReportData) -> String {
    let Some((goal, steps)) = reached(data) else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nResolve: rounds added per step until the 95 % interval of every target/base is at most ±{goal:.1} % (--resolve), within --budget"
    );
    let _ = writeln!(o, "dop\tstep\treached");
    for ((threads, _, label), r) in &steps {
        let _ = writeln!(o, "{threads}\t{label}\t{}", describe(r));
    }
    o
}

/// The Markdown report's `--resolve` table (empty without `--resolve`).
pub fn markdown(data: &ReportData) -> String {
    let Some((goal, steps)) = reached(data) else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n## Resolve\n\nRounds added per step until the 95 % interval of every target/base is at most ±{goal:.1} % (`--resolve`), within `--budget`.\n\n| dop | step | half-width | rounds | stopped |\n|---:|---|---:|---:|---|"
    );
    for ((threads, _, label), r) in &steps {
        let _ = writeln!(
            o,
            "| {threads} | {} | {} | {} | {} |",
            crate::markup::md(label),
            r.half_width_pct
                .map_or("no interval".to_string(), |h| format!("±{h:.1} %")),
            r.rounds,
            r.stop.name()
        );
    }
    o
}
