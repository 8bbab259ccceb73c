//! Segments of one run measured by several processes (`--segment K/N`): the seam between
//! the sequence and the run's barrier. The runner asks the barrier before each shared
//! action (the first segment loads and settles, the others wait for it), before each
//! window (every segment starts it at one wall-clock time) and after it (every segment
//! hands on its state); the barrier itself (kept in the target database) is the lab's.
//!
//! Every segment calls the same sequence of these in the same order, so the n-th call of
//! one segment meets the n-th call of every other.

use crate::control::StopFlag;
use crate::progress::Progress;
pub use dbdelta_model::{Segment, SegmentWindow};
use std::time::Instant;

/// Why a segment could not meet the others.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The barrier's table could not be read or written.
    #[error("the segment barrier failed: {0}")]
    Barrier(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Another segment is somewhere else in the run (another step, another plan).
    #[error("{0}")]
    Diverged(String),
    /// The segment that leads (loads, settles) ended without doing it.
    #[error("{0}")]
    LeaderGone(String),
    /// A stop was requested while waiting.
    #[error("stopped while waiting at the segment barrier")]
    Stopped,
}

/// When every segment starts a window, and how the segments met.
#[derive(Debug, Clone)]
pub struct Meeting {
    /// The agreed start (warm-up included), on this process's clock; already reached when
    /// [`SegmentSync::meet`] returns.
    pub start: Instant,
    /// What the result records: the agreed wall-clock start, the clock offsets, the
    /// segments that did not come.
    pub window: SegmentWindow,
}

/// The run's barrier, as the sequence sees it.
pub trait SegmentSync: Send + Sync {
    /// Which segment this process is.
    fn segment(&self) -> Segment;

    /// The first segment ran a shared action (`what`: the load, a settle point) with this
    /// outcome (`Err` = why it failed); the others learn it from [`SegmentSync::follow`].
    fn lead(&self, what: &str, outcome: Result<(), String>) -> Result<(), SyncError>;

    /// Waits until the first segment finished the shared action `what`; its outcome.
    fn follow(
        &self,
        what: &str,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<Result<(), String>, SyncError>;

    /// This segment is ready to start the window `what` (its connections are open); waits
    /// for every segment that is alive, then until the start time chosen from their
    /// arrivals, and returns at that time.
    fn meet(
        &self,
        what: &str,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<Meeting, SyncError>;

    /// This segment's window `what` is over; `carry` is the next key its inserts would take.
    /// Waits for every live segment to end it and returns the largest carry of all, and
    /// the segments that did not end it (they died).
    fn after(
        &self,
        what: &str,
        carry: u64,
        stop: &StopFlag,
        progress: &dyn Progress,
    ) -> Result<(u64, Vec<u32>), SyncError>;
}

/// A segment's part of a step measured by the segments of a run.
#[derive(Clone)]
pub struct StepSegment {
    /// The run's barrier.
    pub sync: std::sync::Arc<dyn SegmentSync>,
    /// This segment.
    pub segment: Segment,
    /// Connections of the whole run at this step (every segment's together).
    pub total_threads: u32,
    /// Active connections of the whole run at this step.
    pub total_active: u32,
}

impl std::fmt::Debug for StepSegment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepSegment")
            .field("segment", &self.segment)
            .field("total_threads", &self.total_threads)
            .field("total_active", &self.total_active)
            .finish()
    }
}

impl StepSegment {
    /// The run-wide index of this segment's `local`-th worker.
    pub fn global_worker(&self, local: u32) -> u32 {
        self.segment.global_worker(local)
    }
}

impl StepSegment {
    /// What a barrier point of this step's window is called (the step and the run's
    /// connections), so that segments at different points name where each one is.
    pub fn what(&self, label: &str) -> String {
        format!("{label} at {} connection(s)", self.total_threads)
    }
}
