//! The plan: everything one run needs, resolved and validated by the binary from its flags,
//! config file and target specs. The lab reads nothing else (ripgrep's low-args →
//! high-args: after resolving, no flag is read again).

use dbdelta_engine::OpenOptions;
use dbdelta_model::{IbenchOptions, RunOptions, TargetSpec, ToolInfo};
use dbdelta_profile::ProfileSettings;
use dbdelta_workload::queryset::QuerySet;
use dbdelta_workload::Suite;
use std::path::PathBuf;

/// Everything a run needs, validated.
#[derive(Debug)]
pub struct RunPlan {
    /// Resolved options (also stored in run.json).
    pub options: RunOptions,
    /// The suite.
    pub suite: Suite,
    /// Targets in column order.
    pub targets: Vec<TargetSpec>,
    /// The base target's name.
    pub base: String,
    /// How engines are opened.
    pub open: OpenOptions,
    /// Parent directory of the run directory, or the exact run directory.
    pub out: OutDir,
    /// Keep database files after the run.
    pub keep_data: bool,
    /// The Insert Benchmark's options when the suite is `ibench`.
    pub ibench: Option<IbenchOptions>,
    /// The query-set suite when the suite is a directory, with its runs per query.
    pub queryset: Option<QuerySetPlan>,
    /// How the targets take turns: interleaved rounds or whole runs one after another.
    pub schedule: Schedule,
    /// `--fail-on regression>N%`: the run fails when a step is significantly slower than
    /// the base by more than this fraction.
    pub fail_on: Option<f64>,
    /// Where the finished run is indexed.
    pub history: History,
    /// CPU profiling of the servers; `None` = not asked.
    pub profile: Option<ProfileSettings>,
    /// The command line as given, with passwords of target URLs redacted (for run.json).
    pub command: Vec<String>,
    /// The dbdelta that runs (for run.json).
    pub tool: ToolInfo,
}

/// A query-set suite and how often each query runs.
#[derive(Debug)]
pub struct QuerySetPlan {
    /// The suite.
    pub set: QuerySet,
    /// Runs of each query per target; the first (cold) one is reported apart.
    pub repeat: u32,
}

/// How the targets of a run take turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Rounds per step when the targets are interleaved.
    pub rounds: u32,
    /// Whole runs per target when they run one after another.
    pub repeats: u32,
    /// One target after another even with two or more targets.
    pub sequential: bool,
    /// Keep each target's server and data between sequential repeats.
    pub reuse_load: bool,
}

/// Where the run directory goes.
#[derive(Debug, Clone)]
pub enum OutDir {
    /// Create `<parent>/<UTC time>-<suite>`.
    Under(PathBuf),
    /// Create exactly this directory.
    Exact(PathBuf),
}

/// The results history a finished run is indexed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum History {
    /// Not indexed.
    Off,
    /// Indexed in this store: a SQLite file or `postgres://` URL; `None` = `$DBDELTA_STORE`,
    /// else the default file.
    Store(Option<String>),
}
