//! The dashboard's inline SVG charts: a sparkline per series, a metric over runs with
//! intervals and change points that link to their evidence, and relative values by version.
//! Coordinates are printed with one decimal, so the pages are deterministic.

use crate::time::date;
use dbdelta_report::markup::esc;
use dbdelta_report::svg::{nice_step, tick_label, ticks};
use std::fmt::Write;

/// Most points drawn as dots with a tooltip; longer series are drawn as a line only (their
/// runs are listed in the table under the charts).
pub const MAX_DOTS: usize = 600;

/// Most points of a sparkline: longer series are averaged in buckets.
const SPARK_POINTS: usize = 120;

/// One run on a chart.
pub struct Dot {
    /// x: run start (seconds since the epoch) or position.
    pub x: f64,
    /// The run's mean.
    pub y: f64,
    /// Its 95 % interval, if it had repeats.
    pub interval: Option<(f64, f64)>,
    /// Tooltip: run, time, version, build, value.
    pub tip: String,
}

/// A change point on a chart.
pub struct Mark {
    /// x of the first run after the change.
    pub x: f64,
    /// Short label (magnitude and p-value).
    pub label: String,
    /// The evidence page, relative to the page (already escaped for an attribute).
    pub href: String,
    /// For the worse (red) or the better (green).
    pub worse: bool,
}

const RED: &str = "#c44e52";
const GREEN: &str = "#2e8b57";
const BLUE: &str = "#4c72b0";

