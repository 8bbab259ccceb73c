//! What the lab tells the person running it, beyond the runner's per-step progress: notes,
//! warnings, targets that cannot run, the finished report, build phases. The binary draws
//! and prints them; the lab never prints.

use dbdelta_runner::Progress;
use std::path::Path;
use std::time::Duration;

/// Progress of a whole run. `Send + Sync`: when an interrupt's deadline cuts the run, the
/// closing of the run directory reports from the signal's thread.
pub trait LabProgress: Progress + Send + Sync {
    /// A line about the run: its directory, a server built from source, where the reports
    /// and profiles are.
    fn note(&self, text: &str);
    /// Something that does not stop the run but may make its numbers less useful.
    fn warning(&self, text: &str);
    /// A target that cannot run, or whose load failed; the run goes on with the others.
    fn error(&self, text: &str);
    /// The brief text report of a finished run (QPS tables), for standard output.
    fn report(&self, text: &str) -> std::io::Result<()>;
    /// A phase of building a server from source.
    fn build(&self, event: BuildEvent<'_>);
}

/// Progress of building a server from source.
#[derive(Debug, Clone, Copy)]
pub enum BuildEvent<'a> {
    /// Something worth a line (fetching the source, where the log is, a cache hit).
    Note(&'a str),
    /// A phase began.
    PhaseStarted(&'a str),
    /// The phase that began ended after this long.
    PhaseDone(Duration),
    /// The phase that began failed (the error follows).
    PhaseFailed,
    /// A new build is in the cache.
    Built {
        /// Its directory.
        dir: &'a Path,
        /// How long it took, seconds.
        seconds: f64,
    },
}
