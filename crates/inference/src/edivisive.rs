//! E-Divisive means change-point detection as Apache Otava computes it (reimplemented from
//! its documentation and the Matteson–James / Fleming et al. papers):
//!
//! 1. **Split**: windows of `window` points slide by ⌊window/2⌋ (or to the last point found);
//!    in each, the divisive detector repeatedly takes the candidate (τ, κ) maximising the
//!    energy statistic Q̂ (distance power α = 1, U-statistic normalisation) over every interval
//!    between the change points found so far, and keeps it while a two-sided Student t-test
//!    (pooled variance, population SDs as Otava passes them) of the neighbouring segments
//!    gives p ≤ the first-pass threshold (10× `max_pvalue` below 0.05). The union of all
//!    windows' points are the *weak* change points.
//! 2. **Merge**: repeatedly drop the weak point with the largest p-value while it is ≥
//!    `max_pvalue`, then the one with the smallest magnitude while it is ≤ `min_magnitude`,
//!    recomputing the statistics against the neighbouring points each time.
//!
//! Addition (Otava PR #150's request): `min_segment` also drops points that leave fewer than
//! that many points on either side; the default 1 keeps Otava's behaviour.

use crate::ttest::student_from_stats;
use std::cmp::Ordering;

/// Options of [`detect`], with Otava's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectOptions {
    /// Points per sliding window (Otava `--window`, default 50).
    pub window: usize,
    /// Significance threshold of the final points (Otava `-P`, default 0.001).
    pub max_pvalue: f64,
    /// Minimum relative magnitude max(|after/before − 1|, |before/after − 1|) (Otava `-M`,
    /// default 0).
    pub min_magnitude: f64,
    /// Minimum points in the segments on each side of a change point (default 1 = Otava).
    pub min_segment: usize,
}

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
            min_segment: 1,
        }
    }
}

/// One change point: the series index where the new segment starts, with the statistics of
/// the segments before and after it (bounded by the neighbouring change points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// First index of the segment after the change (never 0).
    pub index: usize,
    /// Energy statistic Q̂ of the candidate when it was found.
    pub qhat: f64,
    /// Two-sided p-value of the Student t-test between the two segments.
    pub pvalue: f64,
    /// Mean of the segment before.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// Population SD of the segment before.
    pub std_before: f64,
    /// Population SD of the segment after.
    pub std_after: f64,
    /// Points in the segment before.
    pub len_before: usize,
    /// Points in the segment after.
    pub len_after: usize,
}

impl ChangePoint {
    /// mean_after / mean_before − 1 (0 when the mean before is 0), as Otava's forward change.
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    /// max(|after/before − 1|, |before/after − 1|), as Otava's magnitude.
    pub fn magnitude(&self) -> f64 {
        let back = if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        };
        self.forward_change().abs().max(back.abs())
    }
}

/// Change points of `series` (Otava's `compute_change_points`). Non-finite values must have
/// been removed or filled by the caller. Returns the final points, ascending by index.
pub fn detect(series: &[f64], opts: &DetectOptions) -> Vec<ChangePoint> {
    if series.len() < 3 {
        return Vec::new();
    }
    let p = opts.max_pvalue;
    let first_pass = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, opts.window.max(2), first_pass);
    merge(weak, series, opts)
}

/// The weak change points of the split step (indices), ascending.
pub fn split(series: &[f64], window: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut qhats: Vec<f64> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let new = divisive(&series[start..end], max_pvalue);
        let last = new.last().map_or(0, |c| c.index + start);
        for c in new {
            let idx = c.index + start;
            if !found.contains(&idx) {
                found.push(idx);
                qhats.push(c.qhat);
            }
        }
        start = last.max(start + step);
    }
    let mut pairs: Vec<(usize, f64)> = found.into_iter().zip(qhats).collect();
    pairs.sort_by_key(|p| p.0);
    let idx: Vec<usize> = pairs.iter().map(|p| p.0).collect();
    pairs
        .iter()
        .enumerate()
        .map(|(k, &(i, q))| stats_at(series, &idx, k, i, q))
        .collect()
}

fn merge(mut cps: Vec<ChangePoint>, series: &[f64], opts: &DetectOptions) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        let short = cps
            .iter()
            .enumerate()
            .filter(|(_, c)| c.len_before.min(c.len_after) < opts.min_segment)
            .max_by(|a, b| a.1.pvalue.total_cmp(&b.1.pvalue))
            .map(|(k, _)| k);
        let remove = match short {
            Some(k) => k,
            None => {
                // A point between two one-point segments has no test (no degrees of freedom,
                // p = 1 by convention): it is judged after its neighbours, whose removal gives
                // it a segment to test. Removing it first lost a 10x drop at the newest run of
                // [488, 497, 480, 458, 50] when the weak pass had also split before 458.
                let has_test = |c: &ChangePoint| c.len_before + c.len_after > 2;
                let any_test = cps.iter().any(has_test);
                let (k_p, weakest) = cps
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !any_test || has_test(c))
                    .fold(None::<(usize, &ChangePoint)>, |acc, (k, c)| match acc {
                        Some((_, b))
                            if c.pvalue.partial_cmp(&b.pvalue) != Some(Ordering::Greater) =>
                        {
                            acc
                        }
                        _ => Some((k, c)),
                    })
                    .expect("non-empty");
                if weakest.pvalue < opts.max_pvalue {
                    let (k_m, smallest) = cps
                        .iter()
                        .enumerate()
                        .fold(None::<(usize, &ChangePoint)>, |acc, (k, c)| match acc {
                            Some((_, b))
                                if c.magnitude().partial_cmp(&b.magnitude())
                                    != Some(Ordering::Less) =>
                            {
                                acc
                            }
                            _ => Some((k, c)),
                        })
                        .expect("non-empty");
                    if smallest.magnitude() > opts.min_magnitude {
                        return cps;
                    }
                    k_m
                } else {
                    k_p
                }
            }
        };
        cps.remove(remove);
        // The neighbours' segments grew: recompute every point's statistics (cheap, and
        // never stale).
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        cps = cps
            .iter()
            .enumerate()
            .map(|(k, c)| stats_at(series, &idx, k, c.index, c.qhat))
            .collect();
    }
    cps
}

