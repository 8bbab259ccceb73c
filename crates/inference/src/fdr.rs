//! False discovery rate control over the cells of one report.
//!
//! A suite of 42 steps tested at the 5 % level flags about two steps by chance when nothing
//! changed. The Benjamini–Hochberg step-up procedure keeps the expected share of false
//! findings among the flagged cells at `q`, and when nothing changed at all it flags
//! anything with probability at most `q` (Benjamini & Hochberg 1995; valid for independent
//! or positively dependent tests, which steps measured in shared rounds are).

/// Which of `p_values` are discoveries at false discovery rate `q` (Benjamini–Hochberg): the
/// `k` smallest, for the largest `k` with `p_(k) ≤ k·q/m`. Non-finite p-values are never
/// discoveries.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).filter(|&i| p_values[i].is_finite()).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let cut = order
        .iter()
        .enumerate()
        .filter(|(rank, &i)| p_values[i] <= (rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank + 1)
        .max()
        .unwrap_or(0);
    let mut out = vec![false; m];
    for &i in &order[..cut] {
        out[i] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_up_keeps_every_p_below_the_largest_passing_rank() {
        // m = 5, q = 0.05: thresholds 0.01, 0.02, 0.03, 0.04, 0.05. Rank 4 (0.04 ≤ 0.04)
        // passes, so rank 2 (0.021 > 0.02 on its own) is a discovery too; rank 5 (0.9) not.
        let p = [0.04, 0.001, 0.9, 0.025, 0.021];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            vec![true, true, false, true, true]
        );
        // Without the 0.04, rank 3 (0.025 ≤ 0.03) is the largest that passes.
        let p = [0.3, 0.001, 0.9, 0.025, 0.021];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            vec![false, true, false, true, true]
        );
    }

    #[test]
    fn nothing_passes_when_no_rank_meets_its_threshold() {
        // m = 2: thresholds 0.025 and 0.05.
        assert_eq!(benjamini_hochberg(&[0.03, 0.06], 0.05), vec![false, false]);
        assert_eq!(benjamini_hochberg(&[0.03, 0.04], 0.05), vec![true, true]);
        assert_eq!(benjamini_hochberg(&[], 0.05), Vec::<bool>::new());
        assert_eq!(
            benjamini_hochberg(&[f64::NAN, 0.001], 0.05),
            vec![false, true]
        );
    }

    #[test]
    fn under_the_global_null_a_false_finding_is_rare() {
        // 42 uniform p-values, 2000 suites (a fixed LCG): any flagged cell in at most ~q of them,
        // while testing each at 5 % flags at least one in almost 9 of 10.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (mut bh_any, mut raw_any) = (0, 0);
        for _ in 0..2000 {
            let p: Vec<f64> = (0..42).map(|_| uniform()).collect();
            bh_any += usize::from(benjamini_hochberg(&p, 0.05).iter().any(|&d| d));
            raw_any += usize::from(p.iter().any(|&x| x <= 0.05));
        }
        assert!(bh_any <= 130, "{bh_any} of 2000 suites flagged something");
        assert!(raw_any >= 1700, "{raw_any}");
    }
}
