//! When a step's events start, and pgbench's transaction rules around them: the paced
//! schedule (fixed intervals, or Poisson arrivals as pgbench's `--rate`), re-running
//! transactions after serialization failures (`--max-tries`), and the latency limit
//! (`--latency-limit`: late events counted, and under a rate, slots already later than
//! the limit skipped). A paced step runs every slot intended in its window: the slots still
//! due at its end are drained after it, until the statement timeout, and the backlogs at
//! both edges of the window are counted.

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

    /// Claims every slot still untaken before `end` (the drain ran out of time): returns how
    /// many were intended in the warm-up and how many in the window, and leaves the shared
    /// schedule past `end`, so every terminal stops taking slots. Fixed slots are counted
    /// exactly; Poisson arrivals are not drawn, their expected number is returned.
    pub(crate) fn abandon(&self, slots: &AtomicU64, w: &Window) -> (u64, u64) {
        let (warmup, window) = (w.start - w.t0, w.end - w.t0);
        match *self {
            Schedule::Closed => (0, 0),
            Schedule::Fixed { every } => {
                let (k_start, k_end) = (first_slot_at(every, warmup), first_slot_at(every, window));
                let next = slots.fetch_max(k_end, Ordering::Relaxed);
                (
                    k_start.saturating_sub(next),
                    k_end.saturating_sub(next.max(k_start)),
                )
            }
            Schedule::Poisson { every } => {
                let ns = |d: Duration| d.as_nanos().min(u128::from(u64::MAX)) as u64;
                let (start, end) = (ns(warmup), ns(window));
                let next = slots.fetch_max(end, Ordering::Relaxed);
                let expected =
                    |a: u64, b: u64| (b.saturating_sub(a) as f64 / (every * 1e9)).round() as u64;
                (expected(next, start), expected(next.max(start), end))
            }
        }
    }
}

/// The first fixed slot (of one every `every` s) whose offset, as [`Schedule::take`]
/// computes it, is at or after `d`.
fn first_slot_at(every: f64, d: Duration) -> u64 {
    let at = |k: u64| Duration::from_secs_f64(k as f64 * every);
    let mut k = (d.as_secs_f64() / every).ceil() as u64;
    while k > 0 && at(k - 1) >= d {
        k -= 1;
    }
    while at(k) < d {
        k += 1;
    }
    k
}

/// The instants a step runs by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Window {
    /// The step's start: slot offsets count from here.
    pub t0: Instant,
    /// The measured window begins (the warm-up ends).
    pub start: Instant,
    /// The measured window ends: slots from here on are not started.
    pub end: Instant,
    /// Slots intended before `end` that have not started by now are not executed: the
    /// drain is bounded by the statement timeout.
    pub drain_until: Instant,
}

impl Window {
    /// The window of a step that started at `t0`: `warmup`, then `window`, then at most
    /// `drain` for the events intended in the window that are still due (the statement
    /// timeout).
    pub(crate) fn new(t0: Instant, warmup: Duration, window: Duration, drain: Duration) -> Self {
        let start = t0 + warmup;
        let end = start + window;
        Window {
            t0,
            start,
            end,
            drain_until: end + drain,
        }
    }

    /// What an event intended at `intended` that started at `start` counts in. For a closed
    /// loop the two instants are one and both answers agree.
    pub(crate) fn counts(&self, intended: Instant, start: Instant) -> Counts {
        Counts {
            rate: start >= self.start && start < self.end,
            latency: intended >= self.start && intended < self.end,
        }
    }
}

/// Which of a step's figures an event counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// It started inside the window: the rates (events, statements, the per-second series),
    /// which are what the server did in the window, whatever the event's intended time.
    pub rate: bool,
    /// It was intended inside the window: its latency (from the intended start), also when
    /// it started after the window (a paced step's drain).
    pub latency: bool,
}

impl Counts {
    /// True when the event counts anywhere (its errors are then counted too).
    pub(crate) fn any(self) -> bool {
        self.rate || self.latency
    }
}

