//! Inline SVG charts drawn by dbdelta itself (no scripts, no fonts beyond the browser's
//! default sans-serif): diverging relative-QPS bars around 1.0 and line charts (QPS over time,
//! throughput vs thread count). Coordinates are printed with one decimal, so the output is
//! deterministic for golden files.

use crate::markup::esc;
use crate::table::Cell;
use dbdelta_model::Group;
use std::fmt::Write;

/// Series colors (one per target, in column order; the base is the first).
pub const PALETTE: &[&str] = &[
    "#4c72b0", "#dd8452", "#55a868", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
    "#64b5cd", "#c44e52",
];

/// The color of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A "nice" tick step (1, 2, 2.5 or 5 × 10^k) giving about `target` ticks over `span`.
pub fn nice_step(span: f64, target: f64) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let f = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 2.5 {
        2.5
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    f * mag
}

/// Tick values from `lo` to `hi` (inclusive, with a small tolerance) at multiples of `step`.
pub fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-9 && out.len() < 50 {
        out.push(v);
        v += step;
    }
    out
}

/// A tick label with as many decimals as the step needs; thousands as `k`, millions as `M`.
pub fn tick_label(v: f64, step: f64) -> String {
    if step >= 1_000_000.0 || v.abs() >= 10_000_000.0 {
        format!("{}M", trim(v / 1e6, step / 1e6))
    } else if step >= 1000.0 || v.abs() >= 10_000.0 {
        format!("{}k", trim(v / 1e3, step / 1e3))
    } else {
        trim(v, step)
    }
}

fn trim(v: f64, step: f64) -> String {
    // The fewest decimals that print every multiple of the step exactly.
    let decimals = (0..6)
        .find(|d| {
            let m = step * 10f64.powi(*d);
            (m - m.round()).abs() < 1e-6
        })
        .unwrap_or(6) as usize;
    format!("{v:.decimals$}")
}

/// One step row of the bar chart: label, group, one relative cell per non-base target.
pub struct BarRow<'a> {
    /// Step label.
    pub label: &'a str,
    /// Its group (rows are drawn under group headings).
    pub group: Group,
    /// target / base per non-base target.
    pub cells: Vec<Cell>,
}

