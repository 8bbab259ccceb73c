//! The targets a sequence runs on, and how each one's sequence ended.

use dbdelta_engine::Engine;
use std::path::PathBuf;

/// CPU profiling of one target's measured steps (`dbdelta run --profile`).
#[derive(Debug, Clone)]
pub struct TargetProfiling {
    /// perf's path (checked before the run).
    pub perf: PathBuf,
    /// `profiles/<target>` in the run directory.
    pub dir: PathBuf,
    /// Frequency, call graphs and the steps to profile.
    pub settings: dbdelta_profile::ProfileSettings,
}

/// How a target's sequence ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetOutcome {
    /// Every selected step ran (some may have failed; their results say so).
    Complete,
    /// Stopped by a stop request.
    Interrupted,
    /// The load failed, so no step could run.
    LoadFailed(String),
}

/// One provisioned target of an interleaved run.
pub struct TargetUnderTest<'a> {
    /// The target's name (results and messages).
    pub name: &'a str,
    /// Its engine, provisioned and ready.
    pub engine: &'a dyn Engine,
    /// CPU profiling of its measured steps, if asked for.
    pub profiling: Option<&'a TargetProfiling>,
    /// This process is one segment of a run measured by several (`--segment K/N`): the
    /// run's barrier on this target.
    pub segment: Option<std::sync::Arc<dyn crate::segment::SegmentSync>>,
}