/// Statistics of the point `idx[k] == index` against its neighbours in `idx`.
fn stats_at(series: &[f64], idx: &[usize], k: usize, index: usize, qhat: f64) -> ChangePoint {
    let lo = if k == 0 { 0 } else { idx[k - 1] };
    let hi = idx.get(k + 1).copied().unwrap_or(series.len());
    sides(series, lo, index, hi, qhat)
}

fn sides(series: &[f64], lo: usize, index: usize, hi: usize, qhat: f64) -> ChangePoint {
    let (left, right) = (&series[lo..index], &series[index..hi]);
    let (m1, s1) = mean_pop_sd(left);
    let (m2, s2) = mean_pop_sd(right);
    let t = student_from_stats(m1, s1, left.len() as f64, m2, s2, right.len() as f64);
    ChangePoint {
        index,
        qhat,
        pvalue: t.p,
        mean_before: m1,
        mean_after: m2,
        std_before: s1,
        std_after: s2,
        len_before: left.len(),
        len_after: right.len(),
    }
}

/// Mean and population SD (ddof = 0; 0 for fewer than two points), as Otava computes them.
fn mean_pop_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (m, 0.0);
    }
    (
        m,
        (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt(),
    )
}

/// The divisive detector on one window (indices local to `w`): add the best candidate of all
/// intervals while it is significant at `max_pvalue`.
fn divisive(w: &[f64], max_pvalue: f64) -> Vec<ChangePoint> {
    let mut cps: Vec<usize> = Vec::new();
    let mut out: Vec<ChangePoint> = Vec::new();
    loop {
        let mut bounds = vec![0];
        bounds.extend(cps.iter().copied());
        bounds.push(w.len());
        let mut best: Option<(usize, f64, usize, usize)> = None;
        for b in bounds.windows(2) {
            let (s, e) = (b[0], b[1]);
            if e - s < 2 {
                continue;
            }
            let (tau, q) = candidate(w, s, e);
            if best.is_none_or(|(_, bq, _, _)| q > bq) {
                best = Some((tau, q, s, e));
            }
        }
        let Some((tau, q, s, e)) = best else {
            break;
        };
        let cp = sides(w, s, tau, e, q);
        // NaN p-values (scipy's 0/0) are never significant.
        if cp.pvalue.is_nan() || cp.pvalue > max_pvalue {
            break;
        }
        let at = cps.partition_point(|&c| c < tau);
        cps.insert(at, tau);
        out.insert(at, cp);
    }
    out
}

/// The candidate of `w[s..e]` (e − s ≥ 2): τ of the (τ, κ) with s < τ < κ ≤ e maximising
/// Q̂(w[s..τ], w[τ..κ]), with numpy's argmax order over Otava's Q matrix (rows τ, columns κ;
/// cells with κ ≤ τ hold 0, so an all-negative interval yields τ = s + 2 as in Otava).
fn candidate(w: &[f64], s: usize, e: usize) -> (usize, f64) {
    let len = e - s;
    let d = |i: usize, j: usize| (w[i] - w[j]).abs();
    let mut best: Option<(usize, f64)> = None;
    // Within-X sum for X = w[s..tau], grown with tau.
    let mut within_x = 0.0;
    for tau in s + 1..e {
        // Add the new X point w[tau-1] against the earlier X points.
        within_x += (s..tau - 1).map(|i| d(i, tau - 1)).sum::<f64>();
        let n = (tau - s) as f64;
        let mut cross = 0.0;
        let mut within_y = 0.0;
        let row = tau - s - 1; // matrix row i
        for col in 0..len - 1 {
            let kappa = s + 2 + col;
            let value = if kappa > tau {
                // Y = w[tau..kappa]: add point kappa-1.
                let y = kappa - 1;
                cross += (s..tau).map(|i| d(i, y)).sum::<f64>();
                within_y += (tau..y).map(|j| d(j, y)).sum::<f64>();
                let m = (kappa - tau) as f64;
                let mut q = 2.0 / (n + m) * cross;
                if n > 1.0 {
                    q -= 2.0 * m / ((n + m) * (n - 1.0)) * within_x;
                }
                if m > 1.0 {
                    q -= 2.0 * n / ((n + m) * (m - 1.0)) * within_y;
                }
                q
            } else {
                0.0
            };
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((row + 1 + s, value));
            }
        }
    }
    best.unwrap_or((s + 1, 0.0))
}
