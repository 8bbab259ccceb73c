//! Per-worker recording with memory bounded by the number of workers, not by threads ×
//! seconds: a worker keeps only its current second (a compact histogram, 2 significant
//! figures, and counters) and, when the second turns, merges it into the step's shared
//! [`Merged`] under a lock taken once a second per worker. The step keeps one histogram for
//! the whole window and one compact histogram per second. Nothing per statement is shared.

use dbdelta_stats::{new_compact_histogram, new_histogram, record_ns};
use hdrhistogram::Histogram;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One second of the window: what completed in it.
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
    /// Event latencies of the slice, ns (2 significant figures).
    pub hist: Histogram<u64>,
}

impl Slice {
    fn empty(index: usize) -> Self {
        Slice {
            index,
            events: 0,
            queries: 0,
            errors: 0,
            hist: new_compact_histogram(),
        }
    }
}

/// What every worker of a step recorded, merged.
#[derive(Debug)]
pub struct Merged {
    /// All event latencies of the window, ns.
    pub hist: Histogram<u64>,
    /// Second i of the window at index i.
    pub seconds: Vec<Slice>,
}

impl Default for Merged {
    fn default() -> Self {
        Merged {
            hist: new_histogram(),
            seconds: Vec::new(),
        }
    }
}

/// The step's merged recording, shared by its workers.
pub type SharedRecording = Arc<Mutex<Merged>>;

/// One worker's recorder for the measured window.
pub struct Recorder {
    window_start: Instant,
    current: Slice,
    /// Where the current second starts and ends on the clock: an event between them is
    /// the current second's without a division.
    current_span: (Instant, Instant),
    merged: SharedRecording,
    /// Latencies of events drained after the window (paced steps): the step's, no second's.
    drained: Option<Histogram<u64>>,
}

impl Recorder {
    /// A recorder whose window starts at `window_start`, merging into `merged`.
    pub fn new(window_start: Instant, merged: SharedRecording) -> Self {
        Recorder {
            window_start,
            current: Slice::empty(0),
            current_span: (window_start, window_start + Duration::from_secs(1)),
            merged,
            drained: None,
        }
    }

    #[inline]
    fn slice_for(&mut self, at: Instant) -> &mut Slice {
        if at >= self.current_span.0 && at < self.current_span.1 {
            return &mut self.current;
        }
        let index = (at.saturating_duration_since(self.window_start).as_secs()) as usize;
        if index != self.current.index {
            self.rotate(index);
            let start = self.window_start + Duration::from_secs(index as u64);
            self.current_span = (start, start + Duration::from_secs(1));
        }
        &mut self.current
    }

    /// Merges the current second into the step's recording and starts second `index`,
    /// reusing the histogram's memory.
    fn rotate(&mut self, index: usize) {
        let c = &mut self.current;
        if c.events > 0 || c.errors > 0 {
            if let Ok(mut m) = self.merged.lock() {
                let _ = m.hist.add(&c.hist);
                if m.seconds.len() <= c.index {
                    let from = m.seconds.len();
                    m.seconds.extend((from..=c.index).map(Slice::empty));
                }
                let s = &mut m.seconds[c.index];
                s.events += c.events;
                s.queries += c.queries;
                s.errors += c.errors;
                let _ = s.hist.add(&c.hist);
            }
        }
        c.index = index;
        c.events = 0;
        c.queries = 0;
        c.errors = 0;
        c.hist.reset();
    }

    /// Records an event that completed at `done` after `took` (from its intended start).
    /// Intervals hold what completed in them, as sysbench's per-second lines do.
    #[inline]
    pub fn event(&mut self, done: Instant, took: Duration, queries: u64) {
        let ns = took.as_nanos().min(u128::from(u64::MAX)) as u64;
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

    /// Records an event that completed at `done` and counts in the rates but not in the
    /// latency (a paced step's event intended in the warm-up that ran in the window).
    #[inline]
    pub fn ran(&mut self, done: Instant, queries: u64) {
        let s = self.slice_for(done);
        s.events += 1;
        s.queries += queries;
    }

    /// Records an event intended in the window that started after it ended (a paced
    /// step's drain), `took` from its intended start: in the step's latency, in no second.
    pub fn drained(&mut self, took: Duration) {
        let ns = took.as_nanos().min(u128::from(u64::MAX)) as u64;
        record_ns(self.drained.get_or_insert_with(new_compact_histogram), ns);
    }

    /// Merges what is left; the step's data is then all in the shared recording.
    pub fn finish(mut self) {
        self.rotate(usize::MAX);
        if let Some(h) = &self.drained {
            if let Ok(mut m) = self.merged.lock() {
                let _ = m.hist.add(h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_merge_across_workers_and_memory_does_not_grow_with_time() {
        let t0 = Instant::now();
        let merged = SharedRecording::default();
        let mut a = Recorder::new(t0, merged.clone());
        let mut b = Recorder::new(t0, merged.clone());
        for sec in 0..600u64 {
            let at = t0 + Duration::from_millis(sec * 1000 + 500);
            a.event(at, Duration::from_micros(100), 1);
            b.event(at, Duration::from_micros(300), 2);
        }
        a.error(t0 + Duration::from_secs(3));
        a.finish();
        b.finish();
        let m = merged.lock().unwrap();
        assert_eq!(m.seconds.len(), 600);
        assert!(m.seconds.iter().all(|s| s.events == 2 && s.queries == 3));
        assert_eq!(m.seconds[3].errors, 1);
        assert_eq!(m.hist.len(), 1200);
        let p50 = m.hist.value_at_quantile(0.5) as f64;
        assert!((p50 - 100_000.0).abs() / 100_000.0 < 0.01, "{p50}");
    }

    #[test]
    fn each_event_is_in_the_second_it_completed_in_at_the_edges_and_out_of_order() {
        let t0 = Instant::now();
        let merged = SharedRecording::default();
        let mut r = Recorder::new(t0, merged.clone());
        let ms = |m: u64| t0 + Duration::from_millis(m);
        let us = Duration::from_micros(1);
        r.event(ms(0), us, 1); // the window's first instant: second 0
        r.event(ms(999), us, 1);
        r.event(ms(1000), us, 1); // a second's first instant is that second's
        r.error(ms(999)); // an error stamped with its start, in the second before
        r.event(ms(1500), us, 1);
        r.event(ms(3000), us, 1); // second 2 has nothing
        r.finish();
        let m = merged.lock().unwrap();
        let events: Vec<u64> = m.seconds.iter().map(|s| s.events).collect();
        let errors: Vec<u64> = m.seconds.iter().map(|s| s.errors).collect();
        assert_eq!(events, [2, 2, 0, 1]);
        assert_eq!(errors, [1, 0, 0, 0]);
    }
}