/// What a paced terminal's backlog did around the window's edges.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PaceTally {
    /// Slots intended in the window (taken, skipped or abandoned).
    pub intended: u64,
    /// Warm-up slots that started only after the window began, or never.
    pub warmup_backlog: u64,
    /// Window slots that started only after the window ended, or never.
    pub backlog: u64,
    /// Window slots that completed after starting past the window's end (counted by the
    /// terminal, which knows the outcome).
    pub drained: u64,
    /// Window slots never started: the drain ran out of time.
    pub not_executed: u64,
    /// How long after the window's end the last event ended.
    pub drain: Duration,
}

impl PaceTally {
    /// Adds another terminal's counts.
    pub(crate) fn merge(&mut self, o: &PaceTally) {
        self.intended += o.intended;
        self.warmup_backlog += o.warmup_backlog;
        self.backlog += o.backlog;
        self.drained += o.drained;
        self.not_executed += o.not_executed;
        self.drain = self.drain.max(o.drain);
    }
}

/// One terminal's (or event loop's) side of a paced schedule: takes slots, decides whether
/// a due slot still starts, and counts the backlogs at the window's edges.
#[derive(Debug)]
pub(crate) struct Pacer {
    schedule: Schedule,
    window: Window,
    limit: Option<Duration>,
    /// The counts so far.
    pub tally: PaceTally,
}

impl Pacer {
    /// A pacer for `schedule` over `window`, skipping slots later than `limit` as pgbench.
    pub(crate) fn new(schedule: Schedule, window: Window, limit: Option<Duration>) -> Self {
        Pacer {
            schedule,
            window,
            limit,
            tally: PaceTally::default(),
        }
    }

    /// Takes the next slot to run, skipping (and counting in `skipped`) slots already later
    /// than the latency limit, as pgbench does under `--rate` with `--latency-limit`.
    /// `None` once the slots reach the window's end: events intended after it never start.
    pub(crate) fn next(
        &mut self,
        slots: &AtomicU64,
        rng: &mut Rng,
        skipped: &mut u64,
    ) -> Option<Instant> {
        let w = self.window;
        loop {
            let at = w.t0 + self.schedule.take(slots, rng);
            if at >= w.end {
                return None;
            }
            if at >= w.start {
                self.tally.intended += 1;
            }
            match self.limit {
                Some(l) if Instant::now().saturating_duration_since(at) > l => *skipped += 1,
                _ => return Some(at),
            }
        }
    }

    /// The slot intended at `at` is about to start at `now`. Counts it in the warm-up's or
    /// the window's backlog when it starts past that edge. `false` when the drain is out of
    /// time: the slot is not started, and it and every slot left before the window's end
    /// are counted as not executed.
    pub(crate) fn start(&mut self, at: Instant, now: Instant, slots: &AtomicU64) -> bool {
        let w = self.window;
        let t = &mut self.tally;
        if now >= w.drain_until {
            if at < w.start {
                t.warmup_backlog += 1;
            } else {
                t.backlog += 1;
                t.not_executed += 1;
            }
            let (warmup, window) = self.schedule.abandon(slots, &w);
            t.warmup_backlog += warmup;
            t.intended += window;
            t.backlog += window;
            t.not_executed += window;
            return false;
        }
        if at < w.start && now >= w.start {
            t.warmup_backlog += 1;
        } else if at >= w.start && now >= w.end {
            t.backlog += 1;
        }
        true
    }

    /// An event (of any outcome) ended at `done`: the drain lasts at least until then.
    pub(crate) fn ended(&mut self, done: Instant) {
        let past = done.saturating_duration_since(self.window.end);
        self.tally.drain = self.tally.drain.max(past);
    }

    /// What an event intended at `intended` that started at `start` counts in.
    pub(crate) fn counts(&self, intended: Instant, start: Instant) -> Counts {
        self.window.counts(intended, start)
    }