/// A metric over runs: the line of run means, each run's interval (a vertical bar), and a
/// dashed line per change point, linked to its evidence. `timed` labels x as dates.
pub fn over_runs(title: &str, dots: &[Dot], marks: &[Mark], timed: bool) -> String {
    let (w, h) = (960.0, 260.0);
    let (left, right, top, bottom) = (64.0, 16.0, 30.0, 34.0);
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    for d in dots {
        x0 = x0.min(d.x);
        x1 = x1.max(d.x);
        y1 = y1.max(d.interval.map_or(d.y, |(_, hi)| hi.max(d.y)));
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if !(y1 > 0.0 && y1.is_finite()) {
        y1 = 1.0;
    }
    let ystep = nice_step(y1, 5.0);
    let y1 = (y1 / ystep).ceil() * ystep;
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - y.clamp(0.0, y1) / y1 * (h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img"><title>{t}</title><text x="{left:.1}" y="14" font-size="12" font-weight="bold" fill="#222">{t}</text>"##,
        t = esc(title)
    );
    for t in ticks(0.0, y1, ystep) {
        let yt = py(t);
        let _ = write!(
            s,
            r##"<line x1="{left:.1}" y1="{yt:.1}" x2="{:.1}" y2="{yt:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="#555">{}</text>"##,
            w - right,
            left - 4.0,
            yt + 3.0,
            tick_label(t, ystep)
        );
    }
    for i in 0..=4 {
        let x = x0 + (x1 - x0) * f64::from(i) / 4.0;
        let label = if timed {
            date(x)
        } else {
            format!("run {}", x.round() + 1.0)
        };
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="{anchor}" fill="#555">{label}</text>"##,
            px(x),
            h - bottom + 14.0
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{left:.1}" y1="{b:.1}" x2="{:.1}" y2="{b:.1}" stroke="#333"/><line x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{b:.1}" stroke="#333"/>"##,
        w - right,
        b = h - bottom
    );
    for d in dots {
        if let Some((lo, hi)) = d.interval {
            let x = px(d.x);
            let _ = write!(
                s,
                r##"<line class="ci" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#9db3d6" stroke-width="2"/>"##,
                py(lo),
                py(hi)
            );
        }
    }
    let pts: Vec<String> = dots
        .iter()
        .map(|d| format!("{:.1},{:.1}", px(d.x), py(d.y)))
        .collect();
    if !pts.is_empty() {
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="{BLUE}" stroke-width="1.5" points="{}"/>"##,
            pts.join(" ")
        );
    }
    if dots.len() <= MAX_DOTS {
        for (d, p) in dots.iter().zip(&pts) {
            if let Some((cx, cy)) = p.split_once(',') {
                let _ = write!(
                    s,
                    r##"<circle cx="{cx}" cy="{cy}" r="3" fill="{BLUE}"><title>{}</title></circle>"##,
                    esc(&d.tip)
                );
            }
        }
    }
    for (i, m) in marks.iter().enumerate() {
        let x = px(m.x);
        let color = if m.worse { RED } else { GREEN };
        // Labels of nearby change points take turns on three rows.
        let ly = top + 10.0 + 11.0 * (i % 3) as f64;
        let anchor = if x > w * 0.75 { "end" } else { "start" };
        let dx = if anchor == "end" { -3.0 } else { 3.0 };
        let _ = write!(
            s,
            r##"<a class="cp" href="{}"><title>{}</title><line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="4 3"/><text x="{:.1}" y="{ly:.1}" font-size="10" text-anchor="{anchor}" fill="{color}">{}</text></a>"##,
            m.href,
            esc(&format!("{} — open the evidence", m.label)),
            h - bottom,
            x + dx,
            esc(&m.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// A small line of the series' values (averaged in buckets when long), with the newest
/// change point as a colored dot.
pub fn sparkline(values: &[f64], change: Option<(usize, bool)>) -> String {
    let (w, h) = (160.0, 28.0);
    let n = values.len();
    let buckets = n.clamp(1, SPARK_POINTS);
    let mut pts: Vec<f64> = Vec::with_capacity(buckets);
    for b in 0..buckets {
        let (lo, hi) = (
            b * n / buckets,
            ((b + 1) * n / buckets).max(b * n / buckets + 1),
        );
        let part = &values[lo.min(n)..hi.min(n)];
        if !part.is_empty() {
            pts.push(part.iter().sum::<f64>() / part.len() as f64);
        }
    }
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let px = |i: f64, len: usize| 2.0 + i / (len.max(2) - 1) as f64 * (w - 4.0);
    let py = |v: f64| h - 3.0 - (v - lo) / span * (h - 6.0);
    let line: Vec<String> = pts
        .iter()
        .enumerate()
        .map(|(i, &v)| format!("{:.1},{:.1}", px(i as f64, pts.len()), py(v)))
        .collect();
    let mut s = format!(
        r##"<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}"><polyline fill="none" stroke="{BLUE}" stroke-width="1.2" points="{}"/>"##,
        line.join(" ")
    );
    if let Some((at, worse)) = change.filter(|(at, _)| *at < n) {
        let x = px(at as f64 * (pts.len() as f64 / n as f64), pts.len());
        let v = values[at];
        let _ = write!(
            s,
            r##"<circle cx="{x:.1}" cy="{:.1}" r="3" fill="{}"/>"##,
            py(v.clamp(lo, hi)),
            if worse { RED } else { GREEN }
        );
    }
    s.push_str("</svg>");
    s
}

/// Horizontal bars of each version's mean relative to the oldest version's, with a line at
/// 1.0.
pub fn by_version(title: &str, rows: &[(String, f64)]) -> String {
    let row_h = 20.0;
    let (left, right, top) = (150.0, 60.0, 26.0);
    let w = 640.0;
    let h = top + row_h * rows.len() as f64 + 20.0;
    let max = rows.iter().map(|r| r.1).fold(1.0_f64, f64::max) * 1.1;
    let px = |v: f64| left + v / max * (w - left - right);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img"><title>{t}</title><text x="4" y="14" font-size="12" font-weight="bold" fill="#222">{t}</text>"##,
        t = esc(title)
    );
    for (i, (version, rel)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let color = if *rel >= 1.0 { BLUE } else { "#dd8452" };
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#222">{}</text><rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="11" fill="#222">{:.3}</text>"##,
            left - 6.0,
            y + 13.0,
            esc(version),
            y + 3.0,
            (px(*rel) - left).max(0.0),
            row_h - 6.0,
            px(*rel) + 4.0,
            y + 13.0,
            rel
        );
    }
    let x1 = px(1.0);
    let _ = write!(
        s,
        r##"<line x1="{x1:.1}" y1="{:.1}" x2="{x1:.1}" y2="{:.1}" stroke="#333" stroke-dasharray="3 2"/><text x="{x1:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#555">1.0 = oldest</text></svg>"##,
        top - 2.0,
        h - 14.0,
        h - 3.0
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_are_bucketed_and_marks_link() {
        let v: Vec<f64> = (0..10_000).map(|i| f64::from(i % 7)).collect();
        let spark = sparkline(&v, Some((9_000, true)));
        assert_eq!(spark.matches(',').count(), SPARK_POINTS);
        assert!(spark.contains(RED));
        let dots: Vec<Dot> = (0..3)
            .map(|i| Dot {
                x: f64::from(i),
                y: 10.0,
                interval: (i == 1).then_some((9.0, 11.0)),
                tip: format!("run <{i}>"),
            })
            .collect();
        let marks = [Mark {
            x: 2.0,
            label: "−10.0 %".into(),
            href: "evidence/x.html".into(),
            worse: true,
        }];
        let svg = over_runs("QPS", &dots, &marks, false);
        assert!(svg.contains(r#"<a class="cp" href="evidence/x.html">"#));
        assert!(svg.contains("run &lt;1&gt;"));
        assert_eq!(svg.matches("class=\"ci\"").count(), 1);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }
}
