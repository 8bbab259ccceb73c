//! Stopping a run early (Ctrl-C): a shared flag the workers check between events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cloneable stop request.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every worker to stop after its current event.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// True once a stop was requested.
    #[inline]
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
