//! Comparisons across runs: target and base measured in different `dbdelta run`s.
//!
//! Within one run the targets take turns in the same rounds, so a per-round ratio cancels
//! whatever the host did during that round. Two runs share nothing: each run met its own
//! host state (page cache, CPU frequency, neighbours, file system layout of its fresh load),
//! and that state shifts *every* round of the run alike. The model of a step's log QPS is
//!
//! ```text
//! log y[r, k] = μ(config) + u[r] + e[r, k]      u[r] ~ N(0, σ²_run), e ~ N(0, σ²_round)
//! ```
//!
//! with a run-level random effect `u[r]` per run `r` and round noise `e[r, k]`. The difference
//! of two runs' mean log QPS then has the variance
//!
//! ```text
//! Var(d) = s²_base / n_base + s²_target / n_target + V,      V = Var(u[B] − u[A]) = 2σ²_run
//! ```
//!
//! Welch's test on the per-round values alone sees only the first two terms: with 10 rounds
//! of small round noise it is very sure of a difference that is just the two runs' host
//! states (the report that motivated this flagged two identical `wal` configurations of two
//! runs at 0.83 [0.73, 0.95]). [`compare_across_runs`] adds `V`.
//!
//! `V` is not visible in the rounds of either run. It is estimated from a *bridge*: the base's
//! configuration measured in both runs ([`between_runs_from_bridges`]); the bridge's
//! per-step log ratios d_s are pure run effect plus round noise, so
//! E[d_s² − se_s²] = V, averaged over the steps of a group (point, range and write steps
//! differ in how much they move between runs). Without a bridge `V` cannot be told apart
//! from a real difference, and [`between_runs_assumed`] takes a conservative value: an
//! assumed run-to-run standard deviation of [`ASSUMED_BETWEEN_RUN_SD`] of a ratio, or the
//! robust spread of the cell's own ratios over the group's steps when that is larger (a real
//! effect that differs between steps widens it too, which only makes the test more
//! conservative).

use crate::compare::{
    mean_sd, p_value, ratio_interval, verdict_of, Comparison, Direction, Evidence,
};

/// The standard deviation of log(run-level ratio) assumed when no configuration was measured
/// in both runs: identical configurations measured in two runs of a 2-core VM differed by up
/// to ~17 % on write steps (update-index 0.83), so 15 % (an interval of about ±30 %) is the
/// honest default; a smaller difference cannot be claimed from two runs without a bridge.
pub const ASSUMED_BETWEEN_RUN_SD: f64 = 0.15;

/// The smallest between-run standard deviation (of log ratio) an estimate from a bridge may
/// give: a handful of steps can estimate 0 by chance, and no two runs are closer than ~2 %.
pub const MIN_BETWEEN_RUN_SD: f64 = 0.02;

/// Where the between-run variance of a cross-run comparison comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BetweenSource {
    /// Estimated from the base's configuration measured in both runs, over `steps` steps.
    Bridge {
        /// Steps whose bridge ratios the estimate averages.
        steps: usize,
    },
    /// No bridge: [`ASSUMED_BETWEEN_RUN_SD`], or the spread of the cell's own ratios over the
    /// group's steps when larger.
    Assumed,
}

/// The variance `V` of the log of a run-level ratio between two runs, with its degrees of
/// freedom (infinite for an assumed value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BetweenRuns {
    /// V = Var(u[B] − u[A]) on the log scale.
    pub variance: f64,
    /// Degrees of freedom of the estimate (for Welch–Satterthwaite); `f64::INFINITY` when
    /// assumed.
    pub df: f64,
    /// Where it comes from.
    pub source: BetweenSource,
}

impl BetweenRuns {
    /// The standard deviation of a run-level ratio, √V (0.10 = runs differ by about 10 %).
    pub fn sd(&self) -> f64 {
        self.variance.sqrt()
    }
}

/// Mean log and its squared standard error of positive values; `None` with fewer than two
/// values or a non-positive one.
fn log_mean_var(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 || xs.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = xs.iter().map(|v| v.ln()).collect();
    let (m, sd) = mean_sd(&logs);
    Some((m, sd * sd / logs.len() as f64))
}

