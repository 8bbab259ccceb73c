//! The HTML "QPS over time" section: the QPS of one step over its measured windows, every
//! round of it placed back to back, one line per target.
//!
//! A default run measures a step in ten rounds of 0.2 s: a round's window holds no whole
//! second of per-second intervals, so the chart plots one point per round (its QPS at the
//! round's end) and the per-second intervals only of rounds that have two or more.

use crate::data::ReportData;
use crate::detail::selected;
use crate::markup::esc;
use crate::svg::{self, Series};
use crate::ReportOptions;
use dbdelta_model::{StepKind, StepResult};
use std::fmt::Write;

/// Every measured round of `target`'s step `label` at `threads`, in round order.
fn rounds<'a>(
    data: &'a ReportData,
    target: &str,
    label: &str,
    threads: u32,
) -> Vec<&'a StepResult> {
    let mut rs: Vec<&StepResult> = data
        .runs
        .iter()
        .flat_map(|r| &r.results)
        .filter(|r| {
            r.target == target
                && r.label == label
                && r.threads == threads
                && r.kind == StepKind::Measured
                && r.is_ok()
        })
        .collect();
    rs.sort_by_key(|r| r.repeat);
    rs
}

/// (seconds into the measured windows, QPS): each round's per-second intervals when it has
/// two or more, else one point for the whole round at its end; rounds placed back to back.
pub(crate) fn points(rounds: &[&StepResult]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut offset = 0.0;
    for r in rounds {
        if r.intervals.len() >= 2 {
            out.extend(r.intervals.iter().map(|iv| (offset + iv.t, iv.qps)));
        } else if r.seconds > 0.0 && r.throughput.value.is_finite() {
            out.push((offset + r.seconds, r.qps));
        }
        let end = r.intervals.last().map_or(0.0, |iv| iv.t);
        offset += r.seconds.max(end);
    }
    out
}

/// The section: `--timeline` (a glob on step name or label) chooses the step, else the first
/// one with a point to draw.
pub(crate) fn html(o: &mut String, data: &ReportData, opts: &ReportOptions) {
    let drawable = |label: &str, threads: u32| {
        data.columns
            .iter()
            .any(|c| points(&rounds(data, c.name(), label, threads)).len() >= 2)
    };
    let pick = data.tables.iter().find_map(|t| {
        t.rows.iter().find_map(|r| {
            let wanted = match &opts.timeline {
                Some(g) => selected(std::slice::from_ref(g), &r.step, &r.label),
                None => true,
            };
            (wanted && drawable(&r.label, t.threads)).then(|| r.label.clone())
        })
    });
    o.push_str("<h2 id=\"timeline\">QPS over time</h2>\n");
    let Some(label) = pick else {
        let _ = writeln!(
            o,
            "<p class=\"note\">No step has two or more rounds or per-second intervals to draw{}.</p>",
            match &opts.timeline {
                Some(g) => format!(" among the steps matching '{}'", esc(g)),
                None => String::new(),
            }
        );
        return;
    };
    let _ = writeln!(
        o,
        "<p class=\"note\">Queries per second over the measured windows of <b>{}</b>, its rounds placed back to back: every second of a round that lasted two or more, else one point per round (choose another step with <code>dbdelta report --timeline STEP</code>). A steady line means a stable measurement; dips show stalls.</p>",
        esc(&label)
    );
    for t in &data.tables {
        let series: Vec<Series> = data
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Series {
                name: c.name(),
                color: i,
                points: points(&rounds(data, c.name(), &label, t.threads)),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        o.push_str(&svg::lines(
            &format!("{label}, dop={}", t.threads),
            "seconds into the measured windows (rounds back to back)",
            "QPS",
            &series,
            None,
            (900.0, 280.0),
        ));
        o.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::points;
    use dbdelta_model::{Interval, StepResult};

    fn round(k: u32, seconds: f64, qps: f64, intervals: &[(f64, f64)]) -> StepResult {
        let mut r = StepResult::empty(
            "a",
            "point-query",
            "point-query",
            1,
            dbdelta_model::Group::Point,
            dbdelta_model::StepKind::Measured,
            1,
        );
        r.repeat = k;
        r.seconds = seconds;
        r.qps = qps;
        r.throughput.value = qps;
        r.intervals = intervals
            .iter()
            .map(|&(t, qps)| Interval {
                t,
                qps,
                tps: qps,
                p95_us: 0.0,
                p99_us: 0.0,
                p50_us: 0.0,
                max_us: 0.0,
                errors: 0,
            })
            .collect();
        r
    }

    #[test]
    fn short_rounds_give_one_point_each_back_to_back() {
        // Ten rounds of 0.2 s, no whole second among them: ten points, not one.
        let rounds: Vec<StepResult> = (1..=10)
            .map(|k| round(k, 0.2, 1000.0 + f64::from(k), &[(0.2, 999.0)]))
            .collect();
        let refs: Vec<&StepResult> = rounds.iter().collect();
        let p = points(&refs);
        assert_eq!(p.len(), 10);
        assert!(
            (p[0].0 - 0.2).abs() < 1e-9 && (p[9].0 - 2.0).abs() < 1e-9,
            "{p:?}"
        );
        assert_eq!(p[3].1, 1004.0);
        // Rounds of whole seconds keep their per-second intervals, offset by the rounds
        // before them.
        let long = [
            round(1, 2.0, 10.0, &[(1.0, 9.0), (2.0, 11.0)]),
            round(2, 2.0, 10.0, &[(1.0, 8.0), (2.0, 12.0)]),
        ];
        let refs: Vec<&StepResult> = long.iter().collect();
        assert_eq!(
            points(&refs),
            vec![(1.0, 9.0), (2.0, 11.0), (3.0, 8.0), (4.0, 12.0)]
        );
    }
}
