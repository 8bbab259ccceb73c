//! Errors of loading runs and building reports. Each message names the file or flag and the fix.

use std::path::PathBuf;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The directory has no `run.json`.
    #[error(
        "{} is not a dbdelta run directory (no run.json): pass a directory written by `dbdelta run`",
        .dir.display()
    )]
    NotARun {
        /// The directory given.
        dir: PathBuf,
    },
    /// A file or directory exists but could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `run.json` is not a manifest this version understands.
    #[error(
        "cannot parse {}: {source}; it must be a run.json written by a compatible dbdelta version",
        .path.display()
    )]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No run directories were given.
    #[error("no run directories given: pass at least one directory written by `dbdelta run`")]
    NoRuns,
    /// Two runs have a target of the same name, so the report columns would clash.
    #[error(
        "target '{name}' is in two runs ({} and {}): report columns need unique target names; \
         rename it in one run with --rename [RUN:]{name}=NEW_NAME (RUN = 1-based position of the run directory; \
         default: the last run that has it)",
        .first.display(), .second.display()
    )]
    DuplicateTarget {
        /// The clashing name.
        name: String,
        /// The run directory that has it first.
        first: PathBuf,
        /// The run directory that has it again.
        second: PathBuf,
    },
    /// `--base` names no target of the runs.
    #[error("--base '{name}' is not a target of these runs; known targets: {}", .known.join(", "))]
    UnknownBase {
        /// The name given.
        name: String,
        /// The target names of the runs, in column order.
        known: Vec<String>,
    },
    /// A target to rename does not exist, or the new name is taken.
    #[error("cannot rename target '{from}' to '{to}' in {}: {why}", .dir.display())]
    Rename {
        /// The run directory.
        dir: PathBuf,
        /// The old name.
        from: String,
        /// The new name.
        to: String,
        /// What is wrong.
        why: String,
    },
    /// `--dop` names a thread count that no step was measured at.
    #[error("--dop {threads} was not measured; measured thread counts: {}", fmt_thread_counts(.known))]
    UnknownThreads {
        /// The thread count given.
        threads: u32,
        /// The measured thread counts.
        known: Vec<u32>,
    },
    /// `--format` names no supported format.
    #[error("--format '{0}' is not supported: use text, md, csv, json or html")]
    UnknownFormat(String),
    /// A `--rename` value is malformed or names a run that was not given.
    #[error("--rename '{text}' is invalid: {why}; write [RUN:]OLD=NEW, e.g. pg15=pg15-monday or 2:pg15=pg15-monday")]
    BadRename {
        /// The value given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A `--cost` value is malformed.
    #[error("--cost '{text}' is invalid: {why}; write NAME=DOLLARS_PER_HOUR, e.g. pg15=0.384")]
    BadCost {
        /// The value given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// `--cost` prices a target that is not in the report.
    #[error("--cost '{name}' is not a target of these runs; known targets: {}", .known.join(", "))]
    UnknownCostTarget {
        /// The name given.
        name: String,
        /// The target names of the report, in column order.
        known: Vec<String>,
    },
}

fn fmt_thread_counts(thread_counts: &[u32]) -> String {
    if thread_counts.is_empty() {
        return "none".to_string();
    }
    thread_counts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