/// (d, se²) of the log ratio of the mean logs, target vs base.
fn log_ratio(base: &[f64], target: &[f64]) -> Option<(f64, f64)> {
    let (mb, vb) = log_mean_var(base)?;
    let (mt, vt) = log_mean_var(target)?;
    Some((mt - mb, vb + vt))
}

/// `V` from bridges: per step, the base's per-round values in its own run and its twin's
/// (the same configuration) in the other run. E[d_s² − se_s²] = V for every step, so the
/// mean over the steps estimates V with about one degree of freedom per step; it is kept at
/// or above [`MIN_BETWEEN_RUN_SD`]². `None` when no step has two rounds on both sides.
pub fn between_runs_from_bridges(bridges: &[(&[f64], &[f64])]) -> Option<BetweenRuns> {
    let excess: Vec<f64> = bridges
        .iter()
        .filter_map(|(b, t)| log_ratio(b, t))
        .map(|(d, se2)| d * d - se2)
        .collect();
    if excess.is_empty() {
        return None;
    }
    let v = excess.iter().sum::<f64>() / excess.len() as f64;
    Some(BetweenRuns {
        variance: v.max(MIN_BETWEEN_RUN_SD * MIN_BETWEEN_RUN_SD),
        df: excess.len() as f64,
        source: BetweenSource::Bridge {
            steps: excess.len(),
        },
    })
}