/// Horizontal bars of relative QPS, diverging from a line at 1.0 (the x-axis is fitted to the
/// data, not forced to 0), with dashed lines at the thresholds. `names` are the non-base
/// targets, drawn in colors `PALETTE[1..]`. Failed cells are written as `fail`.
pub fn relative_bars(rows: &[BarRow], names: &[&str], low: f64, high: f64) -> String {
    const W: f64 = 920.0;
    const LEFT: f64 = 250.0;
    const RIGHT: f64 = 50.0;
    const BAR: f64 = 11.0;
    const HEAD: f64 = 20.0;
    let top = 44.0;
    let finite = rows
        .iter()
        .flat_map(|r| r.cells.iter().filter_map(Cell::value))
        .filter(|v| v.is_finite());
    let (mut lo, mut hi) = finite.fold((low.min(1.0), high.max(1.0)), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    // A log scale when the ratios span more than 3x, so that 0.9 stays visible next to 30.
    let log = lo > 0.0 && hi / lo > 3.0;
    if log {
        (lo, hi) = (lo / 1.15, hi * 1.15);
    } else {
        let pad = ((hi - lo) * 0.06).max(0.02);
        lo = (lo - pad).max(0.0);
        hi += pad;
    }
    let f = |v: f64| if log { v.ln() } else { v };
    let x = |v: f64| {
        let v = v.clamp(lo, hi);
        LEFT + (f(v) - f(lo)) / (f(hi) - f(lo)) * (W - LEFT - RIGHT)
    };
    let band = BAR * names.len().max(1) as f64 + 6.0;
    let mut groups = 0;
    let mut last: Option<Group> = None;
    for r in rows {
        if last != Some(r.group) {
            groups += 1;
            last = Some(r.group);
        }
    }
    let h = top + groups as f64 * HEAD + rows.len() as f64 * band + 30.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{W:.0}" height="{h:.0}" viewBox="0 0 {W:.0} {h:.0}" role="img"><title>Relative QPS per step (target / base)</title>"#
    );
    if log {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="14" font-size="10" text-anchor="end" fill="#555">log scale</text>"##,
            W - RIGHT
        );
    }
    legend(&mut s, names, 1, LEFT, 14.0);
    // Grid and axis labels.
    let step = nice_step(hi - lo, 8.0);
    let bottom = h - 24.0;
    let grid: Vec<(f64, String)> = if log {
        let mut g: Vec<f64> = [0.1, 0.2, 0.5].into_iter().collect();
        let mut p = 1.0;
        while p <= hi && g.len() < 40 {
            g.push(p);
            p *= 2.0;
        }
        g.into_iter()
            .filter(|v| *v >= lo && *v <= hi)
            .map(|v| (v, trim(v, if v < 1.0 { 0.1 } else { 1.0 })))
            .collect()
    } else {
        ticks(lo, hi, step)
            .into_iter()
            .map(|t| (t, tick_label(t, step)))
            .collect()
    };
    for (t, label) in grid {
        let xt = x(t);
        let _ = write!(
            s,
            r##"<line x1="{xt:.1}" y1="{top:.1}" x2="{xt:.1}" y2="{bottom:.1}" stroke="#e4e4e4"/><text x="{xt:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#555">{}</text><text x="{xt:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#555">{}</text>"##,
            top - 4.0,
            label,
            bottom + 14.0,
            label
        );
    }
    for t in [low, high] {
        if t > lo && t < hi {
            let xt = x(t);
            let _ = write!(
                s,
                r##"<line x1="{xt:.1}" y1="{top:.1}" x2="{xt:.1}" y2="{bottom:.1}" stroke="#999" stroke-dasharray="4 3"/>"##
            );
        }
    }
    let mut y = top;
    let mut last: Option<Group> = None;
    for r in rows {
        if last != Some(r.group) {
            last = Some(r.group);
            let _ = write!(
                s,
                r##"<text x="4" y="{:.1}" font-size="12" font-weight="bold" fill="#222">{} queries</text>"##,
                y + 14.0,
                r.group.name()
            );
            y += HEAD;
        }
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#222">{}</text>"##,
            LEFT - 6.0,
            y + band / 2.0 + 3.0,
            esc(r.label)
        );
        for (i, c) in r.cells.iter().enumerate() {
            let yb = y + 3.0 + i as f64 * BAR;
            let name = names.get(i).copied().unwrap_or("");
            match c {
                Cell::Value { value, .. } => {
                    let (x0, x1) = (x(1.0), x(*value));
                    let (a, b) = if x1 < x0 { (x1, x0) } else { (x0, x1) };
                    let shown = crate::markup::ratio(*value, 2);
                    let _ = write!(
                        s,
                        r##"<rect x="{a:.1}" y="{yb:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} / {}: {shown}</title></rect><text x="{:.1}" y="{:.1}" font-size="9" text-anchor="start" fill="#333">{shown}</text>"##,
                        (b - a).max(1.0),
                        BAR - 2.0,
                        color(i + 1),
                        esc(name),
                        esc(r.label),
                        // Slower bars are labelled right of the 1.0 line, clear of the step names.
                        if x1 < x0 { x0 + 2.0 } else { b + 2.0 },
                        yb + BAR - 3.0,
                    );
                }
                Cell::Failed { reason } => {
                    let _ = write!(
                        s,
                        r##"<text class="fail" x="{:.1}" y="{:.1}" font-size="9" font-weight="bold" fill="#b00">✗ fail ({})<title>{}: {}</title></text>"##,
                        x(1.0) + 3.0,
                        yb + BAR - 3.0,
                        esc(name),
                        esc(name),
                        esc(reason)
                    );
                }
                Cell::NotSupported { reason } => {
                    let _ = write!(
                        s,
                        r##"<text x="{:.1}" y="{:.1}" font-size="9" fill="#888">not supported ({})<title>{}</title></text>"##,
                        x(1.0) + 3.0,
                        yb + BAR - 3.0,
                        esc(name),
                        esc(reason)
                    );
                }
                Cell::Missing => {
                    let _ = write!(
                        s,
                        r##"<text x="{:.1}" y="{:.1}" font-size="9" fill="#888">NA ({})</text>"##,
                        x(1.0) + 3.0,
                        yb + BAR - 3.0,
                        esc(name)
                    );
                }
            }
        }
        y += band;
    }
    let x1 = x(1.0);
    let _ = write!(
        s,
        r##"<line x1="{x1:.1}" y1="{top:.1}" x2="{x1:.1}" y2="{bottom:.1}" stroke="#000" stroke-width="1.5"/></svg>"##
    );
    s
}