    /// Until when a paced terminal may still work (the drain's limit).
    pub(crate) fn works_until(&self) -> Instant {
        self.window.drain_until
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

    /// A window of `warmup` then `window` seconds that started `ago` in the past, with a
    /// drain of `drain` seconds.
    fn window(ago: f64, warmup: f64, window: f64, drain: f64) -> Window {
        let t0 = Instant::now() - Duration::from_secs_f64(ago);
        let start = t0 + Duration::from_secs_f64(warmup);
        let end = start + Duration::from_secs_f64(window);
        Window {
            t0,
            start,
            end,
            drain_until: end + Duration::from_secs_f64(drain),
        }
    }

    #[test]
    fn fixed_slots_are_evenly_spaced_and_late_slots_are_skipped() {
        let s = Schedule::new(Some(100.0), false);
        let slots = AtomicU64::new(0);
        let mut rng = Rng::new(1, 1);
        assert_eq!(s.take(&slots, &mut rng), Duration::ZERO);
        assert_eq!(s.take(&slots, &mut rng), Duration::from_millis(10));
        // A start 1 s in the past: the slots of the first ~990 ms are more than 10 ms late.
        let slots = AtomicU64::new(0);
        let mut skipped = 0;
        let limit = Some(Duration::from_millis(10));
        let mut p = Pacer::new(s, window(1.0, 0.0, 10.0, 60.0), limit);
        assert!(p.next(&slots, &mut rng, &mut skipped).is_some());
        assert!((98..=101).contains(&skipped), "skipped {skipped}");
        let mut none = 0;
        let mut p = Pacer::new(s, window(1.0, 0.0, 0.005, 60.0), None);
        assert_eq!(p.next(&slots, &mut rng, &mut none), None);
    }

    #[test]
    fn backlogs_are_counted_at_the_window_edges() {
        // 100 slots/s; warm-up 1 s, window 1 s, both over; 2 s of drain left.
        let s = Schedule::new(Some(100.0), false);
        let w = window(2.0, 1.0, 1.0, 2.0);
        let slots = AtomicU64::new(0);
        let mut rng = Rng::new(1, 1);
        let mut p = Pacer::new(s, w, None);
        let (mut skipped, mut run) = (0, 0);
        while let Some(at) = p.next(&slots, &mut rng, &mut skipped) {
            // Everything starts now: after both edges.
            assert!(p.start(at, Instant::now(), &slots));
            run += 1;
        }
        assert_eq!(run, 200);
        assert_eq!(p.tally.intended, 100);
        assert_eq!(p.tally.warmup_backlog, 100);
        assert_eq!(p.tally.backlog, 100);
        assert_eq!(p.tally.not_executed, 0);
        let c = p.counts(w.end - Duration::from_millis(1), Instant::now());
        assert_eq!((c.rate, c.latency), (false, true));
        let c = p.counts(w.start - Duration::from_millis(1), w.start);
        assert_eq!((c.rate, c.latency), (true, false));
    }

    #[test]
    fn a_drain_out_of_time_counts_every_slot_left_as_not_executed() {
        for poisson in [false, true] {
            // 1000 slots/s; warm-up 1 s and window 1 s, both over, and no drain time left.
            let s = Schedule::new(Some(1000.0), poisson);
            let w = window(2.0, 1.0, 1.0, 0.0);
            let slots = AtomicU64::new(0);
            let mut rng = Rng::new(3, 1);
            let mut p = Pacer::new(s, w, None);
            // One slot of the warm-up ran in time; the next finds the drain over.
            let first = p.next(&slots, &mut rng, &mut 0).unwrap();
            let mut q = Pacer::new(s, w, None);
            let second = q.next(&slots, &mut rng, &mut 0).unwrap();
            assert!(p.start(first, w.t0, &slots));
            assert!(!q.start(second, Instant::now(), &slots));
            // Nothing is left to take.
            assert_eq!(p.next(&slots, &mut rng, &mut 0), None);
            let t = q.tally;
            let near = |n: u64, want: u64| n.abs_diff(want) <= if poisson { 10 } else { 0 };
            assert!(near(t.warmup_backlog, 999), "{poisson}: {t:?}");
            assert!(near(t.intended, 1000), "{poisson}: {t:?}");
            assert_eq!(t.backlog, t.not_executed, "{poisson}: {t:?}");
            assert_eq!(t.backlog, t.intended, "{poisson}: {t:?}");
        }
    }

    #[test]
    fn fixed_slot_boundaries_match_take() {
        for rate in [3.0, 7.0, 1000.0, 1e9] {
            let every = 1.0 / rate;
            for d in [0.0, 0.5, 1.0, 2.0 / 3.0, 10.0] {
                let d = Duration::from_secs_f64(d);
                let k = first_slot_at(every, d);
                let at = |k: u64| Duration::from_secs_f64(k as f64 * every);
                assert!(at(k) >= d && (k == 0 || at(k - 1) < d), "{rate} {d:?} {k}");
            }
        }
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
