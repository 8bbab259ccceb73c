//! The lab's errors: bad input found by a check, and the failures of the steps around the
//! measurement (run directory, reports, builds, history), each with its cause as source.

use std::path::PathBuf;

/// What stopped the lab. The binary turns every one into exit 2 (its message names the
/// flag or file and the fix); an error of a target that cannot run is not one of them but
/// part of the run's outcome.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The plan asks for something this machine or the target cannot do; the message names
    /// the flag and the fix.
    #[error("{0}")]
    Input(String),
    /// A target spec an engine refused.
    #[error("--target")]
    Target(#[source] dbdelta_engine::EngineError),
    /// A file or directory of the run could not be read or written.
    #[error("{context}")]
    Io {
        /// What was being done, naming the path.
        context: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A value could not be turned into JSON.
    #[error("serializing JSON")]
    Json(#[source] serde_json::Error),
    /// A finished run's results could not be read back or reported.
    #[error("{context}")]
    ReadBack {
        /// What was being read back.
        context: String,
        /// The report crate's error.
        #[source]
        source: dbdelta_report::ReportError,
    },
    /// Reports could not be made.
    #[error(transparent)]
    Report(#[from] dbdelta_report::ReportError),
    /// A server could not be built from source.
    #[error("--target {target}")]
    BuildTarget {
        /// The target being built.
        target: String,
        /// The build's error.
        #[source]
        source: Box<LabError>,
    },
    /// The build driver failed.
    #[error(transparent)]
    Build(#[from] dbdelta_source_build::BuildError),
    /// Fetched server binaries could not be resolved, fetched or used.
    #[error(transparent)]
    Dist(#[from] dbdelta_source_build::dist::DistError),
    /// The results history failed.
    #[error(transparent)]
    History(#[from] dbdelta_history::HistoryError),
    /// The results history could not be opened.
    #[error("cannot open the results history; give --store PATH (SQLite file) or --store postgres://user@host/db")]
    HistoryOpen(#[source] Box<LabError>),
    /// Profiling could not be set up.
    #[error(transparent)]
    Profile(#[from] dbdelta_profile::ProfileError),
    /// Results a target measured could not be written to the run directory.
    #[error("{0}")]
    Results(String),
    /// A target is missing from the run manifest (the plan and the manifest disagree).
    #[error("target missing from manifest")]
    MissingTarget,
    /// A query-set result file is unreadable.
    #[error("{}: not a query-set result", .path.display())]
    QuerySetFile {
        /// The file.
        path: PathBuf,
        /// Why it is unreadable.
        #[source]
        source: serde_json::Error,
    },
}

impl LabError {
    /// An I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}

/// `LabError::Input` from a format string.
macro_rules! input {
    ($($arg:tt)*) => {
        $crate::error::LabError::Input(format!($($arg)*))
    };
}
pub(crate) use input;

/// The error and its causes, joined by ": " (as the binary prints them).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
