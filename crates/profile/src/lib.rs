//! CPU profiles of a database server during measured steps, and the tables that explain a
//! regression from them.
//!
//! - [`perf`]: starts `perf record` (software `cpu-clock` event, fixed frequency, frame-pointer
//!   or DWARF call graphs) on the server's processes or threads and turns the recording into
//!   `perf script` text when the window ends.
//! - [`fold`]: folds `perf script` text into Brendan Gregg's folded stacks (root first), with
//!   offsets stripped, unresolved frames named by their binary, Rust and C++ names demangled.
//! - [`drill`]: inclusive ("percent of samples in the function including its children") and
//!   self shares per function, and the drill-down from the top of the call tree into the
//!   children where the difference between base and target is concentrated.
//! - [`render`]: flamegraph and differential flamegraph SVGs (inferno) and speedscope JSON.
//! - [`store`]: the files kept per step (`<NNN>-<label>.dop<N>.{folded,svg,json}`) and the
//!   explain/diff pass over a run directory.
#![deny(missing_docs)]

pub mod drill;
pub mod fold;
pub mod perf;
pub mod render;
pub mod store;

pub use drill::{drill_down, symbol_deltas, DrillTable, Shares};
pub use fold::{fold_perf_script, Folded};
pub use perf::{check_perf, Callgraph, ProfileTargets, Recording};
pub use store::{ProfileInfo, ProfileSettings, ProfileSpec};

/// Why profiling could not be done; each message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `perf` is not on PATH.
    #[error("--profile: `perf` was not found on PATH; install it (Debian/Ubuntu: apt-get install linux-perf, or linux-tools-$(uname -r); Fedora: dnf install perf) or drop --profile")]
    PerfMissing,
    /// The kernel refused perf events.
    #[error("--profile: perf is not permitted to sample other processes ({detail}); run dbdelta as root, or set `sysctl -w kernel.perf_event_paranoid=-1` (or 1 for user-space only), or drop --profile")]
    NotPermitted {
        /// What perf said.
        detail: String,
    },
    /// perf failed for another reason.
    #[error("--profile: perf failed: {0}")]
    Perf(String),
    /// A profile option is out of range.
    #[error("{flag} {value}: {why}")]
    BadOption {
        /// The flag, e.g. `--profile-freq`.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        why: &'static str,
    },
    /// Reading or writing a profile file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// No profiles match what `explain` was asked for.
    #[error("{0}")]
    NotFound(String),
}

impl ProfileError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        ProfileError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
