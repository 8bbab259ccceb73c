//! Per-operation-type latency for workloads that mix types (YCSB's `[READ]`, `[UPDATE]`, …
//! blocks). A worker or event loop keeps one histogram per type it has seen; workloads
//! without types (sysbench's) allocate nothing.

use dbdelta_model::OpTypeStats;
use dbdelta_stats::{new_histogram, record_ns, summarize};
use dbdelta_workload::Workload;
use hdrhistogram::Histogram;
use std::time::Duration;

#[derive(Debug)]
struct Slot {
    failed: u64,
    /// Events that started in the window (the rate); the latency holds those intended in
    /// it, which differ in a paced step with a backlog.
    in_window: u64,
    latency: Histogram<u64>,
}

/// Latency per operation type of one worker (or loop), merged at the end of the step.
#[derive(Debug, Default)]
pub(crate) struct OpTypeRecorder {
    names: &'static [&'static str],
    slots: Vec<Option<Slot>>,
    /// Whether the workload's events are recorded by type, once known.
    typed: Option<bool>,
}

impl OpTypeRecorder {
    fn slot(&mut self, names: &'static [&'static str], t: usize) -> Option<&mut Slot> {
        if t >= names.len() {
            return None;
        }
        if self.slots.is_empty() {
            self.names = names;
            self.slots.resize_with(names.len(), || None);
        }
        self.slots
            .get_mut(t)?
            .get_or_insert_with(|| Slot {
                failed: 0,
                in_window: 0,
                latency: new_histogram(),
            })
            .into()
    }

    /// Records the event `workload` has just finished, if it has a type and is not the
    /// only type (whose latency is the step's).
    #[inline]
    pub fn completed(&mut self, workload: &dyn Workload, latency: Duration) {
        self.record(workload, Some(latency), true);
    }

    /// Records an event of a paced step intended in the window that started after it (the
    /// drain): its latency counts, its rate does not.
    pub fn drained(&mut self, workload: &dyn Workload, latency: Duration) {
        self.record(workload, Some(latency), false);
    }

    /// Records an event of a paced step intended in the warm-up that started in the window
    /// (the warm-up's backlog): its rate counts, its latency does not.
    pub fn ran(&mut self, workload: &dyn Workload) {
        self.record(workload, None, true);
    }

    #[inline]
    fn record(&mut self, workload: &dyn Workload, latency: Option<Duration>, in_window: bool) {
        // Whether the workload has types to report is asked once (two virtual calls an
        // event otherwise): the answer is the step's, as all its terminals share their type
        // names (a background terminal's step has two, its own and the step's).
        let typed = *self
            .typed
            .get_or_insert_with(|| workload.op_type_names().len() >= 2 || workload.background());
        if !typed {
            return;
        }
        if let Some(t) = workload.op_type() {
            if let Some(s) = self.slot(workload.op_type_names(), t) {
                if let Some(l) = latency {
                    record_ns(&mut s.latency, l.as_nanos() as u64);
                }
                s.in_window += u64::from(in_window);
            }
        }
    }

    /// Counts the event `workload` has just failed, if it has a type.
    #[inline]
    pub fn failed(&mut self, workload: &dyn Workload) {
        if let Some(t) = workload.op_type() {
            if let Some(s) = self.slot(workload.op_type_names(), t) {
                s.failed += 1;
            }
        }
    }

    /// Adds another worker's types.
    pub fn merge(&mut self, other: OpTypeRecorder) {
        for (t, slot) in other.slots.into_iter().enumerate() {
            let Some(o) = slot else { continue };
            let Some(s) = self.slot(other.names, t) else {
                continue;
            };
            s.failed += o.failed;
            s.in_window += o.in_window;
            let _ = s.latency.add(&o.latency);
        }
    }

    /// The step's per-type statistics over a window of `window_secs`, in the workload's
    /// type order.
    pub fn stats(&self, window_secs: f64) -> Vec<OpTypeStats> {
        self.slots
            .iter()
            .zip(self.names)
            .filter_map(|(s, name)| {
                let s = s.as_ref()?;
                let count = s.latency.len();
                Some(OpTypeStats {
                    name: (*name).to_string(),
                    count,
                    failed: s.failed,
                    per_sec: if window_secs > 0.0 {
                        s.in_window as f64 / window_secs
                    } else {
                        0.0
                    },
                    latency: summarize(&s.latency),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbdelta_engine::{Connection, EngineError, OpBatch};

    struct Typed(usize);
    impl Workload for Typed {
        fn prepare(&mut self, _: &mut dyn Connection) -> Result<(), EngineError> {
            Ok(())
        }
        fn next_event(&mut self, _: &mut OpBatch) -> Result<(), EngineError> {
            Ok(())
        }
        fn uses_transactions(&self) -> bool {
            false
        }
        fn op_type(&self) -> Option<usize> {
            Some(self.0)
        }
        fn op_type_names(&self) -> &'static [&'static str] {
            &["READ", "UPDATE", "SCAN"]
        }
    }

    #[test]
    fn merges_types_in_workload_order() {
        let (mut a, mut b) = (OpTypeRecorder::default(), OpTypeRecorder::default());
        a.completed(&Typed(1), Duration::from_micros(200));
        b.completed(&Typed(0), Duration::from_micros(100));
        b.completed(&Typed(1), Duration::from_micros(400));
        b.failed(&Typed(1));
        b.completed(&Typed(7), Duration::from_micros(1)); // out of range: ignored
        a.merge(b);
        let s = a.stats(2.0);
        let names: Vec<&str> = s.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["READ", "UPDATE"]);
        assert_eq!((s[1].count, s[1].failed, s[1].per_sec), (2, 1, 1.0));
        assert!((s[0].latency.p50_us - 100.0).abs() < 1.0);
        assert!(OpTypeRecorder::default().stats(1.0).is_empty());
    }
}
