//! Per-worker recording: a step histogram, counters, and 1 s interval slices that the
//! coordinator merges across workers. Nothing here is shared between workers.

use dbdelta_stats::{new_histogram, record_ns};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// One worker's finished 1-second slice.
#[derive(Debug, Clone)]
pub struct Slice {
    /// Interval index (0 = first second of the window).
    pub index: usize,
    /// Events completed.
    pub events: u64,
    /// Statements completed.
    pub queries: u64,
    /// Retried errors.
    pub errors: u64,
    /// Event latencies of the slice, ns.
    pub hist: Histogram<u64>,
}

/// One worker's recorder for the measured window.
pub struct Recorder {
    window_start: Instant,
    /// All event latencies of the window, ns.
    pub hist: Histogram<u64>,
    current: Slice,
    /// Finished slices, in order.
    pub slices: Vec<Slice>,
}

impl Recorder {
    /// A recorder whose window starts at `window_start`.
    pub fn new(window_start: Instant) -> Self {
        Recorder {
            window_start,
            hist: new_histogram(),
            current: Slice {
                index: 0,
                events: 0,
                queries: 0,
                errors: 0,
                hist: new_histogram(),
            },
            slices: Vec::new(),
        }
    }

    #[inline]
    fn slice_for(&mut self, at: Instant) -> &mut Slice {
        let index = (at.saturating_duration_since(self.window_start).as_secs()) as usize;
        if index != self.current.index {
            self.rotate(index);
        }
        &mut self.current
    }

    fn rotate(&mut self, index: usize) {
        let next = Slice {
            index,
            events: 0,
            queries: 0,
            errors: 0,
            hist: new_histogram(),
        };
        let done = std::mem::replace(&mut self.current, next);
        if done.events > 0 || done.errors > 0 {
            self.slices.push(done);
        }
    }

    /// Records an event that completed at `done` after `took` (from its intended start).
    /// Intervals hold what completed in them, as sysbench's per-second lines do.
    #[inline]
    pub fn event(&mut self, done: Instant, took: Duration, queries: u64) {
        let ns = took.as_nanos().min(u128::from(u64::MAX)) as u64;
        record_ns(&mut self.hist, ns);
        let s = self.slice_for(done);
        s.events += 1;
        s.queries += queries;
        record_ns(&mut s.hist, ns);
    }

    /// Records a retried error at `at`.
    #[inline]
    pub fn error(&mut self, at: Instant) {
        self.slice_for(at).errors += 1;
    }

    /// Closes the current slice and returns everything.
    pub fn finish(mut self) -> (Histogram<u64>, Vec<Slice>) {
        self.rotate(usize::MAX);
        (self.hist, self.slices)
    }
}
