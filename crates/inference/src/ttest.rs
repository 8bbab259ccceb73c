//! Two-sample t-tests from summary statistics (mean, standard deviation, n).

use crate::dist::t_two_sided_p;

/// The outcome of a two-sample t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// The t statistic (mean₂ − mean₁ over its standard error).
    pub t: f64,
    /// Degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's unequal-variance t-test of sample 2 vs sample 1. `sd*` are sample standard
/// deviations (n − 1); `n*` may be effective sample sizes. Needs n ≥ 2 on both sides;
/// otherwise p = 1. Two samples without variance give t = ±∞, p = 0 when the means differ.
pub fn welch_from_stats(m1: f64, sd1: f64, n1: f64, m2: f64, sd2: f64, n2: f64) -> TTest {
    if n1 < 2.0 || n2 < 2.0 {
        return TTest {
            t: 0.0,
            df: 0.0,
            p: 1.0,
        };
    }
    let (v1, v2) = (sd1 * sd1 / n1, sd2 * sd2 / n2);
    let se2 = v1 + v2;
    if se2 <= 0.0 {
        return no_spread(m1, m2, n1 + n2 - 2.0);
    }
    let t = (m2 - m1) / se2.sqrt();
    let df = se2 * se2 / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
    TTest {
        t,
        df,
        p: t_two_sided_p(t, df),
    }
}

/// Student's pooled-variance t-test of sample 2 vs sample 1, like
/// `scipy.stats.ttest_ind_from_stats(..., equal_var=True)`: `sd*` are used as given (Otava
/// passes population SDs, ddof = 0). df = n₁ + n₂ − 2; with df ≤ 0 the p-value is 1.
pub fn student_from_stats(m1: f64, sd1: f64, n1: f64, m2: f64, sd2: f64, n2: f64) -> TTest {
    let df = n1 + n2 - 2.0;
    if df <= 0.0 {
        return TTest { t: 0.0, df, p: 1.0 };
    }
    let pooled = ((n1 - 1.0) * sd1 * sd1 + (n2 - 1.0) * sd2 * sd2) / df;
    let se2 = pooled * (1.0 / n1 + 1.0 / n2);
    if se2 <= 0.0 {
        return no_spread(m1, m2, df);
    }
    let t = (m2 - m1) / se2.sqrt();
    TTest {
        t,
        df,
        p: t_two_sided_p(t, df),
    }
}

/// Both samples without spread: scipy gives t = ±inf (p = 0) for different means and nan
/// (p = nan, never significant) for equal ones; here equal means are t = 0, p = 1.
fn no_spread(m1: f64, m2: f64, df: f64) -> TTest {
    let same = m1 == m2;
    TTest {
        t: if same {
            0.0
        } else {
            f64::INFINITY.copysign(m2 - m1)
        },
        df,
        p: if same { 1.0 } else { 0.0 },
    }
}
