//! Relative values with a confidence interval and the verdict of one report cell.
//!
//! With repeats measured in rounds (A B, B A, … interleaved steps, or A B, A B, … interleaved runs), the
//! interval of target/base comes from the paired per-round ratios, so drift of the host that
//! hits both sides of a round cancels. Unpaired repeats get a Welch test on the logarithms of
//! the per-repeat values. With one run per target, the per-second samples give a within-run
//! interval whose sample size comes from batch means; it ignores run-to-run noise and is
//! labelled as weaker evidence.

use crate::dist::{t_quantile, t_two_sided_p};
use crate::ttest::welch_from_stats;

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Larger is better (QPS, rows/s).
    HigherIsBetter,
    /// Smaller is better (latency, CPU per operation).
    LowerIsBetter,
}

/// What a confidence interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Independent repeated runs: `base` and `target` runs per side.
    Repeats {
        /// Runs of the base.
        base: usize,
        /// Runs of the target.
        target: usize,
    },
    /// Rounds that measured base and target minutes apart at most (A B, B A, …): the
    /// interval comes from the per-round ratios.
    Paired {
        /// Rounds (pairs).
        pairs: usize,
    },
    /// Per-second samples of a single run each (autocorrelation-corrected); weaker evidence:
    /// run-to-run noise is not in the interval.
    WithinRun,
    /// Target and base measured in different runs: unpaired per-round values (`base` and
    /// `target` of them), with the between-run variance in the interval (see
    /// [`crate::across`]).
    AcrossRuns {
        /// Rounds of the base.
        base: usize,
        /// Rounds of the target.
        target: usize,
    },
}

/// The verdict of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significantly better than the base.
    Improvement,
    /// Significantly worse than the base.
    Regression,
    /// The interval includes no change: within the noise of this host and step.
    NoChange,
}

impl Verdict {
    /// Short name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improvement => "improvement",
            Verdict::Regression => "regression",
            Verdict::NoChange => "no significant change",
        }
    }
}

/// Target relative to base with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Point estimate of target / base (ratio of geometric means for repeats, of means within
    /// a run).
    pub ratio: f64,
    /// Lower bound of the interval of the ratio.
    pub low: f64,
    /// Upper bound of the interval of the ratio.
    pub high: f64,
    /// Two-sided p-value of "no difference".
    pub p: f64,
    /// Confidence level of the interval (0.95).
    pub level: f64,
    /// What the interval rests on.
    pub evidence: Evidence,
    /// The verdict: significant only when the whole interval is beyond 1.
    pub verdict: Verdict,
}

impl Comparison {
    /// Width of the interval relative to the ratio, (high − low) / ratio.
    pub fn relative_width(&self) -> f64 {
        (self.high - self.low) / self.ratio
    }

    /// The change in percent, (ratio − 1)·100.
    pub fn change_percent(&self) -> f64 {
        (self.ratio - 1.0) * 100.0
    }
}

pub(crate) fn verdict_of(low: f64, high: f64, direction: Direction) -> Verdict {
    let (better, worse) = if low > 1.0 {
        (true, false)
    } else if high < 1.0 {
        (false, true)
    } else {
        (false, false)
    };
    match (better, worse, direction) {
        (true, _, Direction::HigherIsBetter) | (_, true, Direction::LowerIsBetter) => {
            Verdict::Improvement
        }
        (true, _, Direction::LowerIsBetter) | (_, true, Direction::HigherIsBetter) => {
            Verdict::Regression
        }
        _ => Verdict::NoChange,
    }
}

/// Mean and sample standard deviation (n − 1).
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Coefficient of variation (sample SD / mean) of positive values; `None` with fewer than two
/// values or a non-positive mean.
pub fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let (m, sd) = mean_sd(xs);
    (m > 0.0).then_some(sd / m)
}