fn legend(s: &mut String, names: &[&str], first_color: usize, x0: f64, y: f64) {
    let mut x = x0;
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{:.1}" width="12" height="10" fill="{}"/><text x="{:.1}" y="{y:.1}" font-size="11" fill="#222">{}</text>"##,
            y - 9.0,
            color(first_color + i),
            x + 16.0,
            esc(n)
        );
        x += 30.0 + 7.0 * n.chars().count() as f64;
    }
}

/// A line series: name, color index, points (x, y).
pub struct Series<'a> {
    /// Legend name.
    pub name: &'a str,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// Points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with the y-axis from 0. `x_ticks` gives explicit x tick values (e.g. the
/// thread counts); otherwise nice ticks are chosen.
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    x_ticks: Option<&[f64]>,
    (w, h): (f64, f64),
) -> String {
    let (left, right, top, bottom) = (56.0, 14.0, 40.0, 36.0);
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= 0.0 {
        y1 = 1.0;
    }
    let ystep = nice_step(y1, 5.0);
    let y1 = (y1 / ystep).ceil() * ystep;
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - y / y1 * (h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img"><title>{t}</title><text x="{left:.1}" y="13" font-size="12" font-weight="bold" fill="#222">{t}</text>"##,
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
    let xs: Vec<f64> = match x_ticks {
        Some(t) => t.to_vec(),
        None => ticks(x0, x1, nice_step(x1 - x0, 6.0)),
    };
    let xstep = nice_step(x1 - x0, 6.0).min(1.0);
    for t in xs {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#555">{}</text>"##,
            px(t),
            h - bottom + 13.0,
            tick_label(t, xstep.max(if x_ticks.is_some() { 1.0 } else { xstep }))
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{left:.1}" y1="{b:.1}" x2="{:.1}" y2="{b:.1}" stroke="#333"/><line x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{b:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#333">{}</text><text x="4" y="{:.1}" font-size="10" fill="#333">{}</text>"##,
        w - right,
        (left + w - right) / 2.0,
        h - 6.0,
        esc(x_label),
        top - 8.0,
        esc(y_label),
        b = h - bottom
    );
    // The legend has a line of its own under the title (y 19–29, above the plot at `top`):
    // beside the title, whose rendered width is only guessed, it could overlap it.
    let mut lx = left;
    for sr in series {
        let _ = write!(
            s,
            r##"<rect x="{lx:.1}" y="22" width="12" height="3" fill="{}"/><text x="{:.1}" y="27" font-size="10" fill="#222">{}</text>"##,
            color(sr.color),
            lx + 15.0,
            esc(sr.name)
        );
        lx += 26.0 + 6.5 * sr.name.chars().count() as f64;
    }
    for sr in series {
        let pts: Vec<String> = sr
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="{}" stroke-width="1.8" points="{}"><title>{}</title></polyline>"##,
            color(sr.color),
            pts.join(" "),
            esc(sr.name)
        );
        if sr.points.len() <= 12 {
            for p in &pts {
                if let Some((cx, cy)) = p.split_once(',') {
                    let _ = write!(
                        s,
                        r##"<circle cx="{cx}" cy="{cy}" r="2.5" fill="{}"/>"##,
                        color(sr.color)
                    );
                }
            }
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        assert_eq!(nice_step(1.0, 5.0), 0.2);
        assert_eq!(nice_step(0.4, 8.0), 0.05);
        assert_eq!(ticks(0.9, 1.1, 0.1).len(), 3);
        assert_eq!(tick_label(0.95, 0.05), "0.95");
        assert_eq!(tick_label(25_000.0, 5000.0), "25k");
        assert_eq!(tick_label(2.5, 0.5), "2.5");
    }

    #[test]
    fn bars_mark_failures_and_the_one_line() {
        let rows = [BarRow {
            label: "a<b",
            group: Group::Point,
            cells: vec![
                Cell::Value {
                    value: 0.9,
                    interrupted: false,
                },
                Cell::Failed {
                    reason: "boom".into(),
                },
            ],
        }];
        let svg = relative_bars(&rows, &["x", "y"], 0.95, 1.05);
        assert!(svg.contains("a&lt;b"));
        assert!(svg.contains("✗ fail"));
        assert!(svg.contains("stroke-width=\"1.5\""));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }
}
