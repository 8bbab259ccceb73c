//! When a step's events start, and pgbench's transaction rules around them: the paced
//! schedule (fixed intervals, or Poisson arrivals as pgbench's `--rate`), re-running
//! transactions after serialization failures (`--max-tries`), and the latency limit
//! (`--latency-limit`: late events counted, and under a rate, slots already later than
//! the limit skipped).

use dbdelta_workload::rng::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The transaction rules of a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxnPolicy {
    /// Tries of a transaction that fails with a serialization failure or deadlock
    /// (1 = never re-run).
    pub max_tries: u32,
    /// Events slower than this are late; under a rate, slots already this late when due
    /// are skipped.
    pub latency_limit: Option<Duration>,
    /// Paced steps draw Poisson arrivals (pgbench) instead of fixed intervals (YCSB).
    pub poisson: bool,
    /// A serialization failure or deadlock not re-run (tries exhausted) is a failed
    /// transaction, counted by its code as pgbench does, instead of sysbench's ignored
    /// error that restarts with a new event.
    pub failures_count: bool,
}

impl Default for TxnPolicy {
    fn default() -> Self {
        TxnPolicy {
            max_tries: 1,
            latency_limit: None,
            poisson: false,
            failures_count: false,
        }
    }
}

impl TxnPolicy {
    /// True when anything differs from the default rules (the result then reports them).
    pub fn is_set(&self) -> bool {
        *self != TxnPolicy::default()
    }
}

/// How events are started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Schedule {
    /// Each terminal starts its next event when its last one ended.
    Closed,
    /// One slot every `every` seconds over all terminals.
    Fixed { every: f64 },
    /// Poisson arrivals with a mean gap of `every` seconds over all terminals: each slot is
    /// the previous one plus −ln(1−U)·every, as pgbench's throttle computes it.
    Poisson { every: f64 },
}

impl Schedule {
    /// The schedule of a step paced at `rate` events/s (`None` = closed loop).
    pub(crate) fn new(rate: Option<f64>, poisson: bool) -> Self {
        match rate {
            None => Schedule::Closed,
            Some(r) if poisson => Schedule::Poisson { every: 1.0 / r },
            Some(r) => Schedule::Fixed { every: 1.0 / r },
        }
    }

    /// True for paced steps.
    pub(crate) fn paced(&self) -> bool {
        *self != Schedule::Closed
    }

    /// Takes the next slot of the shared schedule: its offset from the step's start.
    /// `slots` counts fixed slots, or holds the next Poisson arrival in nanoseconds.
    pub(crate) fn take(&self, slots: &AtomicU64, rng: &mut Rng) -> Duration {
        match *self {
            Schedule::Closed => Duration::ZERO,
            Schedule::Fixed { every } => {
                let k = slots.fetch_add(1, Ordering::Relaxed);
                Duration::from_secs_f64(k as f64 * every)
            }
            Schedule::Poisson { every } => {
                let gap = -(1.0 - rng.unit()).ln() * every * 1e9 + 0.5;
                let at = slots.fetch_add(gap as u64, Ordering::Relaxed);
                Duration::from_nanos(at)
            }
        }
    }

    /// The next slot a paced terminal should run, skipping (and counting in `skipped`)
    /// slots already later than `limit` at `now`, as pgbench does under `--rate` with
    /// `--latency-limit`. `None` when the slot falls past `end`.
    pub(crate) fn next_due(
        &self,
        slots: &AtomicU64,
        rng: &mut Rng,
        t0: Instant,
        end: Instant,
        limit: Option<Duration>,
        skipped: &mut u64,
    ) -> Option<Instant> {
        loop {
            let at = t0 + self.take(slots, rng);
            if at >= end {
                return None;
            }
            match limit {
                Some(l) if Instant::now().saturating_duration_since(at) > l => *skipped += 1,
                _ => return Some(at),
            }
        }
    }
}

/// pgbench's counts of a step's transactions beyond successes and failures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TxnTally {
    /// Re-runs after serialization failures and deadlocks.
    pub retries: u64,
    /// Events that needed at least one re-run.
    pub retried: u64,
    /// Events slower than the latency limit.
    pub late: u64,
    /// Slots skipped because they were already later than the limit.
    pub skipped: u64,
}

impl TxnTally {
    /// Adds another worker's counts.
    pub(crate) fn merge(&mut self, o: &TxnTally) {
        self.retries += o.retries;
        self.retried += o.retried;
        self.late += o.late;
        self.skipped += o.skipped;
    }

    /// Counts one completed event's retries and lateness.
    pub(crate) fn completed(&mut self, retries: u32, took: Duration, limit: Option<Duration>) {
        self.retries += u64::from(retries);
        self.retried += u64::from(retries > 0);
        if limit.is_some_and(|l| took > l) {
            self.late += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_slots_have_the_mean_gap_and_a_coefficient_of_variation_near_one() {
        let s = Schedule::new(Some(1000.0), true);
        let slots = AtomicU64::new(0);
        let mut rng = Rng::new(7, 1);
        let n = 100_000;
        let mut gaps = Vec::with_capacity(n);
        let mut last = s.take(&slots, &mut rng);
        for _ in 0..n {
            let at = s.take(&slots, &mut rng);
            gaps.push((at - last).as_secs_f64());
            last = at;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 0.001).abs() < 0.00002, "mean gap {mean}");
        let cv = var.sqrt() / mean;
        assert!(
            (cv - 1.0).abs() < 0.02,
            "an exponential gap has cv 1, got {cv}"
        );
    }

    #[test]
    fn fixed_slots_are_evenly_spaced_and_late_slots_are_skipped() {
        let s = Schedule::new(Some(100.0), false);
        let slots = AtomicU64::new(0);
        let mut rng = Rng::new(1, 1);
        assert_eq!(s.take(&slots, &mut rng), Duration::ZERO);
        assert_eq!(s.take(&slots, &mut rng), Duration::from_millis(10));
        // A start 1 s in the past: the slots of the first ~990 ms are more than 10 ms late.
        let t0 = Instant::now() - Duration::from_secs(1);
        let slots = AtomicU64::new(0);
        let mut skipped = 0;
        let due = s.next_due(
            &slots,
            &mut rng,
            t0,
            t0 + Duration::from_secs(10),
            Some(Duration::from_millis(10)),
            &mut skipped,
        );
        assert!(due.is_some());
        assert!((98..=101).contains(&skipped), "skipped {skipped}");
        let mut none = 0;
        let end = t0 + Duration::from_millis(5);
        assert_eq!(s.next_due(&slots, &mut rng, t0, end, None, &mut none), None);
    }

    #[test]
    fn tally_counts_retries_and_late_events() {
        let mut t = TxnTally::default();
        t.completed(2, Duration::from_millis(5), Some(Duration::from_millis(1)));
        t.completed(0, Duration::from_micros(5), Some(Duration::from_millis(1)));
        let mut all = TxnTally::default();
        all.merge(&t);
        assert_eq!(
            all,
            TxnTally {
                retries: 2,
                retried: 1,
                late: 1,
                skipped: 0
            }
        );
    }
}
