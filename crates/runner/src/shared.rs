//! What the threads of one measured step share (the start, the barriers, the merged
//! recording) and what each brings back (its output and error codes), with the error budget
//! every worker and event loop applies. Below both `measure` and `mux::event_loop`.

use crate::control::StopFlag;
use crate::gate::Gate;
use crate::op_types::OpTypeRecorder;
use crate::recorder::SharedRecording;
use crate::schedule::{PaceTally, TxnTally};
use dbdelta_engine::EngineError;
use dbdelta_workload::Counters;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Errors of a window by server code or kind.
pub(crate) type ErrorCodes = std::collections::BTreeMap<String, u64>;

/// Failed (not retried) events a worker tolerates before it checks the step's error rate
/// early: below this the rate of a short window says little.
pub(crate) const FAILED_EVENTS_FLOOR: u64 = 100;

/// Counts an error under its code.
pub(crate) fn count_code(codes: &mut ErrorCodes, e: &EngineError) {
    *codes.entry(e.count_key()).or_insert(0) += 1;
}

/// `Err` once failed events are past the floor and over `max_rate` of all events: going on
/// would only measure failures.
pub(crate) fn check_error_rate(
    failed: u64,
    events: u64,
    max_rate: f64,
    last: &EngineError,
) -> Result<(), EngineError> {
    if failed >= FAILED_EVENTS_FLOOR && failed as f64 > max_rate * (failed + events) as f64 {
        return Err(EngineError::new(
            last.kind,
            format!(
                "error rate {} is over --max-error-rate {} ({failed} failed events); last ({}): {last}",
                percent(failed as f64 / (failed + events) as f64),
                percent(max_rate),
                last.count_key()
            ),
        ));
    }
    Ok(())
}

/// A share as a percentage with the digits it needs (`1.0 %`, `0.01 %`).
pub(crate) fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p >= 1.0 || p == 0.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

/// Retried errors beyond this many per completed event (plus a floor) fail the step: the
/// target is not doing useful work any more.
pub(crate) const ERROR_BUDGET_PER_EVENT: u64 = 10;
pub(crate) const ERROR_BUDGET_FLOOR: u64 = 1000;

/// What one worker thread or event loop brings back.
pub(crate) struct WorkerOutput {
    pub counters: Counters,
    pub events: u64,
    pub errors: u64,
    pub busy: u64,
    /// Events that failed and were not retried (the step went on).
    pub failed: u64,
    /// Every error of the window by server code or kind.
    pub codes: ErrorCodes,
    /// Paced steps: schedule lag and service time, ns.
    pub lag: Histogram<u64>,
    pub service: Histogram<u64>,
    /// Latency per operation type (mixed workloads).
    pub op_types: OpTypeRecorder,
    /// When the workload said it had done all it was given (counted steps).
    pub done_at: Option<Instant>,
    /// A background worker (not the step's: db_bench's writer).
    pub background: bool,
    /// Retries, late and skipped transactions.
    pub txn: TxnTally,
    /// A terminal waited between events by design (TPC-C's keying and think times): seconds
    /// without a completed event are no stall.
    pub paused: bool,
    /// Paced steps: the backlogs at the window's edges and the drain.
    pub pace: PaceTally,
}

/// State shared by the workers of one step (never touched per statement except `slots`).
pub(crate) struct Shared<'a> {
    pub stop: &'a StopFlag,
    pub start: OnceLock<Instant>,
    pub barrier: Gate,
    /// Next schedule slot of a paced step.
    pub slots: AtomicU64,
    /// Thread ids of the workers: the "server" of an embedded engine for the OS sampler.
    pub tids: Arc<Mutex<Vec<u32>>>,
    /// Workers whose loop has ended.
    pub finished: AtomicU64,
    /// Set when one worker failed: the others stop at once instead of running on.
    pub abort: AtomicBool,
    /// Workers stay alive until the OS sampler took its last snapshot, so their thread CPU
    /// is counted in full.
    pub release: Gate,
    pub warmup: Duration,
    pub window: Duration,
    /// What the workers recorded, merged once a second per worker.
    pub recording: SharedRecording,
    /// A closed-loop window holds at least one event: set once an event started in it.
    pub window_used: AtomicBool,
    /// Nanoseconds from the start to the end of a window that a stall covered entirely:
    /// the start of the first event after it (0 = the planned end held).
    pub stretched_end_ns: AtomicU64,
    /// The workers and event loops register their threads with the turns: an embedded
    /// engine's always, a server target's when its server threads were registered too.
    pub register_clients: bool,
}

impl Shared<'_> {
    /// Marks the window used when an event starts inside it (one load per event after the
    /// first).
    pub(crate) fn event_started(&self, now: Instant, window_start: Instant) {
        if now >= window_start && !self.window_used.load(Ordering::Relaxed) {
            self.window_used.store(true, Ordering::SeqCst);
        }
    }

    /// True while a closed loop may still start an event past the window's `end`: no event
    /// started in the window (events in flight through all of it: a slow event, a stalled
    /// or busy host), and the statement timeout since the end has not passed.
    pub(crate) fn may_stretch(&self, end: Instant, now: Instant, timeout: Duration) -> bool {
        now < end + timeout && !self.window_used.load(Ordering::SeqCst)
    }

    /// Whether the event starting at `now`, past the window's end, is the one that ends a
    /// window no event had started in: only the first such event within the statement
    /// timeout; its start becomes the window's end (in turns, this target's: `turn`).
    pub(crate) fn stretch(
        &self,
        t0: Instant,
        end: Instant,
        now: Instant,
        timeout: Duration,
        turn: Option<&crate::turns::Turn>,
    ) -> bool {
        if !self.may_stretch(end, now, timeout) {
            return false;
        }
        let ns = u64::try_from(now.saturating_duration_since(t0).as_nanos()).unwrap_or(u64::MAX);
        // The end is stored before the window counts as used: the coordinator reads it then.
        let claimed = self
            .stretched_end_ns
            .compare_exchange(0, ns.max(1), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if claimed {
            if let Some(t) = turn {
                t.turns.extend(t.index, now);
            }
            self.window_used.store(true, Ordering::SeqCst);
        }
        claimed
    }
}

/// A cache-line padded counter so workers never share a line.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct Padded(pub AtomicU64);

impl Padded {
    /// Adds `n`. Each counter has one writer (its worker thread or event loop) and readers
    /// that only load it, so a load and a store do: a locked add costs ~7 ns, ~1 % of a
    /// RocksDB put.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}