/// `V` without a bridge, from the cell's own (base, target) values of every step of a group:
/// the larger of [`ASSUMED_BETWEEN_RUN_SD`]² and the robust spread of the steps' log ratios
/// (1.4826 × their median absolute deviation, squared, less the median round-noise variance),
/// which under no difference is the run effect of those steps. The assumed value counts as
/// known (infinite degrees of freedom); the spread has as many as the steps − 1.
pub fn between_runs_assumed(cells: &[(&[f64], &[f64])]) -> BetweenRuns {
    let assumed = BetweenRuns {
        variance: ASSUMED_BETWEEN_RUN_SD * ASSUMED_BETWEEN_RUN_SD,
        df: f64::INFINITY,
        source: BetweenSource::Assumed,
    };
    let pairs: Vec<(f64, f64)> = cells.iter().filter_map(|(b, t)| log_ratio(b, t)).collect();
    if pairs.len() < 3 {
        return assumed;
    }
    let mut d: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let mut se2: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let med = median(&mut d);
    let mut dev: Vec<f64> = d.iter().map(|x| (x - med).abs()).collect();
    let spread = 1.4826 * median(&mut dev);
    let v = spread * spread - median(&mut se2);
    if v > assumed.variance {
        BetweenRuns {
            variance: v,
            df: (pairs.len() - 1) as f64,
            source: BetweenSource::Assumed,
        }
    } else {
        assumed
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Target vs base measured in different runs (per-round values, positive): the ratio of
/// geometric means with the interval exp(d ± t·√(s²_b/n_b + s²_t/n_t + V)), unpaired (no round
/// of one run has a partner in the other), with Welch–Satterthwaite degrees of freedom over
/// the three variance terms (V with `between.df`). Needs two values per side; `None`
/// otherwise or on non-positive values.
pub fn compare_across_runs(
    base: &[f64],
    target: &[f64],
    between: BetweenRuns,
    level: f64,
    direction: Direction,
) -> Option<Comparison> {
    let (mb, vb) = log_mean_var(base)?;
    let (mt, vt) = log_mean_var(target)?;
    let d = mt - mb;
    let v = between.variance.max(0.0);
    let total = vb + vt + v;
    let (nb, nt) = (base.len() as f64, target.len() as f64);
    // Welch–Satterthwaite: each term's square over its degrees of freedom; an assumed V
    // (df = ∞) adds nothing.
    let denom = vb * vb / (nb - 1.0) + vt * vt / (nt - 1.0) + v * v / between.df;
    let df = if denom > 0.0 {
        total * total / denom
    } else {
        f64::INFINITY
    };
    // The t quantile of a huge df is the normal one; keep it finite for the CDF.
    let df = df.min(1e6);
    let se = total.sqrt();
    let p = p_value(d, se, df);
    let (low, high) = ratio_interval(d, se, df, level);
    Some(Comparison {
        ratio: d.exp(),
        low,
        high,
        p,
        level,
        evidence: Evidence::AcrossRuns {
            base: base.len(),
            target: target.len(),
        },
        verdict: verdict_of(low, high, direction),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed LCG with Box–Muller normals: deterministic, so the tests cannot flake.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// Ten rounds of one run: a run effect `u` shared by all and 2 % round noise.
    fn rounds(rng: &mut Rng, level: f64, u: f64) -> Vec<f64> {
        (0..10)
            .map(|_| level * (u + 0.02 * rng.normal()).exp())
            .collect()
    }

    #[test]
    fn a_run_effect_is_not_a_difference() {
        // Two runs of the same configuration, 8 % run-to-run SD per run: Welch on the rounds
        // alone calls most steps different; with V from a bridge, about 5 % at most.
        let mut rng = Rng(7);
        let (mut welch, mut honest) = (0, 0);
        let steps = 400;
        let mut bridge: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for _ in 0..steps {
            let (ua, ub) = (0.08 * rng.normal(), 0.08 * rng.normal());
            bridge.push((rounds(&mut rng, 1000.0, ua), rounds(&mut rng, 1000.0, ub)));
        }
        let refs: Vec<(&[f64], &[f64])> = bridge
            .iter()
            .map(|(a, b)| (a.as_slice(), b.as_slice()))
            .collect();
        let between = between_runs_from_bridges(&refs).expect("bridge");
        // V = 2 · 0.08² = 0.0128.
        assert!((0.009..0.017).contains(&between.variance), "{between:?}");
        for (a, b) in &bridge {
            let w = crate::compare_repeats(a, b, 0.95, Direction::HigherIsBetter).expect("w");
            welch += usize::from(w.verdict != crate::Verdict::NoChange);
            let c = compare_across_runs(a, b, between, 0.95, Direction::HigherIsBetter).expect("c");
            assert_eq!(
                c.evidence,
                Evidence::AcrossRuns {
                    base: 10,
                    target: 10
                }
            );
            honest += usize::from(c.verdict != crate::Verdict::NoChange);
        }
        assert!(welch > steps / 2, "{welch}");
        assert!(honest <= steps * 8 / 100, "{honest}");
    }

    #[test]
    fn a_large_difference_survives_the_run_effect() {
        let mut rng = Rng(11);
        let a = rounds(&mut rng, 1000.0, 0.05);
        let b = rounds(&mut rng, 500.0, -0.05);
        let assumed = between_runs_assumed(&[]);
        assert_eq!(assumed.source, BetweenSource::Assumed);
        assert!((assumed.sd() - ASSUMED_BETWEEN_RUN_SD).abs() < 1e-12);
        let c = compare_across_runs(&a, &b, assumed, 0.95, Direction::HigherIsBetter).expect("c");
        assert_eq!(c.verdict, crate::Verdict::Regression, "{c:?}");
        assert!(c.low < 0.5 && 0.5 < c.high, "{c:?}");
        // 15 % apart is within an assumed 15 % run-to-run SD.
        let b = rounds(&mut rng, 850.0, 0.0);
        let c = compare_across_runs(&a, &b, assumed, 0.95, Direction::HigherIsBetter).expect("c");
        assert_eq!(c.verdict, crate::Verdict::NoChange, "{c:?}");
    }

    #[test]
    fn a_wide_spread_of_the_cells_own_ratios_widens_the_assumption() {
        let mut rng = Rng(3);
        let cells: Vec<(Vec<f64>, Vec<f64>)> = (0..20)
            .map(|_| {
                let u = 0.3 * rng.normal();
                (rounds(&mut rng, 1000.0, 0.0), rounds(&mut rng, 1000.0, u))
            })
            .collect();
        let refs: Vec<(&[f64], &[f64])> = cells
            .iter()
            .map(|(a, b)| (a.as_slice(), b.as_slice()))
            .collect();
        let v = between_runs_assumed(&refs);
        assert!(v.sd() > 0.2 && v.df == 19.0, "{v:?}");
        assert!(between_runs_from_bridges(&[]).is_none());
    }
}
