//! Honest verdicts for dbdelta: is a difference real, and where did a series change?
//!
//! * [`dist`]: Student-t CDF and quantile (regularized incomplete beta), no dependencies.
//! * [`ttest`]: Welch's and Student's (pooled) two-sample t-tests from summary statistics.
//! * [`compare`]: relative QPS with a 95 % confidence interval, from independent repeated runs
//!   (log-ratio Welch interval, the strong evidence) or from one run's per-second samples
//!   with an autocorrelation correction (weaker evidence), and the verdict of a cell.
//! * [`across`]: target and base from different runs: unpaired, with a run-level random
//!   effect (the between-run variance, estimated from a configuration measured in both runs
//!   or conservatively assumed).
//! * [`fdr`]: Benjamini–Hochberg control of the false discovery rate over a report's cells.
//! * [`edivisive`]: E-Divisive means change-point detection as Apache Otava computes it
//!   (split over sliding windows with a Student t-test, then merge), plus a minimum segment
//!   length.
#![deny(missing_docs)]

pub mod across;
pub mod compare;
pub mod dist;
pub mod edivisive;
pub mod fdr;
pub mod ttest;

pub use across::{
    between_runs_assumed, between_runs_from_bridges, compare_across_runs, BetweenRuns,
    BetweenSource,
};
pub use compare::{
    coefficient_of_variation, compare_paired, compare_repeats, compare_within_run, Comparison,
    Direction, Evidence, Verdict,
};
pub use edivisive::{detect, ChangePoint, DetectOptions};
pub use fdr::benjamini_hochberg;
pub use ttest::{student_from_stats, welch_from_stats, TTest};