/// Two-sided p-value of a difference `d` of logs with standard error `se`: Student t with
/// `df` degrees of freedom; without spread, 1 for no difference and 0 for any.
pub(crate) fn p_value(d: f64, se: f64, df: f64) -> f64 {
    if se > 0.0 {
        t_two_sided_p(d / se, df)
    } else if d == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The interval of a ratio from the difference `d` of logs, its standard error and the
/// Welch degrees of freedom: exp(d ± t·se); a point when there is no spread.
pub(crate) fn ratio_interval(d: f64, se: f64, df: f64, level: f64) -> (f64, f64) {
    if se > 0.0 {
        let q = t_quantile(0.5 + level / 2.0, df);
        ((d - q * se).exp(), (d + q * se).exp())
    } else {
        (d.exp(), d.exp())
    }
}

/// Target vs base from independent repeated runs (values must be positive): Welch's t-test on
/// log values, the interval exp(Δ ± t·se) of the ratio of geometric means. Needs at least two
/// runs per side; `None` otherwise or on non-positive values.
pub fn compare_repeats(
    base: &[f64],
    target: &[f64],
    level: f64,
    direction: Direction,
) -> Option<Comparison> {
    if base.len() < 2
        || target.len() < 2
        || base.iter().chain(target).any(|v| v.is_nan() || *v <= 0.0)
    {
        return None;
    }
    let lb: Vec<f64> = base.iter().map(|v| v.ln()).collect();
    let lt: Vec<f64> = target.iter().map(|v| v.ln()).collect();
    let (mb, sb) = mean_sd(&lb);
    let (mt, st) = mean_sd(&lt);
    let (nb, nt) = (lb.len() as f64, lt.len() as f64);
    let test = welch_from_stats(mb, sb, nb, mt, st, nt);
    let d = mt - mb;
    let se = (sb * sb / nb + st * st / nt).sqrt();
    let (low, high) = ratio_interval(d, se, test.df, level);
    Some(Comparison {
        ratio: d.exp(),
        low,
        high,
        p: test.p,
        level,
        evidence: Evidence::Repeats {
            base: base.len(),
            target: target.len(),
        },
        verdict: verdict_of(low, high, direction),
    })
}

/// Fewest batches a level of [`effective_n`] may have: fewer give no usable variance.
const MIN_BATCHES: usize = 4;

/// Target vs base from paired rounds (`pairs[k]` = (base, target) of round k; values must be
/// positive): a one-sample t-test on the per-round log ratios, the interval exp(d̄ ± t·s/√n)
/// of the geometric mean ratio. Needs at least two rounds; `None` otherwise.
pub fn compare_paired(
    pairs: &[(f64, f64)],
    level: f64,
    direction: Direction,
) -> Option<Comparison> {
    if pairs.len() < 2
        || pairs
            .iter()
            .any(|&(b, t)| b.is_nan() || t.is_nan() || b <= 0.0 || t <= 0.0)
    {
        return None;
    }
    let d: Vec<f64> = pairs.iter().map(|&(b, t)| t.ln() - b.ln()).collect();
    let (m, sd) = mean_sd(&d);
    let n = d.len() as f64;
    let se = sd / n.sqrt();
    let df = n - 1.0;
    let p = p_value(m, se, df);
    let (low, high) = ratio_interval(m, se, df, level);
    Some(Comparison {
        ratio: m.exp(),
        low,
        high,
        p,
        level,
        evidence: Evidence::Paired { pairs: pairs.len() },
        verdict: verdict_of(low, high, direction),
    })
}

/// Effective sample size of a series by hierarchical batch means (latte's estimator,
/// its src/stats/timeseries.rs): level k averages pairs of level k−1 (batch length 2^k); the series'
/// inefficiency τ is the largest batch_len·Var(batch means)/Var(samples) over the levels,
/// which are taken while τ_level > 0.2·batch_len (the batches are not yet much longer than
/// the correlation time). ESS = n/τ, never above n and never below 2 (for n ≥ 2). Unlike a
/// lag-1 autocorrelation, this sees the long cycles of per-second QPS (checkpoints, purge).
pub fn effective_n(xs: &[f64]) -> f64 {
    batch_spread(xs).0
}

/// [`effective_n`] and the degrees of freedom of the variance behind it: the number of
/// batches − 1 at the level that set τ (n − 1 when no level showed correlation), so that a
/// variance from four batch means gets the wide t quantile it deserves.
fn batch_spread(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    let all = (n as f64, n as f64 - 1.0);
    if n < 2 * MIN_BATCHES {
        return all;
    }
    let (_, sd) = mean_sd(xs);
    let var = sd * sd;
    if var <= 0.0 {
        return all;
    }
    let (mut tau, mut df): (f64, f64) = (1.0, n as f64 - 1.0);
    let mut level: Vec<f64> = xs.to_vec();
    let mut len = 1usize;
    while level.len() >= 2 * MIN_BATCHES {
        level = level.chunks_exact(2).map(|p| (p[0] + p[1]) / 2.0).collect();
        len *= 2;
        let (_, sb) = mean_sd(&level);
        let t = len as f64 * sb * sb / var;
        if t > tau {
            (tau, df) = (t, level.len() as f64 - 1.0);
        }
        if t <= 0.2 * len as f64 {
            break;
        }
    }
    ((n as f64 / tau).clamp(2.0, n as f64), df)
}

/// Target vs base from one run each: the per-second samples (e.g. QPS per interval). The
/// standard error of each mean uses the autocorrelation-corrected effective n; the ratio's
/// interval uses the delta method on logs with Welch–Satterthwaite degrees of freedom.
/// `None` with fewer than three samples on a side or a non-positive mean.
pub fn compare_within_run(
    base: &[f64],
    target: &[f64],
    level: f64,
    direction: Direction,
) -> Option<Comparison> {
    if base.len() < 3 || target.len() < 3 {
        return None;
    }
    let (mb, sb) = mean_sd(base);
    let (mt, st) = mean_sd(target);
    if !(mb > 0.0 && mt > 0.0) {
        return None;
    }
    let ((nb, dfb), (nt, dft)) = (batch_spread(base), batch_spread(target));
    // Relative standard errors: the SDs of log(mean) by the delta method.
    let (rb, rt) = (sb / mb, st / mt);
    let (vb, vt) = (rb * rb / nb, rt * rt / nt);
    let d = mt.ln() - mb.ln();
    let se = (vb + vt).sqrt();
    // Welch–Satterthwaite with each side's batch degrees of freedom.
    let df = if se > 0.0 {
        (vb + vt).powi(2) / (vb * vb / dfb + vt * vt / dft)
    } else {
        dfb + dft
    };
    let p = p_value(d, se, df);
    let (low, high) = ratio_interval(d, se, df, level);
    Some(Comparison {
        ratio: mt / mb,
        low,
        high,
        p,
        level,
        evidence: Evidence::WithinRun,
        verdict: verdict_of(low, high, direction),
    })
}
